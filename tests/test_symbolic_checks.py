"""The symbolic verification routines behind certified verdicts can fail (review s18, M2 and M3).

Each routine is run as shipped (it must hold) and against a deliberately wrong ingredient, monkeypatched
into the module it reads it from (it must then return False): a check that cannot fail would certify
anything."""

from __future__ import annotations

import sympy as sp

from riccati_verify.symbolic import multihead, noise


def _stratonovich_drift(f, y, a, g):
    """Itô's formula without its second-order term: the chain rule of ordinary calculus (wrong for Itô)."""
    grad = sp.Matrix([sp.diff(f, yi) for yi in y])
    return sp.expand((grad.T * a)[0]), sp.expand((grad.T * g)[0])


def test_moment_sde_check_holds_and_rejects_a_formula_without_the_ito_term(monkeypatch):
    assert noise.check_moment_sde(1) and noise.check_moment_sde(2)
    monkeypatch.setattr(noise, "ito_differential", _stratonovich_drift)
    assert not noise.check_moment_sde(1)


def test_exponent_check_holds_and_rejects_a_wrong_moment_exponent(monkeypatch):
    assert noise.check_exponents()
    # g(p) = pλ: the deterministic exponent, which forgets the noise's p²σ²/2 − pσ²/2
    monkeypatch.setattr(noise, "moment_exponent", lambda: noise.p_sym * noise.lam)
    assert not noise.check_exponents()


def test_exponent_check_rejects_a_wrong_pathwise_exponent(monkeypatch):
    monkeypatch.setattr(noise, "pathwise_exponent", lambda: noise.lam)
    assert not noise.check_exponents()


def test_head_limit_1d_check_holds_and_rejects_a_dropped_correlation_term(monkeypatch):
    assert multihead.check_head_limit_expectation_1d()
    real = multihead.head_limit_expectation

    def without_spread(d):
        EVSB, EV, spread, r = real(d)
        return EVSB.subs(r, 0), EV, spread, r       # the s²r Σ term of correlated heads dropped
    monkeypatch.setattr(multihead, "head_limit_expectation", without_spread)
    assert not multihead.check_head_limit_expectation_1d()
