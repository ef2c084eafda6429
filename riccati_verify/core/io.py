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
    "PARAM_KEYS", "STATE_KEYS", "Problem", "dump_problem", "load_problem", "load_problem_text",
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

_RATIONAL = re.compile(r"[+-]?\d+(?:/\d+)?")
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE]([+-]?\d+))?")


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
