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
eq. 1.1 under them (flow.integrate_segments_mp): a high-precision
measurement.  The verdict (`reach_verdict`) comes from the independent
checker alone: the certificate the result supports is passed through
`verify_certificate`, and only its acceptance makes a result certified or
refuted.

The constructions live in `steering`, the shared control vocabulary in
`controls`, the bounded-controls bracket in `min_time` and the
minimal-energy controls in `min_energy`; this module is the front door
above them (imports point one way: controls <- steering <- min_energy <-
min_time <- reach).
"""

from __future__ import annotations

from fractions import Fraction

from riccati_verify.certify.certificate import make_certificate
from riccati_verify.certify.controls import (CONSTRUCT_DPS, CONTROL_DIGITS, TOLERANCE_DIGITS, VERIFY_DPS,
                                             certificate_tolerance, control_energy, control_segment,
                                             max_control_norm, terminal_error_mp)
from riccati_verify.certify.steering import ReachResult, steer_attention, steer_congruence, with_measures
from riccati_verify.checker import verify_certificate
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian
from riccati_verify.core.progress import Progress
from riccati_verify.core.result import Status

__all__ = ["CONSTRUCT_DPS", "CONTROL_DIGITS", "RANK_ARGUMENT", "TOLERANCE_DIGITS", "VERIFY_DPS", "ReachResult",
           "certificate_tolerance", "common_digits", "control_energy", "control_segment",
           "decimal_bound", "inequality_text", "max_control_norm", "outward_bracket", "reach", "reach_verdict",
           "reachability_certificate", "scientific_up", "steer_attention", "steer_congruence",
           "terminal_error_mp", "unreachable_certificate"]

# The invariance argument the `unreachable_rank` certificate states (MATH.md §3), in the
# producer's own words; the checker holds its own copy and accepts only the argument it knows.
RANK_ARGUMENT = ("Sigma(t) = Phi(t) Sigma0 Phi(t)^T with Phi' = J(t) Phi, Phi(0) = I, J = A + V Sigma B; "
                 "Phi(t) is invertible (det Phi(t) = exp(int tr J) > 0), so rank Sigma(t) = rank Sigma0 "
                 "for every control and every t")

BETWEEN_BOUNDS = "T lies between the rigorous lower bound and the time of the constructed controls"

# ------------------------------------------------------------ outward-rounded printing

def decimal_bound(x: Fraction, places: int, up: bool) -> str:
    """x rounded to `places` decimals, down (floor) or up (ceiling), exactly: the printed number
    is <= x (down) or >= x (up)."""
    x = Fraction(x)
    scale = 10 ** places
    n = -((-x.numerator * scale) // x.denominator) if up else (x.numerator * scale) // x.denominator
    sign, n = ("-", -n) if n < 0 else ("", n)
    if places == 0:
        return f"{sign}{n}"
    digits = str(n).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def inequality_text(x: Fraction, up: bool, *, keeps=None, significant: int = 6, max_significant: int = 60) -> str:
    """x rounded outward (down for a lower bound, up for an upper one) to `significant`
    significant digits (`stability.decimal_str`), more while `keeps(printed value)` is false (the
    printed inequality must stay true), and the exact rational when even `max_significant` digits
    do not do it."""
    from riccati_verify.certify.stability import decimal_str

    x = Fraction(x)
    for sig in range(significant, max_significant + 1):
        text = decimal_str(x, sig, "up" if up else "down")
        if keeps is None or keeps(Fraction(text)):
            return text
    return str(x)


def scientific_up(x: Fraction, significant: int = 2) -> str:
    """x >= 0 rounded up to `significant` significant digits in scientific notation (``8.8e-31``):
    the printed number is >= x (`stability.decimal_str` rounds; the exponent form is exact)."""
    from decimal import Decimal

    from riccati_verify.certify.stability import decimal_str

    x = Fraction(x)
    if x <= 0:
        return str(x)
    return f"{Decimal(decimal_str(x, significant, 'up')):.{significant - 1}e}".replace("e+", "e")


def outward_bracket(lower: Fraction, upper: Fraction, extra: int = 1) -> tuple[str, str]:
    """The ends of a proved bracket [lower, upper] as decimals, lower rounded down and upper
    rounded up, to the first decimal place at which they can differ (plus `extra`): the printed
    interval contains the proved one (`app.output.enclosure_text` prints them as a half-open bracket)."""
    lo, hi = Fraction(lower), Fraction(upper)
    if lo >= hi:
        return str(lo), str(hi)
    places = extra + max(0, -_floor_log10(hi - lo))      # the first decimal place where the ends can differ
    return decimal_bound(lo, places, False), decimal_bound(hi, places, True)


def _floor_log10(x: Fraction) -> int:
    """⌊log10 x⌋ for a rational x > 0, exactly (the digit counts give it to within one)."""
    e = len(str(x.numerator)) - len(str(x.denominator))
    return e - 1 if Fraction(10) ** e > x else e


def common_digits(lower: str, upper: str) -> str:
    """The leading characters two printed ends of a bracket share, cut back to whole digits: every
    number between the ends starts with them (decimal truncation is monotone).  Empty unless the
    whole integer part is shared (a shared "12" of 123.4 and 125.6 would read as twelve)."""
    n = 0
    while n < min(len(lower), len(upper)) and lower[n] == upper[n]:
        n += 1
    shared = lower[:n]
    return shared.rstrip(".") if "." in shared else ""


# ------------------------------------------------------------ bounded controls

def _reach_bounded(state0: Gaussian, target: Gaussian, T: Fraction, M: Fraction, control_class: str,
                   verify: bool, dps: int, min_time_segments: int | None = None) -> ReachResult:
    """The minimal-time bracket at T; its controls (norms ≤ M exactly) when T ≥ T_upper."""
    from riccati_verify.certify.min_time import admissible, min_time_bracket

    br = (min_time_bracket(state0, target, M, control_class) if min_time_segments is None
          else min_time_bracket(state0, target, M, control_class, min_time_segments)).at(T)
    r = state0.rank
    mode = f"bounded controls (B = V = 0, norms <= {M}; {control_class} class bounds)"
    if T < br.lower.time:
        low = inequality_text(br.lower.time, False, keeps=lambda x: x > T)
        res = ReachResult(False, f"the norm bound makes the target unreachable in time T: rigorous lower bound "
                                 f"{low} > T ({br.lower.reason})", mode, [], r, r)
    elif T >= br.upper.time:
        segs = br.controls(T)
        up = inequality_text(br.upper.time, True, keeps=lambda x: T >= x)
        res = with_measures(ReachResult(True, f"T >= T_upper = {up}: controls with norms "
                                              f"<= {M} (checked exactly) reach the target", mode, segs, r, r,
                                        f"{br.upper.route}; mean: {br.upper.mean}", False,
                                        any(x for s in segs for x in s.params.b)))
        if verify:
            res.terminal_error = float(terminal_error_mp(res.segments, state0, target, dps))
    else:
        low, up = inequality_text(br.lower.time, False), inequality_text(br.upper.time, True)
        res = ReachResult(False, f"not certified under the bound: T lies in the bracket "
                                 f"[{low}, {up}] of the minimal time",
                          mode, [], r, r)
    res.bound = br.report(T)
    if res.reachable:   # the published (rescaled) controls themselves, in exact arithmetic
        res.bound["controls_within_max_norm"] = all(admissible(s.params, M, control_class) for s in res.segments)
    res.min_time = br
    return res


# ---------------------------------------------------------------- front door

def _check_query(state0: Gaussian, target: Gaussian, T: Fraction, attention_only: bool,
                 max_norm: Fraction | None) -> None:
    if state0.dim != target.dim:
        raise InputError(f"the target has d = {target.dim} but the initial state has d = {state0.dim}")
    if not T > 0:
        raise InputError(f"time must be positive, got {T}")
    if max_norm is not None and attention_only:
        raise InputError("a norm bound applies to the congruence (B = V = 0) controls, not to attention-only "
                         "controls")
    if max_norm is not None and not max_norm > 0:
        raise InputError(f"the norm bound must be positive, got {max_norm}")


def reach(state0: Gaussian, target: Gaussian, T: Fraction, *, attention_only: bool = False,
          max_norm: Fraction | None = None, control_class: str = "congruence", verify: bool = True,
          dps: int = VERIFY_DPS, min_time_segments: int | None = None) -> ReachResult:
    """Controls that steer N(m0, Σ0) exactly to N(m1, Σ1) at time T, or the reason none exist.

    Conventions: the moment flow of eq. 1.1, whose attention kernel is exp(⟨Bx, y⟩) with x the
    query token and y a key, B = KᵀQ; the controls θ = (A, B, V, b) are piecewise constant, exact
    rationals.  This routine constructs; it proves nothing: `reach_verdict` passes the result's
    certificate through the independent checker and gives the verdict.

    Parameters
    ----------
    state0, target : Gaussian
        The initial state and the target (exact rational mean and covariance, the same d).
    T : Fraction
        The horizon, T > 0.
    attention_only : bool
        Steer with A = 0 (a V = I Riccati segment for Σ, then V for the mean); needs invertible
        covariances.  Default: congruence controls (B = V = 0).
    max_norm : Fraction or None
        A bound M on ‖A‖₂, ‖B‖₂, ‖V‖₂ and |b|₂: report the certified bracket of the minimal time
        (`min_time`) and its controls when T ≥ T_upper.  Not with `attention_only`.
    control_class : {"congruence", "full"}
        With `max_norm`: the controls the lower bound covers.
    verify : bool
        Re-integrate eq. 1.1 under the controls at `dps` digits (`terminal_error`).
    dps : int
        Digits of that re-integration.
    min_time_segments : int or None
        With `max_norm`: K equal segments of min_time's optimised T_upper route; 0 = the explicit
        construction only; None = min_time's default.

    Returns
    -------
    ReachResult
        `reachable`, `reason`, the controls (`segments`), ranks, the route (`factorisation`), the
        float measures, `terminal_error` (a measurement, not a proof), and with `max_norm` the
        bracket (`bound`, `min_time`).  Its `status` stays NOT_CERTIFIED (nothing checked yet).

    Raises
    ------
    InputError
        Dimensions differ, T ≤ 0, a non-positive norm bound, or a norm bound with attention-only
        controls; attention-only controls for a singular covariance.
    """
    _check_query(state0, target, T, attention_only, max_norm)
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
    """The `unreachable_rank` document: the ranks differ, and rank is invariant under the flow
    (for every control and every horizon), so the checker needs only the exact ranks."""
    claim = {**_state_claim(target), "rank_initial": state0.rank, "rank_target": target.rank,
             "statement": "no controls (A, B, V, b)(t) and no T > 0 steer the initial Gaussian to the target"}
    return make_certificate("unreachable_rank", claim, None, state0,
                            {"invariant": "rank", "argument": RANK_ARGUMENT},
                            "exact rank over Q of both covariances; rank invariance of the moment flow")


def reachability_certificate(res: ReachResult, state0: Gaussian, target: Gaussian, T: Fraction,
                             tol: Fraction, max_norm: Fraction | None = None) -> dict:
    """The `reachability` document for reaching controls: the checker encloses their terminal state
    in balls.  `max_norm` (optional) adds the claim that every control has ‖·‖₂ ≤ max_norm
    (checked exactly)."""
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


# ---------------------------------------------------------------- the verdict

def _min_energy_report(e, K: int, cert_res: ReachResult) -> dict:
    return {"segments": K, "control_class": e.control_class, "energy": e.energy,
            "constructive_energy": e.constructive_energy,
            "energy_ratio": e.energy / e.constructive_energy if e.constructive_energy else None,
            "terminal_error": e.terminal_error, "terminal_error_dps": e.terminal_error_dps,
            "constraint_error": e.constraint_error, "kkt_residual": e.kkt_residual,
            "iterations": e.iterations, "polish_steps": e.polish_steps, "converged": e.converged,
            "reaches_target": cert_res.reachable, "reaches_target_reason": cert_res.reason,
            "seconds": e.seconds, "optimality": "KKT point (local stationary point), not a proven global minimum",
            "controls": cert_res.controls()}


def reach_verdict(state0: Gaussian, target: Gaussian, T: Fraction, *, attention_only: bool = False,
                  max_norm: Fraction | None = None, control_class: str = "congruence", dps: int = VERIFY_DPS,
                  min_time_segments: int | None = None, min_energy_segments: int | None = None,
                  progress: Progress | None = None, tolerance: Fraction | None = None) -> ReachResult:
    """`reach`, then the verdict of the independent checker on the document the result supports.

    A "reached" claim is certified only by the checker's ball-arithmetic enclosure, never by the
    mpmath re-integration alone, so every query emits its certificate (reachability, unreachable_rank
    or unreachable_in_time) and passes it through `verify_certificate`:

    * CERTIFIED: reaching controls whose `reachability` document the checker accepts;
    * REFUTED: an unreachability document (rank obstruction, or T below the rigorous lower bound
      of the minimal time) that the checker accepts;
    * CONFIRMED_NUMERICALLY: reaching controls whose document the checker refused, but whose
      re-integrated terminal error is below the certificate's tolerance;
    * NOT_CERTIFIED: anything else (T inside the bracket of the minimal time, controls that miss
      the tolerance or come from a non-converged minimal-energy solve: no document).

    The claim's tolerance is `tolerance`, by default `certificate_tolerance(dps=dps)` (1e-30 at
    the default digits): fixed before the controls are measured.  Controls whose re-integrated
    terminal error is above it, and minimal-energy controls whose SQP did not converge, get no
    document and stay NOT_CERTIFIED.

    Parameters
    ----------
    state0, target, T, attention_only, max_norm, control_class, dps, min_time_segments
        As for `reach` (the re-integration is always on).
    min_energy_segments : int or None
        Also minimise the energy ∫‖θ‖² dt over about this many segments (`min_energy`, rounded to
        a multiple of the construction's segments), starting from the constructed controls; the
        certificate then covers those controls.  Not with `attention_only` or `max_norm`.
    progress : Progress or None
        Counts the stages: construction (or bracket), minimal energy (when asked), certificate.
    tolerance : Fraction or None
        The reachability claim's tolerance (max entry error), 0 < tolerance <= 1; None: the
        default above.  Choose it before looking at the measured error.

    Returns
    -------
    ReachResult
        The construction's result with `status`, `status_reason` (the checker's reason),
        `certificate` (the accepted document, else None), `certificate_check`, `certificate_kind`,
        `terminal_error_dps`, and `min_energy` / `min_energy_result` when asked for.
    """
    if min_energy_segments is not None and attention_only:
        raise InputError("minimal-energy controls start from the congruence construction, not from "
                         "attention-only controls")
    if min_time_segments is not None and max_norm is None:
        raise InputError("the segments of the optimised minimal-time route need a norm bound")
    if min_energy_segments is not None and max_norm is not None:
        raise InputError("minimal-energy controls are optimised without a norm bound")
    if tolerance is not None and not 0 < tolerance <= 1:
        raise InputError(f"the tolerance must lie in (0, 1], got {tolerance}")
    tol = certificate_tolerance(dps=dps) if tolerance is None else Fraction(tolerance)
    step = progress.step if progress is not None else (lambda note: None)
    res = reach(state0, target, T, attention_only=attention_only, max_norm=max_norm, control_class=control_class,
                dps=dps, min_time_segments=min_time_segments)
    res.terminal_error_dps = dps
    step("minimal-time bracket" if max_norm is not None else "controls constructed and re-integrated")
    cert_res = res
    if min_energy_segments and res.reachable:
        from riccati_verify.certify import min_energy as ME

        K = ME.grid_segments(res.segments, min_energy_segments)
        e = ME.minimal_energy(state0, target, res.segments, n_segments=K, control_class=control_class,
                              verify_dps=dps)
        cert_res = ME.as_reach_result(e, state0, target, tolerance=tol)
        res.min_energy, res.min_energy_result = _min_energy_report(e, K, cert_res), cert_res
    if min_energy_segments:
        step("minimal-energy controls" if res.min_energy else "minimal energy skipped (not reached)")
    missed = None     # why reaching controls get no document
    if cert_res.reachable and (cert_res.terminal_error is None or not cert_res.terminal_error <= tol):
        missed = (f"the re-integration ({dps} digits) measured a terminal error of {cert_res.terminal_error:.3e}, "
                  f"above the tolerance {tol} fixed in advance; no certificate is issued"
                  if cert_res.terminal_error is not None else
                  "the terminal error was not measured; no certificate is issued")
    elif res.reachable and not cert_res.reachable:
        missed = f"{cert_res.reason}; no certificate is issued"
    if missed is not None:
        cert = None
    elif cert_res.reachable:
        cert = reachability_certificate(cert_res, state0, target, T, tol, max_norm=max_norm)
    elif res.rank_initial != res.rank_target:
        cert = unreachable_certificate(state0, target)
    elif res.min_time is not None and T < res.min_time.lower.time:
        cert = res.min_time.at(T).certificate
    else:
        cert = None
    chk = verify_certificate(cert) if cert is not None else None
    if chk is not None and chk.valid:
        res.status = Status.CERTIFIED if cert_res.reachable else Status.REFUTED
        res.certificate = cert
    elif chk is not None and cert_res.reachable:    # measured within tol (else no document), not proved
        res.status = Status.CONFIRMED_NUMERICALLY
    else:
        res.status = Status.NOT_CERTIFIED
    res.status_reason = chk.reason if chk is not None else missed or BETWEEN_BOUNDS
    res.certificate_check = chk
    res.certificate_kind = cert["claim"]["kind"] if cert is not None else None
    step("certificate checked" if cert is not None else "no certificate (not certified)")
    return res
