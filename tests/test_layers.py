"""The layers of the package, with imports pointing one way.

    core  <-  checker  <-  symbolic  <-  numeric  <-  certify  <-  testing, proofs  <-  app  <-  riccati_verify (API)

A module may import its own layer or a lower one, never a higher one; the
module graph (function-level imports counted) has no cycle; core and checker
import the standard library and python-flint only; outside the checker only
the public door `riccati_verify.checker` is imported, never a checker module.

The rules are pure functions of the sources, so the tests below also run them
on sources with a forbidden import planted, and must see them fail.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = "riccati_verify"
RANK = {"core": 0, "checker": 1, "symbolic": 2, "numeric": 3, "certify": 4, "testing": 5, "proofs": 5, "app": 6}
API_RANK = 7  # riccati_verify/__init__.py and __main__.py: the facade over everything
TRUSTED_EXTERNAL = {"flint"}
HEAVY = ("numpy", "scipy", "sympy", "cvxpy", "mpmath")
STDLIB = set(sys.stdlib_module_names)


def package_sources(root: Path = ROOT) -> dict[str, str]:
    """Module name -> source, for riccati_verify/ and proofs/ (installed as riccati_verify.proofs)."""
    out = {}
    for base, prefix in ((root / PKG, [PKG]), (root / "proofs", [PKG, "proofs"])):
        for f in sorted(base.rglob("*.py")):
            parts = list(f.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(prefix + parts)] = f.read_text()
    return out


def _is_package(name: str, sources: dict[str, str]) -> bool:
    return any(m.startswith(name + ".") for m in sources)


def imports_of(name: str, source: str, sources: dict[str, str]) -> set[str]:
    """Every module `name` imports, at any depth of the file (function-level imports too).

    `from X import y` counts as importing X.y when that is a module, else X.
    """
    pkg = name if _is_package(name, sources) else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                found.add(f"{mod}.{a.name}" if f"{mod}.{a.name}" in sources else mod)
    return found


def layer_of(name: str) -> tuple[str, int]:
    parts = name.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "api", API_RANK
    return parts[1], RANK[parts[1]]


def violations(sources: dict[str, str]) -> list[str]:
    """Every breach of the layer rules in `sources` (empty when the layout is sound)."""
    bad = []
    graph: dict[str, set[str]] = {}
    for name, src in sources.items():
        if name.split(".")[1:2] and name.split(".")[1] not in RANK and name.split(".")[1] != "__main__":
            bad.append(f"{name}: module outside every layer (layers: {sorted(RANK)})")
            continue
        layer, rank = layer_of(name)
        deps = imports_of(name, src, sources)
        graph[name] = {d for d in deps if d in sources}
        for d in deps:
            top = d.split(".")[0]
            if top == PKG:
                if d not in sources:
                    bad.append(f"{name} imports {d}, which does not exist")
                    continue
                dlayer, drank = layer_of(d)
                if drank > rank:
                    bad.append(f"{name} ({layer}) imports {d} ({dlayer}): upward")
                if dlayer == "checker" and layer != "checker" and d != f"{PKG}.checker":
                    bad.append(f"{name} imports {d}: outside the checker, only {PKG}.checker (verify_certificate)")
                if d == PKG and layer != "api":
                    bad.append(f"{name} imports the package facade {PKG}: import the layer module instead")
            elif layer in ("core", "checker") and top not in STDLIB | TRUSTED_EXTERNAL:
                bad.append(f"{name} ({layer}) imports {d}: core and checker use the standard library and flint only")
    bad += [f"import cycle: {' -> '.join(c)}" for c in cycles(graph)]
    return bad


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module, or a self-import (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# ---------------------------------------------------------------- the real tree


def test_the_package_has_its_layers():
    names = package_sources()
    for layer in RANK:
        assert any(n.split(".")[1:2] == [layer] for n in names), f"no module in layer {layer}"


def test_imports_point_one_way_and_have_no_cycle():
    assert violations(package_sources()) == []


def test_pyproject_lists_exactly_the_packages_on_disk():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    sources = package_sources()
    on_disk = {n for n in sources if _is_package(n, sources) or n == PKG}
    on_disk |= {n for n in sources if (ROOT / PKG / Path(*n.split(".")[1:]) / "__init__.py").exists()}
    on_disk.add(f"{PKG}.proofs")
    assert listed == on_disk


# ---------------------------------------------------------------- the rules can fail


def _planted(module: str, line: str) -> dict[str, str]:
    src = package_sources()
    src[module] = src[module] + "\n" + line + "\n"
    return src


@pytest.mark.parametrize("module, line, expect", [
    ("riccati_verify.core.exact", "import numpy as np", "core and checker use"),
    ("riccati_verify.checker.check_blowup", "def f():\n    import sympy", "core and checker use"),
    ("riccati_verify.core.model", "def f():\n    from riccati_verify.numeric.views import float_view", "upward"),
    ("riccati_verify.checker.check_blowup", "from riccati_verify.certify.blowup import radon", "upward"),
    ("riccati_verify.numeric.flow", "from riccati_verify.certify import stability", "upward"),
    ("riccati_verify.certify.stability", "from riccati_verify.checker import check_equilibrium", "only riccati_verify.checker"),
    ("riccati_verify.certify.reach", "from riccati_verify.app.output import emit", "upward"),
])
def test_a_planted_forbidden_import_is_reported(module, line, expect):
    found = violations(_planted(module, line))
    assert any(expect in v and module in v for v in found), found


def test_a_planted_cycle_is_reported():
    # core.exact -> core.balls already holds (balls imports exact); close the loop.
    found = violations(_planted("riccati_verify.core.exact", "def f():\n    from riccati_verify.core import balls"))
    assert any(v.startswith("import cycle") and "riccati_verify.core.balls" in v for v in found), found


def test_a_module_outside_the_layers_is_reported():
    src = package_sources()
    src["riccati_verify.misc"] = "x = 1\n"
    assert any("outside every layer" in v for v in violations(src))


# ---------------------------------------------------------------- what `verify` loads

CERT_DIR = ROOT / "tests" / "data" / "certificates"
PROBE = """
import json, sys
from riccati_verify.app.cli import main
rc = main(["verify", "--json", sys.argv[1]])
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"rc": rc, "heavy": heavy}}))
""".format(heavy=HEAVY)


def _probe(args, code):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                       cwd=ROOT, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_there_is_a_certificate_of_every_kind():
    from riccati_verify.checker import known_kinds

    # "<kind>.json", plus variants "<kind>.<variant>.json" (a second route of the same kind's checker)
    stems = [p.stem for p in CERT_DIR.glob("*.json")]
    assert sorted(s for s in stems if "." not in s) == known_kinds()
    assert all(s.split(".")[0] in known_kinds() for s in stems)


@pytest.mark.parametrize("cert", sorted(CERT_DIR.glob("*.json")), ids=lambda p: p.stem)
def test_verify_command_loads_no_numerics(cert):
    out = _probe([cert], PROBE)
    assert out == {"rc": 0, "heavy": []}


def test_verify_certificate_of_every_kind_loads_no_numerics():
    code = f"""
import json, sys
from pathlib import Path
from riccati_verify import verify_certificate
res = {{p.stem: verify_certificate(json.loads(p.read_text())).valid for p in sorted(Path(sys.argv[1]).glob('*.json'))}}
print(json.dumps({{"valid": res, "heavy": sorted(m for m in {HEAVY!r} if m in sys.modules)}}))
"""
    out = _probe([CERT_DIR], code)
    assert out["heavy"] == [] and len(out["valid"]) >= 9 and all(out["valid"].values()), out


def test_the_probe_sees_a_heavy_import():
    """The sys.modules probe is not blind: importing the producer side loads numpy."""
    out = _probe([], f"import json, sys\nimport riccati_verify.numeric.flow\n"
                     f"print(json.dumps({{'heavy': sorted(m for m in {HEAVY!r} if m in sys.modules)}}))")
    assert "numpy" in out["heavy"]
