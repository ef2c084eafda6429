"""Regression tests of the s18 training review (/work/lead/s18/review_training.md): H1, H2, M2, M3, M4.

Each test reproduces a finding with the review's own inputs; the expensive parts (training runs, the
validated flow of the d = 2 teacher) are stubbed where the verdict logic, not the computation, is under test."""

from __future__ import annotations

import json
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from riccati_verify.core.errors import InputError
from riccati_verify.core.result import ProofResult, Status, Verdict
from riccati_verify.numeric import training as T


# ----------------------------------------------------------------------------- H1

def test_shallow_exact_route_is_not_refuted_when_kappa_lo_is_not_proved(monkeypatch):
    # λ = 1/10: κ_lo = 1/10 − 2·(1/4)·√(1/2)·√L̄ < 0 (L̄ ≈ 0.8, tests/test_training_proofs.py), so the
    # Bakry–Émery lower bound proves nothing; the LSI is open, not false
    from riccati_verify.proofs import training_shallow as P

    monkeypatch.setattr(P, "EXAMPLE", dict(P.EXAMPLE, weight_decay="1/10"))
    assert not P.lsi_bound()["proved_positive"]
    v = P.symbolic_check()
    assert v.status is Status.NOT_CERTIFIED and "kappa_lower_proved_positive" in v.note, v.note
    overall = ProofResult(P.NAME, P.SEED, P.CLAIM, v, Verdict(Status.CONFIRMED_NUMERICALLY)).status
    assert overall is not Status.REFUTED


# ----------------------------------------------------------------------------- H2

# det = (1 − 10⁻¹³) − 1 < 0: eigenvalues ≈ 2 and −5·10⁻¹⁴, within the old float slack (review H2)
INDEFINITE = [[1, 1], [1, "9999999999999/10000000000000"]]
SHALLOW_D2 = {"regime": "shallow", "A": [[0, 0], [0, 0]], "mean": [0, 0], "cov": INDEFINITE,
              "loss": {"kind": "regression", "G": [[0, 0], [0, 0]]}, "heads": 8, "beta": 0, "weight_decay": 1,
              "step": "1/100", "steps": 1, "seed": 0}


def test_an_exactly_indefinite_cov_is_refused_where_the_spec_is_read():
    from riccati_verify.certify.training_wellposed import wellposedness
    from riccati_verify.core import exact

    S = [[Fraction(1), Fraction(1)], [Fraction(1), Fraction(9999999999999, 10 ** 13)]]
    assert not exact.is_psd(S)
    # the float eigenvalue is within rounding of 0: only the exact decision sees the sign
    assert np.linalg.eigvalsh(np.array(S, dtype=float))[0] > -1e-12
    for call in (T.spec_from_dict, wellposedness):
        with pytest.raises(InputError, match="positive semidefinite"):
            call(SHALLOW_D2)
    # the boundary stays accepted: a singular PSD cov (eigenvalues 2 and 0) is a valid degenerate token law
    T.spec_from_dict(dict(SHALLOW_D2, cov=[[1, 1], [1, 1]]))


def test_kl_needs_an_exactly_positive_definite_cov():
    # [[1, 6/7], [6/7, 36/49]] is singular (det = 36/49 − 36/49 = 0), yet in floats its smallest eigenvalue is
    # +5.6e-17, which the old float test accepted
    sing = [[1, "6/7"], ["6/7", "36/49"]]
    assert np.linalg.eigvalsh(np.array([[1, 6 / 7], [6 / 7, 36 / 49]]))[0] > 0
    doc = {"regime": "deep", "A": [[0, 0], [0, 0]], "mean": [0, 0], "cov": sing, "T": 1,
           "loss": {"kind": "kl", "target": {"mean": [0, 0], "cov": [[1, 0], [0, 1]]}}, "heads": 4, "beta": 0,
           "weight_decay": 1, "step": "1/10", "steps": 1, "seed": 0}
    with pytest.raises(InputError, match="positive definite"):
        T.spec_from_dict(doc)
    T.spec_from_dict(dict(doc, cov=[[1, "6/7"], ["6/7", "37/49"]]))     # det = 1/49 > 0


def test_hypotheses_training_wellposed_refuses_an_indefinite_cov(run):
    code, out, err = run("hypotheses", "training_wellposed", SHALLOW_D2, "--json")
    assert code == 2 and "positive semidefinite" in err, (code, out, err)


# ----------------------------------------------------------------------------- M2

def _fake_run(F_star, free_energy):
    s = np.linspace(0, 2, 21)
    return SimpleNamespace(free_energy_star=F_star, free_energy=free_energy, s=s, stopped="",
                           fixed_point_converged=F_star is not None, closure_free_energy=np.exp(-s) + (F_star or 0))


def test_shallow_gap_experiment_without_F_star_is_skipped_not_refuted(monkeypatch):
    from riccati_verify.proofs import training_shallow as P

    s = np.linspace(0, 2, 21)
    monkeypatch.setattr(T, "train", lambda spec, **k: _fake_run(None, np.exp(-s)))
    g = P.gap_decay(replicates=2, heads=4)          # the old code subtracted None here (TypeError)
    assert not g["fixed_point_converged"] and g["not_run"]
    monkeypatch.setattr(P, "gap_decay", lambda seed: g)
    v = P.numeric_check()
    assert v.skipped and v.status is Status.NOT_CERTIFIED, v
    pr = ProofResult(P.NAME, P.SEED, P.CLAIM, Verdict(Status.CERTIFIED), v)
    assert pr.status is Status.NOT_CERTIFIED and "evidence against" not in pr.reason, pr.reason


def test_shallow_numeric_route_still_reports_a_failed_comparison(monkeypatch):
    # the same route with a measured disagreement (the H → ∞ rate outside the replicates' interval) stays REFUTED
    from riccati_verify.proofs import training_shallow as P

    monkeypatch.setattr(P, "gap_decay", lambda seed: {"fixed_point_converged": True, "ci99": (1.0, 1.1),
                                                      "closure_rate": 2.0, "rate": 1.05})
    monkeypatch.setattr(P, "particle_error", lambda seed: {"fit": SimpleNamespace(contains=lambda x: True)})
    monkeypatch.setattr(T, "fd_check", lambda *a, **k: {"relative_error": 0.0})
    assert P.numeric_check().status is Status.REFUTED


def test_deep_d2_cross_check_without_an_enclosure_compares_nothing(monkeypatch):
    from riccati_verify.proofs import training_deep as D

    monkeypatch.setattr(D, "ntk_teacher", lambda seed=D.RNG_SEED: {"proved": False, "reason": "step budget spent"})
    monkeypatch.setattr(D, "local_rate", lambda seed=D.RNG_SEED: {"rate": 1.0, "predicted_at_end": 1.0})
    ev = {}
    assert D.ntk_d2_cross_check(ev) is None and "not compared" in ev["ntk_d2_float_vs_enclosure"]
    v = D.numeric_check()
    assert v.skipped and v.status is Status.NOT_CERTIFIED and "step budget spent" in v.note, v.note
    # a measured disagreement elsewhere (the local rate 2× its prediction) still reports REFUTED
    monkeypatch.setattr(D, "local_rate", lambda seed=D.RNG_SEED: {"rate": 2.0, "predicted_at_end": 1.0})
    assert D.numeric_check().status is Status.REFUTED


def test_wellposed_particles_outside_the_a_priori_set_are_a_skipped_comparison(monkeypatch):
    # the review's reproducer (c): particles drawn 3× too wide leave the set X̄; the Lipschitz ratio (stubbed
    # to 1e-9) and every measured moment are within their bounds, so nothing was found against the claim
    from riccati_verify.proofs import training_wellposed as W

    real = W._heads_from_law
    monkeypatch.setattr(W, "_heads_from_law", lambda spec, st, rng: [(3 * V, 3 * B) for V, B in real(spec, st, rng)])
    monkeypatch.setattr(T, "gradient_lipschitz", lambda model, heads, seed=0: {"lipschitz_lower_bound": 1e-9})
    v = W.numeric_check()
    assert v.skipped and v.status is Status.NOT_CERTIFIED and "a-priori set" in v.note, v.note
    assert v.evidence["shallow"]["particles_in_a_priori_set"] is False
    # the same particles with a measured ratio far above any bound: a measured excess, REFUTED
    monkeypatch.setattr(T, "gradient_lipschitz", lambda model, heads, seed=0: {"lipschitz_lower_bound": 1e9})
    monkeypatch.setattr(W, "_heads_from_law", real)
    assert W.numeric_check().status is Status.REFUTED


# ----------------------------------------------------------------------------- M3

# the review's r_cli_crashes.sh (a): the initial heads' flow blows up at step 0 (k = E[VB] ≈ 1 > 1/(2σ0T) = 1/2)
BLOWUP = {"regime": "deep", "A": [[0]], "mean": [0], "cov": [[1]], "T": 1,
          "loss": {"kind": "frobenius", "target": {"mean": [0], "cov": [[2]]}},
          "heads": 2, "beta": 0, "weight_decay": 0, "step": "1/10", "steps": 5, "seed": 0,
          "init": {"V": [[1]], "B": [[1]], "spread": "1/1000"}}


def test_train_stopped_at_step_0_gives_a_result_not_an_internal_error(run):
    code, out, err = run("train", BLOWUP, "--quiet")
    assert code == 1 and "STOPPED before the first record: step 0" in out and "internal" not in err, (out, err)
    code, out, err = run("train", BLOWUP, "--quiet", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["status"] == "not certified" and doc["stopped"].startswith("step 0"), (out, err)


def test_train_refuses_a_spread_lost_to_rounding(run):
    # (b): β > 0 with spread 10⁻¹⁹⁰, whose square underflows: the old code summed a None entropy (exit 3)
    tiny = {"regime": "shallow", "A": [[0]], "mean": [1], "cov": [[1]], "loss": {"kind": "regression", "G": [[1]]},
            "heads": 8, "beta": "1/100", "weight_decay": 1, "step": "1/10", "steps": 5, "seed": 0,
            "init": {"spread": "1e-190"}}
    code, out, err = run("train", tiny, "--quiet")
    assert code == 2 and "init.spread" in err and "internal" not in err, err
    # relative to the initial heads: at V0 = 2^50 a spread of 1 keeps only 2 bits (the ulp is 1/4), below the
    # floor 2^-40·2^50 = 1024
    code, out, err = run("train", dict(tiny, init={"V": [[2 ** 50]], "spread": 1}), "--quiet")
    assert code == 2 and "init.spread" in err, err
    code, out, err = run("train", dict(tiny, init={"spread": "1/1000"}), "--quiet")
    assert code in (0, 1) and "status:" in out, err


def test_a_collapsed_sample_covariance_drops_the_free_energy_instead_of_crashing(monkeypatch):
    spec = T.spec_from_dict({"regime": "shallow", "A": [[0]], "mean": [1], "cov": [[1]],
                             "loss": {"kind": "regression", "G": [[1]]}, "heads": 8, "beta": "1/100",
                             "weight_decay": 1, "step": "1/10", "steps": 3, "seed": 0, "record_every": 1})
    calls = []
    real = T.entropy_gaussian_estimate
    monkeypatch.setattr(T, "entropy_gaussian_estimate", lambda X: calls.append(1) or (None if len(calls) == 2 else real(X)))
    r = T.train(spec, closure=False)
    assert r.free_energy is None and "singular" in r.entropy_note and len(r.loss) == 4, r.entropy_note


# ----------------------------------------------------------------------------- M4

DEEP_D1 = {"regime": "deep", "A": [[0]], "mean": ["1/2"], "cov": [[1]], "T": 1,
           "loss": {"kind": "frobenius", "target": {"mean": [0], "cov": [[2]]}}, "heads": 4, "beta": 0,
           "weight_decay": 0, "step": "1/20", "steps": 1, "seed": 3, "init": {"spread": "1/4"}}


class _Counter:
    def __init__(self):
        self.views = []

    def __call__(self, total, label):
        view = SimpleNamespace(label=label, units=0, notes=[], closed=False)
        view.update = lambda n, note: (setattr(view, "units", view.units + n), view.notes.append(note))
        view.close = lambda: setattr(view, "closed", True)
        self.views.append(view)
        return view


def test_hypotheses_training_deep_reports_each_validated_step():
    from riccati_verify.core.progress import set_renderer
    from riccati_verify.proofs import training_deep as D

    counter = _Counter()
    previous = set_renderer(counter)
    try:
        out = D.hypotheses(DEEP_D1)
    finally:
        set_renderer(previous)
    steps = out[0].witness["validated_steps"]
    (view,) = [v for v in counter.views if "validated NTK flow" in v.label]
    assert out[0].holds and steps > 0 and view.units == steps and view.closed, (steps, view)


def test_hypotheses_training_deep_bounds_the_flow_by_its_work(monkeypatch):
    from riccati_verify.certify import training_ntk as N
    from riccati_verify.proofs import training_deep as D

    # per-step work grows with the segments: d = 3 with 16 segments gets 600000 // (9·16·90 + 64) = 46 steps
    seen = {}

    def fake(*a, max_steps, progress, **k):
        seen["max_steps"] = max_steps
        return {"proved": False, "reason": "stub"}

    monkeypatch.setattr(N, "ntk_certified_segments", fake)
    d = 3
    I = [[1 if i == j else 0 for j in range(d)] for i in range(d)]
    doc = dict(DEEP_D1, A=[[0] * d for _ in range(d)], mean=["1/2"] + [0] * (d - 1), cov=I, T=100, segments=16,
               heads=1, loss={"kind": "frobenius", "target": {"mean": [0] * d, "cov": I}})
    D.hypotheses(doc)
    assert seen["max_steps"] == 46 == D.HYPOTHESES_FLOW_WORK // N.flow_step_work(3, 16)
    D.hypotheses(DEEP_D1)
    assert seen["max_steps"] == N.MAX_STEPS           # small specs keep the full step budget


def test_an_exhausted_work_budget_leaves_the_hypotheses_undecided_with_the_reason(monkeypatch):
    from riccati_verify.certify import training_ntk as N
    from riccati_verify.proofs import training_deep as D

    monkeypatch.setattr(D, "HYPOTHESES_FLOW_WORK", 2 * N.flow_step_work(1, 1))
    out = D.hypotheses(DEEP_D1)
    assert [h.holds for h in out] == [None, None] and "step budget 2 spent" in out[0].witness["reason"], out
    assert "work bound" in out[0].witness["note"]


# ----------------------------------------------------------------------------- L3

def test_the_fixed_point_phase_shows_its_progress():
    # tests/test_training.py's shallow spec with λ = 1/10: the Gibbs iteration does not contract and F* comes
    # from plain closure iteration (about 9 700 iterations, 0.6 s: review L3), which used to run silently
    from riccati_verify.core.progress import set_renderer

    doc = {"regime": "shallow", "A": [[0, "1/2"], [0, 0]], "mean": [1, "-1/2"], "cov": [[1, "1/4"], ["1/4", "1/2"]],
           "loss": {"kind": "regression", "G": [[2, 0], [1, 1]], "c": [0, 1]}, "heads": 64, "beta": "1/100",
           "weight_decay": "1/10", "step": "1/10", "steps": 60, "seed": 1}
    counter = _Counter()
    previous = set_renderer(counter)
    try:
        r = T.train(T.spec_from_dict(doc), progress=True)
    finally:
        set_renderer(previous)
    (view,) = [v for v in counter.views if "fixed point" in v.label]
    assert r.fixed_point_converged and view.closed and any("plain iteration" in n for n in view.notes), view.notes
