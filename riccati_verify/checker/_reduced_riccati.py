"""Checker-side evaluation of the reduced Riccati matrix N(t) (V = vI), in balls.

Independent of the producer (`riccati_verify.certify.blowup`): this derives N from the
inverse form P = Σ⁻¹ (MATH.md §7) instead of Radon's Hamiltonian.  With
Σ0 = C D Cᵀ (checked exactly here) and W(t) = ∫_0^t e^{Aᵀs} B_s e^{As} ds,

    N(t) = D⁻¹ - 2v Cᵀ W(t) C,     Ṅ(t) = -2v Cᵀ e^{Aᵀt} B_s e^{At} C,

and Σ(t) = e^{At} C N(t)⁻¹ Cᵀ e^{Aᵀt} exists exactly while N ≻ 0.  W comes from
Van Loan's block exponential: exp([[-Aᵀ, B_s], [0, A]] t) has the blocks
e^{-Aᵀt} (1,1), e^{-Aᵀt} W(t) (1,2) and e^{At} (2,2), so W = (e^{At})ᵀ·(1,2).

Only the trusted cores (exact, balls, io) and python-flint are used.
"""

from __future__ import annotations

import re
from fractions import Fraction

from flint import arb, arb_mat, ctx

from riccati_verify.core import balls, exact
from riccati_verify.checker.verify import CheckResult

MAX_PRECISION_BITS = 40_000
MAX_BOXES = 5_000


class WitnessError(ValueError):
    """The witness is malformed or fails a check; the message says which."""


def witness_checked(body, claim: dict, problem, witness: dict) -> CheckResult:
    """Run a check body; a WitnessError makes the certificate invalid with the body's own message
    (rather than the generic 'malformed witness' of verify_certificate)."""
    try:
        return body(claim, problem, witness)
    except WitnessError as e:
        return CheckResult(False, str(e))


MAX_RATIONAL_CHARS = 4000
"""High-precision brackets need long numbers (a 1000-digit bracket end has ~1000
characters), beyond the parameter-file bound io.MAX_ENTRY_CHARS; still bounded."""
_WITNESS_RATIONAL = re.compile(r"-?\d+(?:/[1-9]\d*|\.\d+)?", re.ASCII)


def rational(x, where: str) -> Fraction:
    """An exact rational given as a string, 'p/q' (q > 0) or a plain decimal ('-0.125'), of at most
    `MAX_RATIONAL_CHARS` characters; floats are refused, and so are the parameter files' lenient forms
    (surrounding blanks, a '+' sign, exponents: `core.io.parse_entry`), as in the other witness readers
    (`check_equilibrium.parse_fraction`): one grammar for every witness rational (review s19, L4)."""
    if not isinstance(x, str):
        raise WitnessError(f"{where}: expected an exact rational string, got {type(x).__name__}")
    if len(x) > MAX_RATIONAL_CHARS or not _WITNESS_RATIONAL.fullmatch(x):
        raise WitnessError(f"{where}: a witness rational must be 'p/q' or a plain decimal of at most "
                           f"{MAX_RATIONAL_CHARS} characters, got '{x[:40]}'")
    return Fraction(x)


def integer(x, where: str, lo: int, hi: int) -> int:
    """A witness integer in lo..hi (a bool is refused: JSON true is no count)."""
    if not isinstance(x, int) or isinstance(x, bool) or not lo <= x <= hi:
        raise WitnessError(f"{where} must be an integer in {lo}..{hi}")
    return x


def tail_keys(tail, witness: dict, kind: str, keys: frozenset, replaced) -> None:
    """witness["tail"] of this kind has exactly `keys`, and the witness none of the keys it replaces
    (a tail and an ellipsoid in one witness would be read two ways)."""
    if not isinstance(tail, dict) or set(tail) != keys or tail.get("kind") != kind:
        raise WitnessError(f"tail must have exactly the keys {sorted(keys)} and kind '{kind}'")
    clash = [k for k in replaced if k in witness]
    if clash:
        raise WitnessError(f"a witness with a {kind} tail must not have the keys {clash}")


def rational_matrix(x, where: str, rows: int, cols: int) -> exact.Matrix:
    if not isinstance(x, list) or len(x) != rows or any(not isinstance(r, list) or len(r) != cols for r in x):
        raise WitnessError(f"{where}: expected a {rows}x{cols} matrix")
    return tuple(tuple(rational(v, f"{where}[{i}][{j}]") for j, v in enumerate(r)) for i, r in enumerate(x))


def precision(witness: dict) -> int:
    p = witness.get("precision_bits")
    if not isinstance(p, int) or isinstance(p, bool) or not 53 <= p <= MAX_PRECISION_BITS:
        raise WitnessError(f"precision_bits must be an integer in 53..{MAX_PRECISION_BITS}")
    return p


def scalar_v(params) -> Fraction:
    v = params.V_scalar
    if v is None:
        raise WitnessError("this route needs V = vI exactly")
    return v


def checked_factor(state, witness: dict) -> tuple[exact.Matrix, tuple[Fraction, ...]]:
    """C, D from the witness with Σ0 = C diag(D) Cᵀ, D > 0 and rank C = r, all exact."""
    d = state.dim
    D_raw = witness.get("factor_D")
    if not isinstance(D_raw, list) or not 1 <= len(D_raw) <= d:
        raise WitnessError(f"factor_D must be a list of 1..{d} positive rationals")
    D = tuple(rational(x, f"factor_D[{i}]") for i, x in enumerate(D_raw))
    if any(x <= 0 for x in D):
        raise WitnessError("factor_D has a non-positive entry")
    r = len(D)
    C = rational_matrix(witness.get("factor_C"), "factor_C", d, r)
    # the product in flint's fmpq (C, like its gcds): 4000-character entries made the Fraction
    # product and a Fraction rank of C take minutes on a 0.6 MB certificate (review s17)
    q = exact.to_fmpq_mat
    CD = q(tuple(tuple(C[i][k] * D[k] for k in range(r)) for i in range(d)))
    if CD * q(C).transpose() != q(state.cov):
        raise WitnessError("factor_C diag(factor_D) factor_Cᵀ differs from the covariance")
    # with D > 0, rank(C diag(D) Cᵀ) = rank(C): full column rank iff Σ0 has rank r (`Gaussian.rank`,
    # from its own bounded exact test)
    if state.rank != r:
        raise WitnessError("factor_C does not have full column rank")
    return C, D


class ReducedRiccati:
    """N(t) and Ṅ(t) in ball arithmetic at the ambient flint precision."""

    def __init__(self, A: exact.Matrix, B: exact.Matrix, v: Fraction, C: exact.Matrix, D):
        d = len(A)
        self.Bs = exact.sym_part(B)
        self.block = tuple(tuple(-A[j][i] for j in range(d)) + tuple(self.Bs[i]) for i in range(d)) + \
            tuple((Fraction(0),) * d + tuple(A[i]) for i in range(d))
        self.d, self.r = d, len(D)
        self.v, self.C, self.D = v, C, tuple(D)
        self._balls: dict[int, tuple] = {}

    def _at_precision(self):
        """The exact data as balls at the ambient precision (converted once per precision)."""
        p = ctx.prec
        if p not in self._balls:
            Dinv = arb_mat(self.r, self.r)
            for k in range(self.r):
                Dinv[k, k] = balls.arb_of(1 / self.D[k])
            self._balls[p] = (balls.arb_matrix(self.block), balls.arb_matrix(self.Bs), balls.arb_matrix(self.C),
                              balls.arb_of(self.v), Dinv)
        return self._balls[p]

    def box(self, a: Fraction, b: Fraction):
        """Enclosures of N and Ṅ on [a, b]: N(a) + [0, b-a]·Ṅ([a, b]) (mean-value form),
        Ṅ([a, b]) from exp(A·[a, b]) alone, which avoids the cancellation in the blocks."""
        _, Bs, C, v, _ = self._at_precision()
        key = ("A", ctx.prec)
        if key not in self._balls:
            d = self.d
            self._balls[key] = balls.arb_matrix(tuple(tuple(self.block[d + i][d + j] for j in range(d))
                                                      for i in range(d)))
        G = (self._balls[key] * balls.interval(a, b)).exp() * C
        Ndot = balls.symmetrized(G.transpose() * Bs * G * (-2 * v))
        return self.at(balls.arb_of(a)) + Ndot * balls.interval(Fraction(0), b - a), Ndot

    def positive_on(self, a: Fraction, b: Fraction) -> bool:
        """N ≻ 0 on [a, b]: either the mean-value box enclosure is PD, or the second-order
        form N(a) + sṄ(a) + [0, h²/2]·N̈([a, b]) is PD at s = 0 and s = h (the PD cone is
        convex, and N(a + s) is a convex combination of the two with the same remainder),
        with N̈ = -2v (e^{At}C)ᵀ (AᵀB_s + B_sA) e^{At}C."""
        if balls.proves_positive_definite(balls.congruence_preconditioned(self.box(a, b)[0])[0]):
            return True
        d, h = self.d, b - a
        _, Bs_b, C, v, _ = self._at_precision()
        key = ("AtBs", ctx.prec)
        if key not in self._balls:
            A = tuple(tuple(self.block[d + i][d + j] for j in range(d)) for i in range(d))
            self._balls[key] = balls.arb_matrix(exact.add(exact.matmul(exact.transpose(A), self.Bs),
                                                          exact.matmul(self.Bs, A)))
        G = (self._balls[("A", ctx.prec)] * balls.interval(a, b)).exp() * C
        R = balls.symmetrized(G.transpose() * self._balls[key] * G * (-2 * v)) * balls.interval(Fraction(0), h * h / 2)
        Na, Nda = self.at(balls.arb_of(a), derivative=True)
        return all(balls.proves_positive_definite(balls.congruence_preconditioned(M)[0])
                   for M in (Na + R, Na + Nda * balls.arb_of(h) + R))

    def at(self, t: arb, derivative: bool = False):
        d = self.d
        block, Bs, C, v, Dinv = self._at_precision()
        F = (block * t).exp()
        F12, F22 = arb_mat(d, d), arb_mat(d, d)
        for i in range(d):
            for j in range(d):
                F12[i, j] = F[i, d + j]
                F22[i, j] = F[d + i, d + j]
        W = F22.transpose() * F12
        N = balls.symmetrized(Dinv - C.transpose() * W * C * (2 * v))
        if not derivative:
            return N
        G = F22 * C
        return N, balls.symmetrized(G.transpose() * Bs * G * (-2 * v))


SPLIT_DEPTH = 5
"""A box statement may be re-proved on up to 2^SPLIT_DEPTH pieces: ball enclosures of
exp over a time interval depend on the representation, so the checker's own
(Van Loan) form may need finer pieces than the producer's (Radon) form."""


class _Budget:
    def __init__(self, unit: float):
        self.unit, self.spent = unit, 0.0

    def charge(self, t: Fraction = Fraction(1)):
        # a ball exponential at time t squares about log2|t| more times (as `check_point_work` charges)
        self.spent += self.unit * (1 + max(0, exact.log2_upper(t)) / 16)
        if self.spent > balls.MAX_COVER_WORK:
            raise WitnessError(f"the box cover exceeds the checker's work budget ({balls.MAX_COVER_WORK:.0e} units "
                               f"of (2d)^3 (prec/64)^1.6 + 1000 a proof): fewer boxes, splits or bits")


def _holds_on(prove, a: Fraction, b: Fraction, depth: int = SPLIT_DEPTH, budget: _Budget | None = None) -> bool:
    if budget is not None:
        budget.charge(b)
    if prove(a, b):
        return True
    if depth == 0:
        return False
    m = (a + b) / 2
    return _holds_on(prove, a, m, depth - 1, budget) and _holds_on(prove, m, b, depth - 1, budget)


def check_point_work(sys: ReducedRiccati, prec: int, times: list[Fraction]) -> None:
    """Raise WitnessError when evaluating N at these times (the radon-monotone routes) would pass the
    cover budget `balls.MAX_COVER_WORK`: each is a ball exponential of the 2d x 2d block at prec bits
    (`balls.cover_unit`), with squarings that grow with log2|t|.  Without it, 40,000 bits at d = 64
    were allowed: about 3 hours (review, session 16)."""
    unit = balls.cover_unit(sys.d, prec)
    work = sum(unit * (1 + max(0, exact.log2_upper(t)) / 16) for t in times)
    if work > balls.MAX_COVER_WORK:
        raise WitnessError(f"N at {len(times)} time(s) at {prec} bits and d = {sys.d} exceeds the checker's work "
                           f"budget ({balls.MAX_COVER_WORK:.0e} units of (2d)^3 (prec/64)^1.6 + 1000 a proof)")


def check_cover(sys: ReducedRiccati, boxes, t_end: Fraction, prec: int) -> None:
    """Raise WitnessError unless the boxes prove N ≻ 0 on [0, t_end].

    Box enclosures use the mean-value form (`ReducedRiccati.box`).  Chain: N(0) = D⁻¹ ≻ 0.  A "pd" box [a, b] proves N ≻ 0 on all of it.  A
    "det" box proves d/dt det N < 0 on [a, b] and det N(b) > 0, so det N > 0 on
    [a, b]; with N(a) ≻ 0 (previous box) no eigenvalue can reach 0 inside.
    """
    if not isinstance(boxes, list) or not 1 <= len(boxes) <= MAX_BOXES:
        raise WitnessError(f"boxes must be a list of 1..{MAX_BOXES} boxes")
    a_expected = Fraction(0)
    # the exponential is of the 2d x 2d Van Loan block whatever the rank r of the covariance
    budget = _Budget(balls.cover_unit(sys.d, prec))
    if len(boxes) * budget.unit > balls.MAX_COVER_WORK:
        raise WitnessError(f"{len(boxes)} boxes at {prec} bits exceed the checker's work budget "
                           f"({balls.MAX_COVER_WORK:.0e} units of (2d)^3 (prec/64)^1.6 + 1000 a proof)")
    # the boxes' shape first (cheap): a cover that runs past t_end is refused before any proof
    # (review s17: boxes near t = 2^100 for a horizon of 1 ran their proofs first)
    parsed = []
    for n, box in enumerate(boxes):
        if not isinstance(box, list) or len(box) != 3 or box[0] not in ("pd", "det"):
            raise WitnessError(f"box {n}: expected [\"pd\"|\"det\", a, b]")
        a, b = rational(box[1], f"box {n} start"), rational(box[2], f"box {n} end")
        if a != a_expected or not b > a:
            raise WitnessError(f"box {n}: boxes must be contiguous from 0 (expected start {a_expected})")
        parsed.append((box[0], a, b))
        a_expected = b
    if a_expected != t_end:
        raise WitnessError(f"the boxes end at {a_expected}, not at {t_end}")
    with ctx.workprec(prec):
        for n, (kind, a, b) in enumerate(parsed):
            if kind == "pd":
                if not _holds_on(sys.positive_on, a, b, budget=budget):
                    raise WitnessError(f"box {n} [{a}, {b}]: N ≻ 0 not proved on the box")
            else:
                if not _holds_on(lambda lo, hi: balls.det_derivative(
                        *balls.congruence_preconditioned(*sys.box(lo, hi))) < 0, a, b, budget=budget):
                    raise WitnessError(f"box {n} [{a}, {b}]: d/dt det N < 0 not proved")
                if not sys.at(balls.arb_of(b)).det() > 0:
                    raise WitnessError(f"box {n}: det N(b) > 0 not proved")
