"""Training the head measure (numeric.training, `riccati-verify train`; MATH.md §14, §16)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric import adjoint as AD
from riccati_verify.numeric import training as T
from riccati_verify.numeric.flow import Segment
from riccati_verify.proofs.training_deep import _float_tol, _loose

SHALLOW = {"regime": "shallow", "A": [[0, "1/2"], [0, 0]], "mean": [1, "-1/2"], "cov": [[1, "1/4"], ["1/4", "1/2"]],
           "loss": {"kind": "regression", "G": [[2, 0], [1, 1]], "c": [0, 1]}, "heads": 3, "beta": "1/100",
           "weight_decay": "1/10", "step": "1/10", "steps": 10, "seed": 1}
DEEP = {"regime": "deep", "A": [["-1/5"]], "mean": ["1/2"], "cov": [[1]], "T": 1, "segments": 2,
        "loss": {"kind": "kl", "target": {"mean": [0], "cov": [[2]]}}, "heads": 2, "beta": "1/100",
        "weight_decay": "1/10", "step": "1/10", "steps": 10, "seed": 1}


def _heads(doc, seed=0):
    spec = T.spec_from_dict(doc)
    return spec, T.initial_heads(spec, np.random.default_rng(seed))


@pytest.mark.parametrize("doc", [SHALLOW, DEEP], ids=["shallow_d2", "deep_d1_two_segments"])
def test_functional_gradient_matches_finite_differences_at_30_digits(doc):
    # truncation h² ≈ 1e-20 and rounding 1e-30/h ≈ 1e-20 (fd_check docstring): 1e-8 is the acceptance bound
    spec, heads = _heads(doc)
    r = T.fd_check(spec.model, heads, dps=30, seed=5)
    assert r["relative_error"] < 1e-8, r


def test_fd_check_rejects_a_gradient_without_the_bilinear_term(monkeypatch):
    # dropping G_K·B from ∇_V δL/δρ is a wrong gradient whenever G_K ≠ 0: the check must see it
    spec, heads = _heads(SHALLOW)
    monkeypatch.setattr(T, "head_gradients", lambda GV, GK, V, B: (np.broadcast_to(GV, V.shape),
                                                                   np.einsum("ijkl,hij->hkl", GK, V)))
    assert T.fd_check(spec.model, heads, dps=30, seed=5)["relative_error"] > 1e-4


def test_one_head_deep_gradient_is_the_adjoint_gradient():
    # with H = 1, K = V⊗B and the K-costate reduces to adjoint.costate_rhs (independent code)
    doc = {"regime": "deep", "A": [[0, "1/2"], ["-1/3", 0]], "mean": ["1/2", 0], "cov": [[1, 0], [0, "1/2"]],
           "T": "1/2", "loss": {"kind": "frobenius", "target": {"mean": [0, 1], "cov": [[2, 0], [0, 1]]}},
           "heads": 1, "beta": 0, "weight_decay": 0, "step": "1/10", "steps": 1, "seed": 1}
    spec = T.spec_from_dict(doc)
    V, B = np.array([[[0.3, -0.2], [0.1, 0.4]]]), np.array([[[-0.5, 0.2], [0.3, -0.1]]])
    L, per = T.functional_gradient(spec.model, [(V, B)])
    seg = Segment(Fraction(1, 2), Params.from_arrays([[0, Fraction(1, 2)], [Fraction(-1, 3), 0]], B[0].tolist(),
                                                     V[0].tolist(), [0, 0]))
    ref = AD.adjoint_gradient([seg], Gaussian.from_arrays([Fraction(1, 2), 0], [[1, 0], [0, Fraction(1, 2)]]),
                              spec.model.loss_fn)
    # a-posteriori tolerances, as the proofs use (proofs/training_deep.LOOSE, _float_tol): each side is
    # recomputed with its DOP853 tolerances 100× looser; the difference is about the looser run's error,
    # 10× it bounds the default run's with a wide margin, and the two sides' bounds add
    L_l, per_l = T.functional_gradient(_loose(spec.model), [(V, B)])
    ref_l = AD.adjoint_gradient([seg], Gaussian.from_arrays([Fraction(1, 2), 0], [[1, 0], [0, Fraction(1, 2)]]),
                                spec.model.loss_fn, rtol=1e-10, atol=1e-12)
    assert abs(L - ref.loss) < _float_tol(L, L_l) + _float_tol(ref.loss, ref_l.loss)
    assert np.abs(per[0][2][0] - ref.grads[0][2]).max() < (_float_tol(per[0][2][0], per_l[0][2][0])
                                                           + _float_tol(ref.grads[0][2], ref_l.grads[0][2]))
    assert np.abs(per[0][3][0] - ref.grads[0][1]).max() < (_float_tol(per[0][3][0], per_l[0][3][0])
                                                           + _float_tol(ref.grads[0][1], ref_l.grads[0][1]))


def test_entropy_estimator_is_unbiased_for_gaussian_samples():
    # H = 20 samples in D = 8: the uncorrected plug-in is biased by ≈ −1.7 nats here; the corrected
    # mean must match ½ log det(2πeC) within 4 standard errors over 400 seeded replicates
    rng = np.random.default_rng(20261202)
    D, H, R = 8, 20, 400
    L = np.tril(rng.standard_normal((D, D))) * 0.3 + np.eye(D)
    C = L @ L.T
    est = np.array([T.entropy_gaussian_estimate(rng.standard_normal((H, D)) @ L.T) for _ in range(R)])
    exact = T.gaussian_entropy(C)
    se = est.std(ddof=1) / math.sqrt(R)
    assert abs(est.mean() - exact) < 4 * se
    naive = 0.5 * (D * math.log(2 * math.pi * math.e) + np.linalg.slogdet(np.cov(rng.standard_normal((H, D)) @ L.T,
                                                                                    rowvar=False))[1])
    assert T.entropy_gaussian_estimate(rng.standard_normal((D, D))) is None        # H ≤ D: no estimate
    assert naive < exact        # the uncorrected estimate is biased low (Jensen): the correction matters


def test_seeded_runs_repeat_and_record_their_seed():
    doc = dict(SHALLOW, heads=32, steps=20)
    a = T.train(T.spec_from_dict(doc), fixed_point=False)
    b = T.train(T.spec_from_dict(doc), fixed_point=False)
    c = T.train(T.spec_from_dict(dict(doc, seed=2)), fixed_point=False)
    assert a.seed == 1 and a.to_dict()["seed"] == 1 and a.to_dict()["settings"]["seed"] == 1
    assert np.array_equal(a.loss, b.loss) and not np.array_equal(a.loss, c.loss)


def test_train_command_runs(cli, tmp_path):
    spec = tmp_path / "spec.json"
    # λ = 1: the proximal-Gibbs iteration for F* contracts (λ = 1/10 would fall back to plain iteration)
    spec.write_text(json.dumps(dict(SHALLOW, heads=64, steps=60, weight_decay=1)))
    r = cli("train", spec, "--json", "--quiet")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "confirmed numerically" and doc["seed"] == 1 and doc["free_energy"] is not None
    assert doc["fixed_point_converged"] and doc["gap"][-1] < doc["gap"][0]


@pytest.mark.slow
def test_train_command_plots_the_example(cli, tmp_path):
    r = cli("train", "examples/train_shallow.json", "--quiet", "--plot", tmp_path / "p.png")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "p.png").stat().st_size > 0


@pytest.mark.parametrize("change, words", [
    ({"beta": -1}, "'beta'"),
    ({"heads": 0}, "'heads'"),
    ({"step": 0}, "'step'"),
    ({"step": "-1/10"}, "'step'"),
    ({"loss": {"kind": "frobenius", "target": {"mean": [0, 0], "cov": [[1, 0], [0, 1]]}}}, "not convex"),
    ({"loss": {"kind": "kl", "target": {"mean": [0, 0], "cov": [[1, 0], [0, 1]]}}}, "not convex"),
    ({"T": 1}, "deep regime"),
    ({"heads": 10 ** 6}, "'heads'"),
    ({"heads": 4096, "steps": 100_000}, "exceeds"),
    ({"init": {"spread": 0}}, "spread"),
    ({"A": "__import__('os')"}, "'A'"),
])
def test_bad_specs_exit_2_with_a_clear_message(cli, tmp_path, change, words):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(dict(SHALLOW, **change)))
    r = cli("train", spec, "--quiet")
    assert r.returncode == 2 and words in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_ntk_gram_is_H_times_the_output_jacobian_gram():
    # y depends on heads through (1/H)Σ_h, so ∂y/∂θ_h = (1/H)∇δy/δρ(θ_h) and K = H·J Jᵀ, J the Jacobian
    # of y = (m(T), Σ(T)) in all head parameters: central differences (h = 1e-6, DOP853 rtol 1e-11,
    # truncation ≈ h², rounding ≈ 1e-11/h = 1e-5 relative) against ntk_gram
    spec = T.spec_from_dict(dict(DEEP, segments=1, heads=2))
    heads = T.initial_heads(spec, np.random.default_rng(4))
    K, W = T.ntk_gram(spec.model, heads)
    model = spec.model

    def y(hs):
        m, S = model.m, model.S
        m, S = T._forward(model.A, model.b, *T.aggregates(*hs[0]), m, S, model.T, False, 1e-12, 1e-14)
        return np.array([m[0], S[0, 0]])

    V, B = heads[0]
    cols, h = [], 1e-6
    for X in (V, B):
        for idx in np.ndindex(X.shape):
            X[idx] += h
            up = y([(V, B)])
            X[idx] -= 2 * h
            down = y([(V, B)])
            X[idx] += h
            cols.append((up - down) / (2 * h))
    J = np.array(cols).T
    assert list(W) == [1.0, 1.0]
    assert np.abs(K - 2 * J @ J.T).max() < 1e-4 * np.abs(K).max()


def test_stall_search_finds_the_zero_heads_saddle_and_not_elsewhere():
    import numpy as np

    from riccati_verify.numeric.training import spec_from_dict, stall_search

    # d = 1, A = 0, b = 0, m0 = 0: m ≡ 0, so G_V = ∫ p m dt = 0; at V = B = 0 the head gradients
    # G_V + G_K B and G_K V vanish: zero heads are stationary with L = (σ0 − σ(T)_teacher)².  The teacher
    # V = B = 1/2 has k = 1/4, σ(1) = 1/(1 − 2k) = 2, so there L = (1 − 2)² = 1 > STALL_LOSS
    spec = spec_from_dict({"regime": "deep", "A": [[0]], "mean": [0], "cov": [[1]], "T": 1,
                           "loss": {"kind": "frobenius", "target": {"mean": [0], "cov": [[1]]}}, "heads": 2,
                           "beta": 0, "weight_decay": 0, "step": "1/20", "steps": 1, "seed": 0})
    teacher = [(np.full((2, 1, 1), 0.5), np.full((2, 1, 1), 0.5))]
    zero = stall_search(spec.model, teacher, tries=1, spread=0.0, steps=5, seed=4)
    run = zero["runs"][0]
    assert run["outcome"] == "stationary above the minimum" and abs(run["polished_loss"] - 1) < 1e-9
    # a random start is not stuck there: k grows along the negative-curvature direction V = B
    rand = stall_search(spec.model, teacher, tries=1, spread=0.5, steps=20, seed=4)
    assert rand["runs"][0]["outcome"] in ("converged", "reaches the minimum when polished"), rand
    assert rand["runs"][0]["seed"] == [4, 0]
