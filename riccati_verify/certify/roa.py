"""Fast certified local stability and certified regions of attraction (MATH.md §5, §8).

For an equilibrium Σ* of F(Σ) = AΣ + ΣAᵀ + VΣBΣ + ΣBᵀΣVᵀ enclosed in a ball
(`stability.enclose_equilibrium`), with L = DF(Σ*) on the n = d(d+1)/2
upper-triangle coordinates h of H = Σ − Σ*:

1. *Lyapunov equation, no SDP.*  X solves LᵀX + XL = −I in floats
   (`scipy.linalg.solve_continuous_lyapunov`) and is rounded to a symmetric
   dyadic rational matrix.  Then, in ball arithmetic over the whole Σ*-ball,

       X − ξI ≻ 0,   ηI − X ≻ 0,   N − μI ≻ 0   with  N = −(LᵀX + XL),

   each proved by a *preconditioned norm test*: for any matrix P (here the
   inverse of a float Cholesky factor of the matrix, an exact dyadic matrix
   trusted for nothing), ‖P M Pᵀ − I‖₂ < 1 implies P M Pᵀ ≻ 0, hence P is
   invertible and M ≻ 0 (Sylvester).  ‖·‖₂ ≤ ‖·‖_F and the products are
   C-level python-flint `arb_mat` products; no Python-loop LDLᵀ.
   L over the ball is assembled exactly on an integer grid (products of
   integers below 2^24 are exact in float64) and the ball's radius enters as
   a rigorous entrywise bound ε on L(Σ) − L(mid), i.e. ‖ΔN‖₂ ≤ 2η·n·ε.
2. *Region of attraction.*  F is exactly quadratic:
   F(Σ* + H) = DF(Σ*)[H] + Q(H),  Q(H) = VHBH + HBᵀHVᵀ, and
   |q(h)| ≤ ‖Q(H)‖_F ≤ 2‖V‖₂‖B‖₂‖H‖_F² ≤ κ|h|² with κ = 4‖V‖₂‖B‖₂.
   For W(h) = hᵀXh:  Ẇ = −hᵀNh + 2(Xh)ᵀq(h) ≤ |h|²(−μ + 2κ√η·√W)
   (|Xh|² ≤ η·W), so Ẇ < 0 on {0 < W < c} for c = μ²/(4κ²η): that sublevel
   set is forward invariant and attracted to Σ*.  The same for Σ* = 0
   (collapse) when L = DF(0) : H ↦ AH + HAᵀ is Hurwitz.
   Certified radius: {‖H‖_F ≤ √(c/η)} ⊂ {W ≤ c}.

Every number that decides anything is an exact rational or an arb ball; the
floats only propose X, P, μ, ξ, η.  The `lyapunov_stability` certificate built
from the witness is re-checked by the independent checker
(`verify_certificate`) when its size allows (`CHECKER_MAX_N`).
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numpy as np

from riccati_verify.core import balls, exact
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import Status
from riccati_verify.core.threads import threads_for
from riccati_verify.checker import verify_certificate
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.certify.equilibria import pair_operator, pair_operator_np, sym_dim, to_fmpq_mat
from riccati_verify.certify.krawczyk import ball_positive_definite

__all__ = ["CHECKER_MAX_N", "CUBIC_MAX_DIM", "LMI_MAX_N", "MAX_HORIZON", "PREC", "FLOWS", "DEEP_FLOW", "DEEP_MIN_N", "FRAME", "FRAME_FLOWS", "FRAME_KINDS", "LocalStability", "RegionOfAttraction", "TrajectoryConvergence", "empirical_basin",
           "lyapunov_equation_stability", "cubic_region", "propose_frame", "prove_pd", "quadratic_forms", "region_of_attraction", "sym_coords", "trajectory_certificate"]

PREC = 64
"""Bits of arb precision of the preconditioned tests (the inputs are exact dyadics)."""

CHECKER_MAX_N = 78
"""Largest n = d(d+1)/2 (d = 12) for which the `lyapunov_stability` certificate is also handed to the
independent checker: its exact LDLᵀ of X and ball LDLᵀ of N are Python loops, O(n³)."""

_GRID_BITS = 24   # integer grid for the exact float64 assembly of L (products < 2^48, sums of 4 < 2^50)


def _q(x: Fraction) -> flint.fmpq:
    return balls.fmpq_of(x)


def _arb_upper(x: flint.arb) -> Fraction:
    """An exact rational ≥ every point of the ball x."""
    return balls.fraction_of_mid(x.upper())


def _frob_upper(M: flint.arb_mat) -> flint.arb:
    """A ball whose upper end bounds ‖M‖_F for every matrix in the ball M."""
    s = flint.arb(0)
    for e in M.entries():
        a = abs(e).upper()
        s += a * a
    return s.sqrt()


def _norm1_inf_upper(P: flint.arb_mat) -> flint.arb:
    """√(‖P‖₁‖P‖_∞) ≥ ‖P‖₂ (Hölder), for a point matrix P."""
    n = P.nrows()
    ent = P.entries()
    rows = [flint.arb(0)] * n
    cols = [flint.arb(0)] * n
    for k, e in enumerate(ent):
        a = abs(e).upper()
        rows[k // n] += a
        cols[k % n] += a
    r = max(rows, key=lambda x: float(x.upper()))
    c = max(cols, key=lambda x: float(x.upper()))
    return (r.upper() * c.upper()).sqrt()




def prove_pd(M: flint.arb_mat, Mf: np.ndarray, perturbation: flint.arb | None = None) -> bool:
    """True only if every symmetric matrix M' with ‖M' − M₀‖₂ ≤ perturbation, M₀ in the ball M, is ≻ 0.

    Mf is a float approximation of M (only used for the Cholesky preconditioner P = C⁻¹).
    Proof: ‖P M' Pᵀ − I‖₂ ≤ ‖P M Pᵀ − I‖_F + ‖P‖₂²·perturbation < 1.
    """
    n = M.nrows()
    try:
        C = np.linalg.cholesky((Mf + Mf.T) / 2)
        P = np.linalg.inv(C)
    except np.linalg.LinAlgError:
        return False
    if not np.all(np.isfinite(P)):
        return False
    Pa = flint.arb_mat(P.tolist())       # exact: floats are dyadic
    E = Pa * M * Pa.transpose() - balls.identity(n)
    bound = _frob_upper(E)
    if perturbation is not None:
        nP = _norm1_inf_upper(Pa)
        bound = bound + nP * nP * perturbation
    return bool(bound < 1)


def sym_coords(S: exact.Matrix) -> list[Fraction]:
    """Upper-triangle coordinates of a symmetric matrix (row-major, i ≤ j)."""
    return [S[i][j] for i, j in exact.sym_pairs(len(S))]


def _grid(M: flint.arb_mat, bits: int = _GRID_BITS, levels: int = 2) -> tuple[list, Fraction]:
    """([(K_1, e_1), …], rho): integer float64 matrices K_l with |K_l| < 2^bits and
    M ⊆ Σ_l K_l·2^e_l ± rho entrywise; each level grids the previous residual, so `levels`
    levels leave rho ≈ 2^(−levels·bits)·max|M| (one level left 2^-24 relative, which the
    Lyapunov test multiplies by 2ηn: too much for a stiff d = 8 linearisation)."""
    out = []
    R = M
    for _ in range(levels):
        d = R.nrows()
        mids = np.array([[float(R[i, j].mid()) for j in range(R.ncols())] for i in range(d)])
        top = float(np.max(np.abs(mids))) if mids.size else 0.0
        e = (math.frexp(top)[1] - bits + 1) if top > 0 else 0
        K = np.round(np.ldexp(mids, -e))
        scale = flint.arb(2) ** e if e >= 0 else 1 / flint.arb(2) ** (-e)
        R = R - flint.arb_mat(K.tolist()) * scale
        out.append((K, e))
    rho = flint.arb(0)
    for x in R.entries():
        diff = abs(x).upper()
        if diff > rho:
            rho = diff
    return out, _arb_upper(rho)


@dataclass
class _Lin:
    """L over the Σ*-ball: an exact point matrix Lm (arb) plus |L(Σ) − Lm| ≤ eps entrywise."""
    Lm: flint.arb_mat
    Lf: np.ndarray
    eps: Fraction


def _linearisation_ball(params: Params, center: exact.Matrix, radius: Fraction) -> _Lin | None:
    """DF(Σ) = pair(J, I) + pair(V, W), J = A + VΣB, W = ΣBᵀ, for every Σ of the ball."""
    d = params.dim
    A, B, V = (balls.arb_matrix(M) for M in (params.A, params.B, params.V))
    S = balls.arb_matrix(center)
    if radius:
        rad = flint.arb(0, balls.arb_of(radius).abs_upper())
        for i in range(d):
            for j in range(d):
                S[i, j] = S[i, j] + rad
    J = A + V * S * B
    W = S * B.transpose()
    gJ, rJ = _grid(J)
    gW, rW = _grid(W)
    den = 1
    for r in params.V:
        for x in r:
            den = den * x.denominator // math.gcd(den, x.denominator)
    Vint = np.array([[float(x * den) for x in r] for r in params.V])
    if not np.all(np.abs(Vint) < 2.0 ** _GRID_BITS):
        return None
    I = np.eye(d)
    Lm = flint.arb_mat(sym_dim(d), sym_dim(d))
    Lf = np.zeros((sym_dim(d), sym_dim(d)))
    for (KJ, eJ), (KW, eW) in zip(gJ, gW):
        LJ = pair_operator_np([(KJ, I)], d)
        LV = pair_operator_np([(Vint, KW)], d)
        sJ = Fraction(2) ** eJ
        sW = Fraction(2) ** eW / den
        Lm = Lm + flint.arb_mat(LJ.tolist()) * balls.arb_of(sJ) + flint.arb_mat(LV.tolist()) * balls.arb_of(sW)
        Lf = Lf + LJ * float(sJ) + LV * float(sW)
    vmax = max((abs(x) for r in params.V for x in r), default=Fraction(0))
    eps = 4 * rJ + 4 * vmax * rW + Fraction(1, 2 ** (PREC - 12)) * (1 + _arb_upper(_frob_upper(Lm)))
    return _Lin(Lm, Lf, eps)


def _spectral_upper_gram(M: exact.Matrix) -> Fraction:
    """A rational c ≥ ‖M‖₂, checked exactly (c²I − MᵀM ⪰ 0), proposed from floats."""
    d = len(M)
    Mf = np.array(M, dtype=float)
    s = float(np.linalg.norm(Mf, 2)) if d else 0.0
    G = exact.matmul(exact.transpose(M), M)
    c = Fraction(s * (1 + 1e-9) + 1e-300).limit_denominator(2 ** 30) + Fraction(1, 2 ** 40)
    for _ in range(40):
        if exact.is_psd(exact.sub(exact.identity(d, c * c), G)):
            return c
        c *= Fraction(9, 8)
    return sum((abs(x) for r in M for x in r), Fraction(0)) + Fraction(1, 2 ** 40)


def _dyadic(x: float, bits: int = 30) -> Fraction:
    if x == 0 or not math.isfinite(x):
        return Fraction(0)
    e = math.frexp(x)[1] - bits
    return Fraction(round(math.ldexp(x, -e))) * Fraction(2) ** e


def _rational_sym(X: np.ndarray, bits: int = 24) -> tuple[exact.Matrix, np.ndarray]:
    Xs = (X + X.T) / 2
    scale = float(np.max(np.abs(Xs))) or 1.0
    e = math.frexp(scale)[1] - bits
    R = np.round(np.ldexp(Xs, -e))
    q = Fraction(2) ** e
    Xq = tuple(tuple(Fraction(int(v)) * q for v in row) for row in R)
    return Xq, np.ldexp(R, e)


@dataclass
class LocalStability:
    """Local asymptotic stability of an enclosed equilibrium, proved by the Lyapunov-equation route.

    `status` is CERTIFIED when the preconditioned ball tests proved X − ξI ≻ 0, ηI − X ≻ 0 and
    −(LᵀX + XL) − μI ≻ 0 over the whole Σ*-ball (the producer's own proof); `certificate` is the
    `lyapunov_stability` document when the independent checker accepted it (None when n is
    above `CHECKER_MAX_N`, where the checker's Python-loop LDLᵀ is too slow, or when refused).
    """

    proved: bool
    center: exact.Matrix
    radius: Fraction
    X: exact.Matrix | None = None
    mu: Fraction | None = None
    xi: Fraction | None = None
    eta: Fraction | None = None
    reason: str = ""
    timings: dict = field(default_factory=dict)
    certificate: dict | None = None

    @property
    def status(self) -> Status:
        """CERTIFIED when proved, NOT_CERTIFIED otherwise."""
        return Status.CERTIFIED if self.proved else Status.NOT_CERTIFIED

    def to_dict(self) -> dict:
        """JSON form (X by its size only)."""
        return {"status": str(self.status), "proved": self.proved, "n": None if self.X is None else len(self.X),
                "mu": self.mu, "xi": self.xi, "eta": self.eta, "radius": self.radius, "reason": self.reason,
                "timings": self.timings,
                "certificate_kind": self.certificate["claim"]["kind"] if self.certificate else None}


def _scipy_lyapunov(Lf: np.ndarray) -> np.ndarray | None:
    from scipy.linalg import solve_continuous_lyapunov

    with np.errstate(all="ignore"):
        if float(np.max(np.linalg.eigvals(Lf).real)) >= 0:
            return None
        return solve_continuous_lyapunov(Lf.T, -np.eye(Lf.shape[0]))


def lyapunov_equation_stability(params: Params, center: exact.Matrix, radius: Fraction = Fraction(0), *,
                                with_certificate: bool = True, checker_max_n: int = CHECKER_MAX_N,
                                propose=None) -> LocalStability:
    """Prove local stability of the equilibrium in the ball (center, radius) by LᵀX + XL = −I (no SDP).

    The ball must already be proved to contain the equilibrium (`stability.enclose_equilibrium`);
    this function proves the Lyapunov inequalities for every Σ of the ball.  `propose(L)` gives the
    float X (default: scipy's Lyapunov equation); whatever it returns, only the ball tests decide.
    """

    t = {}
    t0 = time.perf_counter()
    d = params.dim
    n = sym_dim(d)
    radius = Fraction(radius)
    # n×n ball products and congruences: threads change the wall time only (`core.threads`)
    with flint.ctx.workprec(PREC), threads_for(n):
        lin = _linearisation_ball(params, center, radius)
        if lin is None:
            return LocalStability(False, center, radius, reason="V has entries too large for the exact grid")
        t["linearisation"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        Lf = lin.Lf
        if not np.all(np.isfinite(Lf)):
            return LocalStability(False, center, radius, reason="DF(Sigma*) is not finite in floats")
        Xf = (propose or _scipy_lyapunov)(Lf)
        if Xf is None or np.shape(Xf) != (n, n) or not np.all(np.isfinite(Xf)):
            return LocalStability(False, center, radius, reason="the Lyapunov solve failed")
        Xq, Xf = _rational_sym(Xf)
        ev = np.linalg.eigvalsh(Xf)
        t["lyapunov_solve"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if not ev[0] > 0:
            return LocalStability(False, center, radius, reason="X is not positive definite in floats")
        xi = _dyadic(0.5 * ev[0])
        eta = _dyadic(ev[-1] * (1 + 1e-3) + 1e-300) + Fraction(1, 2 ** 60)
        Xa = balls.arb_matrix(Xq)
        I = balls.identity(n)
        if not prove_pd(Xa - I * balls.arb_of(xi), Xf - float(xi) * np.eye(n)):
            return LocalStability(False, center, radius, Xq, reason="X - xi I > 0 not proved")
        if not prove_pd(I * balls.arb_of(eta) - Xa, float(eta) * np.eye(n) - Xf):
            return LocalStability(False, center, radius, Xq, reason="eta I - X > 0 not proved")
        t["X_tests"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        XL = Xa * lin.Lm
        N = -(XL + XL.transpose())
        Nf = -(Xf @ Lf + Lf.T @ Xf)
        lamN = float(np.linalg.eigvalsh((Nf + Nf.T) / 2)[0])
        if not lamN > 0:
            return LocalStability(False, center, radius, Xq, reason="-(L^T X + X L) not PD in floats")
        pert = balls.arb_of(2 * eta * n * lin.eps)
        # c = μ²/(4κ²η) grows with μ², so μ is taken close to λ_min(N) first (0.95: 3.6 times the c
        # of 0.5), and lower only when the ball test needs the margin
        for frac in (0.95, 0.5):
            mu = _dyadic(frac * lamN, 20)
            ok = prove_pd(N - I * balls.arb_of(mu), Nf - float(mu) * np.eye(n), pert)
            if ok:
                break
        t["N_test"] = time.perf_counter() - t0
        if not ok:
            return LocalStability(False, center, radius, Xq, reason="-(L^T X + X L) - mu I > 0 not proved")
    res = LocalStability(True, center, radius, Xq, mu, xi, eta,
                         reason="Lyapunov equation L^T X + X L = -I in floats, rounded to rationals; "
                                "X - xi I, eta I - X, -(L^T X + X L) - mu I > 0 by preconditioned "
                                "Frobenius tests in arb over the equilibrium ball", timings=t)
    if with_certificate and n <= checker_max_n:
        t0 = time.perf_counter()
        res.certificate = _lyapunov_certificate(params, res)
        res.timings["checker"] = time.perf_counter() - t0
    return res


def _lyapunov_certificate(params: Params, ls: LocalStability, state: Gaussian | None = None) -> dict | None:
    """The existing `lyapunov_stability` kind from this witness, if the independent checker accepts it."""
    is_zero = ls.radius == 0 and all(x == 0 for r in ls.center for x in r)
    pd = is_zero is False and (exact.is_pd(ls.center) if ls.radius == 0 else _ball_pd(ls.center, ls.radius))
    kind = "zero" if is_zero else ("positive_definite" if pd else "any")
    witness = {"center": ls.center, "radius": ls.radius, "X": ls.X, "mu": ls.mu, "xi": ls.xi, "eta": ls.eta,
               "norm_V": _spectral_upper_gram(params.V), "norm_B": _spectral_upper_gram(params.B)}
    claim = {"equilibrium": kind, "mean_stable": False, "initial_state_in_region": False}
    cert = make_certificate("lyapunov_stability", claim, params, state, witness,
                            "Lyapunov equation L^T X + X L = -I (scipy), rounded to rationals; "
                            "exact/ball re-check (no SDP)")
    return cert if verify_certificate(cert).valid else None


def _ball_pd(center, radius) -> bool:
    return ball_positive_definite(center, radius)


# ---------------------------------------------------------------------------
# region of attraction


def radius_below(c, eta) -> float:
    """A float r with r² ≤ c/η exactly: √(c/η) rounded down, so {‖Σ − Σ*‖_F < r} stays inside the
    certified sublevel set (rounded to nearest, the radius could exceed it by an ulp)."""
    q = Fraction(c) / Fraction(eta)
    r = math.sqrt(float(q))
    if not math.isfinite(r):
        r = sys.float_info.max
    while r > 0 and Fraction(r) ** 2 > q:
        r = math.nextafter(r, 0.0)
    return r


@dataclass
class RegionOfAttraction:
    """{h : (h − h*)ᵀX(h − h*) < c} around the true Σ* of the ball, proved forward invariant and attracted.

    h are upper-triangle coordinates; `radius` = √(c/η) is a certified Frobenius radius
    ({‖Σ − Σ*‖_F < radius} lies inside); `status` CERTIFIED when proved.
    """

    stability: LocalStability
    norm_V: Fraction | None = None
    norm_B: Fraction | None = None
    c: Fraction | None = None
    radius: float | None = None
    empirical: dict | None = None
    bound: str = "norm"
    cubic: dict | None = None
    c_norm: Fraction | None = None
    timings: dict = field(default_factory=dict)

    @property
    def proved(self) -> bool:
        """Whether the region is certified (stability proved and c > 0)."""
        return self.stability.proved and self.c is not None and self.c > 0

    @property
    def status(self) -> Status:
        """CERTIFIED when the region is proved."""
        return Status.CERTIFIED if self.proved else Status.NOT_CERTIFIED

    @property
    def certificate(self) -> dict | None:
        """The local stability certificate, when the checker accepted one."""
        return self.stability.certificate

    def to_dict(self) -> dict:
        """JSON form."""
        cub = None if self.cubic is None else {"s": self.cubic["s"], "rho": self.cubic["rho"],
                                               "n": len(self.cubic["S"])}
        return {"status": str(self.status), "c": self.c, "radius": self.radius, "bound": self.bound,
                "c_norm": self.c_norm, "cubic": cub, "norm_V": self.norm_V, "norm_B": self.norm_B,
                "empirical": self.empirical, "timings": self.timings, "stability": self.stability.to_dict()}

    def level(self, h: list) -> flint.arb:
        """W = (h − h*)ᵀX(h − h*) as a ball, for h exact coordinates, over the Σ*-ball."""
        ls = self.stability
        r = flint.arb(0, balls.arb_of(ls.radius).abs_upper()) if ls.radius else flint.arb(0)
        c = sym_coords(ls.center)
        v = flint.arb_mat([[balls.arb_of(x) - balls.arb_of(y) + r] for x, y in zip(h, c)])
        return (v.transpose() * balls.arb_matrix(ls.X) * v)[0, 0]


# ---------------------------------------------------------------------------
# the cubic term of Ẇ, bounded exactly: Cauchy–Schwarz and the S-procedure LMI (MATH.md §5)


CUBIC_MAX_DIM = 8
"""Largest d (n = 36) for which `region_of_attraction` tries the cubic bound: the tensor of the
Q_a has n³ entries and Σ_k Ĝ_k S⁻¹ Ĝ_k costs 2n products of n×n ball matrices."""
LMI_MAX_N = 10
"""Largest n (d = 4) for the S-procedure LMI: its block matrix has size n(n+1); above, S = σI."""
LMI_DEFAULT_N = 6
"""Largest n (d = 3) for which the LMI runs by default: at n = 10 one Clarabel solve of the
110×110 block LMI took 4 s (opposite_instance(4, 0, 9)), and the bisection needs several."""


def quadratic_forms(params: Params) -> tuple[list[list[list[int]]], int]:
    """(T, D): the a-th coordinate of Q(H) = VHBH + HBᵀHVᵀ is hᵀ(T[a]/D)h exactly, with T[a]
    symmetric integer n×n matrices (h the upper-triangle coordinates of H).

    Polarisation: 2Q(H, E) = VEBH + VHBE + transposes is DF(E)[H] − DF(0)[H], the `pair_operator`
    of (VEB, I), (V, EBᵀ) (the linearisation's own pairs, `equilibria.linearisation_np`); for the
    basis matrix E_k its column j is 2Q(E_j, E_k), i.e. the k-th column of 2Q_a's row a.  V and B
    are scaled to integers (V = Vi/dv, B = Bi/db), so D = 2·dv·db and T is exact.
    """
    d = params.dim
    dv, db = (math.lcm(*[x.denominator for r in M for x in r]) for M in (params.V, params.B))
    Vi = tuple(tuple(int(x * dv) for x in r) for r in params.V)
    Bi = tuple(tuple(int(x * db) for x in r) for r in params.B)
    I = exact.identity(d)
    idx = exact.sym_pairs(d)
    n = len(idx)
    T = [[[0] * n for _ in range(n)] for _ in range(n)]
    for k, (i, j) in enumerate(idx):
        E = tuple(tuple(int((p, q) in ((i, j), (j, i))) for q in range(d)) for p in range(d))
        P = exact.matmul(exact.matmul(Vi, E), Bi)
        W = exact.matmul(E, exact.transpose(Bi))
        M = pair_operator([(P, I), (Vi, W)], d, 0)
        for a in range(n):
            for jj in range(n):
                T[a][jj][k] = int(M[a][jj])
    return T, 2 * dv * db


@dataclass
class _CubicData:
    """What the cubic tests need, for one X and one Y: N over the Σ*-ball (ball N plus the
    spectral perturbation pert), the Ĝ_k as ball matrices and floats."""
    N: flint.arb_mat
    Nf: np.ndarray
    pert: flint.arb
    G: list
    Gf: np.ndarray
    Y: exact.Matrix
    s: Fraction


def _cubic_data(params: Params, ls: LocalStability) -> _CubicData | None:
    """N = −(LᵀX + XL) over the ball, Y ≈ X^{-1/2} (dyadic) with YᵀXY − sI ≻ 0 proved, and
    Ĝ_k = Σ_j Y_jk G_j = 2 Σ_a (XY)_ak Q_a (G_j = 2 Σ_a X_aj Q_a: hᵀ(Σ_j h_j G_j)h = 2hᵀXq(h))."""
    n = len(ls.X)
    lin = _linearisation_ball(params, ls.center, ls.radius)
    if lin is None:
        return None
    Xa = balls.arb_matrix(ls.X)
    Xf = np.array(ls.X, dtype=float)
    XL = Xa * lin.Lm
    N = -(XL + XL.transpose())
    Nf = -(Xf @ lin.Lf + lin.Lf.T @ Xf)
    pert = balls.arb_of(2 * ls.eta * n * lin.eps)
    lam, U = np.linalg.eigh(Xf)
    if not lam[0] > 0:
        return None
    Yq, Yf = _rational_sym((U / np.sqrt(lam)) @ U.T)
    Ya = balls.arb_matrix(Yq)
    YXY = Ya.transpose() * Xa * Ya
    YXYf = Yf.T @ Xf @ Yf
    s = _dyadic(0.99 * float(np.linalg.eigvalsh((YXYf + YXYf.T) / 2)[0]), 20)
    if not (s > 0 and prove_pd(YXY - balls.identity(n) * balls.arb_of(s), YXYf - float(s) * np.eye(n))):
        return None
    T, D = quadratic_forms(params)
    Tf = np.array(T, dtype=float)
    Z = exact.matmul(ls.X, Yq)
    Zf = np.array(Z, dtype=float)
    Gf = (2.0 / D) * np.einsum("ak,ajl->kjl", Zf, Tf)
    Tflat = flint.arb_mat(n, n * n, [x for Ta in T for r in Ta for x in r])
    Gflat = balls.arb_matrix(Z).transpose() * Tflat * (flint.arb(2) / D)
    ent = Gflat.entries()
    G = [flint.arb_mat(n, n, ent[k * n * n:(k + 1) * n * n]) for k in range(n)]
    return _CubicData(N, Nf, pert, G, Gf, Yq, s)


def _cubic_holds(cd: _CubicData, S: exact.Matrix, rho: Fraction) -> bool:
    """Proved: S ≻ 0 and N − (ρ/2)(S + Σ_k Ĝ_k S⁻¹ Ĝ_k) ≻ 0 over the Σ*-ball (S⁻¹ exact)."""
    Sf = np.array(S, dtype=float)
    Sa = balls.arb_matrix(S)
    if not prove_pd(Sa, Sf):
        return False
    Sinv = flint.arb_mat(to_fmpq_mat(S).inv())
    R = Sa
    for Gk in cd.G:
        R = R + Gk * Sinv * Gk
    Sinvf = np.linalg.inv(Sf)
    Rf = Sf + sum(Gk @ Sinvf @ Gk for Gk in cd.Gf)
    return prove_pd(cd.N - R * (balls.arb_of(rho) / 2), cd.Nf - float(rho) / 2 * Rf, cd.pert)


def _rho_max(Nf: np.ndarray, Rf: np.ndarray) -> float:
    """The largest ρ with Nf − (ρ/2)Rf ≻ 0 in floats: 2/λ_max of the pencil (Rf, Nf)."""
    from scipy.linalg import eigh

    top = float(eigh((Rf + Rf.T) / 2, (Nf + Nf.T) / 2, eigvals_only=True)[-1])
    return 2.0 / top if top > 0 else math.inf


def _lmi_proposal(cd: _CubicData, rho: float) -> np.ndarray | None:
    """Float S with [[N − (ρ/2)S, Ĝ_1 … Ĝ_n], [Ĝ_k; diag((2/ρ)S)]] ⪰ tI, t maximal (cvxpy + CLARABEL):
    by the Schur complement that is N − (ρ/2)(S + Σ_k Ĝ_k S⁻¹ Ĝ_k) ⪰ tI.  None when t ≤ 0."""
    import cvxpy as cp

    n = cd.Nf.shape[0]
    S = cp.Variable((n, n), symmetric=True)
    t = cp.Variable()
    C = np.zeros((n * (n + 1), n * (n + 1)))
    C[:n, :n] = (cd.Nf + cd.Nf.T) / 2
    for k in range(n):
        C[:n, n * (k + 1):n * (k + 2)] = cd.Gf[k]
        C[n * (k + 1):n * (k + 2), :n] = cd.Gf[k]
    D = np.diag([-rho / 2] + [2 / rho] * n)
    M = C + cp.kron(D, S)     # symmetric: C is, and kron(diagonal, symmetric) is
    prob = cp.Problem(cp.Maximize(t), [M >> t * np.eye(n * (n + 1))])
    try:
        # "solution may be inaccurate" is no concern: the rounded S is re-checked in arb (_cubic_holds)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            prob.solve(solver=cp.CLARABEL)
    except cp.SolverError:
        return None
    if S.value is None or t.value is None or not t.value > 0:
        return None
    return np.array(S.value)


def _c_of(s: Fraction, rho: Fraction) -> Fraction:
    """The largest 40-bit dyadic c ≤ sρ² (so √(c/s) ≤ ρ exactly)."""
    x = s * rho * rho
    e = x.numerator.bit_length() - x.denominator.bit_length() - 40
    q = Fraction(2) ** e
    return Fraction(math.floor(x / q)) * q


def cubic_region(params: Params, ls: LocalStability, *, lmi: bool | None = None) -> dict | None:
    """The largest c this module proves with the exact cubic bound, over the Σ*-ball.

    On {W ≤ c}: |z| ≤ ρ = √(c/s) for h = Yz, and for S ≻ 0, by Cauchy–Schwarz and AM–GM,
    2hᵀXq(h) = Σ_k z_k hᵀĜ_k h ≤ (ρ/2)·hᵀ(S + Σ_k Ĝ_k S⁻¹ Ĝ_k)h; so N − (ρ/2)(S + ΣĜ_kS⁻¹Ĝ_k) ≻ 0
    gives Ẇ < 0 on {0 < W ≤ c}.  First S = σI, σ² = λ_max(Σ Ĝ_k²) (no SDP), then S from the LMI,
    bisecting on ρ, when n ≤ `LMI_DEFAULT_N` (lmi None) or lmi=True and n ≤ `LMI_MAX_N`.  Every candidate is decided by `_cubic_holds`.
    Returns {"c", "bound": "cauchy_schwarz" | "lmi", "Y", "s", "S", "timings"} or None.
    """
    t = {}
    t0 = time.perf_counter()
    n = len(ls.X)
    with flint.ctx.workprec(PREC):
        cd = _cubic_data(params, ls)
        if cd is None:
            return None
        t["build"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        K = sum(Gk @ Gk for Gk in cd.Gf)
        sig = _dyadic(math.sqrt(max(float(np.linalg.eigvalsh((K + K.T) / 2)[-1]), 1e-300)), 20)
        S = exact.identity(n, sig)
        r = _rho_max(cd.Nf, float(sig) * np.eye(n) + K / float(sig))
        best = None
        for frac in (0.98, 0.9, 0.7, 0.5):
            rho = _dyadic(frac * r, 20)
            if math.isfinite(r) and rho > 0 and _cubic_holds(cd, S, rho):
                best = ("cauchy_schwarz", rho, S)
                break
        t["cauchy_schwarz"] = time.perf_counter() - t0
        if best is None:
            return None
        if n <= LMI_MAX_N and (lmi or (lmi is None and n <= LMI_DEFAULT_N)):
            t0 = time.perf_counter()

            def attempt(rho_f: float):
                Sf = _lmi_proposal(cd, rho_f)
                if Sf is None:
                    return None
                Sq, rho = _rational_sym(Sf)[0], _dyadic(rho_f, 20)
                return ("lmi", rho, Sq) if rho > best[1] and _cubic_holds(cd, Sq, rho) else None

            # geometric bisection on ρ between the proved Cauchy–Schwarz value and a failing one,
            # to 5%: every step is one Clarabel solve (4 s at n = 10)
            lo, hi = float(best[1]), float(best[1]) * 2
            while hi < 256 * float(best[1]) and (got := attempt(hi)) is not None:
                best, lo, hi = got, hi, hi * 2
            while hi / lo > 1.05:
                mid = math.sqrt(lo * hi)
                got = attempt(mid)
                if got is not None:
                    best, lo = got, mid
                else:
                    hi = mid
            t["lmi"] = time.perf_counter() - t0
    bound, rho, S = best
    return {"c": _c_of(cd.s, rho), "rho": rho, "bound": bound, "Y": cd.Y, "s": cd.s, "S": S, "timings": t}


def region_of_attraction(params: Params, center: exact.Matrix, radius: Fraction = Fraction(0), *,
                         stability: LocalStability | None = None, with_certificate: bool = False,
                         cubic: bool | None = None, lmi: bool | None = None) -> RegionOfAttraction:
    """The certified sublevel set {W < c}: the larger of c = μ²/(4κ²η) (κ = 4‖V‖‖B‖, exact rational
    bounds; `bound` "norm") and the exact cubic bound (`cubic_region`: "cauchy_schwarz" or "lmi"),
    tried when cubic is True, or None and d ≤ `CUBIC_MAX_DIM`; lmi as for `cubic_region`."""
    ls = stability or lyapunov_equation_stability(params, center, radius, with_certificate=with_certificate)
    if not ls.proved:
        return RegionOfAttraction(ls)
    t0 = time.perf_counter()
    nV, nB = _spectral_upper_gram(params.V), _spectral_upper_gram(params.B)
    kappa = 4 * nV * nB
    if kappa == 0:
        return RegionOfAttraction(ls, nV, nB, None, math.inf)
    c = ls.mu * ls.mu / (4 * kappa * kappa * ls.eta)
    c = _dyadic(float(c) * (1 - 1e-9), 40)
    while c > ls.mu * ls.mu / (4 * kappa * kappa * ls.eta):   # keep c ≤ the exact bound
        c = c * Fraction(1023, 1024)
    timings = {"norm": time.perf_counter() - t0}
    roa = RegionOfAttraction(ls, nV, nB, c, radius_below(c, ls.eta), c_norm=c, timings=timings)
    if cubic or (cubic is None and params.dim <= CUBIC_MAX_DIM):
        t0 = time.perf_counter()
        cub = cubic_region(params, ls, lmi=lmi)
        timings["cubic"] = time.perf_counter() - t0
        if cub is not None:
            timings.update({f"cubic_{k}": v for k, v in cub["timings"].items()})
            if cub["c"] > c:
                roa.c, roa.bound, roa.cubic = cub["c"], cub["bound"], cub
                roa.radius = radius_below(cub["c"], ls.eta)
    return roa


def empirical_basin(params: Params, center: exact.Matrix, *, directions: int = 16, seed: int = 0,
                    horizon: float = 200.0, max_scale: float = 1e3, max_steps: int = 5000) -> dict:
    """Float-only estimate of the basin (numerical evidence): for seeded random symmetric unit
    directions E (Frobenius), the largest s with Σ* + sE (PSD only) converging back to Σ*, by
    bisection; returns the minimum and median over the directions."""
    from scipy.integrate import DOP853

    from riccati_verify.numeric.views import float_view

    A, B, V, _ = float_view(params)
    S = np.array(center, dtype=float)
    d = S.shape[0]
    rng = np.random.default_rng(seed)
    nS = max(1.0, float(np.linalg.norm(S)))

    def f(_, y):
        X = y.reshape(d, d)
        J = A + V @ X @ B
        Y = J @ X
        return (Y + Y.T).ravel()

    def converges(S0) -> bool:
        """Σ(t) from S0 reaches within 1e-7 of Σ* (inside the basin of a hyperbolic stable Σ*) before
        the horizon, without an entry beyond 1e6·‖Σ*‖, within max_steps DOP853 steps (a stiff run
        past the budget counts as not converging: the estimate errs small)."""
        if np.linalg.eigvalsh(S0)[0] < 0:
            return False   # outside the PSD cone: not a covariance
        r = DOP853(f, 0.0, S0.ravel(), horizon, rtol=1e-9, atol=1e-12)
        with np.errstate(all="ignore"):
            for _ in range(max_steps):
                if r.status != "running":
                    break
                r.step()
                if not np.all(np.isfinite(r.y)) or float(np.max(np.abs(r.y))) > 1e6 * nS:
                    return False
                if float(np.linalg.norm(r.y.reshape(d, d) - S)) < 1e-7 * nS:
                    return True
        return r.status == "finished" and float(np.linalg.norm(r.y.reshape(d, d) - S)) < 1e-4 * nS

    out = []
    for _ in range(directions):
        G = rng.standard_normal((d, d))
        E = G @ G.T if not np.any(S) else (G + G.T) / 2   # PSD directions from Sigma* = 0
        E /= np.linalg.norm(E)
        lo, hi = 0.0, max_scale * nS
        if converges(S + hi * E):
            out.append(hi)
            continue
        for _ in range(20):
            mid = (lo + hi) / 2
            if converges(S + mid * E):
                lo = mid
            else:
                hi = mid
        out.append(lo)
    return {"min": float(min(out)), "median": float(np.median(out)), "directions": directions, "seed": seed,
            "note": "float integration (numerical evidence); PSD starts only"}


# ---------------------------------------------------------------------------
# a validated trajectory into the region: the `trajectory_convergence` certificate


MAX_HORIZON = 1000.0
"""Longest float horizon searched for the entry time (the checker accepts T ≤ 1000 too)."""

FLOWS = ({"method": "lohner", "order": 24, "jac_order": 10, "prec": 256, "tol_bits": 70, "box": "defect"},
         {"method": "lohner", "order": 20, "jac_order": 8, "prec": 128, "tol_bits": 45, "box": "defect"})
"""The validated flows tried in turn (the witness's "flow" field): Lohner's QR method
(`checker._lohner`, on Σ alone), whose radii follow the true contraction, with the defect remainder
(flow "box": "defect", `checker._lohner` point 8; session 22, `bench_regime.py --dims 2,3,4 --n 12`,
opposite family: 32 of 32 certified either way, the largest wall times 0.83 / 3.50 / 6.01 s at d = 2 / 3 /
4 against 1.34 / 4.60 / 8.18 s with the high-order box; issue family at d = 2, 3, n = 30: 7 of 7 either
way, 0.79 / 1.19 s against 1.20 / 1.43 s).  The per-step tolerance
2^-70 first: with 2^-45 the enclosure outgrew the checker's width limit before the entry on
opposite_instance(3, 0, 2) and (4, 0, 9) (a wasted run each); the 2^-45 flow needs fewer steps
and is the fallback when the step budget runs out.  The plain-ball Taylor method
{"method": "taylor", ...} is also accepted by the checker, but its wrapping effect makes it fail
beyond short horizons."""

ENTRY_FACTORS = (Fraction(5, 4), Fraction(3, 2), Fraction(2))
"""The search grid: segments end at T0·j/m (j ≤ m), T0 the float entry time; when the enclosure at
T0 is not inside {W < c}, the grid is run again with segments ending at these multiples of T0
added.  The checker stops at the first segment whose enclosure lies in {W < c}."""

CHECKPOINT_REL = 2.0 ** -12
"""Relative radius of the checkpoint boxes (the checker's lohner width stop is 2^-12 of the state)."""

ENTRY_MARGIN = 16
"""T0 is the first time the float path has W < c/ENTRY_MARGIN (room for the enclosure's radius)."""

FRAME = "schur"
"""The frame the producer proposes first (`propose_frame`); the unframed flows are the fallback.
Measured (benchmarks/bench_trajectory_frame.py, CPU s of trajectory_certificate, 2^-70 flow) on
opposite_instance(3, 0, 2): none 10.6, schur 6.0, eig 5.8, chol 6.3, veig 8.2; (4, 0, 9): none 36.7,
schur 13.7, eig 18.0, veig 27.9 (chol: Σ* singular there, no frame)."""
FRAME_FLOWS = (FLOWS[1], FLOWS[0])
"""The flows tried in the frame, in turn, before the unframed `FLOWS`: in the Schur frame the 2^-45
flow stays inside the width limit where it did not unframed, and needs fewer steps (classify_regime
on opposite_instance(4, 0, 9): 8.2 s against 13.1 s with the 2^-70 flow, (3, 0, 2): 4.2 against 7.3)."""
DEEP_FLOW = {"method": "lohner", "order": 28, "jac_order": 16, "prec": 192, "tol_bits": 80, "metric": "lyapunov",
             "box": "defect"}
"""The flow tried first, in the frame, from `DEEP_MIN_N` on: a per-step remainder of 2^-80, with the QR
parallelepiped orthonormalised in the inner product of the witness's X (checker: flow "metric";
`checker._lohner` point 5), and the defect remainder (flow "box": "defect"; `checker._lohner` point 8:
no Taylor series on an a-priori box, whose wrapping held the steps at 1/6 to 1/14 of what the centre's
series allowed).  classify_regime on opposite_instance(8, 0, 0), session 22: 35.3 s wall, certified;
the checker's segments took 122, 70, 71 and 75 steps (11.2, 7.3, 7.6, 8.0 s), against 1,223 steps and
132.8 s wall with the local frame below (session 21).  Before: from the second segment on, the Taylor
recursion on the a-priori box in a local eigenframe of the linearisation (flow "local_frame";
`checker._lohner` point 6; jac_order 16 is the upper limit that the framed steps, about ten times
longer, reach).  classify_regime on
opposite_instance(8, 0, 0), CPU s: 222.6 and 227.0 without the local frame, 157.6 with it, certified
(per unit time near Σ*: 110 steps and 11 s unframed, 10-12 steps and 3.1-3.7 s framed; the first
segment, [0, 3.9] with the transient, keeps the plain recursion: there the frame cost 26.8 s against
19.5 s on [1, 2]).  DF(Σ*) is far from normal (opposite_instance(8, 0, 0): row sums 179 against a
spectral abscissa −0.47, rotations up to 6.1i), and the Euclidean QR's radius grows by about e³ per unit
time near Σ* while an exact zonotope of the same local errors grows linearly (from the float state at
t = 8, 2^-120: 5.3e-31 against 2.0e-34 after 1.5 time units); in X's metric 1.0e-32.  The checker also
chains its lohner segments through the parallelepiped instead of restarting from the box.
trajectory_certificate on opposite_instance(8, 0, 0) (entry T = 15.6), CPU s on one loaded core: this
flow 219 s; the former 2^-120 flow (order 36, 256 bits) without the metric 270 s, with it 278 s (the
metric changes the width, not the cost per step; both runs restarted each segment from its box);
2^-60 (order 24, 128 bits) with the metric, in one run from t = 0, grows to 8.4e-6 at t = 10 (about
e^1.3 per unit time from t = 6: no entry by 15.6); 2^-70 (order 26, 160 bits) with the metric is
accepted in 199 s, and this flow's radius from t = 0 stays below 1e-15 (7.8e-16 at T, where the entry
test needs about 5e-8): 2^-80 keeps 20 bits above the failing 2^-60 for draws with a longer approach.  Before the metric, 2^-80 failed at t ≈ 11 after 451 s and 2^-100 needed
262 s.  The cost is the steps' (about 80-150 per unit time near Σ*, 80-100 ms each, half of it the
36×36 Jacobian coefficients on X and on the a-priori box), not the tolerance: per unit time from t = 8
the 2^-45, 2^-60, 2^-80 and 2^-120 flows cost 8.1, 8.6, 11.5 and about 15 s."""
DEEP_MIN_N = 36
"""Smallest n = d(d+1)/2 (d = 8) where `DEEP_FLOW` comes first: at d ≤ 4 the cheap flows certify every
converging opposite draw of the regime benchmark (32 of 32, ≤ 7.7 s), and they are cheaper per unit
time (on the d = 8 instance from t = 8: 6 s CPU per unit time at 2^-45, 23 s at 2^-150)."""
FRAME_KINDS = ("schur", "eig", "chol", "veig")
_FRAME_BITS = 8
_FRAME_MAX_COND = 1e6


def propose_frame(params: Params, center: exact.Matrix, kind: str = FRAME) -> exact.Matrix | None:
    """A short dyadic frame T for the checker's flow (witness "frame", `core.frame`), from floats:
    "schur": the real Schur vectors of J* = A + VΣ*B; "eig": J*'s real eigenbasis (real and imaginary
    parts of a complex pair); "chol": the Cholesky factor of Σ* (Σ̃* = I); "veig": V's real
    eigenbasis.  Columns scaled to max-abs 1 and rounded to 2^-8; None when the rounded T is
    ill-conditioned (cond > 1e6) or the floats fail.  Trusted for nothing: the checker maps back."""
    import scipy.linalg as sla

    from riccati_verify.numeric.eigen import real_eigenbasis
    from riccati_verify.numeric.views import float_view

    A, B, V, _ = float_view(params)
    Sc = np.array(center, dtype=float)
    J = A + V @ Sc @ B
    try:
        if kind == "schur":
            _, T = sla.schur(J, output="real")
        elif kind in ("eig", "veig"):
            T = real_eigenbasis(J if kind == "eig" else V)
        elif kind == "chol":
            T = np.linalg.cholesky((Sc + Sc.T) / 2)
        else:
            raise ValueError(f"unknown frame kind {kind!r}")
    except (np.linalg.LinAlgError, ValueError):
        return None
    if not np.all(np.isfinite(T)):
        return None
    T = T / np.maximum(np.max(np.abs(T), axis=0), 1e-300)
    Tq = tuple(tuple(_dyadic(float(x), _FRAME_BITS) for x in row) for row in T)
    Tf = np.array(Tq, dtype=float)
    if not np.isfinite(np.linalg.cond(Tf)) or np.linalg.cond(Tf) > _FRAME_MAX_COND:
        return None
    return Tq


@dataclass
class TrajectoryConvergence:
    """Σ(t) from Σ0 enters the certified region of attraction of Σ* (or of 0) at time T.

    `status` CERTIFIED only when the independent checker accepted the `trajectory_convergence`
    certificate (`certificate`); otherwise NOT_CERTIFIED with `reason` and the horizon reached.
    """

    limit: str
    certificate: dict | None
    T: Fraction | None = None
    reason: str = ""
    horizon: float | None = None
    region: RegionOfAttraction | None = None

    @property
    def status(self) -> Status:
        """CERTIFIED iff the checker accepted the certificate."""
        return Status.CERTIFIED if self.certificate is not None else Status.NOT_CERTIFIED

    def to_dict(self) -> dict:
        """JSON form."""
        return {"status": str(self.status), "limit": self.limit, "T": self.T, "reason": self.reason,
                "horizon": self.horizon, "certificate_kind": "trajectory_convergence" if self.certificate else None}


def _float_path(params: Params, S0: np.ndarray, T: float):
    from scipy.integrate import solve_ivp

    from riccati_verify.numeric.views import float_view

    A, B, V, _ = float_view(params)
    d = S0.shape[0]

    def f(_, y):
        X = y.reshape(d, d)
        Y = (A + V @ X @ B) @ X
        return (Y + Y.T).ravel()

    def blow(_, y):
        return 1e8 - float(np.max(np.abs(y)))
    blow.terminal = True
    with np.errstate(all="ignore"):
        return solve_ivp(f, (0, T), S0.ravel(), method="DOP853", rtol=1e-11, atol=1e-14, dense_output=True,
                         events=blow)


def trajectory_certificate(params: Params, state: Gaussian, center: exact.Matrix, radius: Fraction = Fraction(0),
                           *, region: RegionOfAttraction | None = None, horizon: float = 200.0,
                           segments: int = 4, flows: tuple[dict, ...] = FLOWS,
                           positive_definite: bool = True, frame: str | None = FRAME,
                           frame_flows: tuple[dict, ...] | None = None) -> TrajectoryConvergence:
    """A `trajectory_convergence` certificate: float integration proposes the entry time into the
    certified region {W < c} of the enclosed equilibrium (center, radius), checkpoints along the way,
    and the independent checker runs the validated flow; validity only via `verify_certificate`.

    The float entry time T0 (W < c/`ENTRY_MARGIN` on the float path) proposes a search grid: `segments` equal
    segments of [0, T0] (and, only when the enclosure at T0 is not inside the region, segments ending
    at T0·`ENTRY_FACTORS` ≤ horizon as well, in a second run).  The checker runs its flow once through
    the grid and stops at the first segment whose enclosure lies in {W < c}: that is the entry time
    T.  An entry before the grid's end cuts the certificate there, and the cut document is judged
    again (so that it holds no segment the checker did not run).  One run when the entry is at T0,
    instead of one per guessed T and flow.  Four times more segments of [0, T0] (at most 32 in all)
    when the checker's per-segment step budget runs out.
    horizon is bounded by `MAX_HORIZON`; `flows` are the witness "flow" fields tried in turn
    (default `FLOWS`: Lohner's method).
    positive_definite=False claims only convergence to the equilibrium of the ball, not that it is
    positive definite (a singular limit).
    frame: the kind of `propose_frame` (None: none); the framed certificate is tried first with
    `frame_flows` (default `FRAME_FLOWS` when `flows` is the default, else `flows`), then the unframed
    `flows` (a frame changes the checker's work only, so any failure in it falls back).  With the default
    flows and n ≥ `DEEP_MIN_N`, `DEEP_FLOW` (in the frame when there is one) comes before all of them.
    """
    zero = radius == 0 and all(x == 0 for r in center for x in r)
    limit = "zero" if zero else "equilibrium"
    claim = {"limit": limit} if zero or positive_definite else {"limit": limit, "positive_definite": False}
    if not (0 < horizon <= MAX_HORIZON):
        return TrajectoryConvergence(limit, None, reason=f"horizon must be in (0, {MAX_HORIZON:g}]")
    if params.dim > 16:
        return TrajectoryConvergence(limit, None, reason="d > 16: beyond the trajectory checker's bound")
    segments = max(1, min(int(segments), 32 - len(ENTRY_FACTORS)))
    roa = region or region_of_attraction(params, center, radius)
    if not roa.proved:
        return TrajectoryConvergence(limit, None, reason="no certified region of attraction: " + roa.stability.reason,
                                     region=roa)
    if roa.c is None:
        return TrajectoryConvergence(limit, None, reason="quadratic term vanishes: use the linear theory", region=roa)
    ls = roa.stability
    d = params.dim
    idx = exact.sym_pairs(d)
    S0 = np.array(state.cov, dtype=float)
    Sc = np.array(center, dtype=float)
    Xf = np.array(ls.X, dtype=float)
    c = float(roa.c)
    sol = _float_path(params, S0, horizon)
    ts = np.linspace(0, sol.t[-1], 4001)
    Wt = []
    for t in ts:
        h = sol.sol(t).reshape(d, d)[tuple(np.array(idx).T)] - Sc[tuple(np.array(idx).T)]
        Wt.append(float(h @ Xf @ h))
    Wt = np.array(Wt)
    inside = np.nonzero(Wt < c / ENTRY_MARGIN)[0]
    if not len(inside):
        return TrajectoryConvergence(limit, None, reason=f"the float trajectory does not enter the certified region "
                                     f"(W < {c:.3g}) up to t = {float(sol.t[-1]):.4g}", horizon=float(sol.t[-1]),
                                     region=roa)
    T0 = _dyadic(max(float(ts[inside[0]]), 1e-6), 12)
    tried = []
    Tq = propose_frame(params, center, frame) if frame else None
    deep = flows is FLOWS and frame_flows is None and sym_dim(d) >= DEEP_MIN_N
    if frame_flows is None:
        frame_flows = FRAME_FLOWS if flows is FLOWS else flows
    plan = (([(Tq, DEEP_FLOW)] if deep else []) + ([(Tq, f) for f in frame_flows] if Tq is not None else [])
            + [(None, f) for f in flows])
    for Tq, flow in plan:
        m, extend = segments, False
        while True:
            # one run of the checker's flow over the search grid: it stops at the first entry
            ends = [T0 * j / m for j in range(1, m + 1)]
            if extend:
                ends += [T0 * f for f in ENTRY_FACTORS if T0 * f <= min(horizon, float(sol.t[-1]))]
            cert, res = _trajectory_attempt(params, state, center, radius, claim, roa, sol, ends, flow, Tq)
            if res.valid:
                k = res.facts.get("entry_segment")
                if k is not None and k + 1 < len(ends):
                    # the certificate ends at its entry, so that every checkpoint it holds is checked;
                    # the trimmed document is judged again (it is another document)
                    cert2, res2 = _trajectory_attempt(params, state, center, radius, claim, roa, sol,
                                                      ends[:k + 1], flow, Tq)
                    if res2.valid:
                        cert, res, ends = cert2, res2, ends[:k + 1]
                return TrajectoryConvergence(limit, cert, ends[-1], res.reason, float(ends[-1]), roa)
            # every segment boundary restarts the flow from a box (one wrapping), so more segments
            # only when the checker's per-segment step budget runs out
            if "step budget" in res.reason and 4 * m + len(ENTRY_FACTORS) <= 32:
                m *= 4
                continue
            if "not certified inside the region" in res.reason and not extend and T0 * ENTRY_FACTORS[0] <= horizon:
                extend = True
                continue
            break
        tried.append(f"T <= {float(ends[-1]):.4g}, {flow.get('method', 'taylor')} prec {flow.get('prec')}, "
                     f"{len(ends)} segment(s){', framed' if Tq is not None else ''}: {res.reason}")
        if Tq is None and not any(w in res.reason for w in ("radius", "wrapping", "wide", "not inside", "step")):
            break
    return TrajectoryConvergence(limit, None, reason="checker refused: " + " | ".join(tried), horizon=float(ends[-1]),
                                 region=roa)


def _trajectory_attempt(params: Params, state: Gaussian, center, radius, claim: dict, roa: RegionOfAttraction,
                        sol, ends: list[Fraction], flow: dict, frame: exact.Matrix | None = None):
    """One `trajectory_convergence` document with segments ending at the increasing times `ends`
    (checkpoints from the float path `sol`, boxes of relative radius `CHECKPOINT_REL`: claims only, the checker
    chains its own enclosures; in frame coordinates T⁻¹ΣT⁻ᵀ with a frame T), and the checker's verdict."""
    d = params.dim
    ls = roa.stability
    bounds = list(ends)
    durs = [bounds[0]] + [bounds[k] - bounds[k - 1] for k in range(1, len(bounds))]
    segs = []
    Ti = None if frame is None else np.linalg.inv(np.array(frame, dtype=float))
    for tk, dur in zip(bounds, durs):
        Sk = sol.sol(float(tk)).reshape(d, d)
        if Ti is not None:
            Sk = Ti @ Sk @ Ti.T
        Sk = (Sk + Sk.T) / 2
        ck = tuple(tuple(_dyadic(float(x), 40) for x in row) for row in Sk)
        # the boxes are claims only (the checker chains its own enclosures), so they may be as wide as
        # the flow's own width stop: 1e-5 refused a framed enclosure at d = 8 that the width limit allowed
        rk = _dyadic(CHECKPOINT_REL * max(1.0, float(np.max(np.abs(Sk)))), 8)
        segs.append({"duration": dur, "center": ck, "radius": rk})
    witness = {"center": center, "radius": radius, "X": ls.X, "mu": ls.mu, "eta": ls.eta,
               "norm_V": roa.norm_V, "norm_B": roa.norm_B, "c": roa.c, "segments": segs, "flow": dict(flow)}
    if frame is not None:
        witness["frame"] = frame
    if roa.cubic is not None:
        witness["cubic"] = {"Y": roa.cubic["Y"], "s": roa.cubic["s"], "S": roa.cubic["S"]}
    cert = make_certificate("trajectory_convergence", claim, params, state, witness,
                            "float entry time into a certified quadratic region of attraction (Lyapunov "
                            f"equation; {roa.bound} bound of the cubic term); validated flow "
                            f"({flow.get('method', 'taylor')}) re-run by the checker")
    return cert, verify_certificate(cert)
