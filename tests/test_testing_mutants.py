"""The mutation script's mutants still apply to the current sources (the script itself runs in CI)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("run_mutants", ROOT / "tests" / "mutation" / "run_mutants.py")
run_mutants = importlib.util.module_from_spec(spec)
sys.modules["run_mutants"] = run_mutants   # dataclasses look their module up there
spec.loader.exec_module(run_mutants)


@pytest.mark.parametrize("m", run_mutants.MUTANTS, ids=lambda m: m.name)
def test_mutant_applies_exactly_once_and_changes_the_source(m):
    text = (ROOT / m.path).read_text()
    assert text.count(m.old) == 1, f"{m.name}: update the mutant, its source text changed"
    assert m.old != m.new
    assert all((ROOT / t.split("::")[0]).exists() for t in m.tests)


def test_apply_refuses_stale_mutants(tmp_path):
    (tmp_path / "f.py").write_text("x = 1\n")
    stale = run_mutants.Mutant("stale", "f.py", "x = 2\n", "x = 3\n", (), "")
    with pytest.raises(LookupError):
        run_mutants.apply(stale, tmp_path)
    assert (tmp_path / "f.py").read_text() == "x = 1\n"
