"""The layers move changed no output: every command's --json output on the examples equals the
output of the code before the move (tests/data/golden/before_layers.json, written by that code
from the command lines in cases.json).

Timings are dropped.  Floats must agree to 1e-9 relative: the computation is the same, but
BLAS builds on other CPUs may reassociate sums in the last bits; any real change (a different
route, a different number of steps) moves them by far more.

A change detector, not a correctness test: the expected outputs are the code's own output before the
move, edited by hand for intended changes (cases.json `_changed_doc`).  Correctness is pinned by the
closed-form and checker tests, and, for the one 50-digit bracket here, by
`test_blowup_scalar_bracket_contains_its_closed_form` (1e-9 relative would not see digits 10 to 50).
"""

from __future__ import annotations

import json
from fractions import Fraction
import math
import re
from pathlib import Path

import pytest

from conftest import run_cli

DATA = Path(__file__).resolve().parent / "data" / "golden"
CASES = json.loads((DATA / "cases.json").read_text())
BEFORE = json.loads((DATA / "before_layers.json").read_text())
VOLATILE = set(CASES["volatile"])
ADDED = CASES.get("added", {})   # per case, top-level keys new since the move (absent from the old output)


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def test_added_keys_are_new():
    # an 'added' key that the old output had would hide a change to it
    for name in CASES["cases"]:
        assert not set(_added(name)) & set(BEFORE[name]["json"]), name


def _added(name):
    return [*ADDED.get("*", ()), *ADDED.get(name, ())]


def differences(a, b, where="$"):
    """Paths at which a and b differ (floats and rational strings "p/q" to 1e-9 relative: both come
    from float producer choices, e.g. an optimiser's point, and move in their last digits with the
    BLAS/LAPACK build, while what is certified about them is re-checked elsewhere)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{where}.{k}: missing on one side" for k in sorted(set(a) ^ set(b))]
        for k in sorted(set(a) & set(b)):
            out += differences(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: lengths {len(a)} != {len(b)}"]
        return [d for i, (u, v) in enumerate(zip(a, b)) for d in differences(u, v, f"{where}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and not isinstance(a, bool):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300) else [f"{where}: {a!r} != {b!r}"]
    if isinstance(a, str) and isinstance(b, str) and a != b and _RATIONAL.match(a) and _RATIONAL.match(b):
        x, y = Fraction(a), Fraction(b)
        return [] if abs(x - y) <= Fraction(1, 10 ** 9) * max(abs(x), abs(y)) else [f"{where}: {a!r} != {b!r}"]
    return [] if a == b and type(a) is type(b) else [f"{where}: {a!r} != {b!r}"]


_RATIONAL = re.compile(r"^-?[0-9]+(/[0-9]+)?$")


def test_differences_sees_a_change():
    assert differences({"a": [1.0, "x"]}, {"a": [1.0 + 1e-6, "x"]}) == ["$.a[0]: 1.0 != 1.000001"]
    assert differences({"a": 1}, {"a": 1.0})
    assert differences({"a": 1}, {"b": 1})
    assert differences({"a": 1.0}, {"a": 1.0 + 1e-13}) == []
    assert differences({"a": "1000000000001/10"}, {"a": "1000000000002/10"}) == []
    assert differences({"a": "1001/1000"}, {"a": "1/1"}) == ["$.a: '1001/1000' != '1/1'"]
    assert differences({"a": "x/2"}, {"a": "y/2"})


@pytest.mark.parametrize("name", sorted(CASES["cases"]))
def test_command_output_is_unchanged(name):
    r = run_cli(*CASES["cases"][name])
    new = json.loads(r.stdout)
    got = {"rc": r.returncode, "json": {k: v for k, v in new.items() if k not in _added(name)}}
    assert differences(strip(got), strip(BEFORE[name])) == []


def test_blowup_scalar_bracket_contains_its_closed_form():
    """The golden 50-digit bracket of `blowup_scalar` contains T* = ln(2)/2 (MATH.md §6: σ' = 2aσ + 2vβσ²
    blows up at T* = ln(1 + a/(vβσ0))/(2a); here a = vβσ0), computed by mpmath at 80 digits."""
    import mpmath

    out = json.loads(run_cli(*CASES["cases"]["blowup_scalar"]).stdout)
    with mpmath.workdps(80):
        T = mpmath.log(2) / 2
        assert mpmath.mpf(out["lower"]) < T < mpmath.mpf(out["upper"])
        assert mpmath.mpf(out["upper"]) - mpmath.mpf(out["lower"]) < mpmath.mpf(10) ** -49
