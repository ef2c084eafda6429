"""Argument helpers shared by subcommands."""

from __future__ import annotations

import argparse
import math

from riccati_verify.core.errors import InputError


def positive_float(s: str) -> float:
    try:
        x = float(s)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{s}' is not a number") from None
    if not math.isfinite(x) or x <= 0:
        raise argparse.ArgumentTypeError(f"'{s}' must be a positive finite number")
    return x


def bounded_int(lo: int, hi: int):
    def parse(s: str) -> int:
        try:
            x = int(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{s}' is not an integer") from None
        if not lo <= x <= hi:
            raise argparse.ArgumentTypeError(f"{x} is outside the allowed range {lo}..{hi}")
        return x

    return parse


def require(cond: bool, message: str) -> None:
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
