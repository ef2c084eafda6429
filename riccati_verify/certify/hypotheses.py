"""Exact predicates for the hypotheses of the seed theorems.

Every predicate returns a `HypothesisCheck(name, holds, witness)`:

- `holds` is True or False only when decided exactly (rational arithmetic,
  Sylvester's law of inertia, the Ostrowski–Schneider inertia theorem), and
  None when the exact test could not decide;
- `witness` holds the data that decided it (LDLᵀ pivots, an inertia, a
  Lyapunov matrix), as exact values, so a reader can re-check it.

Definiteness always refers to the symmetric part M_s = (M + Mᵀ)/2, which is
what the quadratic forms xᵀMx see.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from riccati_verify.core import exact
from riccati_verify.core.exact import ldl_pivots
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import Status


__all__ = ["HypothesisCheck", "all_hold", "anti_hurwitz", "attention_term_vanishes", "definiteness",
           "eigen_inertia", "gaussian_state", "ldl_pivots", "opposite_signs", "same_signs", "solution_exists",
           "solution_exists_on_horizon", "spectral_abscissa_sign", "state_positive_definite", "sym_definiteness",
           "v_is_scalar", "v_times_b_sign"]


@dataclass(frozen=True)
class HypothesisCheck:
    """One hypothesis decided on given parameters, in the package's result protocol.

    `holds` keeps the three-valued answer the theorems are written in (True,
    False, None = undecided); `status` is the same answer as a `Status`: a
    hypothesis proved to hold is certified, one proved to fail is refuted.
    """

    name: str
    holds: bool | None
    witness: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> Status:
        """CERTIFIED if proved to hold, REFUTED if proved to fail, NOT_CERTIFIED if undecided."""
        return {True: Status.CERTIFIED, False: Status.REFUTED}.get(self.holds, Status.NOT_CERTIFIED)

    @property
    def certificate(self) -> None:
        """No certificate document: the witness is re-checkable data, not a `verify` document."""
        return None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the commands print: name, holds, witness."""
        return {"name": self.name, "holds": self.holds, "witness": self.witness}


def all_hold(checks: list[HypothesisCheck]) -> tuple[Status, list[str], list[str]]:
    """(status, failed names, undecided names) of a theorem's hypothesis list.

    The verdict of the `hypotheses` command lives here: certified only when every
    hypothesis is proved; refuted when one is proved to fail; else not certified.
    """
    failed = [c.name for c in checks if c.holds is False]
    undecided = [c.name for c in checks if c.holds is None]
    status = Status.REFUTED if failed else (Status.NOT_CERTIFIED if undecided else Status.CERTIFIED)
    return status, failed, undecided


# ---------------------------------------------------------------------------
# definiteness


def definiteness(M: exact.Matrix) -> str:
    """'positive definite', 'negative definite', 'positive semidefinite',
    'negative semidefinite', 'zero' or 'indefinite', of the symmetric part, exactly."""
    plus, minus, zero = exact.ldl_inertia(exact.sym_part(M))
    n = len(M)
    if plus == n:
        return "positive definite"
    if minus == n:
        return "negative definite"
    if zero == n:
        return "zero"
    if minus == 0:
        return "positive semidefinite"
    if plus == 0:
        return "negative semidefinite"
    return "indefinite"


def _sign_of(kind: str) -> int:
    """+1 / −1 for a (semi)definite kind, 0 otherwise: the seed sign rules compare these."""
    return {"positive definite": 1, "positive semidefinite": 1,
            "negative definite": -1, "negative semidefinite": -1}.get(kind, 0)


def sym_definiteness(M: exact.Matrix, name: str = "M") -> HypothesisCheck:
    """'M_s is definite' (either sign), with the exact inertia and LDLᵀ pivots as witness."""
    S = exact.sym_part(M)
    kind = definiteness(M)
    inertia = exact.ldl_inertia(S)
    return HypothesisCheck(
        f"{name}_s definite", kind in ("positive definite", "negative definite"),
        {"definiteness": kind, "inertia": list(inertia),
         "ldl_pivots": [exact.frac_to_str(p) for p in ldl_pivots(S)]})


def _sign_pair(params: Params) -> tuple[str, str]:
    return definiteness(params.V), definiteness(params.B)


def opposite_signs(params: Params) -> HypothesisCheck:
    """V_s and B_s definite with opposite signs (the seed's equilibrium hypothesis)."""
    kv, kb = _sign_pair(params)
    definite = ("positive definite", "negative definite")
    holds = kv in definite and kb in definite and _sign_of(kv) == -_sign_of(kb)
    return HypothesisCheck("V_s, B_s definite with opposite signs", holds, {"V_s": kv, "B_s": kb})


def same_signs(params: Params) -> HypothesisCheck:
    """V_s and B_s definite with the same sign (the seed's blow-up hypothesis)."""
    kv, kb = _sign_pair(params)
    definite = ("positive definite", "negative definite")
    holds = kv in definite and kb in definite and _sign_of(kv) == _sign_of(kb)
    return HypothesisCheck("V_s, B_s definite with the same sign", holds, {"V_s": kv, "B_s": kb})


def v_is_scalar(params: Params) -> HypothesisCheck:
    """V = vI exactly (the Riccati-reducible class, MATH.md §7)."""
    v = params.V_scalar
    return HypothesisCheck("V = vI", v is not None, {"v": exact.frac_to_str(v)} if v is not None else {})


def v_times_b_sign(params: Params) -> HypothesisCheck:
    """For V = vI: the definiteness of v·B_s (the sign that matters in §7)."""
    v = params.V_scalar
    if v is None:
        return HypothesisCheck("v·B_s definiteness (V = vI)", None, {"reason": "V is not scalar"})
    kind = definiteness(exact.scale(v, params.B))
    return HypothesisCheck("v·B_s definiteness (V = vI)", kind != "indefinite", {"definiteness": kind})


# ---------------------------------------------------------------------------
# spectra, decided exactly


INERTIA_METHOD = "Routh table of det(sI - A), else Ostrowski-Schneider inertia of A^T P + P A = I"


def eigen_inertia(A: exact.Matrix) -> tuple[int, int] | None:
    """(#eigenvalues with Re > 0, #with Re < 0), exactly, or None.

    First Routh's table of the characteristic polynomial (`exact.routh_inertia`: a
    charpoly and O(d²) exact steps); in its singular case Ostrowski–Schneider: if
    AᵀP + PA = I has a symmetric solution P then A has no eigenvalue on the imaginary
    axis and In(A) = In(P).  The solution is unique and exists iff λ_i + λ_j ≠ 0 for
    all eigenvalue pairs; otherwise None (then A is certainly not Hurwitz and not
    anti-Hurwitz).  Either step past its work budget raises WorkBudgetExceeded: undecided,
    never None.
    """
    routh = exact.routh_inertia(A)
    if routh is not None:
        return routh
    P = exact.lyapunov_solve(A, exact.identity(len(A)))
    if P is None:
        return None
    plus, minus, zero = exact.ldl_inertia(P)
    assert zero == 0  # AᵀP + PA = I forces P invertible
    return plus, minus


def spectral_abscissa_sign(A: exact.Matrix, name: str = "A", shifts: int = 40) -> HypothesisCheck:
    """The sign of α(A) = max Re λ(A); `holds` says 'A is Hurwitz' (α < 0).

    witness['sign'] is -1 or +1 when proved, 0 when α = 0 is proved (A = 0
    or α ∈ [0, 2^-shifts] is all that could be shown: then 'sign_bound'
    holds the upper bound).  Proofs: the exact inertia of A (above); when the
    Lyapunov operator of A is singular, α ≥ 0 is certain (λ_i + λ_j = 0 with
    Re λ < 0 is impossible) and shifted matrices A − εI decide α > ε.
    """
    label = f"{name} Hurwitz (max Re λ < 0)"
    d = len(A)
    inert = eigen_inertia(A)
    if inert is not None:
        plus, minus = inert
        sign = -1 if plus == 0 else 1
        return HypothesisCheck(label, sign < 0, {"sign": sign, "inertia_re_pos_neg": [plus, minus],
                                                 "method": INERTIA_METHOD})
    if all(x == 0 for r in A for x in r):
        return HypothesisCheck(label, False, {"sign": 0, "method": "A = 0"})
    for k in range(1, shifts + 1):
        eps = Fraction(1, 2 ** k)
        inert = eigen_inertia(exact.sub(A, exact.identity(d, eps)))
        if inert is not None and inert[0] > 0:
            return HypothesisCheck(label, False, {"sign": 1, "shift": exact.frac_to_str(eps),
                                                  "method": "inertia of A - eps I has an eigenvalue with Re > eps"})
    return HypothesisCheck(label, False, {"sign": 0, "sign_bound": f"0 <= max Re lambda <= 2^-{shifts}",
                                          "method": "singular Lyapunov operator (alpha >= 0) and shifted inertia"})


def anti_hurwitz(A: exact.Matrix, name: str = "A") -> HypothesisCheck:
    """Every eigenvalue of A has Re > 0 (i.e. −A Hurwitz), exactly."""
    inert = eigen_inertia(A)
    holds = inert is not None and inert[1] == 0
    return HypothesisCheck(f"Re λ({name}) > 0 for all eigenvalues", holds,
                           {"inertia_re_pos_neg": list(inert) if inert else None,
                            "method": INERTIA_METHOD})


def state_positive_definite(state: Gaussian) -> HypothesisCheck:
    """'Σ0 ≻ 0', exactly: the Riccati reduction P = Σ⁻¹ and the seed theorems need an invertible start."""
    return HypothesisCheck("Σ0 positive definite", exact.is_pd(state.cov), {"rank": state.rank})


# ---------------------------------------------------------------------------
# existence of the solution (no blow-up), decided by the rigorous blow-up routes


def solution_exists(params: Params, state: Gaussian, time: Fraction | None = None) -> HypothesisCheck:
    """'Σ(t) exists on [0, time]' (for all t ≥ 0 when time is None), decided rigorously.

    holds is True for a proved no-blow-up (on the horizon or forever), for a proved blow-up
    bracket T* ∈ (lower, upper] with lower ≥ time, or for a rigorous lower bound ≥ time; False
    for a proved bracket with lower < time (or any proved blow-up when time is None); None
    otherwise.  Uses `riccati_verify.certify.blowup.blowup_time` (Radon/arb for V = vI, diagonal closed
    form, norm comparison for general V)."""
    from riccati_verify.certify.blowup import blowup_time

    name = ("the solution exists for all t >= 0 (no blow-up)" if time is None
            else f"the solution exists on [0, {exact.frac_to_str(Fraction(time))}] (no blow-up)")
    res = blowup_time(params, state, digits=10, horizon=time)
    w: dict[str, Any] = {"method": res.method, "rigorous": res.rigorous}
    w.update({k: getattr(res, k) for k in ("lower", "upper", "lower_bound", "horizon") if getattr(res, k)})
    if res.note:
        w["note"] = res.note
    if res.rigorous and res.blowup is False:
        return HypothesisCheck(name, True, w)
    if res.rigorous and res.blowup:
        return HypothesisCheck(name, time is not None and Fraction(res.lower) >= time, w)
    if time is not None and res.lower_bound is not None and Fraction(res.lower_bound) >= time:
        return HypothesisCheck(name, True, w)   # rigorous lower bound T* ≥ lower_bound ≥ time
    return HypothesisCheck(name, None, w)


def solution_exists_on_horizon(params: Params, state: Gaussian, time: Fraction | None) -> HypothesisCheck:
    """'No blow-up on [0, T]' for a theorem stated on a horizon T.

    With a horizon this is `solution_exists(…, time)`.  Without one, a proof of existence for
    all t ≥ 0 settles every T; anything else leaves the hypothesis undecided (holds None), since
    whether it holds depends on T: the witness names the missing quantity (`missing`: "time") and
    the front end says how to give it."""
    if time is not None:
        return solution_exists(params, state, time)
    h = solution_exists(params, state, None)
    if h.holds:
        return h
    w = dict(h.witness, reason="the hypothesis depends on the horizon T", missing="time")
    return HypothesisCheck("the solution exists on [0, T] (no blow-up)", None, w)


def gaussian_state(state: Gaussian, name: str = "Σ0") -> HypothesisCheck:
    """'N(m, Σ) is a Gaussian law': Σ symmetric PSD, with the exact inertia and LDLᵀ pivots as witness."""
    plus, minus, zero = exact.ldl_inertia(state.cov)
    return HypothesisCheck(f"{name} symmetric positive semidefinite (a Gaussian law)",
                           exact.is_symmetric(state.cov) and minus == 0,
                           {"inertia": [plus, minus, zero], "rank": state.rank,
                            "ldl_pivots": [exact.frac_to_str(p) for p in ldl_pivots(state.cov)]})


def attention_term_vanishes(params: Params, state: Gaussian) -> HypothesisCheck:
    """'V Σ̃(t) B = 0 for all t', Σ̃(t) = e^{At} Σ0 e^{Aᵀt}: then J = A + VΣB ≡ A along the flow
    (the attention term never switches on, whatever scalar factor multiplies Σ̃).

    Decided exactly: vec Σ̃(t) = e^{(A⊕A)t} vec Σ0, so t ↦ V Σ̃(t) B vanishes identically iff
    V X_k B = 0 for k < d², X_0 = Σ0, X_{k+1} = A X_k + X_k Aᵀ (Cayley–Hamilton for A⊕A)."""
    A, V, B = params.A, params.V, params.B
    d = params.dim
    X = state.cov
    At = exact.transpose(A)
    for k in range(d * d):
        M = exact.matmul(exact.matmul(V, X), B)
        if any(x for r in M for x in r):
            return HypothesisCheck("V Σ(t) B ≡ 0 (J = A constant)", False,
                                   {"k": k, "V_X_k_B": [[exact.frac_to_str(x) for x in r] for r in M],
                                    "method": "X_0 = Sigma0, X_{k+1} = A X_k + X_k A^T; V X_k B != 0"})
        X = exact.add(exact.matmul(A, X), exact.matmul(X, At))
    return HypothesisCheck("V Σ(t) B ≡ 0 (J = A constant)", True,
                           {"checked_k": f"0..{d * d - 1}",
                            "method": "V X_k B = 0 for k < d^2 (Cayley-Hamilton on A (+) A)"})
