"""`training_nonconvexity` certificates: the deep loss is not convex in the head measure.

Example (tests/data/certificates/training_nonconvexity.json): d = 1, A = 0, B = 1, b = 0, N(0, 1),
T = 1, target N(0, 2).  With a = 0 the covariance solves σ' = 2vσ², σ(1) = 1/(1 − 2v), so
L(v) = (1/(1 − 2v) − 2)² is 25/9 at v = −1, 1 at v = 0 and 9/4 at the midpoint v = −1/2: the
excess is 9/4 − (25/9 + 1)/2 = 13/36.  (By hand; L''(v) = 8(3 − 4(1 − 2v))/(1 − 2v)⁴ < 0 for v < 1/8.)
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest

from riccati_verify.checker import verify_certificate

DOC = json.loads((Path(__file__).parent / "data" / "certificates" / "training_nonconvexity.json").read_text())


def _with(path, value):
    doc = copy.deepcopy(DOC)
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


def test_valid_and_contains_the_closed_form_losses():
    assert verify_certificate(DOC).valid
    for name, exact in (("rho0", Fraction(25, 9)), ("rho1", Fraction(1)), ("midpoint", Fraction(9, 4))):
        lo, hi = (Fraction(x) for x in DOC["witness"]["losses"][name])
        assert lo <= exact <= hi


def test_excess_is_decided_at_the_closed_form_value():
    # the checker's enclosures are ~1e-40 wide: 13/36 − 1e-9 is proved, 13/36 + 1e-9 is not
    assert verify_certificate(_with(("claim", "excess_at_least"), str(Fraction(13, 36) - Fraction(1, 10 ** 9)))).valid
    assert not verify_certificate(_with(("claim", "excess_at_least"), str(Fraction(13, 36) + Fraction(1, 10 ** 9)))).valid


@pytest.mark.parametrize("path, value", [
    (("claim", "V1"), [["1/10"]]),                               # another measure: the witness losses are wrong
    (("claim", "time"), "1/2"),                                  # another depth
    (("claim", "target_cov"), [["3"]]),                          # another target
    (("claim", "loss"), "kl"),                                   # only Frobenius is checked
    (("claim", "excess_at_least"), "0"),                         # not a violation
    (("claim", "excess_at_least"), "-1"),
    (("witness", "losses", "midpoint"), ["9/4", "9/4"]),          # a point interval cannot contain the ball
    (("witness", "losses", "rho1"), ["2", "3"]),                  # moved interval
    (("witness", "argument"), "trust me"),
    (("witness", "prec"), 4096),                                 # work bound
    (("witness", "order"), 1000),
    (("params", "V"), [["-2"]]),                                 # another ρ0
])
def test_tampered_certificates_are_rejected(path, value):
    r = verify_certificate(_with(path, value))
    assert not r.valid, r.reason


@pytest.mark.slow
def test_producer_refuses_a_convex_segment():
    # v ∈ [1/5, 3/10] ⊂ (1/8, 1/2): L'' > 0 there (module docstring), so no midpoint violation exists
    from riccati_verify.certify.training import nonconvexity_certificate
    from riccati_verify.core.model import Gaussian, Params

    p = Params.from_arrays([[0]], [[1]], [[Fraction(1, 5)]], [0])
    doc, why = nonconvexity_certificate(p, Gaussian.from_arrays([0], [[1]]), [[Fraction(3, 10)]], 1,
                                        Gaussian.from_arrays([0], [[2]]))
    assert doc is None and "no midpoint violation" in why


@pytest.mark.slow
def test_training_deep_proof():
    from riccati_verify.core.result import Status
    from riccati_verify.proofs import training_deep

    r = training_deep.check()
    assert r.status is Status.CERTIFIED and verify_certificate(r.certificate).valid, r.to_dict()


def test_ntk_d1_certifies_spread_heads_and_refuses_degenerate_ones():
    # all heads at V = B = 0: ∇δσ/δρ = (2σ0²T B, 2σ0²T V)/D² vanishes, so K is singular (not PD);
    # k = E[VB] = 1 with σ0 = T = 1 gives D = 1 − 2 < 0: blow-up before T
    from riccati_verify.certify.training import ntk_d1

    F = Fraction
    good = ntk_d1(F(1, 2), 1, 1, [(F(1, 2), F(1, 3)), (F(-1, 4), F(1, 2)), (F(1, 3), F(-1, 5)), (F(0), F(1, 4))])
    assert good["proved_positive_definite"] and good["lambda_min"] > 0
    # the rational `lambda_min_at_least` is a lower bound of λ_min: K − t·I stays positive definite at t (balls);
    # 2t is at least λ_min up to rounding (det/tr ≥ λ_min/2 for a 2×2 PD matrix), and here K − 2t·I is not PD
    from flint import arb

    K, t = good["K"], good["lambda_min_at_least"]
    shifted = lambda s: (K[0][0] - s, (K[0][0] - s) * (K[1][1] - s) - K[0][1] * K[1][0])
    assert t > 0 and all(x > 0 for x in shifted(arb(t.numerator) / t.denominator))
    assert not all(x > 0 for x in shifted(2 * arb(t.numerator) / t.denominator))
    assert not ntk_d1(F(1, 2), 1, 1, [(F(0), F(0))] * 3)["proved_positive_definite"]
    assert not ntk_d1(F(1, 2), 1, 1, [(F(1), F(1))])["proved_positive_definite"]


def test_validated_ntk_encloses_the_d1_closed_form_and_refuses_bad_heads():
    from fractions import Fraction as F

    from riccati_verify.certify.training import ntk_d1
    from riccati_verify.certify.training_ntk import ntk_certified

    heads = [(F(1, 2), F(1, 3)), (F(-1, 4), F(1, 2)), (F(1, 3), F(-1, 5)), (F(0), F(1, 4))]
    r = ntk_certified([[0]], [0], [F(1, 2)], [[1]], 1, [([[V]], [[B]]) for V, B in heads])
    closed = ntk_d1(F(1, 2), 1, 1, heads)["K"]          # the sympy-checked closed form, not this flow
    assert r["proved"] and all(r["K"][i, j].overlaps(closed[i][j]) for i in range(2) for j in range(2))
    assert max(float(r["K"][i, j].rad()) for i in range(2) for j in range(2)) < 1e-12
    t = r["lambda_min_I_at_least"]
    assert t is not None and 0 < t <= r["float_lambda_min"]
    from riccati_verify.certify.training_ntk import _prove_lower

    # a claimed bound above the true λ_min (0.1798…, closed form) is not proved
    assert _prove_lower(r["K"], [F(1), F(1)], 2 * r["float_lambda_min"]) is None
    # zero heads: σ(T) does not move with V̄, so K has a zero row and is singular
    assert not ntk_certified([[0]], [0], [F(1, 2)], [[1]], 1, [([[0]], [[0]])] * 3)["proved"]
    # k = E[VB] = 1, σ0 = 1: the flow blows up at T = 1/2 (a small step budget keeps the test short:
    # the steps shrink as the flow creeps towards the blow-up)
    bad = ntk_certified([[0]], [0], [F(1, 2)], [[1]], 1, [([[1]], [[1]])], max_steps=60)
    assert not bad["proved"] and "reason" in bad


def test_validated_ntk_d2_agrees_with_the_float_kernel():
    import numpy as np
    from fractions import Fraction as F

    from riccati_verify.certify.training_ntk import ntk_certified
    from riccati_verify.numeric.training import ntk_gram, spec_from_dict
    from riccati_verify.proofs.training_deep import _float_tol, _loose

    A = [[F(-1, 5), F(1, 2)], [F(-1, 2), F(-1, 5)]]
    heads = [([[F(1, 4), F(-1, 8)], [F(1, 2), F(0)]], [[F(1, 2), F(1, 4)], [F(-1, 4), F(1, 8)]]),
             ([[F(-1, 2), F(1, 4)], [F(0), F(3, 8)]], [[F(0), F(1, 2)], [F(1, 2), F(-1, 4)]]),
             ([[F(1, 8), F(1, 2)], [F(-1, 4), F(1, 4)]], [[F(1, 4), F(0)], [F(3, 8), F(1, 2)]])]
    r = ntk_certified(A, [0, 0], [F(1, 2), 0], [[1, 0], [0, F(1, 2)]], F(1, 4), heads)
    assert r["proved"], r
    spec = spec_from_dict({"regime": "deep", "A": [[str(x) for x in row] for row in A], "mean": ["1/2", 0],
                           "cov": [[1, 0], [0, "1/2"]], "T": "1/4",
                           "loss": {"kind": "frobenius", "target": {"mean": [0, 0], "cov": [[1, 0], [0, 1]]}},
                           "heads": 3, "beta": 0, "weight_decay": 0, "step": 1, "steps": 1, "seed": 0})
    V = np.array([[[float(x) for x in row] for row in h[0]] for h in heads])
    B = np.array([[[float(x) for x in row] for row in h[1]] for h in heads])
    K, W = ntk_gram(spec.model, [(V, B)])
    # a-posteriori tolerance, as the proofs use (proofs/training_deep.LOOSE): the float kernel again with
    # DOP853 tolerances 100× looser; their difference is about the looser run's error, and 10× it plus the
    # ball's radius bounds the default run's error with a wide margin
    K_loose, _ = ntk_gram(_loose(spec.model), [(V, B)])
    tol = _float_tol(K, K_loose, max(float(r["K"][i, j].rad()) for i in range(5) for j in range(5)))
    assert all(abs(K[i, j] - float(r["K"][i, j].mid())) < tol for i in range(5) for j in range(5))
    assert 0 < r["lambda_min_W_at_least"] <= r["float_lambda_min_W"]


def test_validated_ntk_two_segments_agrees_with_the_float_kernel():
    import numpy as np
    from fractions import Fraction as F

    from riccati_verify.certify.training_ntk import ntk_certified_segments
    from riccati_verify.numeric.training import ntk_gram, spec_from_dict
    from riccati_verify.proofs.training_deep import _float_tol, _loose

    # d = 1, two depth segments of one head each (different heads): the second segment's sensitivities
    # start at zero, the first segment's are carried through the second by the variational equation
    seg = [[([[F(1, 2)]], [[F(1, 3)]])], [([[F(-1, 4)]], [[F(1, 2)]])]]
    r = ntk_certified_segments([[F(-1, 5)]], [0], [F(1, 2)], [[1]], 1, seg)
    assert r["proved"], r
    spec = spec_from_dict({"regime": "deep", "A": [["-1/5"]], "mean": ["1/2"], "cov": [[1]], "T": 1, "segments": 2,
                           "loss": {"kind": "frobenius", "target": {"mean": [0], "cov": [[1]]}}, "heads": 1,
                           "beta": 0, "weight_decay": 0, "step": 1, "steps": 1, "seed": 0})
    heads = [(np.array([[[float(h[0][0][0][0])]]]), np.array([[[float(h[0][1][0][0])]]])) for h in seg]
    K, _ = ntk_gram(spec.model, heads)
    # the a-posteriori tolerance of the d = 2 test above
    K_loose, _ = ntk_gram(_loose(spec.model), heads)
    tol = _float_tol(K, K_loose, max(float(r["K"][i, j].rad()) for i in range(2) for j in range(2)))
    assert all(abs(K[i, j] - float(r["K"][i, j].mid())) < tol for i in range(2) for j in range(2))
    # one segment's head alone (the other segment's block left out) gives a different kernel
    one = ntk_certified_segments([[F(-1, 5)]], [0], [F(1, 2)], [[1]], 1, [seg[0] + seg[1]])
    assert not all(one["K"][i, j].overlaps(r["K"][i, j]) for i in range(2) for j in range(2))


def test_picard_box_across_a_blow_up_is_refused():
    # d = 1, A = 0, b = 0, V̄ = 1, K = 1, σ(0) = 1: Σ' = 2KΣ² gives σ(t) = 1/(1 − 2t), which blows up at
    # t = 1/2.  No bounded box can hold the solution over a step of h = 1, so the a-priori enclosure
    # must be refused; this needs the containment test (review s18 L4: with `_contains` always True a
    # box came back).  A short step h = 1/20 is accepted, and its box holds σ(h) = 10/9.
    from flint import arb, arb_mat

    from riccati_verify.certify.training_ntk import _Field, _picard_box

    field = _Field([[0]], [0], [[1]], [[[[1]]]])
    z = field.zero()
    z[0], z[1] = arb_mat([[arb(1) / 2]]), arb_mat([[arb(1)]])
    assert _picard_box(z, field, arb(0).union(arb(1)), 1.0) is None
    box = _picard_box(z, field, arb(0).union(arb(1) / 20), 0.05)
    assert box is not None and box[1][0, 0].contains(arb(10) / 9) and box[1][0, 0].contains(1)
