"""pytest plugin (entry point `pytest11`): opt-in hypothesis profiles for riccati_verify suites.

Installing the package installs this plugin into every pytest run on the machine, so it
only *registers* profiles and loads one only when the suite or the user asks for it
(hypothesis's own advice), and it lives in `riccati_verify.app`, whose import costs nothing:
under `riccati_verify.testing` every pytest run would import numpy, scipy and sympy.  A suite that does not ask keeps hypothesis's settings,
including hypothesis's built-in ``ci`` profile under CI (which is why no profile here is
named ``ci``).

Profiles:

- ``riccati-ci``: 15 derandomized examples, no deadline (a fast CI run);
- ``riccati-dev``: 40 examples, no deadline;
- ``riccati-thorough``: 500 examples, no deadline;
- ``riccati-ci-mutation``: ``riccati-ci`` without the shrink and explain phases, for the
  mutation script (only "does it fail" matters there).

Ways to ask:

- hypothesis's own ``--hypothesis-profile riccati-thorough`` (any registered name);
- ``--riccati-thorough``, a shorthand for the line above;
- the ini option ``riccati_hypothesis_profile`` (pytest.ini, or ``[tool.pytest.ini_options]``
  in pyproject.toml): a profile name, or ``auto`` for ``riccati-ci`` when the ``CI``
  environment variable is set and ``riccati-dev`` otherwise.  An explicit
  ``--hypothesis-profile`` on the command line wins over the ini option.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

__all__ = ["INI_OPTION", "PROFILES", "chosen_profile", "pytest_addoption", "pytest_configure"]

INI_OPTION = "riccati_hypothesis_profile"
PROFILES = ("riccati-ci", "riccati-dev", "riccati-thorough", "riccati-ci-mutation")

_COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("riccati-ci", max_examples=15, derandomize=True, print_blob=True, **_COMMON)
settings.register_profile("riccati-dev", max_examples=40, **_COMMON)
settings.register_profile("riccati-thorough", max_examples=500, **_COMMON)
# the same derandomized examples as riccati-ci, so a test fails under this profile exactly when
# it fails under riccati-ci; only the minimisation of the counterexample is skipped
settings.register_profile("riccati-ci-mutation", parent=settings.get_profile("riccati-ci"),
                          phases=[Phase.explicit, Phase.reuse, Phase.generate])


def pytest_addoption(parser):
    """Add --riccati-thorough and the ini option; neither has an effect unless used."""
    parser.addoption("--riccati-thorough", action="store_true", default=False,
                     help="load the 'riccati-thorough' hypothesis profile (500 examples)")
    parser.addini(INI_OPTION, default="",
                  help="hypothesis profile this suite loads: a registered name, or 'auto' "
                       "(riccati-ci when the CI variable is set, else riccati-dev); empty: none")


def chosen_profile(thorough: bool, explicit: str | None, ini: str, ci: bool) -> str | None:
    """The profile the plugin loads, or None to leave hypothesis's settings alone.

    An explicit ``--hypothesis-profile`` is hypothesis's own business (its plugin loads it).
    """
    if thorough:
        return "riccati-thorough"
    if explicit or not ini:
        return None
    if ini == "auto":
        return "riccati-ci" if ci else "riccati-dev"
    return ini


def pytest_configure(config):
    """Load the requested profile before collection; nothing when nothing was requested."""
    name = chosen_profile(config.getoption("--riccati-thorough"),
                          config.getoption("hypothesis_profile", default=None),
                          str(config.getini(INI_OPTION)).strip(), bool(os.environ.get("CI")))
    if name is not None:
        settings.load_profile(name)  # an unknown name raises InvalidArgument: a usage error
