"""The independent checker never imports the code that produced a certificate (de Bruijn criterion).

Allowed for `riccati_verify/checker/check_*.py` and their private helpers:
the standard library pieces below, python-flint, the exact-arithmetic core
(`exact`, `balls`, `bernoulli`, `box`, `psd_cover`: the region of the `all_equilibria` cover,
`frame`: the moment equation in a rational frame, `threads`: flint's thread count, which changes
no ball, `progress`: counting for a display, which decides nothing), parsing (`io`, `model`, `errors`) and sibling checker modules.
Never numpy, scipy, cvxpy, sympy, mpmath or a producing module.
"""

import ast
from pathlib import Path

import pytest

CERT_DIR = Path(__file__).resolve().parents[1] / "riccati_verify" / "checker"
STDLIB = {"__future__", "fractions", "re", "math", "dataclasses", "typing", "json", "itertools", "functools",
          # process plumbing: `_stage1` runs the checker's own second half in a fresh interpreter
          # (a verdict never depends on it: without that process the chain alone decides; select
          # polls its pipe while the chain goes on)
          "contextlib", "os", "select", "subprocess", "sys", "time"}
TRUSTED_CORE = {"exact", "balls", "io", "model", "errors", "envelope", "bernoulli", "box", "psd_cover", "frame", "threads", "progress", "deadline"}
CHECKER_FILES = sorted(p for p in CERT_DIR.glob("*.py") if p.name.startswith(("check_", "_")) and p.name != "__init__.py")


def imports(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield 0, a.name, None
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                yield node.level, node.module or "", a.name


def test_there_are_checkers():
    assert len(CHECKER_FILES) >= 8


@pytest.mark.parametrize("path", CHECKER_FILES, ids=[p.name for p in CHECKER_FILES])
def test_checker_imports_only_the_trusted_core(path):
    for level, module, name in imports(path):
        top = module.split(".")[0]
        if level == 0 and top == "riccati_verify":  # absolute form of the two cases below
            inner = module.split(".")[1:] + ([name] if name else [])
            assert inner[0] in ("core", "checker"), f"{path.name} imports {module}"
            if inner[0] == "core":
                assert inner[1] in TRUSTED_CORE, f"{path.name} imports {module}.{name}"
            else:
                assert len(inner) == 1 or inner[1] == "verify" or inner[1].startswith(("check_", "_")), \
                    f"{path.name} imports {module}.{name}"
        elif level == 0:
            assert top in STDLIB | {"flint"}, f"{path.name} imports {module}"
        elif level == 1:  # sibling inside certificates/
            assert module in ("", "checker") or module.startswith(("check_", "_")), f"{path.name} imports .{module}"
            if module == "":
                assert name.startswith(("check_", "_")) or name == "checker", f"{path.name} imports .{name}"
        else:  # riccati_verify.*
            target = module or name
            assert target.split(".")[0] in TRUSTED_CORE, f"{path.name} imports riccati_verify.{target}"


def test_ball_definiteness_accepts_and_rejects():
    """Σ = [[2,1],[1,2]] has eigenvalues 1 and 3: a ball of radius 1/10 stays ≻ 0, radius 2 does not
    (it contains [[0,3],[3,0]]), and [[1,2],[2,1]] (eigenvalue −1) is rejected even as a point."""
    import flint

    from riccati_verify.checker.check_equilibrium import is_pd_ball, sigma_ball

    q = flint.fmpq
    pd = [[q(2), q(1)], [q(1), q(2)]]
    assert is_pd_ball(sigma_ball(pd, q(1, 10)))
    assert not is_pd_ball(sigma_ball(pd, q(2)))
    assert not is_pd_ball(sigma_ball([[q(1), q(2)], [q(2), q(1)]], q(0)))
