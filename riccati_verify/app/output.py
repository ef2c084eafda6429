"""Printing results: JSON or text on stdout (`jsonable` and `Progress` live in core)."""

from __future__ import annotations

import json
import sys

from riccati_verify.core.progress import Progress
from riccati_verify.core.serial import jsonable

__all__ = ["Progress", "emit", "format_matrix", "jsonable"]


def emit(data: dict, text: str, as_json: bool) -> None:
    """Print `data` as JSON (with ``--json``) or `text`."""
    if as_json:
        sys.stdout.write(json.dumps(jsonable(data), indent=1) + "\n")
    else:
        sys.stdout.write(text.rstrip("\n") + "\n")


def format_matrix(M, fmt: str = "{:.6g}") -> str:
    """A matrix as indented rows of formatted floats."""
    import numpy as np  # here, not at import time: `verify` must not load numpy

    M = np.atleast_2d(np.asarray(M, dtype=float))
    return "\n".join("  [" + ", ".join(fmt.format(v) for v in row) + "]" for row in M)
