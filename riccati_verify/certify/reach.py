"""Exact finite-time reachability between Gaussians (MATH.md §3–4).

Given N(m0, Σ0), a target N(m1, Σ1) and a horizon T > 0:

* **Rank obstruction.**  Σ(t) = Φ(t) Σ0 Φ(t)ᵀ with Φ(t) invertible for *any*
  controls, so rank Σ is invariant: a target of another rank is unreachable
  (decided on the exact rationals, `Gaussian.rank`).
* **Congruence controls (B = V = 0).**  Same rank ⇒ Sylvester's law gives
  G ∈ GL(d) with Σ1 = G Σ0 Gᵀ; when det G < 0 a reflection R = P0 Q P0⁻¹
  (which fixes Σ0) is composed in, so G ∈ GL⁺(d).  G is written as a product
  of matrix exponentials: one real principal logarithm when the spectrum of G
  avoids (−∞, 0], else the polar split G = O·H' with O ∈ SO(d) (a real
  logarithm always exists) and H' = O⁻¹G near-SPD.  Segment k holds
  A_k = L_k/τ_k, so Φ(T) = G, and the mean is steered by b on the last
  segment (its W = ∫ e^{As} ds is invertible for these logarithms).
* **Attention-only controls (A = 0).**  With V = I and a constant symmetric B,
  P = Σ⁻¹ obeys Ṗ = −2B (MATH.md §7), so B = (Σ0⁻¹ − Σ1⁻¹)/(2τ) moves P along
  the segment from P0 to P1, which stays positive definite (convex
  combination): an exact piecewise-constant route, unlike V = JΣ⁻¹ with
  B = I, which needs V to vary with Σ(t).  The mean is then rotated/scaled
  with B = 0, ṁ = V m (Σ frozen); b is used only where no linear flow can do
  it (m = 0 at either end, or a sign change when d = 1).
* **Bounded controls.**  `min_time.py`: a certified bracket
  [T_lower, T_upper] for the minimal time under ‖·‖₂ ≤ M; `reach(...,
  max_norm=M)` reports its verdict at T and, when T ≥ T_upper, its controls.

Construction runs in mpmath at `CONSTRUCT_DPS` digits; controls are rounded
to `CONTROL_DIGITS`-digit decimals taken as exact rationals, so the
published controls are exact numbers.  `terminal_error_mp` re-integrates
eq. 1.1 under them (flow.integrate_segments_mp) — the independent check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Sequence

import mpmath

from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.numeric.flow import Segment, integrate_segments_mp
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view

CONSTRUCT_DPS = 60
CONTROL_DIGITS = 45
VERIFY_DPS = 32
NEG_AXIS_TOL = mpmath.mpf("1e-8")   # spectra this close to (−∞, 0] take the two-factor route
MINUS_ONE_TOL = mpmath.mpf("1e-12")  # rotation angles this close to π are treated as π


# ---------------------------------------------------------------- conversions

def _mpf(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def mp_matrix(M: exact.Matrix) -> mpmath.matrix:
    return mpmath.matrix([[_mpf(x) for x in r] for r in M])


def mp_vector(v: exact.Vector) -> mpmath.matrix:
    return mpmath.matrix([_mpf(x) for x in v])


def _round(x) -> Fraction:
    """The exact rational of a CONTROL_DIGITS-significant-digit decimal of x."""
    x = mpmath.re(x)
    return Fraction(0) if x == 0 else Fraction(mpmath.nstr(x, CONTROL_DIGITS, min_fixed=1, max_fixed=0))


def exact_matrix(M: mpmath.matrix) -> exact.Matrix:
    return tuple(tuple(_round(M[i, j]) for j in range(M.cols)) for i in range(M.rows))


def exact_vector(v: mpmath.matrix) -> exact.Vector:
    return tuple(_round(v[i]) for i in range(v.rows))


# ----------------------------------------------------------------- the result

@dataclass
class ReachResult:
    reachable: bool
    reason: str
    mode: str = ""
    segments: list[Segment] = field(default_factory=list)
    rank_initial: int = 0
    rank_target: int = 0
    factorisation: str = ""          # which exponential route was taken
    reflected: bool = False          # det G < 0 was fixed by a reflection fixing Σ0
    uses_b: bool = False
    max_norm: float | None = None    # largest ‖·‖₂ of any control
    energy: float | None = None      # ∫ ‖θ‖_F² dt
    terminal_error: float | None = None
    bound: dict | None = None        # bounded-controls report
    min_time: object = None          # min_time.MinTimeBracket of the bounded-controls mode

    def controls(self) -> list[dict]:
        return [{"duration": s.duration, "A": s.params.A, "B": s.params.B, "V": s.params.V, "b": s.params.b}
                for s in self.segments]


# ------------------------------------------------------------ linear algebra

def psd_congruence_factor(S: mpmath.matrix, rank: int) -> mpmath.matrix:
    """P invertible with P E Pᵀ = S, E = diag(0,…,0, 1,…,1) (`rank` ones, last)."""
    w, U = mpmath.eigsy(S)
    d = S.rows
    P = mpmath.matrix(d, d)
    for j in range(d):
        s = mpmath.sqrt(max(w[j], 0)) if j >= d - rank else mpmath.mpf(1)
        for i in range(d):
            P[i, j] = U[i, j] * s
    return P


def congruence(S0: mpmath.matrix, S1: mpmath.matrix, rank: int) -> tuple[mpmath.matrix, bool]:
    """G with det G > 0 and G S0 Gᵀ = S1 (both of the given rank); also whether a reflection was used."""
    return oriented_congruence(psd_congruence_factor(S0, rank), psd_congruence_factor(S1, rank))


def oriented_congruence(P0: mpmath.matrix, P1: mpmath.matrix) -> tuple[mpmath.matrix, bool]:
    """From P0 E P0ᵀ = S0 and P1 E P1ᵀ = S1 (E = diag(0,…,0,1,…,1)): G = P1 P0⁻¹, or, when
    det < 0, G = P1 Q P0⁻¹ = (P1 P0⁻¹)·R with Q = diag(−1, 1, …, 1) (Q E Q = E) and
    R = P0 Q P0⁻¹ a reflection with R S0 Rᵀ = S0."""
    P0inv = mpmath.inverse(P0)
    G = P1 * P0inv
    if mpmath.det(G) > 0:
        return G, False
    Q = mpmath.eye(P0.rows)
    Q[0, 0] = -1
    return P1 * Q * P0inv, True


def _principal_log(G: mpmath.matrix) -> mpmath.matrix | None:
    """The real principal logarithm, or None when the spectrum touches (−∞, 0]."""
    # (mpmath.eig returns a tuple for 1x1 input, hence the special case)
    ev = [G[0, 0]] if G.rows == 1 else mpmath.eig(G, left=False, right=False)
    for lam in ev:
        if mpmath.re(lam) <= 0 and abs(mpmath.im(lam)) <= NEG_AXIS_TOL * abs(lam):
            return None
    L = mpmath.logm(G)
    scale = max(mpmath.mnorm(L, 1), 1)
    if any(abs(mpmath.im(L[i, j])) > mpmath.mpf(10) ** (-mpmath.mp.dps // 2) * scale
           for i in range(G.rows) for j in range(G.cols)):
        return None
    return L.apply(mpmath.re)


def rotation_log(O: mpmath.matrix) -> mpmath.matrix:
    """A real skew logarithm of O ∈ SO(d).

    C = (O + Oᵀ)/2 and K = (O − Oᵀ)/2 commute; on the cos θ eigenspace of C,
    K = sin θ·J, so g(C)K with g(c) = arccos c / √(1 − c²) is θ·J.  The
    eigenspace of C at −1 (angle π, even-dimensional since det O = 1) gets
    π times a complex structure paired from its eigenvectors.
    """
    d = O.rows
    C = (O + O.T) / 2
    K = (O - O.T) / 2
    c, U = mpmath.eigsy(C)
    g = mpmath.matrix(d, d)
    minus = []
    for k in range(d):
        ck = min(max(c[k], -1), 1)
        if ck <= -1 + MINUS_ONE_TOL:
            minus.append(k)
            continue
        gk = mpmath.acos(ck) / mpmath.sqrt(1 - ck * ck) if ck < 1 else mpmath.mpf(1)
        for i in range(d):
            for j in range(d):
                g[i, j] += gk * U[i, k] * U[j, k]
    L = g * K
    if len(minus) % 2:
        raise ArithmeticError("rotation has an odd-dimensional -1 eigenspace (det O != 1)")
    for a, b in zip(minus[0::2], minus[1::2]):
        for i in range(d):
            for j in range(d):
                L[i, j] += mpmath.pi * (U[i, b] * U[j, a] - U[i, a] * U[j, b])
    return (L - L.T) / 2


def exponential_factors(G: mpmath.matrix) -> tuple[list[mpmath.matrix], str]:
    """Real L_1, …, L_k (time order) with G = exp(L_k)···exp(L_1)."""
    try:
        L = _principal_log(G)
    except RuntimeError:  # mpmath's nonsymmetric QR may not converge; the polar split needs only eigsy
        L = None
    if L is not None:
        return [L], "principal real logarithm"
    GtG = G.T * G
    w, W = mpmath.eigsy(GtG)
    d = G.rows
    Hinv = mpmath.matrix(d, d)
    for k in range(d):
        for i in range(d):
            for j in range(d):
                Hinv[i, j] += W[i, k] * W[j, k] / mpmath.sqrt(w[k])
    O = G * Hinv
    LO = (rotation_log(O))
    Hp = mpmath.expm(-LO) * G          # = H up to the rounding in LO; near SPD
    try:
        LH = _principal_log(Hp)
    except RuntimeError:
        LH = _spd_log((Hp + Hp.T) / 2)
    if LH is None:
        raise ArithmeticError("polar factor lost its positive spectrum (ill-conditioned congruence)")
    return [LH, LO], "two-factor polar split exp(log O)·exp(log H)"


def _spd_log(H: mpmath.matrix) -> mpmath.matrix | None:
    """log H for symmetric positive definite H from its symmetric eigendecomposition."""
    w, W = mpmath.eigsy(H)
    if min(w) <= 0:
        return None
    d = H.rows
    L = mpmath.matrix(d, d)
    for k in range(d):
        lk = mpmath.log(w[k])
        for i in range(d):
            for j in range(d):
                L[i, j] += lk * W[i, k] * W[j, k]
    return L


def _flow_blocks(L: mpmath.matrix, tau: mpmath.mpf) -> tuple[mpmath.matrix, mpmath.matrix]:
    """(e^L, W) for A = L/τ held for τ: m ↦ e^L m + W b with W = ∫_0^τ e^{As} ds."""
    d = L.rows
    Aug = mpmath.matrix(2 * d, 2 * d)
    for i in range(d):
        Aug[i, d + i] = 1
        for j in range(d):
            Aug[i, j] = L[i, j]
    E = mpmath.expm(Aug)
    return E[0:d, 0:d], E[0:d, d:2 * d] * tau


# ------------------------------------------------------------ constructions

def _zeros(d):
    return exact.zeros(d)


def control_segment(duration: Fraction, A=None, B=None, V=None, b=None, d: int = 1) -> Segment:
    """A segment of constant controls; the ones not given are zero."""
    z = _zeros(d)
    return Segment(duration, Params(A or z, B or z, V or z, b or (Fraction(0),) * d))


def steer_congruence(state0: Gaussian, target: Gaussian, T: Fraction) -> ReachResult:
    """Piecewise-constant A and a final b (B = V = 0) steering state0 to target at time T."""
    d = state0.dim
    r = state0.rank
    with mpmath.workdps(CONSTRUCT_DPS):
        G, reflected = congruence(mp_matrix(state0.cov), mp_matrix(target.cov), r)
        Ls, how = exponential_factors(G)
        k = len(Ls)
        tau = T / k
        tau_mp = _mpf(tau)
        As = [exact_matrix(L / tau_mp) for L in Ls]
        # Recompute the flow with the *rounded* A's so b absorbs their error in the mean.
        Phi = mpmath.eye(d)
        W_last = None
        for A in As:
            E, W_last = _flow_blocks(mp_matrix(A) * tau_mp, tau_mp)
            Phi = E * Phi
        rhs = mp_vector(target.mean) - Phi * mp_vector(state0.mean)
        b = exact_vector(mpmath.lu_solve(W_last, rhs))
    segs = [control_segment(tau, A=A, d=d) for A in As[:-1]] + [control_segment(tau, A=As[-1], b=b, d=d)]
    return _finish(ReachResult(True, "same rank: congruence controls", "congruence (B = V = 0)", segs,
                               r, target.rank, how, reflected, any(b)))


def _mean_rotation(m: mpmath.matrix, m1: mpmath.matrix) -> mpmath.matrix | None:
    """K with e^K m = m1 (a scaling times a plane rotation), or None if none is linear."""
    d = m.rows
    nm, n1 = mpmath.norm(m), mpmath.norm(m1)
    if nm == 0 or n1 == 0:
        return None
    K = mpmath.eye(d) * mpmath.log(n1 / nm)
    e1 = m / nm
    u = m1 / n1
    cos = max(min((e1.T * u)[0], 1), -1)
    if d == 1:
        return K if cos > 0 else None
    perp = u - e1 * cos
    if mpmath.norm(perp) < mpmath.mpf(10) ** (-mpmath.mp.dps // 2):
        if cos > 0:
            return K
        # antiparallel: rotate by π in a plane through e1 and any orthogonal direction
        j = min(range(d), key=lambda i: abs(e1[i]))
        ej = mpmath.matrix(d, 1)
        ej[j] = 1
        perp = ej - e1 * e1[j]
    e2 = perp / mpmath.norm(perp)
    theta = mpmath.acos(cos)
    return K + theta * (e2 * e1.T - e1 * e2.T)


def steer_attention(state0: Gaussian, target: Gaussian, T: Fraction) -> ReachResult:
    """A = 0 controls: a V = I Riccati segment for Σ, then a B = 0 segment for the mean."""
    d = state0.dim
    if state0.rank < d:
        raise InputError(f"--attention-only needs an invertible covariance (rank {state0.rank} < d = {d}); "
                         "use the default congruence mode for rank-deficient states")
    tau = T / 2
    with mpmath.workdps(CONSTRUCT_DPS):
        P0 = mpmath.inverse(mp_matrix(state0.cov))
        P1 = mpmath.inverse(mp_matrix(target.cov))
        Bm = (P0 - P1) / (2 * _mpf(tau))
        B = exact_matrix((Bm + Bm.T) / 2)
    cov_seg = control_segment(tau, B=B, V=exact.identity(d), d=d)
    with mpmath.workdps(CONSTRUCT_DPS):
        # Closed form of ṁ = (I + Σ(t)B)m along the segment (Radon: Σ = Σ0 X⁻¹,
        # X = I − 2tBΣ0): m(τ) = e^τ Σ0 (I − 2τBΣ0)^{-1/2} Σ0⁻¹ m0, a principal root since
        # the spectrum of X(t) stays on the positive axis while P(t) ≻ 0.
        S0 = mp_matrix(state0.cov)
        X = mpmath.eye(d) - 2 * _mpf(tau) * mp_matrix(B) * S0
        m = mpmath.exp(_mpf(tau)) * S0 * mpmath.inverse(mpmath.sqrtm(X)) * mpmath.lu_solve(S0, mp_vector(state0.mean))
        m = m.apply(mpmath.re)
        m1 = mp_vector(target.mean)
        K = _mean_rotation(m, m1)
        if K is not None:
            mean_seg = control_segment(tau, V=exact_matrix(K / _mpf(tau)), d=d)
        elif mpmath.norm(m) == 0 and mpmath.norm(m1) == 0:
            mean_seg = control_segment(tau, d=d)
        else:
            mean_seg = control_segment(tau, b=exact_vector((m1 - m) / _mpf(tau)), d=d)
    res = ReachResult(True, "invertible covariances: attention-only controls", "attention-only (A = 0)",
                      [cov_seg, mean_seg], state0.rank, target.rank, "Riccati segment P(t) = P0 - 2Bt",
                      False, any(mean_seg.params.b))
    return _finish(res)


def _finish(res: ReachResult) -> ReachResult:
    res.max_norm = max_control_norm(res.segments)
    res.energy = control_energy(res.segments)
    return res


def max_control_norm(segments: Sequence[Segment]) -> float:
    import numpy as np

    out = 0.0
    for s in segments:
        A, B, V, b = float_view(s.params)
        out = max(out, *(float(np.linalg.norm(X, 2)) for X in (A, B, V)), float(np.linalg.norm(b)))
    return out


def control_energy(segments: Sequence[Segment]) -> float:
    """∫ ‖θ(t)‖² dt with ‖θ‖² = ‖A‖_F² + ‖B‖_F² + ‖V‖_F² + |b|²."""
    import numpy as np

    return float(sum(float(s.duration) * sum(float(np.sum(np.square(X))) for X in float_view(s.params))
                     for s in segments))


# ------------------------------------------------------------ verification

def terminal_error_mp(segments: Sequence[Segment], state0: Gaussian, target: Gaussian,
                      dps: int = VERIFY_DPS) -> mpmath.mpf:
    """max-entry |m(T) − m1|, |Σ(T) − Σ1| after integrating eq. 1.1 at `dps` digits."""
    m, S = integrate_segments_mp(segments, state0, dps=dps)
    with mpmath.workdps(dps):
        errs = [abs(m[i] - _mpf(target.mean[i])) for i in range(state0.dim)]
        errs += [abs(S[i][j] - _mpf(target.cov[i][j])) for i in range(state0.dim) for j in range(state0.dim)]
        return max(errs)


# ------------------------------------------------------------ bounded controls

def _reach_bounded(state0: Gaussian, target: Gaussian, T: Fraction, M: Fraction, control_class: str,
                   verify: bool, dps: int, min_time_segments: int | None = None) -> ReachResult:
    """The minimal-time bracket's verdict at T; its controls (norms ≤ M exactly) when T ≥ T_upper."""
    from riccati_verify.certify.min_time import min_time_bracket

    br = (min_time_bracket(state0, target, M, control_class) if min_time_segments is None
          else min_time_bracket(state0, target, M, control_class, min_time_segments))
    verdict = br.verdict(T)
    r = state0.rank
    mode = f"bounded controls (B = V = 0, norms <= {M}; {control_class} class bounds)"
    if verdict == "reached":
        segs = br.controls(T)
        res = _finish(ReachResult(True, f"T >= T_upper = {float(br.upper.time):.6g}: controls with norms <= {M} "
                                        "(checked exactly) reach the target", mode, segs, r, r,
                                  f"{br.upper.route}; mean: {br.upper.mean}", False,
                                  any(x for s in segs for x in s.params.b)))
        if verify:
            res.terminal_error = float(terminal_error_mp(res.segments, state0, target, dps))
    elif verdict == "unreachable":
        res = ReachResult(False, f"the norm bound makes the target unreachable in time T: rigorous lower bound "
                                 f"{float(br.lower.time):.6g} > T ({br.lower.reason})", mode, [], r, r)
    else:
        res = ReachResult(False, f"not certified under the bound: T lies in the bracket "
                                 f"[{float(br.lower.time):.6g}, {float(br.upper.time):.6g}] of the minimal time",
                          mode, [], r, r)
    res.bound = br.report(T)
    if res.reachable:   # the published (rescaled) controls themselves, in exact arithmetic
        from riccati_verify.certify.min_time import admissible

        res.bound["controls_within_max_norm"] = all(admissible(s.params, M, control_class) for s in res.segments)
    res.min_time = br
    return res


# ---------------------------------------------------------------- front door

def reach(state0: Gaussian, target: Gaussian, T: Fraction, *, attention_only: bool = False,
          max_norm: Fraction | None = None, control_class: str = "congruence", verify: bool = True,
          dps: int = VERIFY_DPS, min_time_segments: int | None = None) -> ReachResult:
    """`min_time_segments` (with max_norm): K of min_time's optimised T_upper route, 0 = construction only."""
    if state0.dim != target.dim:
        raise InputError(f"the target has d = {target.dim} but the initial state has d = {state0.dim}")
    if not T > 0:
        raise InputError(f"time must be positive, got {T}")
    if max_norm is not None and attention_only:
        raise InputError("--max-norm applies to the congruence (B = V = 0) controls, not --attention-only")
    if max_norm is not None and not max_norm > 0:
        raise InputError(f"--max-norm must be positive, got {max_norm}")
    r0, r1 = state0.rank, target.rank
    if r0 != r1:
        return ReachResult(False, f"rank obstruction: rank cov0 = {r0} != rank target cov = {r1}; "
                                  "Sigma(t) = Phi(t) Sigma0 Phi(t)^T with Phi(t) invertible keeps the rank "
                                  "for every control (MATH.md section 3)", "", [], r0, r1)
    if max_norm is not None:
        return _reach_bounded(state0, target, T, max_norm, control_class, verify, dps, min_time_segments)
    res = (steer_attention if attention_only else steer_congruence)(state0, target, T)
    if verify:
        res.terminal_error = float(terminal_error_mp(res.segments, state0, target, dps))
    return res


# ---------------------------------------------------------------- certificates

def _state_claim(target: Gaussian) -> dict:
    return {"target_mean": target.mean, "target_cov": target.cov}


def unreachable_certificate(state0: Gaussian, target: Gaussian) -> dict:
    from riccati_verify.checker.check_unreachable_rank import ARGUMENT
    from riccati_verify.certify.certificate import make_certificate

    claim = {**_state_claim(target), "rank_initial": state0.rank, "rank_target": target.rank,
             "statement": "no controls (A, B, V, b)(t) and no T > 0 steer the initial Gaussian to the target"}
    return make_certificate("unreachable_rank", claim, None, state0,
                            {"invariant": "rank", "argument": ARGUMENT},
                            "exact rank over Q of both covariances; rank invariance of the moment flow")


def certificate_tolerance(terminal_error: float | None) -> Fraction:
    """A power of ten three decades above the high-precision error (at least 1e-30)."""
    e = max(terminal_error or 0.0, 1e-33)
    return Fraction(1, 10 ** max(0, min(30, -math.ceil(math.log10(e)) - 3)))


def reachability_certificate(res: ReachResult, state0: Gaussian, target: Gaussian, T: Fraction,
                             tol: Fraction, max_norm: Fraction | None = None) -> dict:
    """`max_norm` (optional) adds the claim that every control has ‖·‖₂ ≤ max_norm (checked exactly)."""
    from riccati_verify.certify.certificate import make_certificate

    if not res.reachable or not res.segments:
        raise ValueError("a reachability certificate needs reaching controls")
    congruence = not any(any(x for r in M for x in r) for s in res.segments for M in (s.params.B, s.params.V))
    kind = "(B = V = 0) " if congruence else ""
    claim = {**_state_claim(target), "time": T, "tolerance": tol,
             "statement": f"the witness controls {kind}steer the initial Gaussian to within "
                          "tolerance (max entry error of mean and covariance) of the target at time T"
                          + (", and every control has 2-norm <= max_norm" if max_norm is not None else "")}
    if max_norm is not None:
        claim["max_norm"] = max_norm
    return make_certificate("reachability", claim, None, state0, {"segments": res.controls()},
                            f"{res.factorisation}; controls rounded to {CONTROL_DIGITS}-digit decimals; "
                            "terminal state re-checked in ball arithmetic ("
                            + ("arb_mat exponentials" if congruence else
                               "arb_mat exponentials for B = V = 0 segments, validated Taylor enclosures otherwise")
                            + ")")
