"""A rigorous lower bound of the log-Sobolev constant along shallow mean-field Langevin training
(seed 001 Theorem 8.3, MATH.md §16), in ball arithmetic from the exact data.

Set-up (numeric.training): one residual step on x ~ N(m, Σ), L(ρ) = E|(I + A + M − G)x + V̄m + b − c|²
with V̄ = E_ρ V, M = E_ρ[VΣB]; F = L + (λ/2)E|θ|² + β∫ρ log ρ on θ = (V, B) ∈ ℝ^D, D = 2d².
The proximal Gibbs measure of ρ is ∝ exp(−U_ρ/β), U_ρ(θ) = δL/δρ(θ) + λ|θ|²/2 with
δL/δρ(θ) = ⟨G_V, V⟩ + ⟨G_M, VΣB⟩, G_M = ∂L/∂M = 2 r mᵀ + 2DΣ.  Its Hessian is
[[λI, C], [Cᵀ, λI]] with C the matrix of (V, B) ↦ ⟨G_M, VΣB⟩, so U_ρ is κ-convex with

    κ(ρ) = λ − σ_max(C) ≥ λ − ‖G_M‖_F ‖Σ‖,      (|⟨G_M, VΣB⟩| ≤ ‖G_M‖_F ‖V‖_F ‖Σ‖ ‖B‖_F)

and Bakry–Émery gives the LSI constant κ(ρ)/β.  A bound uniform along the dynamics:

1. ‖G_M‖_F ≤ 2(|r||m| + ‖DΣ^{1/2}‖_F ‖Σ‖^{1/2}) ≤ 2 √L √(|m|² + ‖Σ‖)  (Cauchy–Schwarz; L = |r|² + ‖DΣ^{1/2}‖_F²);
2. F(ρ_s) ≤ F(ρ_0) (F decreases along the flow) and the Gaussian bound on the entropy
   −∫ρ log ρ ≤ (D/2) log(2πe E|θ|²/D) give, maximising over x = E|θ|²,
   L(ρ_s) ≤ L̄ = F(ρ_0) + (βD/2) log(2πβ/λ)   (for β = 0: L̄ = F(ρ_0));
3. so κ(ρ_s) ≥ κ_lo = λ − 2 ‖Σ‖ √(|m|² + ‖Σ‖) √L̄ for every s, and with convexity of L in ρ
   (proofs.training_shallow) F(ρ_s) − F* ≤ e^{−2κ_lo s}(F(ρ_0) − F*) when κ_lo > 0.

‖Σ‖ is bounded by ‖Σ‖_F.  The initial law is ρ_0 = N((V0, B0), s0² I), for which
E_ρ0[VΣB] = V0ΣB0 exactly (V and B independent) and −∫ρ_0 log ρ_0 = (D/2) log(2πe s0²).
Holley–Stroock does not apply: the perturbation ⟨G_M, VΣB⟩ of the quadratic weight decay is
unbounded on ℝ^D, so its oscillation is infinite; the Bakry–Émery bound above is what the
weight decay guarantees here.
"""

from __future__ import annotations

from fractions import Fraction

from riccati_verify.core.balls import arb_of, fraction_of_mid

__all__ = ["MIDPOINT_ARGUMENT", "example_nonconvexity_certificate", "initial_free_energy", "nonconvexity_certificate",
           "ntk_d1", "shallow_G_M_bound", "shallow_initial_loss", "shallow_lsi_lower_bound", "sublevel_loss_bound"]


def _mat(M):
    return [[Fraction(x) for x in r] for r in M]


def _frob2(M) -> Fraction:
    """‖M‖_F² of a rational matrix, exactly."""
    return sum((x * x for r in M for x in r), Fraction(0))


def _vec2(v) -> Fraction:
    """|v|² of a rational vector, exactly."""
    return sum((x * x for x in v), Fraction(0))


def shallow_G_M_bound(L_bar, m2, norm_S):
    """2√L̄·√(|m|² + ‖Σ‖) ≥ ‖G_M‖_F on the sublevel set (module docstring, item 1; arb balls in and out).
    κ_lo = λ − this·‖Σ‖ and ‖G_K‖_F ≤ this·‖Σ‖_F (`certify.training_wellposed`) both use it."""
    return 2 * L_bar.sqrt() * (m2 + norm_S).sqrt()


def shallow_lsi_lower_bound(A, b, m, S, G, c, V0, B0, s0, lam, beta, *, prec: int = 128) -> dict:
    """κ_lo (an arb ball) and whether it is proved positive; every input an exact rational (or int)."""
    from flint import ctx

    A, S, G, V0, B0 = (_mat(X) for X in (A, S, G, V0, B0))
    b, m, c = ([Fraction(x) for x in v] for v in (b, m, c))
    s0, lam, beta = Fraction(s0), Fraction(lam), Fraction(beta)
    d = len(m)
    if lam <= 0 or s0 < 0 or beta < 0 or (s0 == 0 and beta > 0):
        raise ValueError("the bound needs λ > 0, β ≥ 0 and s0 ≥ 0 (s0 > 0 when β > 0)")
    D_dim = 2 * d * d
    L0 = shallow_initial_loss(A, b, m, S, G, c, V0, B0)
    old = ctx.prec
    ctx.prec = prec
    try:
        F0 = initial_free_energy(L0, lam, beta, _frob2(V0) + _frob2(B0), D_dim, 1, s0)
        Lbar = sublevel_loss_bound(F0, lam, beta, D_dim)
        normS = arb_of(_frob2(S)).sqrt()
        m2 = arb_of(_vec2(m))
        kappa = arb_of(lam) - shallow_G_M_bound(Lbar, m2, normS) * normS
        out = {"kappa_lower": kappa, "proved_positive": bool(kappa > 0), "rate_lower": 2 * kappa,
               "F0": F0, "L0": L0, "L_bar": Lbar, "norm_Sigma_F": normS, "prec": prec}
    finally:
        ctx.prec = old
    return out


def initial_free_energy(L0, lam: Fraction, beta: Fraction, theta0_sq: Fraction, D: int, n: int, s0: Fraction):
    """F(ρ_0) for n segments of ρ_0 = N(θ0, s0² I) on ℝ^D: L0 + n(λ/2)(|θ0|² + Ds0²) − nβ(D/2) log(2πe s0²)."""
    from flint import arb

    F = arb_of(L0) if not isinstance(L0, arb) else L0
    F += arb_of(n * lam * (theta0_sq + D * s0 * s0) / 2)
    if beta > 0:
        F -= arb_of(n * beta) * arb(D) / 2 * (2 * arb.pi() * arb(1).exp() * arb_of(s0 * s0)).log()
    return F


def sublevel_loss_bound(F0, lam: Fraction, beta: Fraction, N: int):
    """L̄ = F0 + (βN/2) log(2πβ/λ): the largest loss on {F ≤ F0} (F0 minus the minimum over X of
    λX/2 − (βN/2) log(2πe X/N), the weight decay and Gaussian entropy bound on ℝ^N); F0 for β = 0."""
    from flint import arb

    return F0 + (arb_of(beta * N / 2) * (2 * arb.pi() * arb_of(beta / lam)).log() if beta > 0 else 0)


def shallow_initial_loss(A, b, m, S, G, c, V0, B0) -> Fraction:
    """L at the aggregates of ρ_0 (V̄ = V0, K = V0 ⊗ B0, so M = V0ΣB0): |r|² + tr(DΣDᵀ), D = I + A + M − G,
    exactly: the float model's own `ShallowModel.loss` run on object arrays of Fractions (one copy of L)."""
    import numpy as np

    from riccati_verify.numeric.training import ShallowModel, aggregates

    exact_array = lambda X: np.vectorize(Fraction, otypes=[object])(np.array(X, dtype=object))
    model = ShallowModel(*(exact_array(X) for X in (A, b, m, S, G, c)))
    return Fraction(model.loss(*aggregates(exact_array([V0]), exact_array([B0])))[0])


# ----------------------------------------------------------------------------- deep regime: non-convexity

NONCONVEXITY_DPS = 40
MIDPOINT_ARGUMENT = ("the velocity of (delta_(V0,B) + delta_(V1,B))/2 is Ax + b + ((V0 + V1)/2) Attn_B[mu](x) for every "
                     "token law mu, so the midpoint measure drives the single-head flow with V = (V0 + V1)/2")
"""The producer's statement of why one single-head flow gives the midpoint's loss (the checker
accepts only the sentence it states itself)."""


def nonconvexity_certificate(params, state, V1, time, target, *, prec: int = 256, order: int = 30):
    """A `training_nonconvexity` certificate for ρ0 = δ_(V, B), ρ1 = δ_(V1, B) (params.V = V0), or None.

    The three Frobenius losses are computed at 40 digits (mpmath Taylor flow, `numeric.flow`),
    the witness intervals are those values ± 1e-25 (relative, at least absolute), and the claimed
    excess is a rational at most 99 % of the computed one.  Returns (document, check result) with
    the verdict of `verify_certificate` only, or (None, reason) when no midpoint violation is found.
    """
    import mpmath

    from riccati_verify.certify.certificate import make_certificate
    from riccati_verify.checker import verify_certificate
    from riccati_verify.core.model import Params
    from riccati_verify.numeric.flow import Segment, integrate_segments_mp

    T = Fraction(time)
    V1 = tuple(tuple(Fraction(x) for x in r) for r in V1)
    Vmid = tuple(tuple((a + b) / 2 for a, b in zip(r0, r1)) for r0, r1 in zip(params.V, V1))
    losses = {}
    with mpmath.workdps(NONCONVEXITY_DPS):
        for name, V in (("rho0", params.V), ("rho1", V1), ("midpoint", Vmid)):
            p = Params(params.A, params.B, V, params.b)
            m, S = integrate_segments_mp([Segment(T, p)], state, dps=NONCONVEXITY_DPS)
            d = len(m)
            q = lambda x: mpmath.mpf(x.numerator) / x.denominator
            losses[name] = (sum((m[i] - q(target.mean[i])) ** 2 for i in range(d))
                            + sum((S[i][j] - q(target.cov[i][j])) ** 2 for i in range(d) for j in range(d)))
        excess = losses["midpoint"] - (losses["rho0"] + losses["rho1"]) / 2
        if excess <= 0:
            return None, f"no midpoint violation: L(midpoint) − mean of the ends = {mpmath.nstr(excess, 6)}"
        claim_q = Fraction(mpmath.nstr(excess * mpmath.mpf("0.99"), 6)).limit_denominator(10 ** 6)
        claim_q = min(claim_q, Fraction(mpmath.nstr(excess * mpmath.mpf("0.99"), 20)))
        width = lambda L: max(abs(L) * mpmath.mpf(10) ** -25, mpmath.mpf(10) ** -25)
        rat = lambda x: Fraction(mpmath.nstr(x, 35))
        wl = {n: [str(rat(L - width(L))), str(rat(L + width(L)))] for n, L in losses.items()}
    claim = {"V1": [[str(x) for x in r] for r in V1], "time": str(T),
             "target_mean": [str(x) for x in target.mean], "target_cov": [[str(x) for x in r] for r in target.cov],
             "loss": "frobenius", "excess_at_least": str(claim_q)}
    witness = {"losses": wl, "argument": MIDPOINT_ARGUMENT, "prec": prec, "order": order}
    doc = make_certificate("training_nonconvexity", claim, params, state, witness,
                           "three validated moment flows in ball arithmetic, Frobenius loss in balls")
    return doc, verify_certificate(doc)


def example_nonconvexity_certificate():
    """d = 1, A = 0, B = 1, V0 = −1, V1 = 0, b = 0, N(0, 1) → N(0, 2) at T = 1: σ(T) = 1/(1 − 2v), so
    L = (σ(T) − 2)² is 25/9, 1 and 9/4 at v = −1, 0, −1/2 and the midpoint excess is 13/36."""
    from riccati_verify.core.model import Gaussian, Params

    p = Params.from_arrays([[0]], [[1]], [[-1]], [0])
    doc, res = nonconvexity_certificate(p, Gaussian.from_arrays([0], [[1]]), [[0]], 1,
                                        Gaussian.from_arrays([0], [[2]]))
    return doc, res


# ----------------------------------------------------------------------------- deep regime: NTK, d = 1

def ntk_d1(m0, s0, T, heads, *, prec: int = 128) -> dict:
    """The NTK Gram matrix of y = (m(T), σ(T)) in the head parameters, d = 1, A = 0, b = 0, enclosed in arb.

    With v̄ = E_ρV and k = E_ρ[VB] the flow is σ' = 2kσ², m' = (v̄ + kσ)m, so with D = 1 − 2kσ0T > 0
    (no blow-up on [0, T], decided exactly):  σ(T) = σ0/D,  m(T) = m0 e^{v̄T} D^{−1/2}.  The first
    variation of y_j is ∂y_j/∂v̄·V + ∂y_j/∂k·VB, so ∇_θ δy_j/δρ(θ) = (a_j + c_j B, c_j V) with
    (a, c)_m = (T m(T), σ0T m(T)/D) and (a, c)_σ = (0, 2σ0²T/D²), and K_jl = (1/H)Σ_h ⟨∇δy_j, ∇δy_l⟩.
    Returns the ball entries of K, whether K is proved positive definite (K_mm > 0 and det K > 0 in
    arb), "lambda_min_at_least": the exact lower end of the ball det K / tr K (a rational ≤ λ_min K when K
    is positive definite), and "lambda_min": that ball itself (det K / tr K, a lower bound of λ_min, not
    λ_min; the key is kept for callers)."""
    from flint import arb, ctx

    m0, s0, T = Fraction(m0), Fraction(s0), Fraction(T)
    heads = [(Fraction(V), Fraction(B)) for V, B in heads]
    H = len(heads)
    vbar = sum(V for V, _ in heads) / H
    k = sum(V * B for V, B in heads) / H
    D = 1 - 2 * k * s0 * T
    if D <= 0 or s0 <= 0 or T <= 0:
        return {"proved_positive_definite": False, "reason": "the flow blows up on [0, T] (1 − 2kσ0T ≤ 0) or σ0, T ≤ 0"}
    old = ctx.prec
    ctx.prec = prec
    try:
        mT = arb_of(m0) * (arb_of(vbar * T)).exp() / arb_of(D).sqrt()
        coef = {"m": (arb_of(T) * mT, arb_of(s0 * T / D) * mT), "sigma": (arb(0), arb_of(2 * s0 * s0 * T / (D * D)))}
        names = ("m", "sigma")
        K = [[arb(0)] * 2 for _ in range(2)]
        for V, B in heads:
            g = {n: (coef[n][0] + coef[n][1] * arb_of(B), coef[n][1] * arb_of(V)) for n in names}
            for i, a in enumerate(names):
                for j, b in enumerate(names):
                    K[i][j] += (g[a][0] * g[b][0] + g[a][1] * g[b][1]) / H
        det = K[0][0] * K[1][1] - K[0][1] * K[1][0]
        pd = bool(K[0][0] > 0 and det > 0)
        det_over_tr = det / (K[0][0] + K[1][1])  # λ_min = det/λ_max ≥ det/tr for a PD 2×2 matrix
        return {"K": K, "det": det, "lambda_min": det_over_tr, "lambda_min_at_least": fraction_of_mid(det_over_tr.lower()),
                "proved_positive_definite": pd, "m_T": mT,
                "sigma_T": arb_of(s0 / D), "v_bar": vbar, "k": k, "D": D, "prec": prec}
    finally:
        ctx.prec = old
