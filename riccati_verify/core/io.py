"""Reading and writing parameter files (untrusted input).

The format is DESIGN.md's::

    {"A": [[...]], "B": [[...]], "V": [[...]] or v, "b": [...],
     "mean": [...], "cov": [[...]]}

Entries are JSON numbers or strings holding an exact rational ("1/3") or an
exact decimal ("0.1" means 1/10).  Nothing here evaluates file text: strings
are matched against two regular expressions and handed to `Fraction`.

Bounds (documented in the README): file size `MAX_FILE_BYTES` (read with a
byte cap; only regular files), dimension `model.MAX_DIM`, entry strings
`MAX_ENTRY_CHARS` characters, decimal exponents at most `MAX_EXPONENT` in
absolute value, and the size of the rational itself: numerator and denominator
of at most `MAX_ENTRY_BITS` bits each.  The last one is the rule that matters:
it bounds the arithmetic, and the character bound is loose enough that every
rational within it, written exactly as 'p/q' (`exact.frac_to_str`), reads back.
Duplicate JSON keys are refused.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import MAX_DIM, Gaussian, Params

__all__ = [
    "KERNEL_CONVENTIONS", "MAX_ENTRY_BITS", "MAX_ENTRY_CHARS", "MAX_EXPONENT", "MAX_FILE_BYTES", "META_KEYS",
    "PARAM_KEYS", "STATE_KEYS", "Problem", "box_from_dict", "box_to_dict", "dump_problem", "load_box", "load_problem", "load_problem_text",
    "loads_json", "parse_entry", "parse_matrix", "parse_vector", "problem_from_dict",
    "problem_to_dict", "read_json_file",
]

MAX_FILE_BYTES = 1_000_000
MAX_ENTRY_CHARS = 1000
MAX_EXPONENT = 400
MAX_NAME_CHARS = 200
MAX_ENTRY_BITS = 1400
"""Numerator and denominator of an entry: at most this many bits each (1e±400 has 1329;
a 200-digit integer 665).  'p/q' with both at the bound has at most 2·422 + 2 characters,
under MAX_ENTRY_CHARS, so whatever the tool writes exactly it reads back."""

PARAM_KEYS = {"A", "B", "V", "b"}
STATE_KEYS = {"mean", "cov"}
META_KEYS = {"name", "description", "kernel_convention"}
KERNEL_CONVENTIONS = ("exp(<Bx,y>)", "exp(<x,By>)")

_RATIONAL = re.compile(r"[+-]?\d+(?:/\d+)?", re.ASCII)
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+))?", re.ASCII)


@dataclass(frozen=True)
class Problem:
    """What a parameter file holds: the controls and, optionally, a Gaussian state."""

    params: Params | None
    state: Gaussian | None
    name: str = ""

    def require_params(self) -> Params:
        """The parameters, or an InputError naming what the file lacks (for commands that need them)."""
        if self.params is None:
            raise InputError("the file has no parameters: 'A' is required")
        return self.params

    def require_state(self) -> Gaussian:
        """The Gaussian state, or an InputError naming what the file lacks."""
        if self.state is None:
            raise InputError("the file has no Gaussian state: 'mean' and 'cov' are required")
        return self.state


def _sized(q: Fraction, where: str, shown: str) -> Fraction:
    if q.numerator.bit_length() > MAX_ENTRY_BITS or q.denominator.bit_length() > MAX_ENTRY_BITS:
        raise InputError(f"{where}: the rational {shown} has a numerator or denominator of more than "
                         f"{MAX_ENTRY_BITS} bits")
    return q


def parse_entry(x: Any, where: str) -> Fraction:
    """One scalar entry: a JSON number or an exact rational/decimal string, of bounded size."""
    if isinstance(x, bool) or x is None:
        raise InputError(f"{where}: expected a number or a rational string, got {json.dumps(x)}")
    if isinstance(x, dict) and set(x) == {"lo", "hi"}:
        raise InputError(f"{where}: an interval {{lo, hi}} is accepted only where a family (box) of models is read")
    if isinstance(x, int):
        return _sized(Fraction(x), where, "integer")
    if isinstance(x, float):
        if not math.isfinite(x):
            raise InputError(f"{where}: value is not finite")
        return Fraction(x)
    if isinstance(x, str):
        s = x.strip()
        if len(s) > MAX_ENTRY_CHARS:
            raise InputError(f"{where}: entry string longer than {MAX_ENTRY_CHARS} characters")
        if _RATIONAL.fullmatch(s):
            num, _, den = s.partition("/")
            if den and int(den) == 0:
                raise InputError(f"{where}: zero denominator in '{s}'")
            return _sized(Fraction(int(num), int(den) if den else 1), where, f"'{s[:40]}'")
        m = _DECIMAL.fullmatch(s)
        if m:
            if m.group(1) and abs(int(m.group(1))) > MAX_EXPONENT:
                raise InputError(f"{where}: exponent in '{s[:40]}' exceeds {MAX_EXPONENT}")
            return _sized(Fraction(s), where, f"'{s[:40]}'")
        raise InputError(f"{where}: malformed rational '{s}' (expected e.g. '1/3', '-2', '0.1', '1e-3')")
    raise InputError(f"{where}: expected a number or a rational string, got a {type(x).__name__}")


def parse_vector(x: Any, name: str) -> tuple[tuple[Fraction, ...], bool]:
    """A bounded list of entries, and whether any was a binary float (so the input is not exact)."""
    if not isinstance(x, list):
        raise InputError(f"'{name}' must be a list of numbers")
    if not 1 <= len(x) <= MAX_DIM:
        raise InputError(f"'{name}' has length {len(x)}, outside 1..{MAX_DIM}")
    return tuple(parse_entry(v, f"{name}[{i}]") for i, v in enumerate(x)), any(isinstance(v, float) for v in x)


def parse_matrix(x: Any, name: str) -> tuple[exact.Matrix, bool]:
    """A bounded square matrix of entries, and whether any was a binary float."""
    if not isinstance(x, list) or not x or not all(isinstance(r, list) for r in x):
        raise InputError(f"'{name}' must be a non-empty list of rows")
    if len(x) > MAX_DIM or any(len(r) > MAX_DIM for r in x):
        raise InputError(f"'{name}' exceeds the dimension bound {MAX_DIM}")
    rows = [parse_vector(r, f"{name}[{i}]") if r else ((), False) for i, r in enumerate(x)]
    M = tuple(r for r, _ in rows)
    if any(len(r) != len(x) for r in M):
        raise InputError(f"'{name}' is not square: {len(x)} rows of lengths {sorted({len(r) for r in M})}")
    return M, any(f for _, f in rows)


def _reject_constant(name: str):
    raise InputError(f"non-finite number '{name}' in JSON")


MAX_INT_DIGITS = 421
"""A JSON integer literal: at most 421 digits, the most that always fits MAX_ENTRY_BITS."""


def _bounded_int(s: str) -> int:
    if len(s.lstrip("-")) > MAX_INT_DIGITS:
        raise InputError(f"integer literal longer than {MAX_INT_DIGITS} digits")
    return int(s)


def _no_duplicates(pairs: list) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise InputError(f"duplicate key '{k[:40]}' in a JSON object")
        out[k] = v
    return out


def loads_json(text: str, what: str = "file") -> Any:
    """Parse JSON text with the size and literal bounds; NaN/Infinity and duplicate keys rejected."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise InputError(f"{what} is larger than {MAX_FILE_BYTES} bytes")
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_bounded_int,
                          object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as e:
        raise InputError(f"{what} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise InputError(f"{what} is nested too deeply") from None
    except InputError as e:
        raise InputError(f"{what}: {e}") from None


def read_json_file(path: str | Path, what: str = "file") -> Any:
    """`loads_json` on a file: a regular file only (no FIFO, device or folder), read with a
    byte cap (never trusting `st_size`, which is 0 for /dev/zero), so any path costs at most
    MAX_FILE_BYTES + 1 bytes of reading."""
    import os
    import stat

    try:
        fd = os.open(str(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise InputError(f"cannot read {what} '{path}': {e.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{what} '{path}' is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise InputError(f"cannot read {what} '{path}': {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"{what} '{path}' is larger than {MAX_FILE_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"cannot read {what} '{path}': not UTF-8 ({e.reason} at byte {e.start})") from None
    return loads_json(text, f"{what} '{path}'")


def problem_from_dict(doc: Any) -> Problem:
    """Validate a parsed parameter document (unknown keys rejected) into a `Problem`."""
    if not isinstance(doc, dict):
        raise InputError("a parameter file must hold a JSON object")
    unknown = set(doc) - PARAM_KEYS - STATE_KEYS - META_KEYS
    if unknown:
        raise InputError(f"unknown key(s) {sorted(unknown)}; allowed: {sorted(PARAM_KEYS | STATE_KEYS | META_KEYS)}")
    name = doc.get("name", "")
    if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
        raise InputError(f"'name' must be a string of at most {MAX_NAME_CHARS} characters")
    if not isinstance(doc.get("description", ""), str):
        raise InputError("'description' must be a string")
    conv = doc.get("kernel_convention", KERNEL_CONVENTIONS[0])
    if conv not in KERNEL_CONVENTIONS:
        raise InputError(f"'kernel_convention' must be one of {list(KERNEL_CONVENTIONS)}")

    params = None
    if PARAM_KEYS & set(doc):
        missing = [k for k in ("A", "B", "V") if k not in doc]
        if missing:
            raise InputError(f"missing key(s) {missing}: A, B and V are required together")
        A, fa = parse_matrix(doc["A"], "A")
        d = len(A)
        B, fb = parse_matrix(doc["B"], "B")
        if isinstance(doc["V"], list):
            V, fv = parse_matrix(doc["V"], "V")
        else:
            V, fv = exact.identity(d, parse_entry(doc["V"], "V")), isinstance(doc["V"], float)
        if "b" in doc:
            b, fbb = parse_vector(doc["b"], "b")
        else:
            b, fbb = (Fraction(0),) * d, False
        for nm, M in (("B", B), ("V", V)):
            if len(M) != d:
                raise InputError(f"'{nm}' is {len(M)}x{len(M)} but 'A' is {d}x{d}")
        if len(b) != d:
            raise InputError(f"'b' has length {len(b)} but 'A' is {d}x{d}")
        params = Params(A, B, V, b, exact_input=not (fa or fb or fv or fbb))
        if conv == KERNEL_CONVENTIONS[1]:
            params = params.transposed_kernel()

    state = None
    if STATE_KEYS & set(doc):
        if not STATE_KEYS <= set(doc):
            raise InputError("'mean' and 'cov' must be given together")
        m, fm = parse_vector(doc["mean"], "mean")
        S, fs = parse_matrix(doc["cov"], "cov")
        if len(S) != len(m):
            raise InputError(f"'cov' is {len(S)}x{len(S)} but 'mean' has length {len(m)}")
        state = Gaussian(m, S, exact_input=not (fm or fs))
    if params is not None and state is not None and params.dim != state.dim:
        raise InputError(f"parameters have d = {params.dim} but the state has d = {state.dim}")
    if params is None and state is None:
        raise InputError("the file holds neither parameters (A, B, V) nor a state (mean, cov)")
    return Problem(params, state, name)


def load_problem(path: str | Path, what: str = "parameter file") -> Problem:
    """Load and validate a parameter file of untrusted JSON.

    The file holds the controls θ = (A, B, V, b), a Gaussian state N(mean, cov),
    or both, for the velocity v(x) = Ax + b + V·Attn_B[μ](x).  The kernel is
    exp(⟨Bx, y⟩) with the query x (B = KᵀQ for a Transformer with scores
    ⟨Qx, Ky⟩, softmax over all tokens); a file may declare
    ``"kernel_convention": "exp(<x,By>)"`` instead, and B is then transposed.

    Parameters
    ----------
    path : str or Path
        The JSON file.  Entries are JSON numbers or strings holding an exact
        rational ("1/3") or decimal ("0.1" is 1/10); V may be a scalar v for vI.
    what : str, optional
        How error messages name the file.

    Returns
    -------
    Problem
        ``params`` (`Params` or None), ``state`` (`Gaussian` or None) and
        ``name``.  At least one of the two is present.

    Raises
    ------
    InputError
        On an unreadable or oversized file, malformed JSON, an unknown key, a
        malformed entry, mismatched shapes, or a covariance that is not
        symmetric PSD.

    Notes
    -----
    Every entry is read exactly, as a `fractions.Fraction`; nothing is
    evaluated.  A JSON float becomes the exact binary rational it denotes, and
    ``exact_input`` on the result records that a float was present.  The
    bounds are `MAX_FILE_BYTES`, `model.MAX_DIM`, `MAX_ENTRY_CHARS` and
    `MAX_EXPONENT`.
    """
    return problem_from_dict(read_json_file(path, what))


def load_problem_text(text: str) -> Problem:
    """`load_problem` on JSON text already in memory."""
    return problem_from_dict(loads_json(text))


def _mat(M) -> list:
    return [[exact.frac_to_str(x) for x in r] for r in M]


def problem_to_dict(params: Params | None, state: Gaussian | None = None, name: str = "") -> dict:
    """Exact JSON form (every entry an exact rational string); load_problem inverts it."""
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if params is not None:
        out.update(A=_mat(params.A), B=_mat(params.B), V=_mat(params.V), b=[exact.frac_to_str(x) for x in params.b])
    if state is not None:
        out.update(mean=[exact.frac_to_str(x) for x in state.mean], cov=_mat(state.cov))
    return out


def dump_problem(path: str | Path, params: Params | None, state: Gaussian | None = None, name: str = "") -> None:
    """Write `problem_to_dict` to `path` (exact strings, so reloading gives the same Fractions)."""
    Path(path).write_text(json.dumps(problem_to_dict(params, state, name), indent=1) + "\n")


# --------------------------------------------------------------------------- interval boxes

def _interval_entry(x: Any, where: str) -> tuple[Fraction, Fraction]:
    if isinstance(x, dict):
        if set(x) != {"lo", "hi"}:
            raise InputError(f"{where}: an interval must be an object with exactly the keys 'lo' and 'hi'")
        lo, hi = parse_entry(x["lo"], f"{where}.lo"), parse_entry(x["hi"], f"{where}.hi")
        if not lo <= hi:
            raise InputError(f"{where}: the interval has lo > hi ({frac_str(lo)} > {frac_str(hi)})")
        return lo, hi
    q = parse_entry(x, where)
    return q, q


def frac_str(x: Fraction) -> str:
    """A rational for a message, cut to 40 characters."""
    s = exact.frac_to_str(x)
    return s if len(s) <= 40 else s[:37] + "..."


def _split_intervals(x: Any, where: str, depth: int):
    """(lo copy, hi copy, intervals) of a value: `depth` list levels, then entries."""
    if isinstance(x, dict) and depth > 0:
        raise InputError(f"'{where}' is given as an interval: intervals are allowed for single entries only "
                         "(the dimension of a family is fixed)")
    if depth == 0:
        lo, hi = _interval_entry(x, where)
        return exact.frac_to_str(lo), exact.frac_to_str(hi), [(lo, hi)]
    if not isinstance(x, list):
        return x, x, []          # problem_from_dict names the shape error
    parts = [_split_intervals(y, f"{where}[{i}]", depth - 1) for i, y in enumerate(x)]
    return [p[0] for p in parts], [p[1] for p in parts], [iv for p in parts for iv in p[2]]


def box_from_dict(doc: Any):
    """Validate a parameter document whose entries may be intervals into a `core.box.ParamBox`.

    The shapes, keys and kernel convention are checked by `problem_from_dict` on the box's
    lower and upper corners (so every rule of a point file holds); then lo <= hi for every
    interval, the bounds of `core.box` (d <= MAX_BOX_DIM, at most MAX_FREE proper
    intervals), equal intervals for cov[i][j] and cov[j][i], and cov ⪰ 0 for every member
    (Rohn's exact vertex test).  InputError on any violation.
    """
    from riccati_verify.core import box as bx

    if not isinstance(doc, dict):
        raise InputError("a parameter file must hold a JSON object")
    depth = {"A": 2, "B": 2, "V": 2 if isinstance(doc.get("V"), list) else 0, "b": 1, "mean": 1, "cov": 2}
    lo_doc, hi_doc, n_free = dict(doc), dict(doc), 0
    for k, dep in depth.items():
        if k in doc:
            lo_doc[k], hi_doc[k], ivs = _split_intervals(doc[k], k, dep)
            n_free += sum(1 for a, b in ivs if a < b)
    if not PARAM_KEYS & set(doc):
        raise InputError("a family needs parameters: 'A', 'B' and 'V'")
    if STATE_KEYS & set(doc) and not STATE_KEYS <= set(doc):
        raise InputError("'mean' and 'cov' must be given together")
    # the corners' covariances may be indefinite: their PSD test is replaced by Rohn's below
    plo, phi = (problem_from_dict({k: v for k, v in D.items() if k not in STATE_KEYS}).params
                for D in (lo_doc, hi_doc))
    d = plo.dim
    if d > bx.MAX_BOX_DIM:
        raise InputError(f"a family has d = {d}, more than the box bound {bx.MAX_BOX_DIM}")
    if n_free > bx.MAX_FREE:
        raise InputError(f"the box has {n_free} interval entries, more than {bx.MAX_FREE} "
                         f"(its 2^{n_free} vertices are too many to check)")
    iv = lambda M, N: tuple(tuple((M[i][j], N[i][j]) for j in range(d)) for i in range(d))
    v_scalar = not isinstance(doc["V"], list)
    name = doc.get("name", "")
    box = bx.ParamBox(iv(plo.A, phi.A), iv(plo.B, phi.B), iv(plo.V, phi.V), tuple(zip(plo.b, phi.b)), v_scalar,
                      name=name)
    if "mean" in doc:
        m_lo, _ = parse_vector(lo_doc["mean"], "mean")
        m_hi, _ = parse_vector(hi_doc["mean"], "mean")
        S_lo, _ = parse_matrix(lo_doc["cov"], "cov")
        S_hi, _ = parse_matrix(hi_doc["cov"], "cov")
        if len(m_lo) != d or len(S_lo) != d:
            raise InputError(f"the state has d = {len(m_lo)} or a {len(S_lo)}x{len(S_lo)} 'cov', but 'A' is {d}x{d}")
        S = iv(S_lo, S_hi)
        if any(S[i][j] != S[j][i] for i in range(d) for j in range(i)):
            raise InputError("'cov' is not symmetric: cov[i][j] and cov[j][i] must be the same number or interval")
        if not bx.interval_psd(S):
            raise InputError("'cov' is not positive semidefinite for every member of the box (exact Rohn test)")
        box = bx.ParamBox(box.A, box.B, box.V, box.b, v_scalar, tuple(zip(m_lo, m_hi)), S, name)
    return box


def load_box(path: str | Path, what: str = "parameter file"):
    """`box_from_dict` on a file (the bounds of `read_json_file` apply)."""
    return box_from_dict(read_json_file(path, what))


def _iv_json(x: tuple[Fraction, Fraction]):
    lo, hi = x
    return exact.frac_to_str(lo) if lo == hi else {"lo": exact.frac_to_str(lo), "hi": exact.frac_to_str(hi)}


def box_to_dict(box) -> dict:
    """Exact JSON form of a `ParamBox` (fixed entries as strings, the others as {lo, hi}); box_from_dict inverts it."""
    mat = lambda M: [[_iv_json(x) for x in r] for r in M]
    out: dict[str, Any] = {"name": box.name} if box.name else {}
    out.update(A=mat(box.A), B=mat(box.B), V=_iv_json(box.V[0][0]) if box.v_scalar else mat(box.V),
               b=[_iv_json(x) for x in box.b])
    if box.mean is not None:
        out.update(mean=[_iv_json(x) for x in box.mean], cov=mat(box.cov))
    return out
