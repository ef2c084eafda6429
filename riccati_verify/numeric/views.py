"""Float views of the exact model types.

`core.model` holds Fractions only, so that the trusted checker never loads
numpy.  Numerical code reads parameters and states through `float_view`, which
builds read-only float64 arrays once per object and keeps them on it.
"""

from __future__ import annotations

import numpy as np

from riccati_verify.core.model import Gaussian, Params

__all__ = ["float_view"]


def _frozen(x) -> np.ndarray:
    a = np.array(x, dtype=float)
    a.setflags(write=False)
    return a


def float_view(obj: Params | Gaussian) -> tuple[np.ndarray, ...]:
    """Read-only float arrays: (A, B, V, b) for `Params`, (mean, cov) for `Gaussian`.

    The arrays are the nearest doubles to the exact entries; they are for
    numerical work only and never decide a certified verdict.
    """
    cached = obj.__dict__.get("_float_view")
    if cached is None:
        if isinstance(obj, Params):
            cached = tuple(_frozen(x) for x in (obj.A, obj.B, obj.V, obj.b))
        elif isinstance(obj, Gaussian):
            cached = (_frozen(obj.mean), _frozen(obj.cov))
        else:
            raise TypeError(f"float_view takes Params or Gaussian, not {type(obj).__name__}")
        object.__setattr__(obj, "_float_view", cached)
    return cached
