"""What the verdict layer prints and returns never claims more than was proved (review, session 17).

Each test fails on the code before the fix it pins:
- the diagonal route's blow-up bracket is the minimum of the coordinates' brackets in exact
  rationals (it was picked by float lower ends: a tie within 2^-53 kept a later coordinate);
- an exact test stopped by its work budget leaves the mean's stability undecided, not failed;
- a rigorous bracket in the examples table and printed bounds are rounded outward.
"""

from fractions import Fraction as Q
from types import SimpleNamespace

from riccati_verify.app import cli
from riccati_verify.app.commands.check import _key_numbers
from riccati_verify.app.output import bound_text
from riccati_verify.certify.stability import classify_regime
from riccati_verify.core.model import Gaussian, Params


def _between(lo: str, x: Q, hi: str) -> bool:
    return Q(lo) <= x <= Q(hi)


def test_diagonal_blowup_bracket_holds_the_earliest_time_below_float_resolution():
    # σ̇_i = 2 v_i b_i σ_i² blows up at T_i = 1/(2 v_i b_i σ_i(0)): T_1 = 1/2 and T_2 = 1/(2(1 + 10^-25)),
    # the earlier one, equal to T_1 in floats
    eps = Q(1, 10 ** 25)
    p = Params(((Q(0), Q(0)), (Q(0), Q(0))), ((Q(1), Q(0)), (Q(0), Q(1, 2))), ((Q(1), Q(0)), (Q(0), Q(2))),
               (Q(0), Q(0)))
    s = Gaussian((Q(0), Q(0)), ((Q(1), Q(0)), (Q(0), 1 + eps)))
    r = classify_regime(p, s)
    assert r.regime == "blowup" and r.certified and r.blowup["rigorous"]
    T = 1 / (2 * (1 + eps))
    assert _between(r.blowup["lower"], T, r.blowup["upper"])
    assert Q(r.blowup["upper"]) < Q(1, 2)          # the later coordinate's time is not the answer


def test_a_work_budget_leaves_the_mean_undecided_not_failed():
    # diagonal, M = A + V + VΣ*B = diag(v_i)·… Hurwitz in truth; 20 rationals of ~960 bits put the
    # exact characteristic polynomial past its work budget, which decides nothing
    d = 20
    big = 10 ** 290
    v = [-Q(big + 2 * i + 1, big + i) for i in range(d)]
    I = tuple(tuple(Q(int(i == j)) for j in range(d)) for i in range(d))
    V = tuple(tuple(v[i] if i == j else Q(0) for j in range(d)) for i in range(d))
    r = classify_regime(Params(I, I, V, (Q(0),) * d), Gaussian((Q(0),) * d, I))
    h = next(h for h in r.hypotheses if h.name.startswith("M = A + V + V Sigma* B Hurwitz"))
    assert h.holds is None and "budget" in h.witness["undecided"]
    assert r.equilibrium["mean_stable"] is None


def test_examples_table_prints_a_rigorous_bracket_outward():
    lo, hi = "0.4999999999999999999999999995", "0.5000000000000000000000000005"
    text = _key_numbers(SimpleNamespace(regime="blowup", blowup={"lower": lo, "upper": hi, "rigorous": True}))
    a, b = text.split("(")[1].rstrip("]").split(", ")
    assert Q(a) <= Q(lo) and Q(hi) <= Q(b) and Q(a) < Q(b)
    lo, hi = "12.99999999999", "13.00000000001"
    text = _key_numbers(SimpleNamespace(regime="blowup", blowup={"lower": lo, "upper": hi, "rigorous": True}))
    a, b = text.split("(")[1].rstrip("]").split(", ")
    assert Q(a) <= Q(lo) and Q(hi) <= Q(b)


def test_bound_text_rounds_in_the_stated_direction():
    for x in (Q(267, 2 ** 48), Q(2, 3), Q(-3, 7), Q(10 ** 9 + 1), Q(1, 3 * 10 ** 30)):
        assert Q(bound_text(x, "up")) >= x and Q(bound_text(x, "down", 6)) <= x
    assert bound_text(Q(2, 3), "down", 6) == "0.666666"


def test_census_region_is_printed_rounded_down(tmp_path, capsys):
    f = tmp_path / "gen2.json"
    f.write_text('{"A": [[1,"3/10"],[0,1]], "B": [[1,"1/5"],["1/10",1]], "V": [[-1,"1/2"],[0,-2]], '
                 '"b": [0,0], "mean": [0,0], "cov": [[1,0],[0,1]]}')
    cli.main(["equilibrium", str(f), "--all", "--radius", "2/3"])
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("all PSD equilibria"))
    assert "max diag <= 0.666666 " in line and "0.666667" not in out


def test_derive_latex_reports_a_failed_check_in_its_exit_status(monkeypatch, capsys):
    from riccati_verify.symbolic import moments

    assert cli.main(["derive", "--dim", "1", "--format", "latex"]) == 0
    monkeypatch.setattr(moments, "rank_invariance_identity", lambda d: False)
    assert cli.main(["derive", "--dim", "1", "--format", "latex"]) == 1
    capsys.readouterr()


def test_region_of_attraction_radius_is_rounded_down():
    import math
    import random

    from riccati_verify.certify.roa import radius_below

    rng = random.Random(17)
    naive_over = 0
    for _ in range(300):
        q = Q(rng.randrange(1, 10 ** 12), rng.randrange(1, 10 ** 12))
        r = radius_below(q, 1)
        assert Q(r) ** 2 <= q and r >= math.sqrt(float(q)) * (1 - 1e-15)
        naive_over += Q(math.sqrt(float(q))) ** 2 > q
    assert naive_over > 0           # rounding to nearest does overshoot: the rounding down is needed


# ----------------------------------------------------------------- proofs/ (review s17)

def test_training_affinity_check_fails_for_a_wrong_tilting(monkeypatch):
    import sympy as sp

    import proofs.training_shallow as m
    from riccati_verify.symbolic import moments

    assert m._affinity(1)
    monkeypatch.setattr(moments, "tilting_by_mgf",
                        lambda d: sp.Matrix([sp.sin(c) ** 3 + sp.exp(c) for c in moments.vector("c", d)]))
    assert not m._affinity(1)          # the linearity part alone had passed this


def test_a_failed_statistical_calibration_refutes_nothing(monkeypatch):
    import proofs.pretrained_gaussianity as m
    from riccati_verify.core.result import Status
    from riccati_verify.numeric import pretrained as pt

    monkeypatch.setattr(pt, "mardia", lambda Z: (0.0, 1e9))      # b2 far from its null mean
    assert m.calibration().status is Status.NOT_CERTIFIED


def test_stability_proof_needs_its_counterexamples(monkeypatch):
    import proofs.stability as m
    from riccati_verify.core.result import Status

    assert m.symbolic_check().status is Status.CERTIFIED
    monkeypatch.setattr(m, "_counterexamples", lambda: {"x": {"certified": False, "regime": "collapse"}})
    assert m.symbolic_check().status is Status.NOT_CERTIFIED


def test_activation_table_is_compared_exactly(monkeypatch):
    """An exact perturbation of 10^-20 in the φ'' polynomials must change the verdict: nsimplify had
    guessed the maxima back to the table's values from 30-digit floats."""
    import sympy as sp

    import proofs.activation_class as m
    from riccati_verify.core.result import Status

    real = m._max_on_open_interval
    monkeypatch.setattr(m, "_max_on_open_interval", lambda p, lo, hi: real(p + sp.Rational(1, 10 ** 20) * m.u, lo, hi))
    assert m.symbolic_check().status is not Status.CERTIFIED


def test_bernoulli_iff_conditions_are_checked_exactly():
    """The exact route now decides the CLAIM's "iff" on every sign case; a condition missing either
    half is caught (it had been checked by the numeric route only)."""
    import proofs.bernoulli_scalar as m

    assert m.blowup_condition_holds() and m.stability_condition_holds()
    assert not m.blowup_condition_holds(lambda a, c, s0: c > 0)
    assert not m.blowup_condition_holds(lambda a, c, s0: a + c * s0 > 0)
