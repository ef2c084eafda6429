"""The public API (issue 12, item 4): lazy names, numpydoc docstrings, `__all__` everywhere.

The import checks run in a subprocess: this test process has long since loaded
numpy and friends, so its own `sys.modules` says nothing about what
``import riccati_verify`` costs.
"""

from __future__ import annotations

import ast
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PUBLIC = [
    "moment_ode", "integrate_moments", "classify_regime", "find_equilibria", "blowup_time",
    "decide_blowup", "reach", "simulate_tokens", "verify_certificate", "load_problem", "Params", "Gaussian",
    "Status",
]
HEAVY = ["numpy", "scipy", "sympy", "cvxpy", "mpmath"]
KERNEL_MARKS = ("B = KᵀQ", "exp(⟨Bx, y⟩)")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_import_loads_no_numerics():
    code = ("import sys, json, riccati_verify\n"
            f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    proc = _python(code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_importable(name):
    proc = _python(f"from riccati_verify import {name}")
    assert proc.returncode == 0, proc.stderr


def test_attribute_access_and_unknown_name():
    proc = _python("import riccati_verify as rv; rv.blowup_time")
    assert proc.returncode == 0, proc.stderr
    proc = _python("import riccati_verify as rv\n"
                   "try:\n    rv.no_such_name\nexcept AttributeError:\n    print('ok')")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_public_names_listed_in_all():
    import riccati_verify

    assert set(PUBLIC) <= set(riccati_verify.__all__)
    assert set(PUBLIC) <= set(dir(riccati_verify))


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_has_numpydoc_docstring(name):
    import riccati_verify

    obj = getattr(riccati_verify, name)
    doc = inspect.getdoc(obj) or ""
    assert doc, f"{name} has no docstring"
    summary = doc.splitlines()[0].strip()
    assert summary, f"{name}: the docstring must open with a summary line"
    if inspect.isroutine(obj):
        for section in ("Parameters", "Returns"):
            assert f"{section}\n{'-' * len(section)}" in doc, f"{name}: no numpydoc {section} section"
    assert any(mark in doc for mark in KERNEL_MARKS), (
        f"{name}: the docstring must state the kernel convention ({' or '.join(KERNEL_MARKS)})")


# ---------------------------------------------------------------------------------------------
# AST scan: `__all__` and docstrings in every public module


def _is_public(name: str) -> bool:
    return not name.startswith("_")


def _top_level(body):
    """Statements at module level, looking into `if` / `try` blocks (optional imports)."""
    for node in body:
        if isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                yield from _top_level(node.body)
                yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                yield from _top_level(block)
        else:
            yield node


def _is_accessor_or_overload(fn) -> bool:
    # a property's setter/deleter shares the getter's docstring; @overload stubs document nothing
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Attribute) and dec.attr in ("setter", "deleter"):
            return True
        if (isinstance(dec, ast.Name) and dec.id == "overload") or (
                isinstance(dec, ast.Attribute) and dec.attr == "overload"):
            return True
    return False


def scan_source(source: str, label: str) -> list[str]:
    """Offences in one module's source: no `__all__`, or a public definition without a docstring."""
    tree = ast.parse(source)
    problems = []
    nodes = list(_top_level(tree.body))
    has_all = any(
        (isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets))
        or (isinstance(n, (ast.AnnAssign, ast.AugAssign)) and isinstance(n.target, ast.Name)
            and n.target.id == "__all__")
        for n in nodes)
    if not has_all:
        problems.append(f"{label}: no __all__")
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    for node in nodes:
        if not isinstance(node, defs) or not _is_public(node.name):
            continue
        if ast.get_docstring(node) is None and not (
                not isinstance(node, ast.ClassDef) and _is_accessor_or_overload(node)):
            problems.append(f"{label}:{node.lineno} {node.name}: no docstring")
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if (isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_public(item.name)
                        and not _is_accessor_or_overload(item) and ast.get_docstring(item) is None):
                    problems.append(f"{label}:{item.lineno} {node.name}.{item.name}: no docstring")
    return problems


def _public_modules():
    for top in ("riccati_verify", "proofs"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if any(part.startswith("_") and part != "__init__.py" for part in rel.parts):
                continue
            yield rel


def test_scanner_flags_planted_offences():
    planted = (
        '"""A module."""\n'
        "def documented():\n    '''Why.'''\n"
        "def undocumented():\n    pass\n"
        "def _private():\n    pass\n"
        "class Thing:\n    '''Why.'''\n"
        "    def method(self):\n        pass\n"
        "    def _hidden(self):\n        pass\n"
        "    @property\n    def size(self):\n        '''Why.'''\n"
        "    @size.setter\n    def size(self, value):\n        pass\n"
    )
    problems = scan_source(planted, "planted.py")
    assert problems == [
        "planted.py: no __all__",
        "planted.py:4 undocumented: no docstring",
        "planted.py:10 Thing.method: no docstring",
    ]
    clean = '"""A module."""\n__all__ = ["f"]\ndef f():\n    """Why."""\n'
    assert scan_source(clean, "clean.py") == []


def test_public_modules_have_all_and_docstrings():
    modules = list(_public_modules())
    assert len(modules) > 50  # the scan sees the package, not an empty folder
    problems = []
    for rel in modules:
        problems += scan_source((ROOT / rel).read_text(encoding="utf-8"), str(rel))
    assert not problems, f"{len(problems)} offences:\n" + "\n".join(problems)
