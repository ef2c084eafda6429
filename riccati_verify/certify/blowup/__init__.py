"""Finite-time blow-up of the covariance: certified enclosures of T*.

`blowup_time(params, state, digits=50, horizon=None)` picks the strongest
route that applies:

1. V = vI (this includes d = 1): Radon's linearisation (`radon.py`), with
   the Hamiltonian matrix exponential in arb ball arithmetic; the bracket
   [lower, upper] is proved (`enclosure.py`), and "no blow-up" is proved
   for all time (v B_s ⪯ 0, or a Lyapunov bound, `lyapunov.py`) or on the
   horizon.
2. A, B, V, Σ0 all diagonal: the decoupled closed form evaluated in arb.
3. Otherwise (general V): a `blowup_general` certificate (`compactified.py`): a
   validated Lohner flow to near infinity, then a contracting ellipsoid around the
   equilibrium at infinity of the compactified flow (MATH.md §15), with the blow-up
   rate ‖Σ(t)‖_F (T* − t) → C proved too.  When that route declines or is not verified:
   the rigorous norm-comparison lower bound and a Taylor-series estimate of T*
   labelled `rigorous: False` (`general.py`), with the reason.  With no horizon and no blow-up
   in sight, `certify.global_existence.decide_blowup` goes on to prove convergence instead (the
   regime route sits above this module: it asks it for blow-up evidence).

T* is the supremum of the existence interval; the proved statement for a
bracket is T* ∈ (lower, upper].  `digits` counts correct significant digits:
upper - lower ≤ 10^-digits · min(1, lower).

A non-rigorous answer never has `lower`, `upper` or `digits` (those are proved
brackets only): it reports `estimate` and `error_estimate` (a conservative scaling
of the method's own error indicators, `general.honest_error`, not a bound) with
`rigorous: False`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import Status
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.certify.blowup import enclosure
from riccati_verify.certify.blowup.closed_form import closed_form_blowup_time, diagonal_blowup_ball, is_diagonal_decoupled
from riccati_verify.certify.blowup.compactified import certify_general_blowup
from riccati_verify.certify.blowup.general import norm_lower_bound, taylor_blowup_estimate
from riccati_verify.certify.blowup.lyapunov import never_blows_up
from riccati_verify.certify.blowup.radon import RadonSystem, psd_factor, radon_hamiltonian

__all__ = ["BlowupResult", "blowup_time", "radon_hamiltonian", "psd_factor", "MAX_DIGITS",
           "MAX_DIGITS_GENERAL", "closed_form_blowup_time"]

MAX_DIGITS = 1000
"""Largest `digits` for the rigorous routes (cost grows like digits^2 to digits^3)."""
MAX_DIGITS_GENERAL = 60
"""Largest `digits` for the (non-rigorous) Taylor estimate of general V."""
PREC_RETRIES = 3
MAX_GUARD_BITS = 8192
"""The most guard bits (`enclosure.guard_bits`, twice log2 of exp(Ht)'s size) a proof of N ≻ 0 at a
time t may need.  Without it a V = vI problem whose float λ_min(N) stays positive searched to t ≈ 10^7
(A = diag(−7/8, 0), B = diag(1, 0), Σ0 = diag(1/2, 2/5)) and then tried a proof at 2.5·10^7 bits (12 GB,
no end); at t = 1000 it needs 6,786 bits there."""


@dataclass
class BlowupResult:
    """The answer of `blowup_time`, in the package's result protocol.

    `blowup`, `rigorous` and the bracket are kept as fields because the theorems
    are stated with them; `status` folds them into one `Status` and
    `certificate` is the document (`make_certificate`) behind a rigorous answer.
    `certificate_spec` is that document's content before the problem is attached.
    """

    blowup: bool | None          # True / False / None = undetermined
    lower: str | None            # decimal strings; T* ∈ (lower, upper], proved (rigorous only)
    upper: str | None
    digits: int                  # correct significant digits guaranteed (0 if none)
    method: str
    rigorous: bool
    horizon: str | None = None   # for blowup False: the horizon it is proved on (None = all t ≥ 0)
    lower_bound: str | None = None  # a rigorous lower bound on T* when no bracket was proved
    closed_form: str | None = None  # the mpmath closed-form value, when one applies
    note: str = ""
    seconds: float = 0.0
    estimate: str | None = None        # non-rigorous: the estimated T* (never a bracket)
    error_estimate: str | None = None  # non-rigorous: its estimated absolute error (not a bound)
    certificate_spec: dict | None = field(default=None, repr=False)  # {kind, claim, witness, method}
    certificate: dict | None = field(default=None, repr=False)       # the document, for params and state
    profile: dict | None = None        # general V: the proved blow-up rate and the (approximate) direction
    no_blowup_seen: bool = field(default=False, repr=False)  # general V: the float search saw Σ shrink or stay bounded

    @property
    def status(self) -> Status:
        """CERTIFIED: a bracket or no blow-up proved; CONFIRMED_NUMERICALLY: a blow-up seen by the
        (non-rigorous) Taylor estimate only; NOT_CERTIFIED: undetermined."""
        if self.blowup is None:
            return Status.NOT_CERTIFIED
        return Status.CERTIFIED if self.rigorous else Status.CONFIRMED_NUMERICALLY

    def to_dict(self) -> dict[str, Any]:
        """JSON form (the `blowup` command's output); `certifiable` says whether a document exists.
        A non-rigorous result has `estimate` and `error_estimate` instead of lower, upper, digits."""
        keys = ("blowup", "lower", "upper", "digits") if self.rigorous else ("blowup", "estimate", "error_estimate")
        out = {k: getattr(self, k) for k in keys + ("method", "rigorous", "horizon", "lower_bound", "closed_form",
                                                   "note", "seconds")}
        out["certifiable"] = self.certificate is not None or self.certificate_spec is not None
        if self.profile is not None:
            out["profile"] = self.profile
        return out


def _check_inputs(params: Params, state: Gaussian, digits: int, horizon) -> Fraction | None:
    if params.dim != state.dim:
        raise InputError(f"parameters have d = {params.dim} but the state has d = {state.dim}")
    if not isinstance(digits, int) or not 1 <= digits <= MAX_DIGITS:
        raise InputError(f"digits must be an integer in 1..{MAX_DIGITS} (got {digits!r}); "
                         f"the rigorous routes cost grows like digits^3")
    if horizon is None:
        return None
    h = Fraction(horizon)
    if not h > 0:
        raise InputError(f"horizon must be positive, got {horizon}")
    return h


def _fmt(x: Fraction, sig: int = 20) -> str:
    """A short decimal rendering (for bounds that are not brackets)."""
    if x == 0:
        return "0"
    e = enclosure.floor_log10(abs(x)) - sig
    q = Fraction(10) ** e
    return enclosure.decimal_str(math.floor(x / q) * q)


def blowup_time(params: Params, state: Gaussian, digits: int = 50, horizon=None,
                progress: Callable[[str], None] | None = None) -> BlowupResult:
    """Enclose the blow-up time T* of the covariance, or prove there is none.

    Parameters
    ----------
    params : Params
        The model dx/dt = Ax + b + V·E_y[y e^{⟨Bx, y⟩}]/E_y[e^{⟨Bx, y⟩}]: the kernel is
        exp(⟨Bx, y⟩) with query x, so a Transformer with scores ⟨Qx, Ky⟩ has B = KᵀQ.
    state : Gaussian
        The initial law N(m, Σ0); only Σ0 matters (Σ̇ does not involve the mean).
    digits : int
        Correct significant digits wanted for the bracket (1..MAX_DIGITS; the general-V
        Taylor estimate works at MAX_DIGITS_GENERAL at most and reports its best estimate).
    horizon : rational, optional
        Decide blow-up on [0, horizon] only (None: for all t ≥ 0).
    progress : callable, optional
        Called with short stage messages while the rigorous routes run.

    Returns
    -------
    BlowupResult
        `status` certified for a proved bracket T* ∈ (lower, upper] or a proved absence of
        blow-up, confirmed numerically for the Taylor estimate, not certified otherwise;
        `certificate` is the document `verify` re-checks (None when not rigorous).
        The routes, strongest first, are in the module docstring.
    """
    h = _check_inputs(params, state, digits, horizon)
    t0 = time.perf_counter()
    res = None
    if params.V_scalar is not None:
        try:
            res = _radon_route(params, state, digits, h, progress)
        except OverflowError:
            # the float locator and the precision rules of the Radon route assume magnitudes inside
            # the float range; beyond it (V ≈ 1e200 with Σ0 ≈ 1e-300) the routes below decide
            res = None
    if res is not None and res.blowup is None and is_diagonal_decoupled(params, state):
        # V = vI and decoupled: the closed form decides what the Radon route left open (a singular A
        # has no Lyapunov bound: A = diag(−7/8, 0), B = diag(1, 0) never blows up)
        res = None
    if res is not None:
        pass
    elif is_diagonal_decoupled(params, state):
        res = _diagonal_route(params, state, digits, h)
    else:
        # the march's cost grows like digits^2 per step and it rarely passes ~30 digits: beyond
        # MAX_DIGITS_GENERAL it runs at that working precision and reports its best estimate
        res = _compactified_route(params, state, min(digits, MAX_DIGITS_GENERAL), h, progress)
        if digits > MAX_DIGITS_GENERAL:
            asked = (f"{digits} digits asked, more than the {MAX_DIGITS_GENERAL} the general-V estimate "
                     f"works at; the best estimate at {MAX_DIGITS_GENERAL} is reported")
            res.note = asked + (f"; {res.note}" if res.note else "")
    # the mpmath closed form is a display cross-check only (eigsy cost grows fast with d)
    cf = closed_form_blowup_time(params, state, min(digits, 200)) if params.dim <= 16 else None
    if cf is not None and cf.value is not None:
        import mpmath

        res.closed_form = mpmath.nstr(cf.value, min(digits, 200) + 2)
    if res.certificate_spec is not None and res.certificate is None:
        res = _checked(res, params, state)
    res.seconds = time.perf_counter() - t0
    return res


CHECK_PREC_RETRIES = 3


def _checked(res: BlowupResult, params: Params, state: Gaussian) -> BlowupResult:
    """Attach the certificate once the independent checker accepts it.  The checker computes in its
    own way (at extreme magnitudes it may need more bits than the producer's proof did), so a
    refused `precision_bits` is doubled a few times; a document it never accepts is not returned,
    and the result is then not certified (the checker is the judge)."""
    from riccati_verify.checker import verify_certificate

    c = res.certificate_spec
    witness = dict(c["witness"])
    for _ in range(CHECK_PREC_RETRIES + 1):
        cert = make_certificate(c["kind"], c["claim"], params, state, witness, c["method"])
        verdict = verify_certificate(cert)
        if verdict.valid:
            res.certificate = cert
            h = c["claim"].get("horizon") if c["kind"] == "no_blowup" else None
            if h is not None:
                # no blow-up on [0, h], proved only now: T* ≥ h joins the norm bound
                res.lower_bound = _fmt(max(Fraction(h), Fraction(res.lower_bound or 0)))
            return res
        if "precision_bits" not in witness:
            break
        witness["precision_bits"] = 2 * witness["precision_bits"]
    res.blowup, res.lower, res.upper, res.digits, res.rigorous, res.horizon = None, None, None, 0, False, None
    res.certificate_spec = None
    res.note = f"the producer's proof was not re-verified by the checker: {verdict.reason}"
    return res


# --- V = vI --------------------------------------------------------------------

def _factor_witness(sys: RadonSystem) -> dict:
    return {"factor_C": [list(r) for r in sys.C], "factor_D": list(sys.D)}


def _no_blowup_forever(sys: RadonSystem, method: str, witness: dict, note: str) -> BlowupResult:
    return BlowupResult(False, None, None, 0, method, True, None, note=note,
                        certificate_spec={"kind": "no_blowup", "claim": {"horizon": None},
                                     "witness": witness, "method": method})


def _radon_route(params: Params, state: Gaussian, digits: int, horizon: Fraction | None,
                 progress) -> BlowupResult:
    sys = RadonSystem(params, state)
    v = sys.v
    if sys.r == 0:
        return _no_blowup_forever(sys, "zero covariance: Σ(t) ≡ 0", {"route": "zero-covariance"},
                                  "Σ0 = 0 is an equilibrium")
    if sys.sign == "opposite":
        return _no_blowup_forever(
            sys, "Radon linearisation: v B_s ⪯ 0 (exact) ⇒ N(t) ⪰ D⁻¹ ≻ 0 for all t",
            {"route": "opposite-sign", **_factor_witness(sys)},
            "P(t) = Σ(t)⁻¹ stays positive definite on the support for all t ≥ 0")

    if all(x == 0 for row in params.A for x in row):
        K = exact.matmul(exact.matmul(exact.transpose(sys.C), exact.scale(v, sys.Bs)), sys.C)
        if exact.is_psd(exact.scale(-1, K)):
            return _no_blowup_forever(
                sys, "A = 0: N(t) = D⁻¹ - 2t·v CᵀB_sC with v CᵀB_sC ⪯ 0 (exact)",
                {"route": "a-zero", **_factor_witness(sys)}, "N(t) ⪰ D⁻¹ ≻ 0 for all t ≥ 0")

    lb = norm_lower_bound(params, state)
    t_start = float(lb) if lb else 1.0 / max(sys.h_norm, 1e-300)
    t_max = float(horizon) if horizon is not None else t_start * 2.0 ** 24
    bracket, t_seen = enclosure.locate_float(sys, t_start, t_max)
    lb_str = _fmt(lb) if lb else None
    unproved = ""

    if bracket is not None:
        res = _certify_bracket(sys, bracket, digits, progress)
        for extra in (10, 30, 100):   # a bracket straddling the horizon decides nothing: narrow it
            if res is None or horizon is None or not Fraction(res.lower) < horizon < Fraction(res.upper):
                break
            res = _certify_bracket(sys, bracket, min(digits + extra, MAX_DIGITS), progress)
        if res is not None:
            if horizon is not None and Fraction(res.lower) >= horizon:
                pass  # blow-up is beyond the horizon: prove no blow-up on it below
            else:
                return res
        else:
            unproved = (f"a sign change of det X near t ≈ {bracket[1]:.15g} was seen in floats "
                        "but could not be proved in ball arithmetic")

    W = never_blows_up(v, params.A, params.B, sys.C, sys.D)
    if W is not None:
        return _no_blowup_forever(
            sys, "Lyapunov bound: AᵀW∞ + W∞A = -B_s, vW∞ ⪰ 0, D⁻¹ - 2vCᵀW∞C ≻ 0 (exact)",
            {"route": "lyapunov", "W": [list(r) for r in W], **_factor_witness(sys)},
            "N(t) ⪰ N∞ ≻ 0 for all t ≥ 0")

    T = horizon if horizon is not None else Fraction(t_seen) if t_seen > 0 and sys.sign == "same" else None
    if T is None or unproved:
        return BlowupResult(None, None, None, 0, "Radon linearisation", False, lower_bound=lb_str,
                            note=unproved or "no crossing located and no Lyapunov certificate")
    need = enclosure.guard_bits(sys, float(T))
    if horizon is not None and need > MAX_GUARD_BITS:
        return BlowupResult(None, None, None, 0, "Radon linearisation", False, lower_bound=lb_str,
                            note=(f"no crossing located up to the horizon, but a proof of N ≻ 0 at t = {_fmt(T, 8)} "
                                  f"needs {need} guard bits (exp(Ht) grows that much; at most {MAX_GUARD_BITS}): "
                                  "a shorter horizon can be decided"))
    while need > MAX_GUARD_BITS:
        T /= 2          # the float search's reach: prove the part a bounded proof covers
        need = enclosure.guard_bits(sys, float(T))
    proof = _prove_positive_until(sys, T, digits, progress)
    if proof is None:
        return BlowupResult(None, None, None, 0, "Radon linearisation", False, lower_bound=lb_str,
                            note=f"could not prove N ≻ 0 on [0, {float(T):.6g}]")
    route, prec, boxes = proof
    witness = {"route": route, "precision_bits": prec, **_factor_witness(sys)}
    if boxes is not None:
        witness["boxes"] = [[k, a, b] for k, a, b in boxes]
    method = ("Radon linearisation, v B_s ⪰ 0: N(T) ≻ 0 in arb ⇒ N ≻ 0 on [0, T]" if route == "radon-monotone"
              else "Radon linearisation, ball cover of [0, T] proving N ≻ 0")
    if horizon is not None:
        return BlowupResult(False, None, None, 0, method, True, horizon=str(horizon), lower_bound=lb_str,
                            certificate_spec={"kind": "no_blowup", "claim": {"horizon": horizon},
                                         "witness": witness, "method": method},
                            note=f"no blow-up on [0, {horizon}]")
    # T* ≥ T holds only once the checker accepts the certificate (`_checked` then raises the bound)
    return BlowupResult(None, None, None, 0, method, False, lower_bound=lb_str,
                        certificate_spec={"kind": "no_blowup", "claim": {"horizon": T}, "witness": witness,
                                     "method": method},
                        note=f"undetermined: no blow-up on [0, {_fmt(T, 8)}] (proved), none located beyond "
                             "and no proof for all time; a finite horizon can be decided")


def _working_precision(sys: RadonSystem, digits: int, t: float) -> int:
    return int(3.33 * (digits + 4)) + enclosure.guard_bits(sys, t)


def _certify_bracket(sys: RadonSystem, bracket, digits: int, progress) -> BlowupResult | None:
    prec = _working_precision(sys, digits, bracket[1])
    for _ in range(PREC_RETRIES):
        t = enclosure.refine_newton(sys, bracket, int(3.33 * (digits + 4)) + 8)
        if t is None:
            return None
        lo, hi = enclosure.decimal_bracket(t, digits)
        if enclosure.prove_bracket(sys, lo, hi, prec):
            break
        prec = int(prec * 1.5)
    else:
        return None
    witness = {"route": "radon-monotone" if sys.sign == "same" else "radon-cover",
               "precision_bits": prec, **_factor_witness(sys)}
    if sys.sign == "same":
        method = "Radon linearisation + arb matrix exponential; v B_s ⪰ 0 (exact) makes N(t) Loewner-decreasing"
    else:
        boxes = enclosure.cover_positive(sys, lo, prec, _box_progress(progress))
        if boxes is None:
            return None
        witness["boxes"] = [[k, a, b] for k, a, b in boxes]
        method = f"Radon linearisation + arb matrix exponential; ball cover of [0, T_lo] ({len(boxes)} boxes)"
    claim = {"lower": enclosure.decimal_str(lo), "upper": enclosure.decimal_str(hi)}
    return BlowupResult(True, claim["lower"], claim["upper"], digits, method, True,
                        certificate_spec={"kind": "blowup", "claim": claim, "witness": witness, "method": method})


def _box_progress(progress):
    if progress is None:
        return None
    return lambda frac: progress(f"ball cover {100 * frac:.0f}%")


def _prove_positive_until(sys: RadonSystem, T: Fraction, digits: int, progress):
    prec = _working_precision(sys, min(digits, 30), float(T))
    if sys.sign == "same":
        for _ in range(PREC_RETRIES):
            if enclosure.prove_positive_at(sys, T, prec):
                return "radon-monotone", prec, None
            prec = int(prec * 1.5)
        return None
    boxes = enclosure.cover_positive(sys, T, prec, _box_progress(progress))
    return None if boxes is None else ("radon-cover", prec, boxes)


# --- diagonal, general V ----------------------------------------------------------

def _diagonal_route(params: Params, state: Gaussian, digits: int, horizon: Fraction | None) -> BlowupResult:
    res = _diagonal_bracket(params, state, digits, horizon)
    for extra in (10, 30, 100):   # a bracket straddling the horizon decides nothing: narrow it
        if not (res.blowup and horizon is not None and Fraction(res.lower) < horizon < Fraction(res.upper)):
            break
        res = _diagonal_bracket(params, state, min(digits + extra, MAX_DIGITS), horizon)
    return res


def _diagonal_bracket(params: Params, state: Gaussian, digits: int, horizon: Fraction | None) -> BlowupResult:
    from flint import ctx

    from riccati_verify.core import balls

    method = "diagonal decoupled closed form T* = min_i ln(1 + a_i/c_i)/(2a_i), evaluated in arb"
    prec = int(3.33 * (digits + 4)) + 64
    with ctx.workprec(prec):
        T = diagonal_blowup_ball(params, state)
        if T is None:
            return BlowupResult(False, None, None, 0, method, True,
                                note="no coordinate has c_i > 0 and a_i + c_i > 0",
                                certificate_spec={"kind": "no_blowup", "claim": {"horizon": None},
                                             "witness": {"route": "diagonal-closed-form"}, "method": method})
        t = balls.fraction_of_mid(T)
        lo, hi = enclosure.decimal_bracket(t, digits)
        if not (balls.arb_of(lo) < T and T < balls.arb_of(hi)):
            return BlowupResult(None, None, None, 0, method, False, note="arb ball wider than the bracket")
    if horizon is not None and lo >= horizon:
        return BlowupResult(False, None, None, 0, method, True, horizon=str(horizon),
                            note=f"T* > {enclosure.decimal_str(lo)} ≥ horizon",
                            certificate_spec={"kind": "no_blowup", "claim": {"horizon": horizon},
                                         "witness": {"route": "diagonal-closed-form"}, "method": method})
    claim = {"lower": enclosure.decimal_str(lo), "upper": enclosure.decimal_str(hi)}
    return BlowupResult(True, claim["lower"], claim["upper"], digits, method, True,
                        certificate_spec={"kind": "blowup", "claim": claim,
                                     "witness": {"route": "diagonal-closed-form", "precision_bits": prec},
                                     "method": method})


def _estimate_strings(value: Fraction, err: Fraction) -> tuple[str, str]:
    """The estimate to a few digits below its error, and the error rounded up to 2 significant
    digits plus the estimate's rounding, in scientific notation ("2.9e-11") (so that |T* - shown| ≤ shown error when |T* - value| ≤ err)."""
    e10 = enclosure.floor_log10(err) if err > 0 else enclosure.floor_log10(abs(value)) - 60
    q = Fraction(10) ** (e10 - 3)
    shown = Fraction(round(value / q)) * q
    total = err + abs(shown - value)
    if total == 0:
        return enclosure.decimal_str(shown), "0"
    e = enclosure.floor_log10(total) - 1
    m = str(math.ceil(total / Fraction(10) ** e))      # 2 (or 3, after carrying) digits, rounded up
    return enclosure.decimal_str(shown), f"{m[0]}.{m[1:]}e{e + len(m) - 1}"


def _compactified_route(params: Params, state: Gaussian, digits: int, horizon: Fraction | None,
                        progress) -> BlowupResult:
    """General V: a `blowup_general` certificate (validated flow to near infinity and a Lyapunov
    neighbourhood of the equilibrium at infinity, MATH.md §15) when the planner finds one and the
    checker accepts it; otherwise the norm bound and the labelled estimate of `_general_route`,
    with the reason the rigorous route declined."""
    lb = norm_lower_bound(params, state)
    if lb is None or (horizon is not None and lb >= horizon):
        return _general_route(params, state, digits, horizon, lb)
    out = certify_general_blowup(params, state, digits, progress)
    if out["ok"]:
        c = out["claim"]
        lo, hi = Fraction(c["lower"]), Fraction(c["upper"])
        spec = {"kind": "blowup_general", "claim": c, "witness": out["witness"], "method": out["method"]}
        if out.get("turning"):
            profile = {"rate": "not claimed: the direction keeps turning in the plane below, and ‖Σ(t)‖_F (T* − t) "
                               "oscillates with its phase (floats, not a proof)", "plane": out["plane"],
                       "plane_note": "Σ(t)/⟨C, Σ(t)⟩ approaches rank one in this plane (floats, not a proof)"}
        else:
            profile = {"rate_lower": c["rate_lower"], "rate_upper": c["rate_upper"],
                       "rate": "‖Σ(t)‖_F (T* − t) → C ∈ [rate_lower, rate_upper] (proved)",
                       "direction": out["direction"],
                       "direction_note": "Σ(t)/‖Σ(t)‖_F → this matrix, approximately (floats, not a proof)"}
        # the producer kept only the document the checker accepted: `_checked` need not run it again
        # (the validated flow is most of the route's time)
        cert = out.get("certificate")
        if horizon is None or hi < horizon:
            return BlowupResult(True, c["lower"], c["upper"], out["digits"], out["method"], True,
                                lower_bound=_fmt(lb), certificate_spec=spec, certificate=cert, profile=profile,
                                note=out["reason"])
        if lo >= horizon:
            return BlowupResult(False, None, None, 0, out["method"], True, horizon=str(horizon),
                                lower_bound=c["lower"], certificate_spec=spec, certificate=cert, profile=profile,
                                note=f"T* > {c['lower']} ≥ horizon: no blow-up on [0, {horizon}]")
    if horizon is not None:
        res = _lohner_no_blowup(params, state, horizon)
        if res is not None:
            res.lower_bound = _fmt(lb)
            return res
    res = _general_route(params, state, digits, horizon, lb)
    res.no_blowup_seen = out.get("no_blowup_seen", False)
    why = out["reason"] if not out["ok"] else "the proved bracket straddles the horizon"
    res.note = (res.note + "; " if res.note else "") + f"compactified route not certified: {why}"
    return res


LOHNER_NO_BLOWUP_STEPS = 4000
"""Step budget of the finite-horizon no-blow-up proof by the validated flow (bounds its cost)."""


def _lohner_no_blowup(params: Params, state: Gaussian, horizon: Fraction) -> BlowupResult | None:
    """No blow-up on [0, horizon] for any V: the checker's validated Lohner flow encloses Σ there
    (a `no_blowup` certificate, route lohner), or None when the flow fails within its budget."""
    from riccati_verify.checker import verify_certificate

    method = "validated Lohner flow of the covariance on the horizon (MATH.md §8)"
    witness = {"route": "lohner", "precision_bits": 128,
               "flow": {"order": 30, "jac_order": 10, "tol_bits": 60, "max_steps": LOHNER_NO_BLOWUP_STEPS}}
    claim = {"horizon": horizon}
    doc = make_certificate("no_blowup", claim, params, state, witness, method)
    if not verify_certificate(doc).valid:
        return None
    return BlowupResult(False, None, None, 0, method, True, horizon=str(horizon),
                        certificate_spec={"kind": "no_blowup", "claim": claim, "witness": witness, "method": method},
                        note=f"no blow-up on [0, {horizon}] (validated flow)")


def _general_route(params: Params, state: Gaussian, digits: int, horizon: Fraction | None,
                   lb: Fraction | None) -> BlowupResult:
    """The norm-comparison bound `lb` (`norm_lower_bound`, computed once by the caller) and the
    labelled Taylor estimate."""
    lb_str = _fmt(lb) if lb is not None else None
    if lb is None:
        return BlowupResult(False, None, None, 0, "norm comparison: ‖V‖‖B‖‖Σ0‖ = 0", True,
                            note="the comparison equation is linear, so ‖Σ‖ grows at most exponentially")
    if horizon is not None and lb >= horizon:
        return BlowupResult(False, None, None, 0, "norm comparison lower bound (MATH.md §8)", True,
                            horizon=str(horizon), lower_bound=lb_str, note=f"T* ≥ {lb_str} ≥ horizon")
    t_max = horizon if horizon is not None else lb * 2 ** 20
    est = taylor_blowup_estimate(params, state, digits, t_max=t_max)
    method = ("Taylor series of the moment ODE with Domb-Sykes extrapolation (numerical evidence); "
              "rigorous lower bound by norm comparison")
    if est.blowup and est.value is not None and est.error is not None:
        value, err = _estimate_strings(est.value, est.error)
        note = f"estimate, not a proof: error estimated from the method's own indicators; " \
               f"{est.steps} Taylor steps of order {est.order}" + (f"; {est.note}" if est.note else "")
        return BlowupResult(True, None, None, 0, method, False, lower_bound=lb_str, note=note,
                            estimate=value, error_estimate=err)
    if est.blowup is False and horizon is not None:
        return BlowupResult(False, None, None, 0, method, False, horizon=str(horizon), lower_bound=lb_str,
                            note="numerically bounded up to the horizon (not a proof)")
    return BlowupResult(None, None, None, 0, method, False, lower_bound=lb_str, note=est.note)
