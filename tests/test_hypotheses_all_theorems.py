"""`riccati-verify hypotheses` on every theorem of proofs/: a file where all hypotheses hold
(exit 0) and a perturbed one where a named hypothesis fails (exit 1, the name printed).

Every expected truth value below is argued from the mathematics in the comment beside it
(MATH.md section numbers), not read off the code's output.
"""

from __future__ import annotations

import json

import pytest

from riccati_verify import proofs

# d = 1, a = vβ = σ0 = 1: same signs, blow-up at T* = ln(1 + a/(vβσ0))/(2a) = ln(2)/2 ≈ 0.3466 (§6)
SCALAR = {"A": [[1]], "B": [[1]], "V": 1, "mean": [0], "cov": [[1]]}
# d = 2, V = I, B = −I: v B_s = −I ≺ 0 (opposite signs) ⇒ no blow-up for any A (§5); A = diag(1, 2)
# has eigenvalues 1, 2 > 0; Σ0 has LDLᵀ pivots 2 and 1 − 1/2 = 1/2 > 0, so Σ0 ≻ 0
OPPOSITE = {"A": [[1, 0], [0, 2]], "B": [[-1, 0], [0, -1]], "V": 1, "mean": [0, 0], "cov": [[2, 1], [1, 1]]}
# V = e1e1ᵀ, B = e2e2ᵀ, A diagonal, Σ0 diagonal: V X B = X_12 e1e2ᵀ, and X ↦ AX + XAᵀ keeps X
# diagonal, so V e^{At}Σ0e^{Aᵀt} B ≡ 0 and J ≡ A is constant (§11) although V, B ≠ 0
DECOUPLED = {"A": [[1, 0], [0, 2]], "B": [[0, 0], [0, 1]], "V": [[1, 0], [0, 0]], "mean": [0, 0],
             "cov": [[1, 0], [0, 1]]}

EXISTS_FOREVER = "the solution exists for all t >= 0 (no blow-up)"
EXISTS_ON_1 = "the solution exists on [0, 1] (no blow-up)"
BLOWUP_PART = "v B_s ≻ 0 and A + Aᵀ ⪰ 0 (blow-up part), or v B_s ⪯ 0 (no-blow-up part)"
J_CONSTANT = "J = λI or constant J with λ = max Re λ(J)"
RANK_EQUAL = "rank Σ1 = rank Σ0 ('if' direction: Σ1 reachable)"
MIXTURE = "mixture ½N(δ, s) + ½N(−δ, s), δ, s > 0"


def _with(base, **changes):
    return dict(base, **changes)


# theorem -> [(file, extra args, failing name or None)]; the first case holds, the others fail
CASES = {
    # d = 1 and σ0 = 1 > 0; σ0 = 0 violates σ0 > 0
    "bernoulli_scalar": [(SCALAR, (), None), (_with(SCALAR, cov=[[0]]), (), "σ0 > 0")],
    # opposite signs exist for all t (§5); the scalar same-sign case blows up at ln(2)/2 (§6)
    "rank_invariance": [(OPPOSITE, (), None), (SCALAR, (), EXISTS_FOREVER)],
    # V = I, Σ0 ≻ 0, exists forever; V = diag(1, 2) is not a multiple of I
    "riccati_connection": [(OPPOSITE, (), None), (_with(OPPOSITE, V=[[1, 0], [0, 2]]), (), "V = vI")],
    # Re λ(A) ∈ {1, 2} > 0, v B_s = −I ≺ 0, Σ0 ≻ 0 (§8); A = diag(−1, 2) has the eigenvalue −1
    "stability": [(OPPOSITE, (), None),
                  (_with(OPPOSITE, A=[[-1, 0], [0, 2]]), (), "Re λ(A) > 0 for all eigenvalues")],
    # v B_s = 1 ≻ 0 and A + Aᵀ = 2 ⪰ 0: the blow-up part; v B_s = −I ⪯ 0: the no-blow-up part;
    # v B_s = I ≻ 0 with A_s = diag(−1, 1) indefinite: neither part; Σ0 = 0 is excluded
    "blowup": [(SCALAR, (), None), (OPPOSITE, (), None),
               (_with(OPPOSITE, B=[[1, 0], [0, 1]], A=[[-1, 0], [0, 1]]), (), BLOWUP_PART),
               (_with(SCALAR, cov=[[0]]), (), "Σ0 ⪰ 0, Σ0 ≠ 0")],
    # T = 1/10 < ln(2)/2 = T*: no blow-up on [0, T]; T = 1 > T*
    "adjoint": [(SCALAR, ("--time", "1/10"), None), (OPPOSITE, (), None), (SCALAR, ("--time", "1"), EXISTS_ON_1)],
    "depth_limit": [(SCALAR, ("--time", "1/10"), None), (OPPOSITE, (), None), (SCALAR, ("--time", "1"), EXISTS_ON_1)],
    "token_limit": [(SCALAR, ("--time", "1/10"), None), (OPPOSITE, (), None),
                    (SCALAR, ("--time", "1"), EXISTS_ON_1)],
    # at t = 0 the token law is the file's Gaussian; at T = 1 > T* it no longer exists
    "head_limit": [(SCALAR, (), None), (SCALAR, ("--time", "1/10"), None), (SCALAR, ("--time", "1"), EXISTS_ON_1)],
    # d = 1, s = 1 > 0, a = 1 ≠ 0; a = 0 makes the rate 3s²aφ(−c) vanish; d = 2 is outside the theorem
    "relu_short_time": [(SCALAR, (), None),
                        (_with(SCALAR, A=[[0]]), (), "feed-forward a(ReLU(x + c) − c) + b, a ≠ 0"),
                        (OPPOSITE, (), "d = 1")],
    # centre 0, s = 1, δ = 1/2 > 0, v = β = 1 ≠ 0; β = 0 and δ = 0 each violate a hypothesis
    "mixture_noninvariance": [(SCALAR, ("--delta", "1/2"), None),
                              (_with(SCALAR, B=[[0]]), ("--delta", "1/2"), "v ≠ 0, β ≠ 0"),
                              (SCALAR, ("--delta", "0"), MIXTURE),
                              (_with(SCALAR, mean=[1]), ("--delta", "1/2"), MIXTURE)],
    # see DECOUPLED; with Σ0 = [[2, 1], [1, 1]], V Σ0 B = [[0, 1], [0, 0]] ≠ 0, so for σ = 1 ≠ 0
    # J(t) = A + e^{2σW−σ²t}VΣ̃(t)B is random, not constant
    "common_noise": [(DECOUPLED, ("--noise", "1"), None), (DECOUPLED, (), None),
                     (_with(DECOUPLED, cov=[[2, 1], [1, 1]]), ("--noise", "1"), J_CONSTANT),
                     # V Σ0 B = 0 (Σ0 = I) but A = [[0, 1], [0, 0]] shears: d/dt V Σ̃ B at t = 0 is
                     # V(A + Aᵀ)B = (A + Aᵀ)_12 e1e2ᵀ = e1e2ᵀ ≠ 0, so the attention term switches on
                     (_with(DECOUPLED, A=[[0, 1], [0, 0]]), ("--noise", "1"), J_CONSTANT)],
    # rank Σ0 = 2 (pivots 2, 1/2) = rank I; rank [[1, 1], [1, 1]] = 1 (§4: unreachable)
    "reachability": [(OPPOSITE, ("--target", {"mean": [1, 1], "cov": [[1, 0], [0, 1]]}), None),
                     (OPPOSITE, ("--target", {"mean": [0, 0], "cov": [[1, 1], [1, 1]]}), RANK_EQUAL)],
}
# Both hypotheses of gaussian_invariance are guaranteed by the file format (the model is
# Ax + b + attention; Σ0 ⪰ 0 is validated exactly on load): a perturbation that breaks Σ0 ⪰ 0
# is bad input, exit 2 (see test_gaussian_invariance_cannot_fail_on_a_valid_file).
CASES["gaussian_invariance"] = [(OPPOSITE, (), None)]
# Training specs (numeric.training), issue 16.  The d = 1 shallow example of proofs/training_shallow:
# D = 1 + a − g = −1, r = −3/4, L0 = 13/16, λ = 1, β = 1/20, s0 = 1/2, and κ_lo = 1 − 2·(1/4)·√(1/2)·√L̄ > 0
# (tests/test_training_proofs.py derives L̄ < 1 by hand).  With Σ = 4 instead: L0 = 9/16 + 4 > 4, and
# L̄ = L0 + 1/4 − log(2πe/4)/20 + log(2π/20)/20 > 3.8, so κ_lo < 1 − 2·4·√(1/4 + 4)·√3.8 < 0.
SHALLOW_SPEC = {"regime": "shallow", "A": [["-1/2"]], "b": [0], "mean": ["1/2"], "cov": [["1/4"]],
                "loss": {"kind": "regression", "G": [["3/2"]], "c": ["1/4"]}, "heads": 16, "beta": "1/20",
                "weight_decay": 1, "step": "1/100", "steps": 10, "seed": 1, "init": {"spread": "1/2"}}
# d = 1, A = 0, b = 0, m0 = 1/2, σ0 = T = 1: the NTK of (m, σ) is K = (1/H)Σ_h g g ᵀ with per-head gradients
# g_m = (a + cB_h, cV_h), g_σ = c'(B_h, V_h), a = T m(T) ≠ 0, c' ≠ 0 (certify.training.ntk_d1); g_m − (c/c')g_σ
# = (a, 0) is independent of g_σ unless every V_h = 0, so K ≻ 0 for the seeded Gaussian draws (V_h ≠ 0 a.s.);
# spread 1/4 keeps k = E[VB] far below the blow-up value 1/(2σ0T) = 1/2.  Spread 0 with V0 = B0 = 0 makes every
# head zero: Σ's equation has no V̄, so ∇_θ δΣ/δρ = (∂Σ/∂K·B, ∂Σ/∂Kᵀ·V) = 0 and K is singular.
DEEP_D1_SPEC = {"regime": "deep", "A": [[0]], "mean": ["1/2"], "cov": [[1]], "T": 1,
                "loss": {"kind": "frobenius", "target": {"mean": [0], "cov": [[2]]}}, "heads": 4, "beta": 0,
                "weight_decay": 0, "step": "1/20", "steps": 1, "seed": 3, "init": {"spread": "1/4"}}
# examples/train_deep.json (T = 1, λ = 1/2, s0 = 1/2, two segments of D = 8): X̄ bounds Σ_k E|θ|² at s = 0,
# 2·8·(1/2)² = 4, so k̄ = X̄/2 ≥ 2; ‖Σ0‖_F = √5/2 > 1 and q(1) = (e^{2a} − 1)/(2a) ≥ 1, so 1 − 2k̄ s0 q(1) < 0
TRAIN_DEEP_T1 = {"regime": "deep", "A": [["-1/5", "1/2"], ["-1/2", "-1/5"]], "b": [0, 0], "mean": ["1/2", 0],
                 "cov": [[1, 0], [0, "1/2"]], "T": 1, "segments": 2,
                 "loss": {"kind": "kl", "target": {"mean": [0, "1/2"], "cov": [[2, 0], [0, 1]]}}, "heads": 64,
                 "beta": "1/200", "weight_decay": "1/2", "step": "1/20", "steps": 100, "seed": 11,
                 "init": {"spread": "1/2"}}
CASES["training_shallow"] = [(SHALLOW_SPEC, (), None),
                             (_with(SHALLOW_SPEC, cov=[["4"]]), (), "κ_lo > 0 (uniform log-Sobolev inequality)")]
CASES["training_deep"] = [(DEEP_D1_SPEC, (), None),
                          (_with(DEEP_D1_SPEC, init={"spread": 0}), (),
                           "NTK Gram matrix of the outputs positive definite at the spec's initial heads")]
CASES["training_wellposed"] = [(SHALLOW_SPEC, (), None), (_with(SHALLOW_SPEC, weight_decay=0), (), "weight decay λ > 0"),
                               (TRAIN_DEEP_T1, (), "deep: 1 − 2k̄ s0 q(T) > 0 (no blow-up on the a-priori set)")]
NOT_ABOUT_A_FILE = {"pretrained_gaussianity", "activation_class"}


def test_every_theorem_has_cases():
    assert set(CASES) | NOT_ABOUT_A_FILE == set(proofs.all_proofs())


@pytest.mark.parametrize("theorem, i", [(t, i) for t, cases in sorted(CASES.items()) for i in range(len(cases))])
def test_hypotheses_hold_or_fail_by_name(run, theorem, i):
    doc, extra, failing = CASES[theorem][i]
    code, out, err = run("hypotheses", theorem, doc, *extra, "--json")
    assert code == (0 if failing is None else 1), out + err
    res = json.loads(out)
    if failing is None:
        assert res["all_hold"] and all(h["holds"] is True for h in res["hypotheses"])
    else:
        assert res["failed"] == [failing]
        code, text, _ = run("hypotheses", theorem, doc, *extra)
        assert code == 1 and f"hypothesis failed: {failing}" in text


@pytest.mark.parametrize("theorem, doc, option", [
    ("common_noise", _with(DECOUPLED, cov=[[2, 1], [1, 1]]), "--noise"),   # J constant only decided given σ ≠ 0
    ("mixture_noninvariance", SCALAR, "--delta"),
    ("reachability", OPPOSITE, "--target"),
    ("adjoint", SCALAR, "--time"),          # blows up at ln(2)/2: whether T < T* depends on T
    ("depth_limit", SCALAR, "--time"),
    ("token_limit", SCALAR, "--time"),
])
def test_missing_quantity_is_undecided_and_names_the_option(run, theorem, doc, option):
    code, out, _ = run("hypotheses", theorem, doc, "--json")
    res = json.loads(out)
    assert code == 1 and res["undecided"] and not res["failed"]
    undecided = [h for h in res["hypotheses"] if h["holds"] is None]
    assert all(f"pass {option}" in h["witness"]["reason"] for h in undecided)


def test_common_noise_zero_noise_is_undecided(run):
    # σ = 0 is deterministic: J = A + VΣB can be constant at an equilibrium Σ0 though VΣ0B ≠ 0
    code, out, _ = run("hypotheses", "common_noise", _with(DECOUPLED, cov=[[2, 1], [1, 1]]), "--noise", "0", "--json")
    assert code == 1 and json.loads(out)["undecided"] == [J_CONSTANT]


def test_common_noise_reports_the_synchronisation_regime(run):
    # V = 0: J ≡ A = (1/5)I, λ = 1/5; σ = 1: σ² = 1 > 2/5 = 2λ (pathwise synchronisation, §11);
    # σ = 1/2: σ² = 1/4 < 2/5
    doc = {"A": [["1/5", 0], [0, "1/5"]], "B": [[1, 0], [0, 1]], "V": 0, "mean": [0, 0], "cov": [[1, 0], [0, 1]]}
    for sigma, sync in (("1", True), ("1/2", False)):
        code, out, _ = run("hypotheses", "common_noise", doc, "--noise", sigma, "--json")
        w = json.loads(out)["hypotheses"][1]["witness"]
        assert code == 0 and w["lambda"] == "1/5" and w["pathwise_synchronisation_sigma2_gt_2lambda"] is sync


def test_blowup_witness_names_the_part(run):
    parts = []
    for doc in (SCALAR, OPPOSITE):
        _, out, _ = run("hypotheses", "blowup", doc, "--json")
        parts.append(json.loads(out)["hypotheses"][2]["witness"]["part"])
    assert parts == ["blow-up", "no blow-up"]


def test_gaussian_invariance_cannot_fail_on_a_valid_file(run):
    code, _, err = run("hypotheses", "gaussian_invariance", _with(OPPOSITE, cov=[[1, 2], [2, 1]]))
    assert code == 2 and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("theorem, args, fragment", [
    ("blowup", ("--noise", "1"), "no hypothesis that depends on a noise level (--noise)"),
    ("common_noise", ("--delta", "1"), "no hypothesis that depends on a mixture offset (--delta)"),
    ("stability", ("--target", "t.json"), "no hypothesis that depends on a target state (--target)"),
    ("common_noise", ("--noise", "abc"), "malformed rational"),
    ("mixture_noninvariance", ("--delta", "1e99999"), "--delta"),
    ("reachability", ("--target", "does-not-exist.json"), "target file"),
    ("reachability", ("--target", {"A": [[1, 0], [0, 1]], "B": [[1, 0], [0, 1]], "V": 1}),
     "target file: no Gaussian state"),
    ("reachability", ("--target", {"A": [[1]]}), "target file: missing key"),
    ("reachability", ("--target", {"mean": [0], "cov": [[1]]}), "target file: d = 1"),
    ("pretrained_gaussianity", (), "no hypotheses checkable"),
])
def test_bad_input_exit_2_one_line(run, theorem, args, fragment):
    code, _, err = run("hypotheses", theorem, OPPOSITE, *args)
    assert code == 2 and fragment in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1
