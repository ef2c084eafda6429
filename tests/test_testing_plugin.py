"""The pytest plugin (entry point pytest11) selects the hypothesis profiles as documented."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import settings

PROBE = "from hypothesis import settings\n\ndef test_probe():\n    print('PROFILE', settings.default.max_examples, settings.default.derandomize)\n"


def _profile(tmp_path, *args, ci: bool):
    (tmp_path / "test_probe.py").write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "1"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *args,
                        str(tmp_path / "test_probe.py")], capture_output=True, text=True, env=env, cwd=tmp_path)
    line = next(l for l in r.stdout.splitlines() if l.startswith("PROFILE"))
    return line.split()[1:]


@pytest.mark.parametrize("args, ci, expected", [
    ((), True, ["15", "True"]),                                   # CI=1 → ci
    ((), False, ["40", "False"]),                                 # default → dev
    (("--riccati-thorough",), True, ["500"]),                     # the option wins over CI
])
def test_profile_selection(tmp_path, args, ci, expected):
    # (under CI, hypothesis itself derandomizes every profile, so only ci's own flag is compared)
    assert _profile(tmp_path, *args, ci=ci)[:len(expected)] == expected


def test_ci_mutation_profile_is_ci_without_shrinking():
    ci, mut = settings.get_profile("ci"), settings.get_profile("ci-mutation")
    assert (mut.max_examples, mut.derandomize, mut.deadline) == (ci.max_examples, ci.derandomize, ci.deadline)
    assert "shrink" not in {p.name for p in mut.phases} and "generate" in {p.name for p in mut.phases}
