"""Checker for `unreachable_in_time`: no controls with ‖A‖₂, ‖B‖₂, ‖V‖₂ ≤ M and
|b|₂ ≤ M steer N(m0, Σ0) to N(m1, Σ1) within the horizon T.

For any controls Σ(t) = Φ Σ0 Φᵀ with Φ̇ = JΦ, J = A + VΣB (MATH.md §3).  Three
bounds on how fast the state can move (the soundness argument):

* **Covariance (Ostrowski).**  λ_i(Φ Σ0 Φᵀ) = θ_i λ_i(Σ0) with θ_i between
  σ_min(Φ)² and σ_max(Φ)² (sorted eigenvalues, zeros paired with zeros), so
  ρ := max_i |log(λ_i(Σ1)/λ_i(Σ0))| / 2 ≤ u := log max(‖Φ‖, ‖Φ⁻¹‖).
  Congruence class (B = V = 0): u̇ ≤ ‖A‖ ≤ M, so e^{−2ρ} ≥ W(T) := e^{−2MT}.
  Full class: ‖J‖ ≤ M + M²‖Σ‖ ≤ M + M² s0 e^{2u} (s0 ≥ ‖Σ0‖₂); comparison
  with the solution of v̇ = M + M² s0 e^{2v}, v(0) = 0, gives
  e^{−2u(t)} ≥ W(t) := (1 + M s0) e^{−2Mt} − M s0, so e^{−2ρ} ≥ W(T).
* **Mean (Grönwall).**  e = |m − m0| obeys ė ≤ a (e + |m0|) + M with
  a = M (congruence: ṁ = Am + b) or a(t) = 2M + M² s0 / W(t) (full:
  ṁ = (A + V + VΣB) m + b, a increasing, so a(T) bounds it on [0, T]):
  |m1 − m0| ≤ F(T) := (|m0| + M/a)(e^{aT} − 1); F increases with T.
* **Covariance displacement.**  ‖Σ̇‖_F ≤ 2‖J‖₂‖Σ‖_F and ‖Σ(t)‖_F ≤ ‖Φ‖₂² f0
  (f0 = ‖Σ0‖_F); since (1/W)' = 2(M + M² s/W)/W,
  ‖Σ1 − Σ0‖_F ≤ f0 (1/W(T) − 1), i.e. 1/(1 + ‖Σ1 − Σ0‖_F/f0) ≥ W(T)
  (W with s = 0 for the congruence class, where it is e^{−2MT}).  It sees
  rotations of Σ, which the spectrum cannot.

Both covariance criteria read "W(T) ≤ q" with q = e^{−2ρ} or 1/(1 + r); W is
decreasing in T, so they exclude every horizon up to T once W(T) > q.

Holding still (A = B = V = 0, b = 0) is an admissible control, so "not reachable
at any t ≤ T" and "not reachable at T" are the same claim.

The witness holds rational brackets [lo_i, hi_i] of the sorted eigenvalues of
Σ0 and Σ1; they are re-checked EXACTLY by inertia counts of Σ − cI
(#{λ < lo_i} ≤ i and #{λ ≤ hi_i} ≥ i + 1, which holds for repeated eigenvalues
too; `exact.ldl_inertia`, which tries ball LDLᵀ first on large inputs).
The inequalities above are then evaluated in
python-flint ball arithmetic from the claim's exact T and M and accepted only
when they exclude T rigorously.  Imports only the trusted core.
"""

from __future__ import annotations

from fractions import Fraction

import flint

from riccati_verify.core import exact
from riccati_verify.core.balls import arb_of
from riccati_verify.core.io import parse_entry
from riccati_verify.core.model import Gaussian
from riccati_verify.checker.verify import CheckResult, claim_transfer

__all__ = [
    "Bracket", "CONTROL_CLASSES", "CRITERIA", "PREC_BITS", "bracket_error", "check",
    "comparison_W", "covariance_floor", "excludes", "log_ratio_lower", "max_mean_excursion",
    "norm_ball",
]

CLAIM_KEYS = frozenset({"target_mean", "target_cov", "time", "max_norm", "control_class", "statement"})
"""The claim's keys besides `kind`; `verify_certificate` refuses any other."""
WITNESS_KEYS = frozenset({"criterion", "eigenvalues_initial", "eigenvalues_target"})
"""The witness's keys (all routes); `verify_certificate` refuses any other."""


def statement(claim: dict, witness: dict) -> str:
    """The one sentence an `unreachable_in_time` claim means (`claim.statement`, if present, must be it)."""
    return ("no piecewise-continuous controls with |A|_2, |B|_2, |V|_2 <= max_norm and |b|_2 <= max_norm"
            + (" and B = V = 0" if claim["control_class"] == "congruence" else "")
            + " steer the initial Gaussian to the target at any time t <= T")

PREC_BITS = 256
CONTROL_CLASSES = ("congruence", "full")
CRITERIA = ("covariance", "displacement", "mean")

Bracket = tuple[Fraction, Fraction]


# ------------------------------------------------------------ exact ingredients

def _inertia(N: exact.Matrix) -> tuple[int, int]:
    """(n_minus, n_zero) of a symmetric rational matrix, exactly (`exact.ldl_inertia`: ball LDLᵀ first
    on large inputs, an exact elimination within its work budget)."""
    _, minus, zero = exact.ldl_inertia(N)
    return minus, zero


def bracket_error(S: exact.Matrix, brackets: list[Bracket]) -> str | None:
    """None when λ_i(S) ∈ [lo_i, hi_i] for every i (ascending order) is proved exactly, else why not."""
    d = len(S)
    if len(brackets) != d:
        return f"{len(brackets)} eigenvalue brackets for a {d}x{d} matrix"
    counts: dict[Fraction, tuple[int, int]] = {}

    def inertia(c: Fraction) -> tuple[int, int]:
        """(#{λ < c}, #{λ = c})."""
        if c not in counts:
            counts[c] = _inertia(exact.sub(S, exact.identity(d, c)))
        return counts[c]

    for i, (lo, hi) in enumerate(brackets):
        if not 0 <= lo <= hi:
            return f"bracket {i} is not 0 <= lo <= hi"
        if inertia(lo)[0] > i:
            return f"eigenvalue {i} is below its bracket's lower end {lo}"
        minus, zero = inertia(hi)
        if minus + zero < i + 1:
            return f"eigenvalue {i} is above its bracket's upper end {hi}"
    return None


def norm_ball(v) -> flint.arb:
    """A ball containing the Euclidean norm |v|₂ of an exact vector."""
    return sum((arb_of(x) ** 2 for x in v), flint.arb(0)).sqrt()


# ------------------------------------------------------------ the bounds (balls)

def log_ratio_lower(b0: list[Bracket], b1: list[Bracket]) -> flint.arb:
    """An exact point ≤ ρ = max_i |log(λ_i(Σ1)/λ_i(Σ0))| / 2 over the pairs proved nonzero."""
    best = flint.arb(0)
    for (l0, h0), (l1, h1) in zip(b0, b1):
        if l0 > 0 and l1 > 0:
            if l1 > h0:
                r = (arb_of(l1) / arb_of(h0)).log()
            elif l0 > h1:
                r = (arb_of(l0) / arb_of(h1)).log()
            else:
                continue
            lo = (r / 2).lower()
            if lo > best:
                best = lo
    return best


def comparison_W(T: flint.arb, M: flint.arb, s0: flint.arb, control_class: str) -> flint.arb:
    """W(T) = (1 + M s) e^{−2MT} − M s with s = s0 (full) or 0 (congruence): e^{−2u(T)} ≥ W(T)."""
    s = s0 if control_class == "full" else flint.arb(0)
    return (1 + M * s) * (-2 * M * T).exp() - M * s


def covariance_floor(criterion: str, b0: list[Bracket], b1: list[Bracket], S0: exact.Matrix,
                     S1: exact.Matrix) -> flint.arb:
    """A ball q with W(T) ≤ q for every reaching control: e^{−2ρ} (spectrum) or 1/(1 + r) (displacement)."""
    if criterion == "covariance":
        return (-2 * log_ratio_lower(b0, b1)).exp()
    f0 = norm_ball([x for row in S0 for x in row])
    df = norm_ball([y - x for r0, r1 in zip(S0, S1) for x, y in zip(r0, r1)])
    return 1 / (1 + df / f0) if f0 > 0 else flint.arb(1)


def max_mean_excursion(T: flint.arb, M: flint.arb, s0: flint.arb, n0: flint.arb,
                       control_class: str) -> flint.arb | None:
    """A ball containing F(T) ≥ |m(T) − m0|; None when the bound is infinite."""
    if control_class == "congruence":
        a = M
    else:
        W = comparison_W(T, M, s0, control_class)
        if not W > 0:
            return None
        a = 2 * M + M * M * s0 / W
    return (n0 + M / a) * ((a * T).exp() - 1)


def excludes(criterion: str, T: Fraction, M: Fraction, control_class: str, state0: Gaussian,
             target: Gaussian, b0: list[Bracket], b1: list[Bracket]) -> bool:
    """True only if the criterion proves that no admissible control reaches the target by time T."""
    Tb, Mb = arb_of(T), arb_of(M)
    s0 = arb_of(max((hi for _, hi in b0), default=Fraction(0)))
    if criterion in ("covariance", "displacement"):
        W = comparison_W(Tb, Mb, s0, control_class)
        return W > covariance_floor(criterion, b0, b1, state0.cov, target.cov)
    dm = norm_ball([x - y for x, y in zip(target.mean, state0.mean)])
    F = max_mean_excursion(Tb, Mb, s0, norm_ball(state0.mean), control_class)
    return F is not None and F < dm


# ------------------------------------------------------------ the checker

def _brackets(x, name: str, d: int) -> list[Bracket]:
    if not isinstance(x, list) or len(x) != d:
        raise ValueError(f"{name} must be a list of {d} [lo, hi] pairs")
    out = []
    for i, p in enumerate(x):
        if not isinstance(p, list) or len(p) != 2:
            raise ValueError(f"{name}[{i}] must be a [lo, hi] pair")
        out.append((parse_entry(p[0], f"{name}[{i}][0]"), parse_entry(p[1], f"{name}[{i}][1]")))
    return out


def check(claim: dict, problem, witness: dict) -> CheckResult:
    """Re-check one `unreachable_in_time` claim from its witness (the entry point `verify_certificate` calls)."""
    state0, target, T, M = claim_transfer(claim, problem, "max_norm")
    d = state0.dim
    cls = claim["control_class"]
    if cls not in CONTROL_CLASSES:
        return CheckResult(False, f"control_class must be one of {CONTROL_CLASSES}")
    crit = witness["criterion"]
    if crit not in CRITERIA:
        return CheckResult(False, f"criterion must be one of {CRITERIA}")
    if exact.rank(state0.cov) != exact.rank(target.cov):
        return CheckResult(False, "the ranks differ: that is the unreachable_rank claim, not this one")
    b0 = _brackets(witness["eigenvalues_initial"], "eigenvalues_initial", d)
    b1 = _brackets(witness["eigenvalues_target"], "eigenvalues_target", d)
    for S, b, name in ((state0.cov, b0, "initial"), (target.cov, b1, "target")):
        err = bracket_error(S, b)
        if err:
            return CheckResult(False, f"{name} covariance: {err}")
    old = flint.ctx.prec
    flint.ctx.prec = PREC_BITS
    try:
        if not excludes(crit, T, M, cls, state0, target, b0, b1):
            return CheckResult(False, f"the {crit} bound does not prove T = {T} too short for max_norm {M} "
                                      f"({cls} class)")
    finally:
        flint.ctx.prec = old
    return CheckResult(True, f"exact eigenvalue brackets; {crit} bound ({cls} class, {PREC_BITS}-bit balls) "
                             f"proves no control with norms <= {M} reaches the target by T = {T}")
