"""Argument helpers shared by subcommands."""

from __future__ import annotations

import argparse
import math

from riccati_verify.core.errors import InputError

__all__ = ["bounded_int", "finite_in", "output_file", "positive_float", "require"]


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
