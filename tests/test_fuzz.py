"""The CI slice of the standing fuzzing campaign (benchmarks/fuzz_campaign.py): hypothesis draws
the seeds of tampered certificates of every kind and hostile parameter files; none may crash
(an exception escaping `verify_certificate` or the parameter parser).  The full campaign, with
per-case time and memory limits, is the script."""

from __future__ import annotations

import importlib.util
import random
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

_spec = importlib.util.spec_from_file_location(
    "fuzz_campaign", Path(__file__).resolve().parent.parent / "benchmarks" / "fuzz_campaign.py")
fc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fc)
CORPUS = fc.certificates()


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(sorted(CORPUS)))
def test_tampered_certificates_never_crash(seed, name):
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for _ in range(1):
        doc, _how = fc.mutate(CORPUS[name], rng, CORPUS)
        assert isinstance(fc.run_certificate(doc), bool)
    assert time.perf_counter() - t0 < 60


@settings(deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_hostile_parameter_files_never_crash(seed):
    rng = random.Random(seed)
    for _ in range(5):
        assert fc.run_params(fc.hostile_params(rng)) in ("ok", "refused")


def test_campaign_counts_in_limited_children():
    c = fc.campaign(4, seed=1, time_limit=60, memory_mb=4096, out=open("/dev/null", "w"))
    assert c["tried"] == 4 and c["crashes"] == 0 and c["timeouts"] == 0
