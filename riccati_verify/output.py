"""Turning results into JSON and text, and progress on stderr."""

from __future__ import annotations

import json
import sys
import time
from fractions import Fraction
from typing import Any

import numpy as np

from .exact import frac_to_str


def jsonable(x: Any) -> Any:
    """Recursively convert Fractions (to exact strings), numpy values and tuples to JSON types."""
    if isinstance(x, Fraction):
        return frac_to_str(x)
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return jsonable(x.tolist())
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if np.isfinite(x) else repr(x)
    if hasattr(x, "__dataclass_fields__"):
        return jsonable({k: getattr(x, k) for k in x.__dataclass_fields__})
    return x


def emit(data: dict, text: str, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(jsonable(data), indent=1) + "\n")
    else:
        sys.stdout.write(text.rstrip("\n") + "\n")


def format_matrix(M, fmt: str = "{:.6g}") -> str:
    M = np.atleast_2d(np.asarray(M, dtype=float))
    return "\n".join("  [" + ", ".join(fmt.format(v) for v in row) + "]" for row in M)


class Progress:
    """A one-line progress counter on stderr; silent when `enabled` is False."""

    def __init__(self, total: int, label: str, enabled: bool = True):
        self.total, self.label, self.enabled = total, label, enabled
        self.done = 0
        self.t0 = time.monotonic()

    def step(self, note: str = "") -> None:
        self.done += 1
        if self.enabled:
            el = time.monotonic() - self.t0
            sys.stderr.write(f"\r{self.label}: {self.done}/{self.total} ({el:.1f}s) {note[:40]:<40}")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
