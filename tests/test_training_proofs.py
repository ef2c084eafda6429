"""proofs/training_shallow (and the rigorous LSI bound of certify.training)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from riccati_verify.certify.training import shallow_lsi_lower_bound
from riccati_verify.core.result import Status


def _example(**changes):
    from riccati_verify.proofs.training_shallow import EXAMPLE

    e = dict(EXAMPLE, **changes)
    F = lambda X: [[Fraction(x) for x in r] for r in X]
    v = lambda x: [Fraction(y) for y in x]
    return (F(e["A"]), v(e["b"]), v(e["mean"]), F(e["cov"]), F(e["G"]), v(e["c"]), F(e["V0"]), F(e["B0"]),
            Fraction(e["spread"]), Fraction(e["weight_decay"]), Fraction(e["beta"]))


def test_lsi_bound_of_the_example_by_hand():
    # V0 = B0 = 0: D = 1 + a − g = 1 − 1/2 − 3/2 = −1, r = D·m + b − c = −1/2 − 1/4 = −3/4,
    # L0 = r² + D²σ = 9/16 + 1/4 = 13/16.  E|θ|² = D·s0² = 2/4, h = log(2πe/4), β = 1/20, λ = 1:
    # F0 = 13/16 + 1/4 − log(2πe/4)/20; L̄ = F0 + (1/20)log(2π/20); κ_lo = 1 − 2·(1/4)·√(1/4 + 1/4)·√L̄
    import math

    b = shallow_lsi_lower_bound(*_example())
    F0 = 13 / 16 + 1 / 4 - math.log(2 * math.pi * math.e / 4) / 20
    kappa = 1 - 0.5 * math.sqrt(0.5) * math.sqrt(F0 + math.log(2 * math.pi / 20) / 20)
    assert b["L0"] == Fraction(13, 16) and b["proved_positive"]
    assert abs(float(b["kappa_lower"].mid()) - kappa) < 1e-12 and b["kappa_lower"].rad() < 1e-15


def test_lsi_bound_is_not_claimed_for_weak_weight_decay():
    # λ = 1/10: L̄ ≈ 0.82, so κ_lo ≈ 1/10 − 0.35·√L̄ ≈ −0.22 < 0: no uniform LSI from this bound
    b = shallow_lsi_lower_bound(*_example(weight_decay="1/10"))
    assert not b["proved_positive"] and b["kappa_lower"] < 0


def test_coded_gradient_check_rejects_a_wrong_gradient(monkeypatch):
    from riccati_verify.numeric import training as T
    from riccati_verify.proofs import training_shallow as P

    assert P._coded_gradient_is_the_derivative(1)
    good = T.ShallowModel.loss
    monkeypatch.setattr(T.ShallowModel, "loss", lambda self, Vb, K: (lambda L, GV, GK: (L, 2 * GV, GK))(*good(self, Vb, K)))
    assert not P._coded_gradient_is_the_derivative(1)


def test_replicate_rate_interval_excludes_a_wrong_rate():
    from riccati_verify.proofs.training_shallow import _replicate_rates

    rng = np.random.default_rng(3)
    s = np.linspace(0, 2, 41)
    G = np.array([np.exp(-2.0 * s) * (1 + 0.01 * rng.standard_normal(s.size)) for _ in range(8)])
    r, ci, _ = _replicate_rates(s, G, (0.2, 1.8))
    assert ci[0] <= 2.0 <= ci[1] and not ci[0] <= 2.1 <= ci[1]


@pytest.mark.slow
def test_training_shallow_proof():
    from riccati_verify.proofs import training_shallow

    r = training_shallow.check()
    assert r.status is Status.CERTIFIED, r.to_dict()


# ----------------------------------------------------------------------------- activation class

@pytest.mark.slow
def test_softplus_and_relu_classification():
    # softplus'' = σ(1 − σ) ∈ (0, 1/4]: Lipschitz derivative, positive, inf 0; ReLU' jumps by 1 at 0
    from riccati_verify.proofs import activation_class as P

    sp_ = P.classify("softplus")
    assert sp_["lipschitz_constant"] == P.sp.Rational(1, 4) and sp_["second_positive"] and sp_["inf_second"] == "0"
    relu = P.classify("relu")
    assert relu["derivative_jump_at_0"] == "1" and not relu["lipschitz_derivative"]


def test_activation_table_check_rejects_a_wrong_entry():
    from riccati_verify.proofs import activation_class as P

    got = P.classify("softplus")
    assert P._agrees(got, P.EXPECTED["softplus"])
    assert not P._agrees(got, dict(P.EXPECTED["softplus"], lipschitz_constant=P.sp.Rational(1, 2)))
    assert not P._agrees(got, dict(P.EXPECTED["softplus"], second_positive=False))


@pytest.mark.slow
def test_activation_class_proof():
    from riccati_verify.proofs import activation_class

    r = activation_class.check()
    assert r.status is Status.CERTIFIED, r.to_dict()
    assert not any(r.symbolic.evidence[n]["satisfies_seed_condition"] for n in activation_class.ACTIVATIONS)


# ----------------------------------------------------------------------------- depth limit

def test_batched_attention_is_attention_path_by_path():
    from riccati_verify.numeric.simulate.attention import attention
    from riccati_verify.numeric.simulate.depth import _batched_attention

    rng = np.random.default_rng(11)
    X, B = rng.standard_normal((3, 20, 2)), rng.standard_normal((2, 2))
    got = _batched_attention(X, B)
    # same log-sum-exp arithmetic on O(1) values: agreement to rounding (1e-12)
    assert all(np.abs(got[p] - attention(X[p], B).value).max() < 1e-12 for p in range(3))


def test_strong_errors_of_pure_noise_match_the_exact_local_error():
    # A = B = V = 0: the Euler log-error is −Σσ²(ΔW² − h)/2 + O(h^{3/2}), so the L² relative error
    # against the fine path is σ²√((h − h_f)/2) to leading order (depth_limit docstring); 64 paths give
    # a Monte Carlo error ≈ 1/√(2·64) ≈ 9 % of the value, and the O(h) correction at h = 1/64 is ≈ 3 %
    from riccati_verify.core.model import Gaussian, Params
    from riccati_verify.numeric.simulate.depth import strong_errors

    P0 = Params.from_arrays([[0, 0], [0, 0]], [[0, 0], [0, 0]], [[0, 0], [0, 0]], [0, 0])
    st = Gaussian.from_arrays([0, 0], [[1, 0], [0, 1]])
    E = strong_errors(P0, st, 8, 1.0, 0.5, 1024, (64,), 64, seed=4)
    pred = 0.25 * math.sqrt((1 / 64 - 1 / 1024) / 2)
    assert abs(math.sqrt(np.mean(E ** 2)) - pred) < 0.3 * pred


@pytest.mark.slow
def test_depth_limit_local_errors():
    from riccati_verify.proofs import depth_limit as P

    le = P.local_errors()
    lam, sig, eps = le["symbols"]
    assert P.sp.simplify(le["ms_euler"] - sig ** 4 * eps ** 4 / 2) == 0 and le["ms_milstein"] == 0


@pytest.mark.slow
def test_depth_limit_proof():
    from riccati_verify.proofs import depth_limit

    r = depth_limit.check()
    # the exact route covers the linear case only: the theorem is at best confirmed numerically
    assert r.symbolic.status is Status.NOT_CERTIFIED and r.status is Status.CONFIRMED_NUMERICALLY, r.to_dict()


@pytest.mark.slow
def test_training_report_figures(tmp_path):
    from riccati_verify.app.training_figures import TRAINING_FIGURES

    figs = [fn(tmp_path, 3) for _, fn in TRAINING_FIGURES]
    assert all(f.png is not None and f.png.stat().st_size > 0 and not f.error for f in figs)
    pe = figs[1].facts
    assert pe["ci99"][0] <= -1 <= pe["ci99"][1] and pe["seed"] == 3


def test_prove_report_draws_the_training_figures(tmp_path):
    import subprocess
    import sys

    # training_figures imported first, in a fresh interpreter: the import order that made a cycle
    # when it took its helpers from app.report and app.report listed it
    code = ("import riccati_verify.app.training_figures as t, riccati_verify.app.report as r; "
            "assert all(x in r.FIGURES for x in t.TRAINING_FIGURES)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    from riccati_verify.app.report import write_report

    md, _ = write_report(tmp_path, [], seed=5, only=["particle_error"], progress=False)
    text = md.read_text(encoding="utf-8")
    assert "## Training: particle error O(1/H)" in text and "![Training: particle error O(1/H)]" in text
    assert (tmp_path / "plots" / "particle_error.png").stat().st_size > 0 and "Not produced" not in text
    assert '"seed": 5' in text
