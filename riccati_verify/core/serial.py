"""JSON forms of results: exact numbers as rational strings, arrays as lists.

No numpy import: arrays and numpy scalars are recognised by their ``tolist``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from riccati_verify.core.exact import frac_to_str

__all__ = ["jsonable"]


def jsonable(x: Any) -> Any:
    """Recursively convert Fractions (to exact strings), arrays, numpy scalars, tuples and
    dataclasses to JSON types; a non-finite float becomes its repr ('inf', 'nan')."""
    if isinstance(x, Fraction):
        return frac_to_str(x)
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, (bool, int, str)) or x is None:
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else repr(x)
    if hasattr(x, "tolist") and callable(x.tolist):  # numpy arrays and scalars
        return jsonable(x.tolist())
    if hasattr(x, "__dataclass_fields__"):
        return jsonable({k: getattr(x, k) for k in x.__dataclass_fields__})
    return x
