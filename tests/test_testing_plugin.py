"""The pytest plugin (entry point pytest11) is opt-in: it registers hypothesis profiles and
loads one only when a suite or the user asks for it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import settings

from riccati_verify.app.pytest_plugin import chosen_profile

# prints the settings that hypothesis's tests in this run get, and whether our plugin ran
# (its profiles are registered), so a comparison with the plugin disabled is not vacuous
PROBE = """\
from hypothesis import settings

def test_probe():
    s = settings.default
    try:
        settings.get_profile("riccati-ci")
        registered = True
    except Exception:
        registered = False
    print("PROFILE", settings.get_current_profile_name(), s.max_examples, s.derandomize, s.deadline,
          s.database is None, sorted(h.name for h in s.suppress_health_check), "registered", registered)
"""


def _probe(tmp_path, *args, ci: bool, ini: str | None = None) -> str:
    project = tmp_path / ("ini" if ini else "plain")
    project.mkdir(exist_ok=True)
    (project / "test_probe.py").write_text(PROBE)
    if ini is not None:
        (project / "pytest.ini").write_text(f"[pytest]\nriccati_hypothesis_profile = {ini}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    if ci:
        env["CI"] = "true"
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", *args, "test_probe.py"],
                       capture_output=True, text=True, env=env, cwd=project, timeout=120)
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("PROFILE")), None)
    assert line is not None, r.stdout + r.stderr
    return line


def test_unrelated_suite_keeps_hypothesis_defaults(tmp_path):
    # an unrelated project under CI (no ini option, no profile option): the installed plugin is
    # loaded but the settings are exactly those of the same run with the plugin disabled,
    # i.e. hypothesis's own built-in 'ci' profile (the old plugin gave 15 examples here)
    with_plugin = _probe(tmp_path, ci=True)
    without = _probe(tmp_path, "-p", "no:riccati_verify", ci=True)
    assert with_plugin.endswith("registered True") and without.endswith("registered False")
    assert with_plugin.rsplit(" registered", 1)[0] == without.rsplit(" registered", 1)[0]
    assert with_plugin.split()[1] == "ci"


def test_unrelated_suite_outside_ci_gets_hypothesis_default_profile(tmp_path):
    line = _probe(tmp_path, ci=False, ini=None)
    d = settings.get_profile("default")
    assert line.split()[1:5] == ["default", str(d.max_examples), str(d.derandomize), str(d.deadline)]
    assert line.endswith("registered True")


def test_ini_option_auto_selects_the_fast_ci_profile(tmp_path):
    assert _probe(tmp_path, ci=True, ini="auto").split()[1:4] == ["riccati-ci", "15", "True"]


@pytest.mark.parametrize("thorough, explicit, ini, ci, expected", [
    (False, None, "", True, None),                         # nothing asked: nothing loaded, even under CI
    (False, None, "auto", True, "riccati-ci"),
    (False, None, "auto", False, "riccati-dev"),
    (False, "riccati-dev", "auto", True, None),             # --hypothesis-profile wins (hypothesis loads it)
    (False, None, "riccati-thorough", False, "riccati-thorough"),
    (True, None, "", False, "riccati-thorough"),
])
def test_chosen_profile(thorough, explicit, ini, ci, expected):
    assert chosen_profile(thorough, explicit, ini, ci) == expected


def test_this_suite_runs_under_its_ini_profile(request):
    # pyproject.toml sets riccati_hypothesis_profile = "auto": CI=true must give the fast profile
    if request.config.getoption("hypothesis_profile") or request.config.getoption("--riccati-thorough"):
        pytest.skip("a profile was requested on the command line")
    if os.environ.get("CI"):
        assert settings.get_current_profile_name() == "riccati-ci"
        assert (settings.default.max_examples, settings.default.derandomize) == (15, True)
    else:
        assert settings.get_current_profile_name() == "riccati-dev"
        assert settings.default.max_examples == 40


def test_ci_mutation_profile_is_ci_without_shrinking():
    ci, mut = settings.get_profile("riccati-ci"), settings.get_profile("riccati-ci-mutation")
    assert (mut.max_examples, mut.derandomize, mut.deadline) == (ci.max_examples, ci.derandomize, ci.deadline)
    assert "shrink" not in {p.name for p in mut.phases} and "generate" in {p.name for p in mut.phases}
