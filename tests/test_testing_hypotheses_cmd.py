"""`riccati-verify hypotheses THEOREM PARAMS`: exit codes, witnesses, and agreement with closed forms."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from riccati_verify.testing import strategies as rst
from riccati_verify.core.io import Problem


SCALAR_BLOWUP = {"A": [[1]], "B": [[1]], "V": 1, "mean": [0], "cov": [[1]]}   # T* = ln(2)/2 (MATH.md §6)
OPPOSITE = {"A": [[1, 0], [0, 2]], "B": [[-1, 0], [0, -1]], "V": 1, "mean": [0, 0], "cov": [[2, 1], [1, 1]]}


def test_gaussian_invariance_hypotheses_hold_with_exact_pivots(cli, write_json):
    r = cli("hypotheses", "gaussian_invariance", write_json(OPPOSITE), "--json")   # the installed CLI
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["all_hold"] and [h["holds"] for h in out["hypotheses"]] == [True, True]
    # LDLᵀ of [[2, 1], [1, 1]] by hand: pivots 2 and 1 − 1·1/2 = 1/2
    assert out["hypotheses"][1]["witness"]["ldl_pivots"] == ["2", "1/2"]


def test_blowup_makes_existence_hypothesis_fail_and_is_named(run, write_json):
    p = write_json(SCALAR_BLOWUP)
    code, stdout, _ = run("hypotheses", "rank_invariance", p, "--json")
    assert code == 1
    out = json.loads(stdout)
    assert out["failed"] == ["the solution exists for all t >= 0 (no blow-up)"]
    w = out["hypotheses"][0]["witness"]
    assert Fraction(w["lower"]) < Fraction(math.log(2) / 2) < Fraction(w["upper"])
    code, stdout, _ = run("hypotheses", "rank_invariance", p)
    assert code == 1 and "hypothesis failed: the solution exists" in stdout


@pytest.mark.parametrize("time, code", [("1/100", 0), ("0.34", 0), ("0.35", 1), ("1", 1)])
def test_existence_on_a_horizon(run, write_json, time, code):
    # T* = ln(2)/2 = 0.34657...: horizons below it hold, above it fail
    got, out, err = run("hypotheses", "rank_invariance", write_json(SCALAR_BLOWUP), "--time", time, "--json")
    assert got == code, out + err


def test_opposite_signs_exist_for_all_time(run, write_json):
    code, out, _ = run("hypotheses", "rank_invariance", write_json(OPPOSITE), "--json")
    assert code == 0 and json.loads(out)["all_hold"]


@pytest.mark.parametrize("args, fragment", [
    (("nope",), "unknown proof"),
    (("pretrained_gaussianity",), "no hypotheses checkable"),
    (("rank_invariance", "--time", "-1"), "must be positive"),
    (("rank_invariance", "--time", "abc"), "malformed rational"),
    (("gaussian_invariance", "--time", "1"), "no hypothesis that depends on a horizon"),
])
def test_bad_input_exit_2_one_line(run, write_json, args, fragment):
    theorem, *rest = args
    code, _, err = run("hypotheses", theorem, write_json(SCALAR_BLOWUP), *rest)
    assert code == 2 and fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_missing_state_is_bad_input(run, write_json):
    code, _, err = run("hypotheses", "gaussian_invariance", write_json({"A": [[1]], "B": [[1]], "V": 1}))
    assert code == 2 and "no Gaussian state" in err


def _scalar_blows_up(a: Fraction, vb: Fraction, s0: Fraction) -> bool:
    # MATH.md §6: blow-up iff vβ > 0 and a + vβσ0 > 0 (σ0 > 0)
    return s0 > 0 and vb > 0 and a + vb * s0 > 0


@settings(max_examples=10)
@given(rst.params(1, scalar_V=True, max_magnitude=2), rst.gaussians(1))
def test_existence_hypothesis_agrees_with_scalar_closed_form(p, g):
    from riccati_verify.proofs.rank_invariance import hypotheses

    (h,) = hypotheses(Problem(p, g))
    expected = not _scalar_blows_up(p.A[0][0], p.V[0][0] * p.B[0][0], g.cov[0][0])
    assert h.holds is expected, h.witness


# -- the strategies build regimes exactly; the exact predicates must recognise them ----------

@settings(max_examples=10)
@given(st.data())
def test_stability_hypotheses_hold_on_strategy_regimes(data):
    from riccati_verify.proofs.stability import hypotheses

    signs = data.draw(st.sampled_from(["opposite", "same"]))
    p = data.draw(rst.params(st.integers(1, 3), signs=signs, scalar_V=True, A_spectrum="anti_hurwitz"))
    g = data.draw(rst.gaussians(p.dim, rank=p.dim))
    checks = hypotheses(Problem(p, g))
    assert [c.holds for c in checks] == [True, True, True, True], checks
    vB = checks[2].witness["definiteness"]
    assert vB == ("negative definite" if signs == "opposite" else "positive definite")


@settings(max_examples=10)
@given(rst.params(st.integers(1, 3), signs="opposite", A_spectrum="hurwitz"))
def test_stability_hypotheses_fail_where_they_should(p):
    from riccati_verify.proofs.stability import hypotheses

    by = {c.name: c.holds for c in hypotheses(Problem(p, None))}
    assert by["Re λ(A) > 0 for all eigenvalues"] is False          # A is Hurwitz by construction
    assert by["V = vI"] is (p.V_scalar is not None)


def test_singular_state_fails_positive_definiteness(run, write_json):
    doc = dict(OPPOSITE, cov=[[1, 1], [1, 1]])
    code, out, _ = run("hypotheses", "stability", write_json(doc), "--json")
    assert code == 1 and json.loads(out)["failed"] == ["Σ0 positive definite"]


def test_bernoulli_scalar_names_the_dimension(run, write_json):
    code, out, _ = run("hypotheses", "bernoulli_scalar", write_json(OPPOSITE), "--json")
    assert code == 1 and json.loads(out)["failed"] == ["d = 1"]
