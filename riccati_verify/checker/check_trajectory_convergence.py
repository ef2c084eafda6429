"""Checker for `trajectory_convergence` certificates: the covariance Σ(t) from the certificate's
Σ0 converges to an equilibrium Σ* (or to 0, collapse), proved by a validated trajectory on
[0, T] that ends inside a certified region of attraction of Σ*.

Claim:
    {"kind": "trajectory_convergence", "limit": "equilibrium" | "zero", "positive_definite": bool}
    "equilibrium": Σ(t) → Σ* ≠ 0, an equilibrium in the witness ball, which must exclude 0 (the limit 0
    is collapse, claimed as "zero"); with "positive_definite" true (the
    default when absent) the ball is also certified positive definite, with false nothing is said
    about Σ*'s rank (it is positive semidefinite as a limit of covariances: it may be singular);
    "zero": Σ(t) → 0 ("positive_definite" must then be absent or false).

Witness (exact rational strings):
    center, radius      the Σ*-ball {|Σ_ij − center_ij| ≤ radius}; radius 0: F(center) = 0 exactly,
                        else a Krawczyk test in arb (this module's own); "zero": center 0, radius 0
    X                   n×n symmetric, n = d(d+1)/2, on the upper-triangle coordinates h
    mu, eta, norm_V, norm_B, c
                        checked:  X ≻ 0,  ηI − X ≻ 0,  −(LᵀX + XL) − μI ≻ 0 for L = DF(Σ) at every Σ
                        of the ball,  norm²I − MᵀM ⪰ 0 (exact) for M = V, B,  0 < c ≤ μ²/(4κ²η),
                        κ = 4·norm_V·norm_B (the "norm" bound; replaced by the cubic test when
                        "cubic" is present)
    cubic               optional {"Y": n×n, "s": rational, "S": n×n symmetric} (d ≤ 8): the exact
                        cubic bound below, instead of c ≤ μ²/(4κ²η)
    segments            list of {"duration", "center", "radius"}: the validated flow (the method of
                        "flow", this checker's own run from the exact Σ0, chained through its own
                        enclosures: a taylor segment restarts from the previous segment's ball output,
                        a lohner segment continues from the previous one's parallelepiped x̂ + C r
                        (which contains Σ there, and lies inside its box output: a restart from the box
                        would wrap once more; `_lohner.enclose_lohner`'s start)
                        after each segment must lie in the claimed checkpoint box; T = the sum of the
                        durations.  After each segment the enclosure is tested against {W < c}: the
                        first segment where it lies inside is the entry, the claim is proved there,
                        and the later segments are not run (they carry no claim: a producer's search
                        grid); no entry by T is a refusal
    flow                {"method": "taylor" | "lohner", "order": int, "prec": int, "tol_bits": int,
                        "jac_order": int (lohner only)}: the validated flow the checker runs, its Taylor
                        order, arb precision and per-step remainder tolerance 2^-tol_bits.
                        "taylor" (the default when "method" is absent): the plain-ball Taylor method
                        `checker._validated_flow.enclose_segment` (wrapping: radii grow like e^{‖|J|‖t});
                        "lohner": Lohner's QR parallelepiped method `checker._lohner.enclose_lohner`
                        on Σ alone (covariance_only: Σ̇ does not involve m; radii follow the true
                        contraction) with the high-order a-priori box (high_order_box; `_lohner`
                        points 1' and 3'), jac_order the Taylor order of its Jacobian enclosure.
                        Any other method value is refused.  Optional "metric": "lyapunov" (lohner
                        only): the flow's QR re-representation orthonormalises in the inner product of
                        the witness's X, pulled back to the flow's coordinates (through the frame when
                        there is one; `_flow_metric`): X is a Lyapunov matrix of the linearisation at
                        Σ*, in whose inner product the flow near Σ* is contracting, and the wrapping of
                        the QR method follows the symmetric part of the linearisation in its frame
                        (`_lohner` point 5).  Work only: it changes the enclosure's width, never what
                        is proved; absent, the Euclidean QR.  With "metric_from": k (an integer, default
                        0) the segments before k keep the Euclidean QR: far from Σ* (an opening
                        transient) X's inner product can wrap more than the Euclidean one.
                        Optional "local_frame": true (lohner only): each step takes its a-priori box,
                        the Taylor coefficients on it and the Jacobian remainder in a local eigenframe
                        of the linearisation at the step's centre (`_lohner` point 6), from segment
                        "local_frame_from" (default 0) on: near Σ* it removes the wrapping inside the
                        Taylor recursion, while in a fast nonlinear transient it costs more than it
                        saves.  Work only, like the metric.  Optional "box" (lohner only): "high_order"
                        (the default: `_lohner` points 1'-3'') or "defect" (`_lohner` point 8: the
                        remainder from the centre's Taylor polynomial, its defect and a logarithmic norm
                        on a thin tube, no series on a box; not with local_frame).  Either is a proof; the
                        choice moves the work.  Any other key of "flow" is refused.
    frame               optional d×d invertible rational T: the flow runs for Σ̃ = T⁻¹ΣT⁻ᵀ, which solves
                        the same moment equation with (T⁻¹AT, TᵀBT, T⁻¹VT) from the exact Σ̃0 = T⁻¹Σ0T⁻ᵀ
                        (`core.frame.moment_frame`), so the segments' checkpoint boxes are in frame
                        coordinates (boxes for Σ̃); before each W < c test the enclosure is mapped back,
                        Σ = TΣ̃Tᵀ in ball arithmetic.  A frame changes the flow's work only (its ball
                        Taylor coefficients grow with |Ã|, |Ṽ|, |B̃| entrywise), never the claim.

Region of attraction.  F(Σ* + H) = DF(Σ*)[H] + VHBH + HBᵀHVᵀ exactly, |q(h)| ≤ ‖Q(H)‖_F ≤
2‖V‖₂‖B‖₂‖H‖_F² ≤ κ|h|²; for W(h) = hᵀXh, Ẇ = −hᵀNh + 2(Xh)ᵀq ≤ |h|²(−μ + 2κ√η√W) since
|Xh|² ≤ ηW.  So on {W < c} (c ≤ μ²/(4κ²η)) W strictly decreases, the set is forward invariant,
and W ≤ W(T)·e^{−(μ − 2κ√(ηW(T)))(t−T)/η} → 0, i.e. Σ(t) → Σ*.  The checker evaluates W over the
final enclosure and the whole Σ*-ball in arb and requires W < c.

The cubic bound (witness "cubic").  q(h)_a = hᵀQ_a h exactly (Q_a from V, B by polarisation, built
here), so 2hᵀXq(h) = hᵀM(h)h with M(h) = Σ_j h_j G_j, G_j = 2 Σ_a X_aj Q_a; with h = Yz,
M(h) = Σ_k z_k Ĝ_k, Ĝ_k = Σ_j Y_jk G_j, and YᵀXY ⪰ sI gives |z|² ≤ W/s ≤ ρ² := c/s on {W ≤ c}.
For S ≻ 0, (hᵀĜ_k h)² ≤ hᵀSh · hᵀĜ_k S⁻¹ Ĝ_k h (Cauchy–Schwarz), so by Cauchy–Schwarz in k and
AM–GM  hᵀM(h)h ≤ ρ·√(hᵀSh · hᵀΣ_kĜ_kS⁻¹Ĝ_k h) ≤ (ρ/2)·hᵀ(S + Σ_k Ĝ_k S⁻¹ Ĝ_k)h.  The checker
proves YᵀXY − sI ≻ 0, S ≻ 0 and −(LᵀX + XL) − (ρ/2)(S + Σ_k Ĝ_k S⁻¹ Ĝ_k) ≻ 0 over the Σ*-ball
(S⁻¹ an arb ball inverse, ρ a ball containing √(c/s)); then Ẇ < 0 on {0 < W ≤ c}: forward
invariant, W strictly decreasing, and (LaSalle) Σ(t) → Σ*.  Q_a, G_j, Ĝ_k are never read from
the certificate.

Work bounds (untrusted input): d ≤ 16, at most 32 segments, T ≤ 1000, order and jac_order 4..40,
precision 64..1536 bits, 4000 steps per segment (either method), a frame d×d with rational
strings of at most 4000 characters (as every rational here).  Imports core, python-flint,
`checker._validated_flow` and `checker._lohner` only.
"""

from __future__ import annotations

from fractions import Fraction

import flint

from riccati_verify.checker import check_equilibrium as EQ
from riccati_verify.checker._lohner import enclose_lohner
from riccati_verify.checker._validated_flow import ball_state, enclose_segment
from riccati_verify.checker.verify import CheckResult
from riccati_verify.core import balls, exact
from riccati_verify.core.frame import moment_frame
from riccati_verify.core.progress import Progress

__all__ = ["CLAIM_KEYS", "FLOW_KEYS", "FLOW_METHODS", "MAX_DIM", "MAX_HORIZON", "MAX_SEGMENTS", "WITNESS_KEYS", "check"]

CLAIM_KEYS = frozenset({"limit", "positive_definite"})
"""The claim's keys besides "kind" (`checker.verify` refuses any other)."""
WITNESS_KEYS = frozenset({"center", "radius", "X", "mu", "eta", "norm_V", "norm_B", "c", "segments", "flow", "cubic",
                          "frame"})
"""The witness's keys."""

MAX_DIM = 16
CUBIC_MAX_DIM = 8
"""Largest d (n = 36) of a "cubic" witness: the checker builds n³ coefficients of the Q_a in Python
loops and 2n products of n×n ball matrices for Σ_k Ĝ_k S⁻¹ Ĝ_k."""
MAX_SEGMENTS = 32
MAX_HORIZON = Fraction(1000)
MAX_STEPS = 4000
PREC_RANGE = (64, 1536)
ORDER_RANGE = (4, 40)
_WPREC = 256
ENTRY = "entry into W < c after segment {k} of {total} at t = {t}"
"""The part of the verdict that names the entry, for readers; callers read it from the result's `facts`
(entry_segment, entry_time, W_upper, c)."""
FLOW_KEYS = frozenset({"method", "order", "prec", "tol_bits", "jac_order", "metric", "metric_from", "local_frame",
                       "local_frame_from", "box"})
"""The keys witness["flow"] may have (module docstring); any other is refused."""
FLOW_BOXES = ("high_order", "defect")
"""The lohner flow's remainder route (witness flow "box"; module docstring)."""
FLOW_METHODS = ("taylor", "lohner")
METRICS = ("lyapunov",)
"""The values of the lohner flow's optional "metric" (module docstring)."""
WIDTH_LIMIT = 2.0 ** -12
"""The lohner flow stops once a radius exceeds 2^-12 of the state (work only: the final W < c test
decides; a wider enclosure could hardly fit a region of attraction)."""


def _rat(x, where: str) -> Fraction:
    return EQ.parse_fraction(x, where, max_chars=4000)


def _int_in(x, bounds: tuple[int, int]) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and bounds[0] <= x <= bounds[1]


def _square(rows, n: int, where: str) -> exact.Matrix:
    if not isinstance(rows, list) or len(rows) != n or any(not isinstance(r, list) or len(r) != n for r in rows):
        raise ValueError(f"{where}: expected a {n}x{n} matrix")
    return tuple(tuple(_rat(x, f"{where}[{i}][{j}]") for j, x in enumerate(r)) for i, r in enumerate(rows))


def _mat(rows, d: int, where: str) -> exact.Matrix:
    M = _square(rows, d, where)
    if not exact.is_symmetric(M):
        raise ValueError(f"{where}: not symmetric")
    return M


def _box(center: exact.Matrix, radius: Fraction) -> flint.arb_mat:
    S = balls.arb_matrix(center)
    if radius:
        rad = flint.arb(0, balls.arb_of(radius).abs_upper())
        for i in range(S.nrows()):
            for j in range(S.ncols()):
                S[i, j] = S[i, j] + rad
    return S


def _dF(A, B, V, S, d: int) -> flint.arb_mat:
    """DF(Σ) on upper-triangle coordinates, column by column: DF[E] for the basis matrices E."""
    idx = exact.sym_pairs(d)
    n = len(idx)
    L = flint.arb_mat(n, n)
    VS, BS = V * S, B * S
    for k, (i, j) in enumerate(idx):
        E = flint.arb_mat(d, d)
        E[i, j] = flint.arb(1)
        E[j, i] = flint.arb(1)
        # DF[E] = AE + EAᵀ + VEBΣ + VΣBE + EBᵀΣVᵀ + ΣBᵀEVᵀ  (MATH.md §5)
        T = A * E + V * E * BS + VS * B * E
        D = T + T.transpose()
        for r, (p, q) in enumerate(idx):
            L[r, k] = D[p, q]
    return L


def _pd(M: flint.arb_mat) -> bool:
    return balls.proves_positive_definite(balls.symmetrized(M))


def _g_hat(params, Xa: flint.arb_mat, Ya: flint.arb_mat, d: int) -> list[flint.arb_mat]:
    """The ball matrices Ĝ_k (k < n) with hᵀ(Σ_k z_k Ĝ_k)h = 2hᵀXq(h) for h = Yz.

    q(h)_a = hᵀQ_a h: 2Q(·, E_l) = DF(E_l) − DF(0) is `_dF` with A = 0 at Σ = E_l, so its column j
    is 2Q(E_j, E_l) and (Q_a)_jl = ½ DF_0(E_l)[a, j].  Ĝ_k = Σ_j Y_jk G_j = 2 Σ_a (XY)_ak Q_a, hence
    Ĝ_k[j, l] = (Zᵀ DF_0(E_l))[k, j] with Z = XY."""
    n = d * (d + 1) // 2
    A0, B, V = balls.arb_matrix(exact.zeros(d)), balls.arb_matrix(params.B), balls.arb_matrix(params.V)
    Zt = (Xa * Ya).transpose()
    P = []
    for i, j in exact.sym_pairs(d):
        E = flint.arb_mat(d, d)
        E[i, j] = flint.arb(1)
        E[j, i] = flint.arb(1)
        P.append(Zt * _dF(A0, B, V, E, d))       # P[l][k, j] = Ĝ_k[j, l]
    return [flint.arb_mat([[P[l][k, j] for l in range(n)] for j in range(n)]) for k in range(n)]


def _cubic_fails(params, Xa: flint.arb_mat, N: flint.arb_mat, I: flint.arb_mat, Y: exact.Matrix, s: Fraction,
                 S: exact.Matrix, c: Fraction, d: int) -> str:
    """'' when the cubic bound proves Ẇ < 0 on {0 < W ≤ c}, else why not (module docstring); I the n×n identity."""
    Ya = balls.arb_matrix(Y)
    if not _pd(Ya.transpose() * Xa * Ya - I * balls.arb_of(s)):
        return "cubic: Y^T X Y - s I is not certified positive definite"
    Sa = balls.arb_matrix(S)
    if not _pd(Sa):
        return "cubic: S is not certified positive definite"
    try:
        Sinv = Sa.inv()
    except ZeroDivisionError:
        return "cubic: S is not certified invertible"
    R = Sa
    for G in _g_hat(params, Xa, Ya, d):
        R = R + G * Sinv * G
    rho = (balls.arb_of(c) / balls.arb_of(s)).sqrt()    # a ball containing √(c/s) ≥ |z| on {W ≤ c}
    if not _pd(N - R * (rho / 2)):
        return "cubic: -(L^T X + X L) - (rho/2)(S + sum_k G_k S^-1 G_k) is not certified positive definite " \
               "over the ball (rho = sqrt(c/s))"
    return ""


def _flow_metric(X: flint.arb_mat, Tb: flint.arb_mat | None, d: int) -> flint.arb_mat:
    """PᵀXP, with P the linear map from the flow's coordinates (the upper triangle of Σ̃, frame T) to
    those of Σ = TΣ̃Tᵀ (P = I without a frame): hᵀXh = x̃ᵀ(PᵀXP)x̃ for h = Px̃.  Column (k, l) of P is
    the upper triangle of T(e_k e_lᵀ + e_l e_kᵀ)Tᵀ (k < l) or of T e_k e_kᵀ Tᵀ.  Only a heuristic for
    the flow's QR (module docstring, "metric"): 64-bit balls suffice."""
    if Tb is None:
        return X
    pairs = exact.sym_pairs(d)
    n = len(pairs)
    with flint.ctx.workprec(64):
        P = flint.arb_mat(n, n)
        for c, (k, l) in enumerate(pairs):
            for r, (i, j) in enumerate(pairs):
                P[r, c] = Tb[i, k] * Tb[j, l] + (Tb[i, l] * Tb[j, k] if k != l else 0)
        return P.transpose() * X * P


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `trajectory_convergence` claim from its witness (the entry point `verify_certificate` calls)."""
    params = problem.require_params()
    state = problem.require_state()
    d = params.dim
    if d > MAX_DIM:
        return CheckResult(False, f"d = {d} exceeds the checker's bound {MAX_DIM}")
    n = d * (d + 1) // 2
    limit = claim.get("limit")
    if limit not in ("equilibrium", "zero"):
        return CheckResult(False, "claim 'limit' must be 'equilibrium' or 'zero'")
    claim_pd = claim.get("positive_definite", limit == "equilibrium")
    if not isinstance(claim_pd, bool) or (limit == "zero" and claim_pd):
        return CheckResult(False, "claim 'positive_definite' must be a boolean, and false for the limit 0")
    center = _mat(witness["center"], d, "center")
    radius = _rat(witness["radius"], "radius")
    if radius < 0:
        return CheckResult(False, "negative radius")
    X = _square(witness["X"], n, "X")
    if not exact.is_symmetric(X):
        return CheckResult(False, f"X must be a symmetric {n}x{n} matrix")
    mu, eta, nv, nb, c = (_rat(witness[k], k) for k in ("mu", "eta", "norm_V", "norm_B", "c"))
    if not (mu > 0 and eta > 0 and nv >= 0 and nb >= 0 and c > 0):
        return CheckResult(False, "mu, eta, c must be positive and the norm bounds non-negative")
    flow = witness.get("flow", {})
    if not isinstance(flow, dict):
        return CheckResult(False, "flow must be an object")
    if not set(flow) <= FLOW_KEYS:
        return CheckResult(False, f"flow has unknown keys {sorted(set(flow) - FLOW_KEYS)} (allowed: {sorted(FLOW_KEYS)})")
    method = flow.get("method", "taylor")
    if method not in FLOW_METHODS:
        return CheckResult(False, f"flow method must be one of {FLOW_METHODS}")
    order, prec, tol_bits = flow.get("order"), flow.get("prec"), flow.get("tol_bits")
    if not (_int_in(order, ORDER_RANGE) and _int_in(prec, PREC_RANGE)
            and _int_in(tol_bits, (30, prec // 2))):
        return CheckResult(False, f"flow order must be in {ORDER_RANGE}, prec in {PREC_RANGE}, "
                                  "tol_bits in [30, prec/2]")
    jac_order = flow.get("jac_order")
    if method == "lohner" and not _int_in(jac_order, ORDER_RANGE):
        return CheckResult(False, f"flow jac_order must be in {ORDER_RANGE} for the lohner method")
    if method == "taylor" and jac_order is not None:
        return CheckResult(False, "flow jac_order is only meaningful for the lohner method")
    metric, metric_from = flow.get("metric"), flow.get("metric_from", 0)
    if metric not in (None,) + METRICS or (metric is not None and method != "lohner"):
        return CheckResult(False, f"flow metric must be absent or one of {METRICS} (lohner only)")
    if not _int_in(metric_from, (0, MAX_SEGMENTS)) or (metric is None and "metric_from" in flow):
        return CheckResult(False, f"flow metric_from must be an integer in [0, {MAX_SEGMENTS}], with a metric")
    local_frame, frame_from = flow.get("local_frame", False), flow.get("local_frame_from", 0)
    if not isinstance(local_frame, bool) or (local_frame and method != "lohner"):
        return CheckResult(False, "flow local_frame must be true or false (true for the lohner method only)")
    if not _int_in(frame_from, (0, MAX_SEGMENTS)) or (not local_frame and "local_frame_from" in flow):
        return CheckResult(False, f"flow local_frame_from must be an integer in [0, {MAX_SEGMENTS}], with local_frame")
    flow_box = flow.get("box", "high_order")
    if flow_box not in FLOW_BOXES or (flow_box != "high_order" and method != "lohner") or (flow_box == "defect" and local_frame):
        return CheckResult(False, f"flow box must be one of {FLOW_BOXES} (lohner only; defect without local_frame)")
    segs = witness["segments"]
    if not isinstance(segs, list) or not 1 <= len(segs) <= MAX_SEGMENTS:
        return CheckResult(False, f"segments: 1 to {MAX_SEGMENTS} required")
    durations = [_rat(s["duration"], "duration") for s in segs]
    if any(t <= 0 for t in durations):
        return CheckResult(False, "segment durations must be positive")
    T = sum(durations, Fraction(0))
    if T > MAX_HORIZON:
        return CheckResult(False, f"horizon T = {float(T):.4g} exceeds the checker's bound {MAX_HORIZON}")
    checkpoints = [(_mat(s["center"], d, "segment center"), _rat(s["radius"], "segment radius")) for s in segs]
    if any(r < 0 for _, r in checkpoints):
        return CheckResult(False, "negative segment radius")

    # the flow's controls and initial covariance, in the witness's frame when it has one
    frame = witness.get("frame")
    Af, Bf, Vf, cov0, Tb = params.A, params.B, params.V, state.cov, None
    if frame is not None:
        try:
            Tf = _square(frame, d, "frame")
            _, Af, Bf, Vf, cov0 = moment_frame(Tf, params.A, params.B, params.V, state.cov)
        except ValueError as e:
            return CheckResult(False, f"frame must be an invertible {d}x{d} rational matrix ({e})")
        with flint.ctx.workprec(_WPREC):
            Tb = balls.arb_matrix(Tf)

    # the norm bounds, exactly
    for name, nm, M in (("norm_V", nv, params.V), ("norm_B", nb, params.B)):
        if not exact.norm2_at_most(M, nm):
            return CheckResult(False, f"{name}^2 I - M^T M is not positive semidefinite")
    kappa = 4 * nv * nb
    cubic = witness.get("cubic")
    if cubic is not None:
        if not isinstance(cubic, dict) or set(cubic) != {"Y", "s", "S"}:
            return CheckResult(False, "cubic must be an object with the keys Y, s, S")
        if d > CUBIC_MAX_DIM:
            return CheckResult(False, f"a cubic witness needs d <= {CUBIC_MAX_DIM}")
        Y, S_cs = (_square(cubic[k], n, f"cubic {k}") for k in ("Y", "S"))
        s_cs = _rat(cubic["s"], "cubic s")
        if not s_cs > 0 or not exact.is_symmetric(S_cs):
            return CheckResult(False, "cubic: s must be positive and S symmetric")
    elif kappa > 0 and not c * 4 * kappa * kappa * eta <= mu * mu:
        return CheckResult(False, "c exceeds mu^2 / (4 kappa^2 eta)")

    # the equilibrium
    zero = all(x == 0 for r in center for x in r)
    if limit == "zero" and not (zero and radius == 0):
        return CheckResult(False, "claim says the limit is 0 but the witness ball is not {0}")
    # an equilibrium limit is a nonzero Σ* (the limit 0 is collapse, a regime of its own): the ball must
    # exclude 0, decided exactly (some entry farther from 0 than the radius)
    if limit == "equilibrium" and not any(abs(x) > radius for r in center for x in r):
        return CheckResult(False, "claim says the limit is an equilibrium, but the witness ball contains 0 "
                                  "(a limit 0 is claimed as 'zero')")
    # existence of the equilibrium: the equilibrium checker's own test (exact at radius 0, Krawczyk otherwise)
    q = EQ.q_matrix
    ok, why = EQ.verify_zero(q(params.A), q(params.B), q(params.V), q(center), flint.fmpq(radius.numerator,
                                                                                         radius.denominator))
    if not ok:
        return CheckResult(False, f"no equilibrium proved in the ball: {why}")
    with flint.ctx.workprec(_WPREC):
        A, B, V = (balls.arb_matrix(M) for M in (params.A, params.B, params.V))
        Sb = _box(center, radius)
        if claim_pd and not _pd(Sb):
            return CheckResult(False, "the equilibrium ball is not certified positive definite")

        # the Lyapunov inequalities over the ball
        Xa = balls.arb_matrix(X)
        I = flint.arb_mat(n, n)
        for i in range(n):
            I[i, i] = flint.arb(1)
        if not _pd(Xa):
            return CheckResult(False, "X is not certified positive definite")
        if not _pd(I * balls.arb_of(eta) - Xa):
            return CheckResult(False, "eta I - X is not certified positive definite")
        L = _dF(A, B, V, Sb, d)
        XL = Xa * L
        N = -(XL + XL.transpose())
        if not _pd(N - I * balls.arb_of(mu)):
            return CheckResult(False, "-(L^T X + X L) - mu I is not certified positive definite over the ball")
        if cubic is not None:
            why = _cubic_fails(params, Xa, N, I, Y, s_cs, S_cs, c, d)
            if why:
                return CheckResult(False, why)

    # the validated trajectory from the exact Σ0 (mean 0, b = 0: Σ's equation does not involve the mean).
    # With m0 = 0 and b = 0 the mean solves ṁ = M(t) m, m(0) = 0, whose unique solution is m ≡ 0: each
    # segment restarts from the exact point m = 0 (the flows' own enclosures of m only grow from their
    # remainder terms, along the expanding directions of M(t)).
    zeros = (Fraction(0),) * d
    m0, S = ball_state(zeros, cov0, prec)
    with flint.ctx.workprec(_WPREC):
        Xw, cw = balls.arb_matrix(X), balls.arb_of(c)
        G = _flow_metric(Xw, Tb, d) if metric == "lyapunov" else None
    t = Fraction(0)
    pped = None       # the lohner flow's parallelepiped at the last segment's end
    # minutes at d = 8: the segments count as units of progress, each step's time is the note
    with Progress(len(segs), "flow to the ROA") as bar:
        for k, (dur, (cc, cr)) in enumerate(zip(durations, checkpoints)):
            m = m0
            t_k = float(t)

            def note(tau, steps, k=k, t_k=t_k):
                bar.note(f"seg {k + 1}/{len(segs)} t={t_k + tau:.4g}/{float(T):.4g} {steps} steps")
            if method == "lohner":
                seg = enclose_lohner(m, S, Af, Bf, Vf, zeros, dur, order=order, jac_order=jac_order,
                                     prec=prec, tol_bits=tol_bits, max_steps=MAX_STEPS, max_duration=MAX_HORIZON,
                                     covariance_only=True, high_order_box=flow_box == "high_order",
                                     defect_remainder=flow_box == "defect", width_limit=WIDTH_LIMIT,
                                     metric=G if k >= metric_from else None, start=pped,
                                     local_frame=local_frame and k >= frame_from, on_step=note)
                pped = seg.parallelepiped
            else:
                seg = enclose_segment(m, S, Af, Bf, Vf, zeros, dur, order=order, prec=prec,
                                      tol_bits=tol_bits, max_steps=MAX_STEPS)
            if not seg.ok:
                return CheckResult(False, f"validated flow failed in segment {k}: {seg.reason}")
            bar.step(f"segment {k + 1} to t = {float(t + dur):.4g}")
            S = seg.cov
            t += dur
            with flint.ctx.workprec(prec):
                box = _box(cc, cr)
                if not all(box[i, j].contains(S[i, j]) for i in range(d) for j in range(d)):
                    return CheckResult(False, f"the enclosure at t = {float(t):.6g} is not inside checkpoint {k}")
            # the enclosure inside {W < c}: the entry.  The region is forward invariant and attracted, so
            # the claim is proved here and the later segments are not run (a producer's search grid:
            # one run finds the first entry instead of one run per guessed T)
            with flint.ctx.workprec(_WPREC):
                Sx = S if Tb is None else Tb * S * Tb.transpose()     # Σ = TΣ̃Tᵀ: the region is in Σ's coordinates
                h = flint.arb_mat([[Sx[i, j] - Sb[i, j]] for i, j in exact.sym_pairs(d)])
                W = (h.transpose() * Xw * h)[0, 0]
            if W < cw:
                break
        else:
            return CheckResult(False, f"the enclosure at T = {float(T):.6g} is not certified inside the region "
                                      f"W < c (W <= {float(W.upper()):.3g}, c = {float(c):.3g})")
    later = len(segs) - k - 1
    what = ("0 (collapse)" if limit == "zero" else "Sigma* (positive definite)" if claim_pd else
            "Sigma* (an equilibrium in the ball; positive semidefinite, rank not certified)")
    entry = ENTRY.format(k=k, total=len(segs), t=exact.frac_to_str(t))
    rest = f"; the {later} later segment(s) are not run" if later else ""
    how = method if Tb is None else f"{method}, in the witness's frame"
    return CheckResult(True, f"validated flow ({how}) on [0, {float(t):.6g}] ends inside the certified region of "
                             f"attraction W < {float(c):.3g} of {what}: Sigma(t) -> {what} ({entry}{rest})",
                       {"entry_segment": k, "entry_time": exact.frac_to_str(t),
                        "W_upper": exact.frac_to_str(balls.fraction_of_mid(W.upper())), "c": exact.frac_to_str(c)})
