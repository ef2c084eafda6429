"""Family claims: one certificate for a whole box of parameters (MATH.md §5-§7).

`certify_family(box)` proposes, for an interval box (`core.box.ParamBox`), the claims the
independent checker can re-verify over every member, builds their certificates and learns
whether each holds only from `verify_certificate`:

- ``family_sign``: V_s and B_s definite with fixed signs (Rohn's vertex test; no witness);
- ``family_scalar`` (d = 1): the regime from the closed form, with a T* bracket for blow-up;
- ``family_riccati`` (V = vI): equilibrium, collapse or blow-up for every member and every
  Σ0 ≻ 0, or collapse from the given Σ0, with one common Lyapunov matrix Y for the A-box,
  from the Lyapunov equation at the centre (scipy) or, where that fails, the LMI on the
  vertices (cvxpy, Clarabel), rounded to rationals;
- ``family_blowup`` (V = vI, v B_s ⪰ 0, one exact Σ0): T* ∈ (lower, upper] for every member,
  from float T* estimates at the vertices, widened and subdivided until the checker accepts;
- ``family_stability`` (any V): every member has one equilibrium in a ball (parametric
  Krawczyk) that one common Lyapunov matrix X proves locally stable; the ball from Newton at
  the centre and the vertices, X from the Lyapunov equation at the centre (or the LMI).

Floats only propose; a claim is certified only when the checker accepts its certificate.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from riccati_verify.checker import verify_certificate
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.core import box as bx
from riccati_verify.core import exact
from riccati_verify.core.bernoulli import scalar_blowup_time
from riccati_verify.core.io import box_to_dict
from riccati_verify.core.result import Status

__all__ = ["FamilyClaim", "FamilyResult", "REGIMES", "certify_family", "family_certificate"]

REGIMES = ("equilibrium", "blowup", "collapse", "growth")
_DYNAMIC_KINDS = ("family_scalar", "family_riccati", "family_blowup")


@dataclass
class FamilyClaim:
    """One claim about the whole box, its certificate, and the checker's verdict on it."""

    kind: str
    claim: dict
    valid: bool
    reason: str
    certificate: dict

    def to_dict(self) -> dict:
        """JSON form (the certificate by its kind only)."""
        return {"kind": self.kind, "claim": self.claim, "valid": self.valid, "reason": self.reason}


@dataclass
class FamilyResult:
    """What is proved about every member of a box: the regime (or 'undetermined') and the claims tried."""

    regime: str
    claims: list[FamilyClaim] = field(default_factory=list)
    note: str = ""

    @property
    def certified_claims(self) -> list[FamilyClaim]:
        """The claims the checker accepted."""
        return [c for c in self.claims if c.valid]

    @property
    def status(self) -> Status:
        """CERTIFIED when some claim holds for the whole box (`regime` says whether one is a
        regime), else NOT_CERTIFIED."""
        return Status.CERTIFIED if self.certified_claims else Status.NOT_CERTIFIED

    @property
    def certificate(self) -> dict | None:
        """The certificate of the regime (a blow-up bracket preferred), or of the sign claim, or None."""
        good = self.certified_claims
        order = {"family_blowup": 0, "family_scalar": 1, "family_riccati": 2, "family_stability": 3, "family_sign": 4}
        return min(good, key=lambda c: order[c.kind]).certificate if good else None

    @property
    def bracket(self) -> tuple[str, str] | None:
        """(lower, upper) of a certified blow-up time bracket, if any."""
        for c in self.certified_claims:
            if "lower" in c.claim:
                return c.claim["lower"], c.claim["upper"]
        return None

    def to_dict(self) -> dict:
        """JSON form."""
        return {"status": str(self.status), "regime": self.regime, "bracket": self.bracket, "note": self.note,
                "claims": [c.to_dict() for c in self.claims],
                "certificate_kind": self.certificate["claim"]["kind"] if self.certificate else None}


def family_certificate(kind: str, claim: dict, box: bx.ParamBox, witness: dict, method: str) -> dict:
    """The certificate document of a family claim: the envelope with the box as its params."""
    doc = make_certificate(kind, claim, None, None, witness, method)
    doc["params"] = box_to_dict(box)
    return doc


def _try(box: bx.ParamBox, kind: str, claim: dict, witness: dict, method: str) -> FamilyClaim:
    doc = family_certificate(kind, claim, box, witness, method)
    res = verify_certificate(doc)
    return FamilyClaim(kind, doc["claim"], res.valid, res.reason, doc)


def _down(x: float, rel: float) -> Fraction:
    """A dyadic rational below x (1 - rel)."""
    y = x * (1 - rel) if x > 0 else x * (1 + rel)
    return Fraction(math.floor(y * 2 ** 40), 2 ** 40)


def _up(x: float, rel: float) -> Fraction:
    y = x * (1 + rel) if x > 0 else x * (1 - rel)
    return Fraction(math.ceil(y * 2 ** 40), 2 ** 40)


# --------------------------------------------------------------------------- sign regime

def _sign_claim(box: bx.ParamBox) -> FamilyClaim | None:
    params, _ = box.member()
    names = {}
    for nm, M in (("V", params.V), ("B", params.B)):
        S = exact.sym_part(M)
        if exact.is_pd(S):
            names[nm] = "positive_definite"
        elif exact.is_pd(exact.scale(-1, S)):
            names[nm] = "negative_definite"
        else:
            return None
    return _try(box, "family_sign", names, {"route": "rohn"}, "Rohn's vertex test on the symmetric parts")


# --------------------------------------------------------------------------- d = 1

def _diagonal(box: bx.ParamBox) -> bool:
    """d = 1, or A, B, V and Σ0 diagonal for every member, with σ0 > 0 in every coordinate."""
    if box.cov is None or any(box.cov[i][i][0] <= 0 for i in range(box.dim)):
        return False
    return all(M[i][j] == (0, 0) for M in (box.A, box.B, box.V, box.cov)
               for i in range(box.dim) for j in range(box.dim) if i != j)


def _scalar_claims(box: bx.ParamBox, precision: int) -> list[FamilyClaim]:
    """The decoupled scalar equations of a d = 1 or diagonal box: a T* bracket from the extreme
    corners of the coordinates that blow up on the whole box, else the other regimes in turn."""
    fast, slow = [], []
    for i in range(box.dim):
        a = box.A[i][i]
        k = bx.product_range(bx.product_range(box.V[i][i], box.B[i][i]), box.cov[i][i])
        try:
            if k[1] > 0 and a[1] + k[1] > 0:          # some member's coordinate i blows up
                fast.append(float(scalar_blowup_time(a[1], k[1])))
            if k[0] > 0 and a[0] + k[0] > 0:          # every member's does
                slow.append(float(scalar_blowup_time(a[0], k[0])))
        except (OverflowError, ZeroDivisionError, ValueError):
            return []
    out = []
    if slow:
        fast, slow = min(fast), min(slow)
        for rel in (1e-9, 1e-6):
            claim = {"regime": "blowup", "lower": exact.frac_to_str(_down(fast, rel)),
                     "upper": exact.frac_to_str(_up(slow, rel))}
            out.append(_try(box, "family_scalar", claim, {"precision_bits": precision},
                            "closed form at the extreme corners (monotone in a and v beta sigma0)"
                            + ("" if box.dim == 1 else ", diagonal: earliest coordinate")))
            if out[-1].valid:
                break
        return out
    for regime in ("collapse", "equilibrium", "growth"):
        cl = _try(box, "family_scalar", {"regime": regime}, {}, "closed form, exact interval bounds"
                  + ("" if box.dim == 1 else ", diagonal: one scalar regime per coordinate"))
        if cl.valid or "no single scalar regime" in cl.reason:
            return [cl]          # (the latter: no claim can hold)
    return out


# --------------------------------------------------------------------------- V = vI, d >= 2

def _float(M) -> np.ndarray:
    return np.array([[float(x) for x in r] for r in M], dtype=float)


def _rational_sym(Y: np.ndarray) -> list[list[str]]:
    d = len(Y)
    Q = [[Fraction(float(Y[i][j])).limit_denominator(2 ** 24) for j in range(d)] for i in range(d)]
    return [[exact.frac_to_str((Q[i][j] + Q[j][i]) / 2) for j in range(d)] for i in range(d)]


def _lyapunov_center(A: np.ndarray, stable: int) -> list[list[str]] | None:
    """Y with AᵀY + YA = -stable·I at the centre A (scipy)."""
    from scipy.linalg import solve_continuous_lyapunov

    d = len(A)
    try:
        with warnings.catch_warnings():      # a near-singular equation: the checker rejects its Y anyway
            warnings.simplefilter("ignore", RuntimeWarning)
            Y = solve_continuous_lyapunov(A.T, -stable * np.eye(d))
    except (ValueError, np.linalg.LinAlgError):
        return None
    if not np.all(np.isfinite(Y)):
        return None
    Y = (Y + Y.T) / 2
    return _rational_sym(Y / max(np.abs(Y).max(), 1e-300))


def _lyapunov_lmi(box: bx.ParamBox, stable: int) -> list[list[str]] | None:
    """A common Y on the vertices of the A-box: Y ⪰ I, stable·(AᵢᵀY + YAᵢ) ⪯ -I (cvxpy, Clarabel)."""
    try:
        import cvxpy as cp
    except ImportError:
        return None
    d = box.dim
    Y = cp.Variable((d, d), symmetric=True)
    cons = [Y >> np.eye(d)]
    for A in bx.vertex_matrices(box.A):
        Af = _float(A)
        cons.append(stable * (Af.T @ Y + Y @ Af) << -np.eye(d))
    return _solve_rounded(cp.Problem(cp.Minimize(cp.trace(Y)), cons), Y)


def _quadratic_vanishes_at_centre(box: bx.ParamBox) -> bool:
    """VΣBΣ + ΣBᵀΣVᵀ ≡ 0 at the centre: B = 0, V = 0, or V = vI with v B_s = 0 (a proposal only:
    the checker requires it of every member)."""
    params, _ = box.member()
    zero = lambda M: all(x == 0 for r in M for x in r)
    return zero(params.B) or zero(params.V) or (params.V_scalar is not None
                                                 and zero(exact.scale(params.V_scalar, exact.sym_part(params.B))))


def _riccati_candidate(box: bx.ParamBox) -> tuple[str, int, str] | None:
    """(regime, +1 if A is to be shown Hurwitz, -1 if -A, 0 for a growing direction, scope)
    suggested by the centre, or None."""
    params, state = box.member()
    A = _float(params.A)
    re = np.linalg.eigvals(A).real
    if _quadratic_vanishes_at_centre(box):
        return ("growth", 0, "all_pd_states") if re.max() > 0 else (
            ("collapse", 1, "all_pd_states") if re.max() < 0 else None)
    v = params.V_scalar
    vBs = exact.scale(v, exact.sym_part(params.B))
    if exact.is_pd(exact.scale(-1, vBs)) and re.min() > 0:
        return "equilibrium", -1, "all_pd_states"
    if exact.is_psd(exact.scale(-1, vBs)) and re.max() < 0:
        return "collapse", 1, "all_pd_states"
    if exact.is_pd(vBs) and re.min() > 0:
        return "blowup", -1, "all_pd_states"
    from scipy.linalg import solve_continuous_lyapunov

    exact_state = state is not None and not box.free(("cov",)) and exact.is_pd(state.cov)
    try:
        with warnings.catch_warnings():      # a near-singular equation: only a proposal, the checker decides
            warnings.simplefilter("ignore", RuntimeWarning)
            P = solve_continuous_lyapunov(A.T, -2 * _float(vBs))
    except (ValueError, np.linalg.LinAlgError):
        return None
    if not np.all(np.isfinite(P)):
        return None
    P = (P + P.T) / 2
    gap = np.linalg.eigvalsh(np.linalg.inv(_float(state.cov)) - P)[0] if exact_state else -1.0
    if exact.is_psd(vBs) and re.max() < 0 and gap > 0:
        return "collapse", 1, "initial_state"
    if re.max() < 0 and exact_state and gap < 0:
        return "blowup", 1, "initial_state"          # P0 − P* has a negative direction
    if re.min() > 0:
        # -A Hurwitz with v B_s not definite: the sign of P* decides (enclosed over sub-boxes)
        lam = np.linalg.eigvalsh(P)
        if lam[0] < 0:
            return "blowup", -1, "p_star"
        if exact.is_psd(exact.scale(-1, vBs)):
            return "equilibrium", -1, "p_star"
        if gap > 0:
            return "equilibrium", -1, "initial_state"
    return None


def _riccati_claims(box: bx.ParamBox, precision: int, max_pieces: int) -> list[FamilyClaim]:
    cand = _riccati_candidate(box)
    if cand is None:
        return []
    regime, stable, scope = cand
    if regime == "growth":
        return _growth_claims(box)
    out = []
    for propose in (lambda: _lyapunov_center(_float(box.member()[0].A), stable),
                    lambda: _lyapunov_lmi(box, stable)):
        Y = propose()
        if Y is None:
            continue
        if scope == "all_pd_states":
            out.append(_try(box, "family_riccati", {"regime": regime}, {"Y": Y},
                            "common quadratic Lyapunov function on the vertices of the A-box; Rohn's test on v B_s"))
        else:
            free = [k for k, _ in box.free(("A", "B", "V"))]
            for pieces in (1, 2, 4):
                if pieces ** len(free) > max_pieces:
                    break
                claim = {"regime": regime} if scope == "p_star" else {"regime": regime, "scope": scope}
                witness = {"Y": Y, "splits": {k: pieces for k in free}, "precision_bits": precision}
                if regime == "blowup":
                    witness["direction"] = _negative_direction(box, scope == "initial_state")
                out.append(_try(box, "family_riccati", claim, witness,
                                "common Lyapunov function on the A-box vertices; P* enclosed in balls"))
                if out[-1].valid or "not shown Hurwitz" in out[-1].reason:
                    break
        if out[-1].valid or not _lyapunov_failed(out[-1].reason):
            break          # the LMI proposes another Y only: useless when Y was not what failed
    return out


def _negative_direction(box: bx.ParamBox, from_state: bool = False) -> list[str]:
    """The eigenvector of the centre's P* (of P0 − P* when `from_state`) for its most negative
    eigenvalue, rounded to rationals (the checker's xᵀMx < 0 test is tighter than the minors
    of a wide enclosure)."""
    from scipy.linalg import solve_continuous_lyapunov

    params, state = box.member()
    A = _float(params.A)
    P = solve_continuous_lyapunov(A.T, -2 * _float(exact.scale(params.V_scalar, exact.sym_part(params.B))))
    if from_state:
        P = np.linalg.inv(_float(state.cov)) - P
    w, U = np.linalg.eigh((P + P.T) / 2)
    x = U[:, 0] / np.abs(U[:, 0]).max()
    return [exact.frac_to_str(Fraction(float(e)).limit_denominator(2 ** 20)) for e in x]


def _growth_claims(box: bx.ParamBox) -> list[FamilyClaim]:
    """A linear flow (no quadratic term) with a growing direction: Y from
    (A − εI)ᵀY + Y(A − εI) = I at the centre, for shifts ε below the centre's largest Re λ
    (a shift moves eigenvalues off the imaginary axis, where no such Y exists)."""
    A = _float(box.member()[0].A)
    lam, vec = np.linalg.eig(A)
    top = float(lam.real.max())
    u = vec[:, int(np.argmax(lam.real))]
    out = []
    for frac in (0, Fraction(1, 2), Fraction(1, 4), Fraction(3, 4)):
        eps = _down(top * frac, 0) if frac else Fraction(0)
        for propose in (lambda: _lyapunov_center(A - float(eps) * np.eye(len(A)), -1),
                        lambda: _growth_lmi(box, float(eps), u)):
            Y = propose()
            if Y is None:
                continue
            out.append(_try(box, "family_riccati", {"regime": "growth"}, {"Y": Y, "shift": exact.frac_to_str(eps)},
                            "linear flow; (A - eps I)^T Y + Y (A - eps I) > 0 on the vertices of the A-box, "
                            "Y not <= 0"))
            if out[-1].valid or "quadratic" in out[-1].reason:
                return out
    return out


def _growth_lmi(box: bx.ParamBox, eps: float, u: np.ndarray) -> list[list[str]] | None:
    """A common Y on the vertices of the A-box: (Aᵢ − εI)ᵀY + Y(Aᵢ − εI) ⪰ I, and Re(uᴴYu) ≥ 1 for
    the centre's leading eigenvector u (a linear constraint that keeps Y off the negative
    semidefinite cone), with the smallest ‖Y‖ (cvxpy, Clarabel)."""
    try:
        import cvxpy as cp
    except ImportError:
        return None
    d = box.dim
    Y, t = cp.Variable((d, d), symmetric=True), cp.Variable()
    U = np.real(np.outer(u, np.conj(u)))
    cons = [Y << t * np.eye(d), Y >> -t * np.eye(d), cp.trace(U @ Y) >= 1]
    for A in bx.vertex_matrices(box.A):
        As = _float(A) - eps * np.eye(d)
        cons.append(As.T @ Y + Y @ As >> np.eye(d))
    return _solve_rounded(cp.Problem(cp.Minimize(t), cons), Y)


def _solve_rounded(prob, Y) -> list[list[str]] | None:
    """Solve an LMI with Clarabel; Y rounded to a symmetric rational matrix, or None."""
    import cvxpy as cp

    try:
        prob.solve(solver=cp.CLARABEL)
    except (cp.error.SolverError, ValueError):
        return None
    if prob.status not in ("optimal", "optimal_inaccurate") or Y.value is None:
        return None
    return _rational_sym(Y.value)


def _lyapunov_failed(reason: str) -> bool:
    return "not shown Hurwitz" in reason or reason.startswith("Y is not")


def _vertex_blowup_times(box: bx.ParamBox) -> list[float] | None:
    from riccati_verify.certify.blowup.enclosure import locate_float
    from riccati_verify.certify.blowup.radon import RadonSystem

    free = box.free(("A", "B", "V"))
    times = []
    for corner in itertools.product(*[(lo, hi) for _, (lo, hi) in free]):
        params, state = box.member(dict(zip([k for k, _ in free], corner)))
        try:
            # beyond T* ~ 200 the ball enclosures over a box are too wide to bracket anyway
            bracket, _ = locate_float(RadonSystem(params, state), 1.0, 200.0)
        except (ValueError, ArithmeticError):
            return None
        if bracket is None:
            return None
        times.append(bracket[1])
    return times


def _blowup_claims(box: bx.ParamBox, precision: int, max_pieces: int) -> list[FamilyClaim]:
    from riccati_verify.certify.blowup.radon import psd_factor

    params, state = box.member()
    if state is None or box.free(("cov",)) or not exact.is_psd(exact.scale(params.V_scalar,
                                                                               exact.sym_part(params.B))):
        return []
    times = _vertex_blowup_times(box)
    if not times:
        return []
    C, D = psd_factor(state.cov)
    witness0 = {"precision_bits": precision, "factor_C": [[exact.frac_to_str(x) for x in r] for r in C],
                "factor_D": [exact.frac_to_str(x) for x in D]}
    free = [k for k, _ in box.free(("A", "B", "V"))]
    out = []
    for pieces, rel in ((1, 0.02), (2, 0.05), (4, 0.1), (8, 0.2)):
        if pieces ** len(free) > max_pieces:
            break
        lo = max(Fraction(0), _down(min(times), rel))
        claim = {"lower": exact.frac_to_str(lo), "upper": exact.frac_to_str(_up(max(times), rel))}
        witness = dict(witness0, splits={k: pieces for k in free})
        out.append(_try(box, "family_blowup", claim, witness,
                        "Radon's linearisation in arb balls over the box, uniform subdivision"))
        if out[-1].valid:
            break
    return out


# --------------------------------------------------------------------------- robust local stability

def _stability_claims(box: bx.ParamBox, max_vertices: int = 64, max_cells: int = 16) -> list[FamilyClaim]:
    """One equilibrium ball and one X for the whole box, else a uniform subdivision of the free
    A, B, V entries (2, 4, 8, 16 pieces each, at most `max_cells` sub-boxes) with one cell each."""
    out = _stability_cell(box, max_vertices)
    free = [k for k, _ in box.free(("A", "B", "V"))]
    if any(c.valid for c in out) or not free:
        return out
    for pieces in (2, 4, 8, 16):
        if pieces ** len(free) > max_cells:
            break
        splits = {k: pieces for k in free}
        cells, pd = [], True
        for sub in box.split(splits):
            got = next((c for c in _stability_cell(sub, max_vertices) if c.valid), None)
            if got is None:
                break
            cells.append(got.certificate["witness"])
            pd = pd and got.claim["equilibrium"] == "positive_definite"
        if len(cells) < pieces ** len(free):
            continue
        out.append(_try(box, "family_stability", {"equilibrium": "positive_definite" if pd else "any"},
                        {"splits": splits, "cells": cells},
                        "parametric Krawczyk and a common Lyapunov matrix on each sub-box of a uniform subdivision"))
        if out[-1].valid:
            break
    return out


def _stability_cell(box: bx.ParamBox, max_vertices: int = 64) -> list[FamilyClaim]:
    from riccati_verify.certify import equilibria as eq
    from riccati_verify.certify.stability import lyapunov_proposal, newton_equilibria, newton_equilibrium, rational_sym

    params, _ = box.member()
    free = box.free(("A", "B", "V"))
    if 2 ** len(free) > max_vertices:
        return []
    candidates = [S for S in newton_equilibria(params) if np.linalg.eigvalsh(S)[0] > 1e-9]
    out = []
    for S in candidates[:2]:
        spread = 0.0
        for corner in itertools.product(*[(lo, hi) for _, (lo, hi) in free]):
            Sv = newton_equilibrium(box.member(dict(zip([k for k, _ in free], corner)))[0], S)
            if Sv is None:
                spread = math.inf
                break
            spread = max(spread, float(np.abs(Sv - S).max()))
        if not math.isfinite(spread):
            continue
        A, B, V = (_float(M) for M in (params.A, params.B, params.V))
        L = eq.linearisation_np(A, B, V, S)
        X = lyapunov_proposal(L)
        if X is None:
            continue
        Xq = rational_sym(X)
        Xf = np.array(Xq, dtype=float)
        N = -(L.T @ Xf + Xf @ L)
        ln = float(np.linalg.eigvalsh((N + N.T) / 2)[0])
        if not ln > 0:
            continue
        centre = [[exact.frac_to_str(x) for x in r] for r in rational_sym(S)]
        Xs = [[exact.frac_to_str(x) for x in r] for r in Xq]
        lam = float(np.linalg.eigvalsh(S)[0])
        for grow in (1.5, 3.0, 6.0):
            r = grow * spread + 1e-9 * (1 + float(np.abs(S).max()))
            pd = lam > 2 * len(S) * r
            radius = exact.frac_to_str(_up(r, 0))
            out.append(_try(box, "family_stability", {"equilibrium": "positive_definite" if pd else "any"},
                            {"center": centre, "radius": radius, "X": Xs, "mu": exact.frac_to_str(_down(ln / 8, 0))},
                            "parametric Krawczyk over the box; common Lyapunov matrix of DF in balls"))
            if out[-1].valid:
                return out
    return out


# --------------------------------------------------------------------------- driver

def certify_family(box: bx.ParamBox, *, precision: int = 128, max_pieces: int = 256,
                   sign: bool = True, bracket: bool = True, stability: bool = True,
                   regimes: bool = True) -> FamilyResult:
    """Certify what holds for every member of `box`: the regime, and the sign regime of V and B.

    Parameters
    ----------
    box : ParamBox
        The family (`core.io.box_from_dict`).
    precision : int
        arb bits of the ball computations (blow-up brackets).
    max_pieces : int
        The most sub-boxes a blow-up bracket may use (at most `core.box.MAX_PIECES`).
    sign : bool
        Also try the `family_sign` claim.
    bracket : bool
        For V = vI, also try a T* bracket where blow-up is proved without one (the tile
        sweep turns this off when it only needs the regime).
    stability : bool
        For d >= 2 with no regime proved by the Riccati reduction (general V included), try
        robust local stability of an equilibrium (`family_stability`, not a regime: it says
        nothing about where Σ0 goes).
    regimes : bool
        Try the regime claims (``False``: only the sign and, with `stability`, robust local
        stability, for every d >= 2 box; the tile sweep's ``local_stability`` property).

    Returns
    -------
    FamilyResult
        ``regime`` is one of `REGIMES` when a regime claim was accepted by the checker,
        else 'undetermined'; ``claims`` lists every claim tried with the checker's reason.
    """
    max_pieces = min(max_pieces, bx.MAX_PIECES)
    claims: list[FamilyClaim] = []
    if sign:
        cl = _sign_claim(box)
        if cl is not None:
            claims.append(cl)
    note = ""
    proved = lambda *kinds: any(c.valid and c.kind in kinds for c in claims)
    diagonal = _diagonal(box)
    if diagonal and regimes:
        claims += _scalar_claims(box, precision)
    rest = regimes and not proved("family_scalar") and not (box.dim == 1 and diagonal)
    if rest and (box.v_scalar or _quadratic_vanishes_at_centre(box)):
        claims += _riccati_claims(box, precision, max_pieces)
        regimes = [c.claim.get("regime") for c in claims if c.valid and c.kind == "family_riccati"]
        if box.v_scalar and "growth" not in regimes and ((bracket and "collapse" not in regimes) or not regimes):
            claims += _blowup_claims(box, precision, max_pieces)
    elif rest and not diagonal:
        note = "general V: no regime claim for a box; sign regime and robust local stability only"
    if stability and box.dim >= 2 and not proved("family_riccati", "family_scalar"):
        claims += _stability_claims(box)
    regime = "undetermined"
    for c in claims:
        if c.valid and c.kind in _DYNAMIC_KINDS:
            regime = c.claim.get("regime", "blowup")
            break
    return FamilyResult(regime, claims, note)
