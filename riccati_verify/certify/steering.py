"""Constructions of reaching controls (MATH.md §3–4) and the result they produce.

The routes themselves, without the bounded-controls bracket or the certificate:
`steer_congruence` (B = V = 0, Φ(T) = G a product of matrix exponentials of a
congruence G with Σ1 = GΣ0Gᵀ, det G > 0) and `steer_attention` (A = 0: a V = I
Riccati segment for Σ, then a B = 0 segment for the mean).  They sit below
min_energy and min_time, which start from or compare with them; `reach.reach`
is the front door.  See the docstring of `riccati_verify.certify.reach` for the
mathematics of each route.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import mpmath

from riccati_verify.certify.controls import (CONSTRUCT_DPS, control_energy, control_segment, exact_matrix,
                                             exact_vector, flow_blocks, max_control_norm, mp_matrix, mp_vector,
                                             to_mpf)
from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian
from riccati_verify.core.result import Status
from riccati_verify.core.serial import jsonable
from riccati_verify.numeric.flow import Segment

__all__ = ["ReachResult", "congruence", "exponential_factors", "oriented_congruence", "psd_congruence_factor",
           "rotation_log", "steer_attention", "steer_congruence", "with_measures"]

NEG_AXIS_TOL = mpmath.mpf("1e-8")   # spectra this close to (−∞, 0] take the two-factor route
MINUS_ONE_TOL = mpmath.mpf("1e-12")  # rotation angles this close to π are treated as π


# ----------------------------------------------------------------- the result

@dataclass
class ReachResult:
    """The outcome of one reach query, in the library's one result protocol.

    The construction's own fields (`reachable`, `reason`, the controls and their measures) say
    what was built; `status` says what is proved about it.  A constructing routine leaves
    `status` at NOT_CERTIFIED: only `reach.reach_verdict`, which passes the emitted document
    through `verify_certificate`, sets CERTIFIED, REFUTED or CONFIRMED_NUMERICALLY and fills
    `certificate` (the checked document) and `status_reason` (the checker's reason).
    """

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
    status: Status = Status.NOT_CERTIFIED
    status_reason: str = "not checked: no certificate was passed through the checker"
    certificate: dict | None = None  # the document behind `status` (None: none exists or it was refused)
    certificate_check: object = None  # the checker's CheckResult on the emitted document (None: none emitted)
    certificate_kind: str | None = None  # claim kind of the emitted document
    terminal_error_dps: int | None = None
    min_energy: dict | None = None   # the minimal-energy report, when asked for
    min_energy_result: "ReachResult | None" = None  # those controls as a result (what the certificate covers)

    def controls(self) -> list[dict]:
        """The controls in the certificate's witness layout (one dict per segment)."""
        return [{"duration": s.duration, "A": s.params.A, "B": s.params.B, "V": s.params.V, "b": s.params.b}
                for s in self.segments]

    @property
    def outcome(self) -> str:
        """What was built or proved, in the output's words: reached, unreachable or not certified.
        (The JSON key "status" holds this word for the output format; the verdict is `status`.)"""
        if self.reachable:
            return "reached"
        if self.rank_initial != self.rank_target or (self.bound and self.bound.get("verdict") == "unreachable"):
            return "unreachable"
        return "not certified"

    def to_dict(self) -> dict:
        """JSON form, the reach command's --json output ("certificate": the check of the emitted
        document as kind / valid / reason, or None)."""
        chk = self.certificate_check
        cert = None if chk is None else {"kind": self.certificate_kind, "valid": chk.valid, "reason": chk.reason}
        return jsonable({
            "reachable": self.reachable, "status": self.outcome, "verdict": self.status,
            "verdict_reason": self.status_reason, "reason": self.reason, "mode": self.mode,
            "rank_initial": self.rank_initial, "rank_target": self.rank_target,
            "terminal_error": self.terminal_error, "terminal_error_dps": self.terminal_error_dps,
            "factorisation": self.factorisation, "reflected": self.reflected, "uses_b": self.uses_b,
            "energy": self.energy, "max_control_norm": self.max_norm, "bound": self.bound,
            "controls": self.controls() if self.reachable else [], "certificate": cert,
            "min_energy": self.min_energy})


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


# ------------------------------------------------------------ constructions

def steer_congruence(state0: Gaussian, target: Gaussian, T: Fraction) -> ReachResult:
    """Piecewise-constant A and a final b (B = V = 0) steering state0 to target at time T."""
    d = state0.dim
    r = state0.rank
    with mpmath.workdps(CONSTRUCT_DPS):
        G, reflected = congruence(mp_matrix(state0.cov), mp_matrix(target.cov), r)
        Ls, how = exponential_factors(G)
        k = len(Ls)
        tau = T / k
        tau_mp = to_mpf(tau)
        As = [exact_matrix(L / tau_mp) for L in Ls]
        # Recompute the flow with the *rounded* A's so b absorbs their error in the mean.
        Phi = mpmath.eye(d)
        W_last = None
        for A in As:
            E, W_last = flow_blocks(mp_matrix(A) * tau_mp, tau_mp)
            Phi = E * Phi
        rhs = mp_vector(target.mean) - Phi * mp_vector(state0.mean)
        b = exact_vector(mpmath.lu_solve(W_last, rhs))
    segs = [control_segment(tau, A=A, d=d) for A in As[:-1]] + [control_segment(tau, A=As[-1], b=b, d=d)]
    return with_measures(ReachResult(True, "same rank: congruence controls", "congruence (B = V = 0)", segs,
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
        raise InputError(f"attention-only controls need an invertible covariance (rank {state0.rank} < d = {d}); "
                         "the congruence controls steer rank-deficient states")
    tau = T / 2
    with mpmath.workdps(CONSTRUCT_DPS):
        P0 = mpmath.inverse(mp_matrix(state0.cov))
        P1 = mpmath.inverse(mp_matrix(target.cov))
        Bm = (P0 - P1) / (2 * to_mpf(tau))
        B = exact_matrix((Bm + Bm.T) / 2)
    cov_seg = control_segment(tau, B=B, V=exact.identity(d), d=d)
    with mpmath.workdps(CONSTRUCT_DPS):
        # Closed form of ṁ = (I + Σ(t)B)m along the segment (Radon: Σ = Σ0 X⁻¹,
        # X = I − 2tBΣ0): m(τ) = e^τ Σ0 (I − 2τBΣ0)^{-1/2} Σ0⁻¹ m0, a principal root since
        # the spectrum of X(t) stays on the positive axis while P(t) ≻ 0.
        S0 = mp_matrix(state0.cov)
        X = mpmath.eye(d) - 2 * to_mpf(tau) * mp_matrix(B) * S0
        m = mpmath.exp(to_mpf(tau)) * S0 * mpmath.inverse(mpmath.sqrtm(X)) * mpmath.lu_solve(S0, mp_vector(state0.mean))
        m = m.apply(mpmath.re)
        m1 = mp_vector(target.mean)
        K = _mean_rotation(m, m1)
        if K is not None:
            mean_seg = control_segment(tau, V=exact_matrix(K / to_mpf(tau)), d=d)
        elif mpmath.norm(m) == 0 and mpmath.norm(m1) == 0:
            mean_seg = control_segment(tau, d=d)
        else:
            mean_seg = control_segment(tau, b=exact_vector((m1 - m) / to_mpf(tau)), d=d)
    res = ReachResult(True, "invertible covariances: attention-only controls", "attention-only (A = 0)",
                      [cov_seg, mean_seg], state0.rank, target.rank, "Riccati segment P(t) = P0 - 2Bt",
                      False, any(mean_seg.params.b))
    return with_measures(res)



def with_measures(res: ReachResult) -> ReachResult:
    """Fill the float measures (largest norm, energy) of res's controls: every route reports them."""
    res.max_norm = max_control_norm(res.segments)
    res.energy = control_energy(res.segments)
    return res
