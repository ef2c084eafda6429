"""Issue 13's acceptance property: among general instances whose independent high-precision
integration converges (to an equilibrium or to 0), at least 90% are certified at d <= 4, and none
is ever certified wrongly.

Instances: the public strategies `general_instances` (the issue's distribution) and
`opposite_instances` (the same draws moved into the seed theorem's opposite-sign class, where most
draws converge; the issue's family almost never converges at d = 4).  A rate is a statement about
a sample, so it is measured on the strategies' deterministic twins `general_instance(d, seed, i)`
and `opposite_instance(d, seed, i)`; "never wrongly" is a property over hypothesis draws too.
Reference: `testing.strategies.reference_fate` (scipy DOP853 at rtol 1e-12, horizon 200), judged
as in tests/test_regime_general.py.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, example, given, settings

from riccati_verify.core import exact
from riccati_verify.certify.stability import classify_regime
from riccati_verify.testing.strategies import (general_instance, opposite_instance, opposite_instances,
                                               reference_fate)
from tests.test_regime_general import _consistent, _diagonal

_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])


@settings(max_examples=15, **_SETTINGS)
@given(opposite_instances(3))
def test_opposite_instances_are_in_the_opposite_sign_class(inst):
    p, s = inst
    Vs, Bs = exact.sym_part(p.V), exact.sym_part(p.B)
    assert exact.is_pd(tuple(tuple(-x for x in r) for r in Vs)) and exact.is_pd(Bs) and exact.is_pd(s.cov)


def _classify_child(make, d, seed, i, fate, q):
    import time

    p, s = make(d, seed, i)
    t0 = time.process_time()
    r = classify_regime(p, s)
    try:
        _consistent(fate, r, (p, s))     # never wrongly: the certified regime agrees with the integration
        wrong = None
    except AssertionError as e:
        wrong = repr(e) or "disagrees"
    q.put((bool(r.certified), r.regime, wrong, time.process_time() - t0))


def _rate(sample, rows: dict | None = None, limit: float = 120.0) -> tuple[int, int, list]:
    """(converging, certified, the converging ones not certified) over (family, d, seed, i); each
    classification runs in a child process with a wall limit, and one past it counts as not
    certified.  `rows` collects [converging, certified, CPU seconds] per (family, d)."""
    import multiprocessing as mp

    conv, cert, missed = 0, 0, []
    ctx = mp.get_context("fork")
    for make, d, seed, i in sample:
        p, s = make(d, seed, i)
        fate = reference_fate(p, s)
        if fate["fate"] not in ("equilibrium", "collapse"):
            continue
        conv += 1
        q = ctx.Queue()
        pr = ctx.Process(target=_classify_child, args=(make, d, seed, i, fate, q))
        pr.start()
        pr.join(limit)
        if pr.is_alive():
            pr.terminate()
            pr.join()
            got = (False, f"timeout {limit:g} s", None, limit)
        else:
            got = q.get() if not q.empty() else (False, "child failed", None, limit)
        certified, regime, wrong, cpu = got
        assert wrong is None, (make.__name__, d, i, wrong)
        row = rows.setdefault((make.__name__, d), [0, 0, 0.0]) if rows is not None else [0, 0, 0.0]
        row[0] += 1
        row[1] += certified
        row[2] += cpu
        if certified:
            cert += 1
        else:
            missed.append((make.__name__, d, i, regime))
    return conv, cert, missed


def test_converging_opposite_instances_at_d2_are_certified():
    # fast version: three draws of the opposite family at d = 2 (all converge; about 1.5 s of CPU)
    conv, cert, missed = _rate([(opposite_instance, 2, 0, i) for i in (1, 2, 3)])
    assert conv >= 2 and cert >= 0.9 * conv, missed


@settings(max_examples=2, **_SETTINGS)
@given(opposite_instances(2))
def test_opposite_instances_never_certified_wrongly(inst):
    p, s = inst
    fate = reference_fate(p, s, wall=2.0)
    assume(fate["fate"] in ("equilibrium", "collapse"))
    _consistent(fate, classify_regime(p, s), (p, s))


@pytest.mark.slow
@settings(max_examples=20, **_SETTINGS)
@given(opposite_instances(3))
@example(_diagonal([0, 0, Fraction(1, 2)], [Fraction(-1, 4)] * 3, [Fraction(1, 4)] * 3, [Fraction(1, 4)] * 3))
def test_opposite_instances_never_certified_wrongly_d3(inst):
    # no draw is filtered out: one that the references cannot judge is reported (warning and
    # hypothesis event "undecided"); the assertion is about wrong certificates only
    p, s = inst
    event(_consistent(reference_fate(p, s), classify_regime(p, s), (p, s)))


SLOW_SAMPLE = ([(general_instance, 2, 0, i) for i in range(24)] + [(general_instance, 3, 0, i) for i in (28, 43, 59, 77)]
               + [(opposite_instance, d, 0, i) for d in (2, 3, 4) for i in range(12)])
"""The issue family at d = 2 (i < 24) and its converging d = 3 draws among i < 80 (bench_regime),
and the opposite family at d = 2, 3, 4 (i < 12)."""


@pytest.mark.slow
def test_at_least_90_percent_of_converging_instances_are_certified_at_d_le_4():
    rows: dict = {}
    conv, cert, missed = _rate(SLOW_SAMPLE, rows)
    for (fam, d), (c, k, t) in sorted(rows.items()):
        print(f"{fam} d = {d}: converging {c}, certified {k}, CPU {t:.1f} s")
    print(f"converging {conv}, certified {cert} ({cert / max(conv, 1):.0%}); not certified: {missed}")
    assert conv >= 30 and cert >= 0.9 * conv, missed


def test_reference_fate_sees_convergence_of_a_known_instance():
    # the rate above is only as good as the reference: a d = 2 opposite draw converges by it to a
    # Σ with F(Σ) ≈ 0 (checked here on F itself, not on the reference's own test)
    p, s = opposite_instance(2, 0, 0)
    fate = reference_fate(p, s)
    assert fate["fate"] in ("equilibrium", "collapse")
    A, B, V = (np.array(M, dtype=float) for M in (p.A, p.B, p.V))
    S = fate["limit"]
    Y = (A + V @ S @ B) @ S
    assert np.linalg.norm(Y + Y.T) <= 1e-8 * max(1.0, np.linalg.norm(S))
