"""Well-posedness of mean-field Langevin training on a concrete spec (seed 001 Theorems 7.1, 9.1; MATH.md §16).

The reduction.  By `numeric.training` eq. (1) the training drift is affine in the head θ,

    ∇_θ U_ρ(θ) = g(ρ) + 𝐇(ρ) θ,   g = (vec G_V, 0),  𝐇 = λI + [[0, Ĉ], [Ĉᵀ, 0]],

with (G_V, G_K) functions of the aggregates V̄ = E_ρV and K = E_ρ[V ⊗ B] only, i.e. of the mean μ
and the second moment of ρ.  So for any solution of ∂_s ρ = ∇·(ρ∇U_ρ) + βΔρ with finite second
moments, (μ_s, C_s) (mean and covariance, per depth segment) solve the closed ODE

    μ' = −(g + 𝐇μ),   C' = −(𝐇C + C𝐇) + 2βI,                                           (W)

and, given them, ρ_s solves a linear Fokker–Planck equation with an affine drift (an
Ornstein–Uhlenbeck law with time-dependent coefficients), which has exactly one solution from ρ_0.
Conversely, a solution of (W) defines that linear equation, whose solution has the moments (μ, C)
and therefore solves the nonlinear one.  From a Gaussian ρ_0 = N(θ0, s0² I) (the specs' initial
law) ρ_s stays Gaussian.  So existence and uniqueness of ρ_s for all s ≥ 0 (Theorem 7.1) follow
once the right side of (W) is locally Lipschitz on a set that (W) cannot leave, and compact:

1. *A-priori bound.*  F = L + Σ_k[(λ/2)E_k|θ|² − β h(ρ_k)] does not increase along (W) (it is the
   Wasserstein gradient flow of F restricted to Gaussians).  With L ≥ 0 and the Gaussian entropy
   bound h(ρ_k) ≤ (D/2) log(2πe x_k/D), x_k = E_k|θ|², and concavity of log, X = Σ_k x_k obeys
   φ(X) = λX/2 − (βN/2) log(2πe X/N) ≤ F(ρ_0) (N = nD, n segments, D = 2d²), so X ≤ X̄, the
   rational found here with φ(X̄) > F(ρ_0) and X̄ ≥ βN/λ (φ increases there), proved in arb.
   On that set L ≤ L̄ = F(ρ_0) + (βN/2) log(2πβ/λ) (L̄ = F(ρ_0) for β = 0).  Needs λ > 0.
2. *Aggregates.*  ‖V̄_k‖_F ≤ √X̄ and ‖K_k‖_F ≤ E_k‖V‖_F‖B‖_F ≤ X̄/2 = k̄.
3. *Shallow regime.*  G_V = 2rmᵀ, G_M = 2rmᵀ + 2DΣ, G_K = G_M ⊗ Σ are affine in (V̄, K): (W) has a
   polynomial right side, and the bounds ‖G_V‖_F ≤ 2√L̄|m|, ‖G_K‖_F ≤ 2√L̄ √(|m|² + ‖Σ‖_F) ‖Σ‖_F
   hold on the set.  Their Lipschitz constants in the aggregates are global:
   ‖δG_V‖ ≤ 2|m|²(‖δV̄‖ + ‖Σ‖‖δK‖),  ‖δG_K‖ ≤ ‖Σ‖(2|m|²‖δV̄‖ + (2|m|²‖Σ‖ + 2‖Σ‖²)‖δK‖),
   and with ‖δV̄‖ ≤ W2, ‖δK‖ ≤ 2√X̄ W2 (optimal coupling, Cauchy–Schwarz) the drift obeys
   |∇U_ρ(θ) − ∇U_ρ'(θ)| ≤ (ℓ0 + ℓ1|θ|) W2(ρ, ρ').
4. *Deep regime (Theorem 9.1: forward, backward, training together).*  For every aggregate in the
   set, ‖Σ(t)‖_F ≤ S(t) = s0 e^{2at}/(1 − 2k̄ s0 q(t)), q(t) = (e^{2at} − 1)/(2a) (q = t at a = 0),
   the solution of S' = 2aS + 2k̄S² (from d‖Σ‖_F/dt ≤ 2‖J‖‖Σ‖_F, ‖J‖ ≤ a + k̄‖Σ‖_F, a = ‖A‖_F,
   s0 = ‖Σ(0)‖_F): the forward flow exists on [0, T] when 1 − 2k̄ s0 q(T) > 0.  Then with
   j̄ = a + k̄S_T, ω = j̄ + √X̄:  |m(t)| ≤ m̄ = e^{ωT}(|m0| + |b|T);  λ_min Σ(t) ≥ ℓ0 e^{−2j̄T};
   the costates obey |p| ≤ p̄ = |p_T|e^{ωT} and ‖P‖_F ≤ P̄ = e^{ω_P T}(‖P_T‖ + k̄ p̄ m̄ T),
   ω_P = 2k̄S_T + 2j̄ (Grönwall on −ṗ = (A + V̄ + M)ᵀp, −Ṗ = K*(pmᵀ + Q) + JᵀP + PJ, ‖Q‖ ≤ 2‖P‖S_T);
   and ‖G_V‖_F ≤ T p̄ m̄, ‖G_K‖_F ≤ T(p̄ m̄ + 2P̄S_T)S_T.  |p_T|, ‖P_T‖ bound the terminal loss
   gradient (Frobenius: 2(m̄ + |m1|), 2(S_T + ‖Σ1‖_F); KL: ‖Σ1⁻¹‖_F(m̄ + |m1|),
   (‖Σ1⁻¹‖_F + √d/ℓ_T)/2).  The forward–backward map is then smooth in the aggregates on a
   neighbourhood of the set (the strict inequality), hence (W) is locally Lipschitz there.
   F(ρ_0) needs L(ρ_0), bounded by the same forward bounds at ρ_0's own aggregates (V0, V0 ⊗ B0).
4'. *Deep Lipschitz constants in the aggregates* (`_deep_gradient_lipschitz`): Grönwall on the
   differences of the forward, terminal and backward equations between two head laws of the
   set gives ‖δG_V‖, ‖δG_K‖ ≤ c_V e_V + c_K e_K (e_V, e_K the largest ‖δV̄_k‖, ‖δK_k‖ over the
   segments), and with e_V ≤ W2, e_K ≤ 2√X̄ W2 (the largest per-segment W2) the drift bound
   |∇U_ρ(θ) − ∇U_ρ'(θ)| ≤ (ℓ0 + ℓ1|θ|) W2 of item 3 in the deep regime too (far from sharp).
5. In both regimes the Hessian of U_ρ has norm ≤ λ + ‖G_K‖_F: θ ↦ ∇U_ρ(θ) is Lipschitz with that
   constant, and |∇U_ρ(θ)| ≤ ‖G_V‖ + (λ + ‖G_K‖)|θ|.

Every constant is an arb ball from the spec's exact rationals; `certified` is True only when λ > 0,
the bound X̄ is proved and (deep) the no-blow-up inequality is proved.  The bounds are crude
(Frobenius norms, worst-case alignment): a spec can be well posed and still not certified here.
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb

from riccati_verify.core import exact
from riccati_verify.core.balls import arb_of
from riccati_verify.certify.training import (_frob2, _vec2, initial_free_energy, shallow_G_M_bound, shallow_initial_loss,
                                              sublevel_loss_bound)

__all__ = ["comparison_fails_below", "forward_bounds", "moment_bound", "wellposedness"]


def _phi(X, lam: Fraction, beta: Fraction, N: int, *, ball: bool = True):
    """φ(X) = λX/2 − (βN/2) log(2πe X/N): an arb ball for rational X, or (ball=False) a float for a float X,
    `moment_bound`'s bracketing guess (one formula, two arithmetics)."""
    import math

    if ball:
        q, log, two_pi_e = arb_of, (lambda y: y.log()), 2 * arb.pi() * arb(1).exp()
    else:
        q, log, two_pi_e = float, math.log, 2 * math.pi * math.e
    out = q(lam * X / 2)
    if beta > 0:
        out -= q(beta * N / 2) * log(two_pi_e * q(X / N))
    return out


def moment_bound(F0, lam: Fraction, beta: Fraction, N: int) -> dict:
    """The rational X̄ with φ(X̄) > F0 and X̄ ≥ βN/λ proved in arb (so Σ_k E_k|θ|² ≤ X̄), and L̄."""
    if lam <= 0:
        return {"proved": False, "reason": "no weight decay (λ = 0): the free energy gives no a-priori moment bound"}
    xstar = beta * N / lam
    f0 = float(F0.mid()) + float(F0.rad())
    # φ(X) ≥ λX/4 once X ≥ (2βN/λ) log(2πe X/N), so a bracket [X*, hi] for φ = F0 + margin is found by
    # doubling; bisection on floats, the end point checked in arb
    lo, hi = float(xstar), max(1.0, 2 * float(xstar))
    target = f0 + 1e-9 * max(1.0, abs(f0))
    fl = lambda x: _phi(x, lam, beta, N, ball=False)
    for _ in range(200):
        if fl(hi) > target:
            break
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fl(mid) <= target else (lo, mid)
    X = max(Fraction(hi * (1 + 1e-9)).limit_denominator(10 ** 9), xstar)
    for _ in range(40):
        if X >= xstar and _phi(X, lam, beta, N) > F0:
            break
        X *= 2
    else:
        return {"proved": False, "reason": "no X̄ with φ(X̄) > F(ρ_0) could be proved"}
    return {"proved": True, "X_bar": X, "L_bar": sublevel_loss_bound(F0, lam, beta, N), "X_star": xstar}


def forward_bounds(a, v, k, s0, m0, bnorm, T) -> dict:
    """The forward bounds of item 4 (arb balls in, arb balls out); `proved` when 1 − 2k s0 q(T) > 0."""
    from flint import arb

    q = T if a == 0 else ((2 * a * T).exp() - 1) / (2 * a)
    den = 1 - 2 * k * s0 * q
    if not den > 0:
        return {"proved": False, "reason": "the comparison Riccati bound blows up on [0, T] (1 − 2k̄ s0 q(T) ≤ 0)",
                "denominator": den}
    S_T = s0 * (2 * a * T).exp() / den
    j = a + k * S_T
    w = j + v
    mbar = (w * T).exp() * (m0 + bnorm * T)
    return {"proved": True, "denominator": den, "S_T": S_T, "j_bar": j, "omega": w, "m_bar": mbar,
            "growth_lambda_min": (-2 * j * T).exp(), "q_T": q if isinstance(q, arb) else arb(q)}


def _lambda_min_lower(S) -> Fraction:
    """A rational ℓ ≤ λ_min(S), proved by exact leading minors of S − ℓI (0 when S is singular)."""
    import numpy as np

    d = len(S)
    guess = float(np.min(np.linalg.eigvalsh(np.array([[float(x) for x in r] for r in S]))))
    ell = Fraction(guess * 0.99).limit_denominator(10 ** 6) if guess > 0 else Fraction(0)
    while ell > 0:
        M = [[S[i][j] - (ell if i == j else 0) for j in range(d)] for i in range(d)]
        if exact.is_pd(M):
            return ell
        ell /= 2
        if ell < Fraction(1, 10 ** 30):
            return Fraction(0)
    return Fraction(0)


def _terminal_gradient_bounds(kind, target, fb, d):
    """(L bound, |p_T| bound, ‖P_T‖_F bound) over every terminal state allowed by the forward bounds."""
    from flint import arb

    m1, S1 = target
    nm1, nS1 = arb_of(_vec2(m1)).sqrt(), arb_of(_frob2(S1)).sqrt()
    dm = fb["m_bar"] + nm1
    if kind == "frobenius":
        return dm * dm + (fb["S_T"] + nS1) ** 2, 2 * dm, 2 * (fb["S_T"] + nS1)
    from flint import fmpq_mat

    from riccati_verify.core.balls import fmpq_of

    ell_T = fb["ell_T"]
    if not ell_T > 0:
        return None
    S1m = fmpq_mat([[fmpq_of(x) for x in r] for r in S1])
    S1i = S1m.inv()
    nS1i = arb(sum(S1i[i, j] ** 2 for i in range(d) for j in range(d))).sqrt()
    logdet1 = arb(S1m.det()).log()
    # |tr(Σ1⁻¹Σ)| ≤ ‖Σ1⁻¹‖_F‖Σ‖_F,  (m − m1)ᵀΣ1⁻¹(m − m1) ≤ ‖Σ1⁻¹‖_F|m − m1|²,  −log det Σ ≤ −d log ℓ_T
    L = (nS1i * fb["S_T"] + nS1i * dm * dm - d + logdet1 - d * ell_T.log()) / 2
    return L, nS1i * dm, (nS1i + arb(d).sqrt() / ell_T) / 2


def wellposedness(doc: dict, *, prec: int = 128, spec=None) -> dict:
    """The constants of the module docstring for a training spec (the dict of a spec file), from the
    exact rationals of the one spec reader (`spec`: that reader's result for doc, when the caller has it).
    `certified` says whether items 1–5 are all proved."""
    from flint import ctx

    from riccati_verify.numeric.training import spec_from_dict

    if spec is None or spec.rationals is None:
        spec = spec_from_dict(doc, exact=True)       # bounds and shape checks (InputError on bad input)
    R = spec.rationals
    A, b, m, S = R["A"], R["b"], R["mean"], R["cov"]
    d = len(A)
    V0, B0, s0 = R["init.V"], R["init.B"], R["init.spread"]
    lam, beta = R["weight_decay"], R["beta"]
    D, n = 2 * d * d, spec.segments
    theta0_sq = _frob2(V0) + _frob2(B0)
    out = {"regime": spec.regime, "loss": spec.loss_kind, "d": d, "segments": n, "weight_decay": lam, "beta": beta,
           "init_spread": s0, "prec": prec}
    old = ctx.prec
    ctx.prec = prec
    try:
        nS = arb_of(_frob2(S)).sqrt()
        nm = arb_of(_vec2(m)).sqrt()
        if spec.regime == "shallow":
            Gm, c = R["loss.G"], R["loss.c"]
            L0 = shallow_initial_loss(A, b, m, S, Gm, c, V0, B0)
            out["L0"] = L0
        else:
            T = R["T"]
            out["T"] = T
            a = arb_of(_frob2(A)).sqrt()
            ell0 = _lambda_min_lower(S)
            target = (R["loss.target.mean"], R["loss.target.cov"])
            fb0 = forward_bounds(a, arb_of(_frob2(V0)).sqrt(), arb_of(_frob2(V0) * _frob2(B0)).sqrt(), nS, nm,
                                 arb_of(_vec2(b)).sqrt(), arb_of(T))
            if not fb0["proved"]:
                return dict(out, certified=False, reason="at ρ_0 itself: " + fb0["reason"])
            fb0["ell_T"] = arb_of(ell0) * fb0["growth_lambda_min"]
            tb0 = _terminal_gradient_bounds(spec.loss_kind, target, fb0, d)
            if tb0 is None:
                return dict(out, certified=False, reason="Σ(0) is singular: no lower bound of λ_min Σ(T) for the KL loss")
            L0 = tb0[0]
            out["L0_upper"] = L0
        F0 = initial_free_energy(L0, lam, beta, theta0_sq, D, n, s0)
        out["F0"] = F0
        mb = moment_bound(F0, lam, beta, n * D)
        if not mb["proved"]:
            return dict(out, certified=False, reason=mb["reason"])
        X = mb["X_bar"]
        out.update(X_bar=X, L_bar=mb["L_bar"], k_bar=X / 2)
        sqX = arb_of(X).sqrt()
        if spec.regime == "shallow":
            GV = 2 * mb["L_bar"].sqrt() * nm
            GK = shallow_G_M_bound(mb["L_bar"], nm * nm, nS) * nS
            m2 = nm * nm
            out.update(G_V_bound=GV, G_K_bound=GK,
                       lip_aggregates={"G_V": {"dV": 2 * m2, "dK": 2 * m2 * nS},
                                       "G_K": {"dV": 2 * m2 * nS, "dK": nS * (2 * m2 * nS + 2 * nS * nS)}},
                       lip_W2_drift={"const": 2 * m2 * (1 + 2 * nS * sqX),
                                     "per_abs_theta": nS * (2 * m2 + (2 * m2 * nS + 2 * nS * nS) * 2 * sqX)})
        else:
            fb = forward_bounds(a, sqX, arb_of(X / 2), nS, nm, arb_of(_vec2(b)).sqrt(), arb_of(T))
            out["forward"] = {k: v for k, v in fb.items() if k != "proved" and k != "reason"}
            if not fb["proved"]:
                return dict(out, certified=False, reason=fb["reason"])
            fb["ell_T"] = arb_of(ell0) * fb["growth_lambda_min"]
            tb = _terminal_gradient_bounds(spec.loss_kind, target, fb, d)
            if tb is None:
                return dict(out, certified=False, reason="Σ(0) is singular: no lower bound of λ_min Σ(T) for the KL loss")
            _, pT, PT = tb
            Tb = arb_of(T)
            kb = arb_of(X / 2)
            pbar = pT * (fb["omega"] * Tb).exp()
            wP = 2 * kb * fb["S_T"] + 2 * fb["j_bar"]
            Pbar = (wP * Tb).exp() * (PT + kb * pbar * fb["m_bar"] * Tb)
            out.update(lambda_min_Sigma0_lower=ell0, ell_T=fb["ell_T"], p_T_bound=pT, P_T_bound=PT, p_bar=pbar,
                       P_bar=Pbar, G_V_bound=Tb * pbar * fb["m_bar"],
                       G_K_bound=Tb * (pbar * fb["m_bar"] + 2 * Pbar * fb["S_T"]) * fb["S_T"])
            lipV, lipK = _deep_gradient_lipschitz(spec.loss_kind, target, fb, kb, pbar, Pbar, wP, Tb)
            out["lip_aggregates"] = {"G_V": {"dV": lipV[0], "dK": lipV[1]}, "G_K": {"dV": lipK[0], "dK": lipK[1]}}
            out["lip_W2_drift"] = {"const": lipV[0] + lipV[1] * 2 * sqX, "per_abs_theta": lipK[0] + lipK[1] * 2 * sqX}
        out["lip_theta"] = arb_of(lam) + out["G_K_bound"]
        out["certified"] = True
        out["reason"] = ("ρ_s exists and is unique for all s ≥ 0 (Gaussian, Σ_k E|θ|² ≤ X̄); the drift is Lipschitz "
                         "in θ with the printed constant" + ("; forward and backward solves exist on [0, T] for every "
                                                             "ρ on the set" if spec.regime == "deep" else ""))
        return out
    finally:
        ctx.prec = old


def _deep_gradient_lipschitz(kind, target, fb, k, pbar, Pbar, wP, T):
    """Coefficients (c_V, c_K) with ‖δG_V‖ ≤ c_V·e_V + c_K·e_K (and the same for G_K), e_V, e_K the largest
    changes ‖δV̄_k‖_F, ‖δK_k‖_F over the segments, for two head laws of the a-priori set (item 4').

    Grönwall on the differences of the forward, terminal and backward equations, each bounded
    through the sup bounds S_T, m̄, p̄, P̄ of the set (δX(t) = 0 at the equation's start, so a forcing
    f gives ‖δX‖ ≤ T e^{cT} f for the rate c):
      ‖δJ‖ ≤ k‖δΣ‖ + S_T e_K,  ‖δΣ‖' ≤ (2j̄ + 2kS_T)‖δΣ‖ + 2S_T² e_K,
      ‖δm‖' ≤ ω‖δm‖ + m̄(e_V + ‖δJ‖),   ‖δp‖' ≤ ω‖δp‖ + p̄(e_V + ‖δJ‖)   (from ‖δp_T‖),
      ‖δP‖' ≤ ω_P‖δP‖ + k(‖δp‖m̄ + p̄‖δm‖ + 2P̄‖δΣ‖) + e_K(p̄m̄ + 2P̄S_T) + 2P̄‖δJ‖   (from ‖δP_T‖),
      ‖δG_V‖ ≤ T(‖δp‖m̄ + p̄‖δm‖),  ‖δG_K‖ ≤ T[(‖δp‖m̄ + p̄‖δm‖ + 2S_T‖δP‖ + 2P̄‖δΣ‖)S_T + (p̄m̄ + 2P̄S_T)‖δΣ‖];
    terminal: Frobenius δp_T = 2δm, δP_T = 2δΣ; KL ‖δp_T‖ ≤ ‖Σ1⁻¹‖_F‖δm‖, ‖δP_T‖ ≤ ‖δΣ‖/(2ℓ_T²)
    (Σ⁻¹ − Σ'⁻¹ = Σ⁻¹(Σ' − Σ)Σ'⁻¹).  Pairs (c_V, c_K) of arb balls throughout."""
    from flint import fmpq_mat

    from riccati_verify.core.balls import fmpq_of

    S, m, j, w = fb["S_T"], fb["m_bar"], fb["j_bar"], fb["omega"]
    lin = lambda *terms: tuple(sum(c * x[i] for c, x in terms) for i in range(2))
    eV, eK = (1, 0), (0, 1)
    dS = lin((2 * S * S * T * ((2 * j + 2 * k * S) * T).exp(), eK))
    dJ = lin((k, dS), (S, eK))
    gm = T * (w * T).exp()
    dm = lin((gm * m, eV), (gm * m, dJ))
    if kind == "frobenius":
        dpT, dPT = lin((2, dm)), lin((2, dS))
    else:
        d = len(target[1])
        S1i = fmpq_mat([[fmpq_of(x) for x in r] for r in target[1]]).inv()
        nS1i = arb(sum(S1i[i, jj] ** 2 for i in range(d) for jj in range(d))).sqrt()
        dpT, dPT = lin((nS1i, dm)), lin((1 / (2 * fb["ell_T"] ** 2), dS))
    ew = (w * T).exp()
    dp = lin((ew, dpT), (ew * T * pbar, eV), (ew * T * pbar, dJ))
    eP = (wP * T).exp()
    dP = lin((eP, dPT), (eP * T * k * m, dp), (eP * T * k * pbar, dm), (eP * T * 2 * k * Pbar, dS),
             (eP * T * (pbar * m + 2 * Pbar * S), eK), (eP * T * 2 * Pbar, dJ))
    dpm = lin((m, dp), (pbar, dm))
    dGV = lin((T, dpm))
    dGK = lin((T * S, dpm), (T * S * 2 * S, dP), (T * S * 2 * Pbar, dS), (T * (pbar * m + 2 * Pbar * S), dS))
    return dGV, dGK


def comparison_fails_below(r: dict) -> bool:
    """For a deep `wellposedness` result whose comparison failed: True when it fails already at
    X' = X̄(1 − 10⁻⁶), with X' proved to lie in the sublevel set's upper part (X' ≥ βN/λ and
    φ(X') < F(ρ_0)'s bound), so that it fails for the exact end of {φ ≤ F(ρ_0)-bound} too."""
    from flint import ctx

    den = r.get("forward", {}).get("denominator")
    if den is None or "F0" not in r or not den < 0:
        return False
    old = ctx.prec
    ctx.prec = r["prec"]
    try:
        Xp = r["X_bar"] * (1 - Fraction(1, 10 ** 6))
        N = r["segments"] * 2 * r["d"] ** 2
        lam, beta = r["weight_decay"], r["beta"]
        if Xp < beta * N / lam or not _phi(Xp, lam, beta, N) < r["F0"]:
            return False
        # den = 1 − X̄ s0 q(T) is affine in X̄: at X' it is 1 − (X'/X̄)(1 − den)
        return bool(1 - arb_of(Xp / r["X_bar"]) * (1 - den) < 0)
    finally:
        ctx.prec = old
