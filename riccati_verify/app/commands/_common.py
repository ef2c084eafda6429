"""Argument helpers shared by subcommands."""

from __future__ import annotations

import argparse
import math
from fractions import Fraction

from riccati_verify.core.errors import InputError

__all__ = ["DEFAULT_STATE_NOTE", "FLOAT_MAX", "FLOAT_MIN", "bounded_int", "finite_in", "in_float_range",
           "load_for_floats", "output_dir", "output_file", "positive_float", "record_file", "require",
           "state_or_default", "write_cert"]


def _number(s: str, convert, what: str):
    try:
        return convert(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{s}' is not {what}") from None


def positive_float(s: str) -> float:
    """argparse type: a positive finite float, rejected at parse time so a long run never starts on it."""
    x = _number(s, float, "a number")
    if not math.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"'{s}' must be a positive finite number")
    return x


def bounded_int(lo: int, hi: int):
    """argparse type factory: an integer in lo..hi, so every size from the command line is bounded."""
    def parse(s: str) -> int:
        x = _number(s, int, "an integer")
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"{x} is outside the allowed range {lo}..{hi}")
        return x

    return parse


def finite_in(lo: float, hi: float):
    """argparse type factory: a finite float in [lo, hi]."""
    def parse(s: str) -> float:
        x = _number(s, float, "a number")
        if not (math.isfinite(x) and lo <= x <= hi):
            raise argparse.ArgumentTypeError(f"must be finite and in [{lo:g}, {hi:g}], got {s}")
        return x

    return parse


def require(cond: bool, message: str) -> None:
    """Raise InputError (exit 2) with `message` unless `cond`."""
    if not cond:
        raise InputError(message)


def output_file(s: str) -> str:
    """An output path whose folder exists, checked before any long computation so no result is lost."""
    from pathlib import Path

    p = Path(s)
    if p.is_dir():
        raise argparse.ArgumentTypeError(f"'{s}' is a directory, not a file")
    if not p.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"the folder of '{s}' does not exist")
    return s


FLOAT_MIN, FLOAT_MAX = Fraction(1, 10 ** 300), Fraction(10 ** 300)
"""Magnitudes a command that computes in floats accepts (an exact 1e400 has no float, an exact
1e-400 becomes a float 0 to divide by).  The exact checker (`verify`) is not limited by this."""


def in_float_range(problem, what: str = "file"):
    """`problem` (an io.Problem) unchanged, or InputError (exit 2) naming the first entry whose
    nonzero magnitude is outside [FLOAT_MIN, FLOAT_MAX]; checked before any computation."""
    from fractions import Fraction

    def scan(name, rows):
        for i, r in enumerate(rows):
            for j, x in enumerate(r if isinstance(r, tuple) else (r,)):
                if x and not FLOAT_MIN <= abs(Fraction(x)) <= FLOAT_MAX:
                    at = f"{name}[{i}][{j}]" if isinstance(r, tuple) else f"{name}[{i}]"
                    raise InputError(f"{what}: {at} has magnitude outside [1e-300, 1e300], the range this "
                                     f"command computes in with floating point (0 is allowed)")

    if problem.params is not None:
        p = problem.params
        for name in ("A", "B", "V"):
            scan(name, getattr(p, name))
        scan("b", p.b)
    if problem.state is not None:
        scan("mean", problem.state.mean)
        scan("cov", problem.state.cov)
    return problem


def load_for_floats(path, what: str = "parameter file"):
    """`io.load_problem` plus `in_float_range`: for commands that integrate or optimise in floats.
    The file's JSON floats are recorded (`output.record_input`) for the output and certificates."""
    from riccati_verify.core.io import load_problem

    problem = in_float_range(load_problem(path, what), what)
    record_file(path, what)
    return problem


def record_file(path, what: str) -> None:
    """Record which entries of the (already validated) JSON file at `path` are binary floats."""
    from riccati_verify.app.output import record_input
    from riccati_verify.core.io import read_json_file

    record_input(what, read_json_file(path, what))


def write_cert(path, doc: dict) -> None:
    """Write a certificate with the input record of this run (whether the files gave every
    number exactly, and which were floats): the checker accepts the record and ignores it."""
    from riccati_verify.app.output import with_input_record
    from riccati_verify.certify.certificate import write_certificate

    write_certificate(path, with_input_record(doc))


def output_dir(s: str) -> str:
    """An output folder: it may not exist yet, but its parent must, so nothing is ever created
    above the requested directory (no `mkdir -p` of /nonexistent/...)."""
    from pathlib import Path

    p = Path(s)
    if p.exists() and not p.is_dir():
        raise argparse.ArgumentTypeError(f"'{s}' exists and is not a directory")
    if not p.resolve().parent.is_dir():
        raise argparse.ArgumentTypeError(f"the parent folder of '{s}' does not exist")
    return s


DEFAULT_STATE_NOTE = "initial state N(0, I): the file gives no 'mean' and 'cov'"


def state_or_default(problem):
    """(state, how): the file's Gaussian and "given", or N(0, I) and "default N(0, I)" when the
    file has no state: the default `check` uses (certify.stability.default_state), for every
    command that needs an initial law."""
    if problem.state is not None:
        return problem.state, "given"
    from riccati_verify.certify.stability import default_state

    return default_state(problem.require_params().dim), "default N(0, I)"
