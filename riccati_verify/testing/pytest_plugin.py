"""pytest plugin (entry point `pytest11`): hypothesis profiles for riccati_verify suites.

Profiles: `ci` (derandomized, no deadline, few examples), `dev` (the default
outside CI), `thorough` (many examples), `ci-mutation` (`ci` without the shrink
and explain phases, for the mutation script).  Select with hypothesis's own
`--hypothesis-profile NAME`, or `--riccati-thorough`.  With neither, `ci` is
used when the CI environment variable is set, else `dev`.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

__all__ = ["pytest_addoption", "pytest_configure"]

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("ci", max_examples=15, derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("dev", max_examples=40, **_COMMON)
settings.register_profile("thorough", max_examples=500, **_COMMON)
# `ci` without shrinking/explaining: the same derandomized examples, so a test fails under
# `ci-mutation` exactly when it fails under `ci`; only the minimisation of the counterexample is
# skipped.  Used by tests/mutation/run_mutants.py, where only "does it fail" matters.
settings.register_profile("ci-mutation", parent=settings.get_profile("ci"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])


def pytest_addoption(parser):
    """Add --riccati-thorough, a shorthand that needs no profile name."""
    parser.addoption("--riccati-thorough", action="store_true", default=False,
                     help="use the 'thorough' hypothesis profile (many examples)")


def pytest_configure(config):
    """Choose the hypothesis profile before collection: --riccati-thorough wins, an explicit
    --hypothesis-profile is left to hypothesis, otherwise `ci` or `dev` by the CI variable."""
    explicit = config.getoption("hypothesis_profile", default=None)
    if config.getoption("--riccati-thorough"):
        settings.load_profile("thorough")
    elif not explicit:
        settings.load_profile("ci" if os.environ.get("CI") else "dev")
