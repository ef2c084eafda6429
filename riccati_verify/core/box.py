"""Interval-parameter boxes: a whole family of models in one object (MATH.md §5-§7).

A parameter file may give any entry as an exact interval ``{"lo": "1/2", "hi": "3/4"}``
(`core.io.box_from_dict` reads it); the family is every model whose entries lie in their
intervals, each entry an independent parameter.  Two exceptions tie entries together: a
scalar V = vI is one parameter v, and ``cov[i][j]`` and ``cov[j][i]`` are one parameter
(they must be given as the same interval), so that every member is a model the point
loaders accept.

This is trusted core, shared by the producers and the independent checker: it holds the
box, its vertices and sub-boxes, and the one exact criterion for symmetric interval
matrices (Rohn's vertex test, `interval_psd`), in exact rationals.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Gaussian, Params

__all__ = ["Interval", "MAX_BOX_DIM", "MAX_FREE", "MAX_PIECES", "ParamBox", "interval_psd", "interval_sym_part",
           "product_range", "vertex_matrices"]

Interval = tuple[Fraction, Fraction]
"""A closed interval [lo, hi] of exact rationals, lo <= hi (lo == hi: a fixed entry)."""

MAX_BOX_DIM = 8
"""Largest d of a box: Rohn's test checks 2^(d-1) exact vertex matrices (128 at d = 8)."""
MAX_FREE = 12
"""Most entries of a box that may be proper intervals: a vertex test visits 2^k vertices."""
MAX_PIECES = 4096
"""Most sub-boxes one subdivision of a box may have (producer and checker share the bound)."""

_KEY = re.compile(r"(A|B|V|cov)\[(\d{1,2})\]\[(\d{1,2})\]|(b|mean)\[(\d{1,2})\]|(V)", re.ASCII)


def _iv(lo: Fraction, hi: Fraction | None = None) -> Interval:
    return (Fraction(lo), Fraction(lo if hi is None else hi))


@dataclass(frozen=True)
class ParamBox:
    """A box of models: every entry an `Interval` (independent, except V = vI and cov's symmetric pairs).

    A, B, V : d x d matrices of intervals (V = vI when ``v_scalar``: every diagonal entry is
    the one interval of v, off-diagonal entries [0, 0]); b : length d; mean, cov : the
    initial Gaussian (both None when the file has no state).  Construct with
    `core.io.box_from_dict`, which validates sizes, signs and the bounds.
    """

    A: tuple
    B: tuple
    V: tuple
    b: tuple
    v_scalar: bool
    mean: tuple | None = None
    cov: tuple | None = None
    name: str = ""

    @property
    def dim(self) -> int:
        """The dimension d of every member."""
        return len(self.A)

    def entries(self) -> Iterator[tuple[str, Interval]]:
        """(key, interval) of every parameter, each once: 'A[i][j]', 'B[i][j]', 'V' or 'V[i][j]',
        'b[i]', 'mean[i]', 'cov[i][j]' (i <= j)."""
        d = self.dim
        for nm in ("A", "B"):
            M = getattr(self, nm)
            yield from ((f"{nm}[{i}][{j}]", M[i][j]) for i in range(d) for j in range(d))
        if self.v_scalar:
            yield "V", self.V[0][0]
        else:
            yield from ((f"V[{i}][{j}]", self.V[i][j]) for i in range(d) for j in range(d))
        yield from ((f"b[{i}]", x) for i, x in enumerate(self.b))
        if self.mean is not None:
            yield from ((f"mean[{i}]", x) for i, x in enumerate(self.mean))
            yield from ((f"cov[{i}][{j}]", self.cov[i][j]) for i in range(d) for j in range(i, d))

    def free(self, prefixes: tuple[str, ...] = ("A", "B", "V", "b", "mean", "cov")) -> list[tuple[str, Interval]]:
        """The proper intervals (lo < hi) among the parameters whose key starts with one of `prefixes`."""
        return [(k, iv) for k, iv in self.entries() if iv[0] < iv[1] and _head(k) in prefixes]

    def interval(self, key: str) -> Interval:
        """The interval of one parameter (InputError on a key this box does not have)."""
        for k, iv in self.entries():
            if k == key:
                return iv
        raise InputError(f"the box has no parameter '{key}' (keys look like A[0][1], V, b[0], cov[0][0])")

    def with_entry(self, key: str, lo: Fraction, hi: Fraction) -> "ParamBox":
        """The same box with parameter `key` set to [lo, hi]."""
        self.interval(key)
        if not lo <= hi:
            raise InputError(f"'{key}': the interval needs lo <= hi")
        m = _KEY.fullmatch(key)
        iv = _iv(lo, hi)
        fields = {}
        if m.group(1):
            nm, i, j = m.group(1), int(m.group(2)), int(m.group(3))
            pairs = [(i, j), (j, i)] if nm == "cov" else [(i, j)]
            fields[nm] = _set(getattr(self, nm), pairs, iv)
        elif m.group(4):
            nm, i = m.group(4), int(m.group(5))
            fields[nm] = tuple(iv if k == i else x for k, x in enumerate(getattr(self, nm)))
        else:
            fields["V"] = _set(self.V, [(i, i) for i in range(self.dim)], iv)
        return ParamBox(**{**self.__dict__, **fields})

    def member(self, point: dict[str, Fraction] | None = None) -> tuple[Params, Gaussian | None]:
        """The model at `point` (key -> value); unnamed parameters at their interval's midpoint."""
        point = point or {}
        vals = {}
        for k, (lo, hi) in self.entries():
            x = point.get(k, (lo + hi) / 2)
            if not lo <= x <= hi:
                raise InputError(f"'{k}' = {x} lies outside its interval")
            vals[k] = x
        d = self.dim
        mat = lambda nm: tuple(tuple(vals[f"{nm}[{i}][{j}]"] for j in range(d)) for i in range(d))
        V = exact.identity(d, vals["V"]) if self.v_scalar else mat("V")
        params = Params(mat("A"), mat("B"), V, tuple(vals[f"b[{i}]"] for i in range(d)))
        if self.mean is None:
            return params, None
        cov = tuple(tuple(vals[f"cov[{min(i, j)}][{max(i, j)}]"] for j in range(d)) for i in range(d))
        return params, Gaussian(tuple(vals[f"mean[{i}]"] for i in range(d)), cov)

    def split(self, pieces: dict[str, int]) -> list["ParamBox"]:
        """The uniform subdivision: parameter k cut into pieces[k] equal intervals (a partition of the box)."""
        total = 1
        for n in pieces.values():
            total *= n
        if total > MAX_PIECES:
            raise InputError(f"a subdivision into {total} sub-boxes exceeds the bound {MAX_PIECES}")
        axes = []
        for k, n in sorted(pieces.items()):
            lo, hi = self.interval(k)
            if n < 1 or (n > 1 and lo == hi):
                raise InputError(f"'{k}' cannot be cut into {n} pieces")
            axes.append([(k, lo + (hi - lo) * i / n, lo + (hi - lo) * (i + 1) / n) for i in range(n)])
        out = []
        for combo in itertools.product(*axes):
            box = self
            for k, lo, hi in combo:
                box = box.with_entry(k, lo, hi)
            out.append(box)
        return out

    def matrix_bounds(self, name: str) -> tuple[exact.Matrix, exact.Matrix]:
        """(lower, upper) entrywise bounds of matrix `name` ('A', 'B', 'V' or 'cov')."""
        M = getattr(self, name)
        return (tuple(tuple(x[0] for x in r) for r in M), tuple(tuple(x[1] for x in r) for r in M))


def _head(key: str) -> str:
    return key.split("[", 1)[0]


def _set(M: tuple, pairs, iv: Interval) -> tuple:
    return tuple(tuple(iv if (i, j) in pairs else x for j, x in enumerate(r)) for i, r in enumerate(M))


def vertex_matrices(M: tuple) -> Iterator[exact.Matrix]:
    """Every vertex of an interval matrix with independent entries: each proper interval at
    its lo or its hi (2^k matrices, k the number of proper intervals; the caller bounds k)."""
    free = [(i, j) for i, r in enumerate(M) for j, x in enumerate(r) if x[0] < x[1]]
    for choice in itertools.product((0, 1), repeat=len(free)):
        pick = dict(zip(free, choice))
        yield tuple(tuple(x[pick.get((i, j), 0)] for j, x in enumerate(r)) for i, r in enumerate(M))


def interval_sym_part(M: tuple) -> tuple:
    """The interval matrix of symmetric parts (X + Xᵀ)/2 over X in M (entries independent):
    entry (i, j) is [(lo_ij + lo_ji)/2, (hi_ij + hi_ji)/2], exactly the set of values."""
    d = len(M)
    return tuple(tuple(_iv((M[i][j][0] + M[j][i][0]) / 2, (M[i][j][1] + M[j][i][1]) / 2) for j in range(d))
                 for i in range(d))


def interval_psd(S: tuple, strict: bool = False, sign: int = 1) -> bool:
    """Whether every symmetric matrix X with entries in the symmetric interval matrix S has
    sign·X ⪰ 0 (≻ 0 when `strict`), decided exactly by Rohn's vertex criterion.

    Write S = [Sc - Δ, Sc + Δ].  For x with sign vector z (|x| = D_z x) the minimum of
    xᵀXx over the box is xᵀSc x - |x|ᵀΔ|x| = xᵀ(Sc - D_z Δ D_z)x, each entry chosen
    independently.  So every member is PSD (PD) iff each of the 2^(d-1) matrices
    Sc - D_z Δ D_z (z and -z give the same one) is PSD (PD): an exact criterion, not only a
    sufficient one.  `sign` = -1 asks the same of -X.
    """
    d = len(S)
    if d > MAX_BOX_DIM:
        raise InputError(f"Rohn's test on d = {d} exceeds the box dimension bound {MAX_BOX_DIM}")
    if any(S[i][j] != S[j][i] for i in range(d) for j in range(i)):
        raise ValueError("interval_psd needs a symmetric interval matrix")
    lo = [[sign * x[0] if sign > 0 else sign * x[1] for x in r] for r in S]
    hi = [[sign * x[1] if sign > 0 else sign * x[0] for x in r] for r in S]
    Sc = [[(lo[i][j] + hi[i][j]) / 2 for j in range(d)] for i in range(d)]
    De = [[(hi[i][j] - lo[i][j]) / 2 for j in range(d)] for i in range(d)]
    test = exact.is_pd if strict else exact.is_psd
    for tail in itertools.product((1, -1), repeat=d - 1):
        z = (1,) + tail
        M = tuple(tuple(Sc[i][j] - z[i] * z[j] * De[i][j] for j in range(d)) for i in range(d))
        if not test(M):
            return False
    return True


def product_range(*ivs: Interval) -> Interval:
    """The exact range of x1·x2·…·xn over independent xk in the intervals (extremes at vertices)."""
    vals = [Fraction(1)]
    for lo, hi in ivs:
        vals = [p * x for p in vals for x in {lo, hi}]
        vals = [min(vals), max(vals)]
    return vals[0], vals[1]
