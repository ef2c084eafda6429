"""Trajectories as xarray Datasets (the optional `xarray` extra: pip install 'riccati-verify[xarray]').

One layout for every trajectory the package computes: a time coordinate ``t``, the mean on
dimension ``i`` and the covariance on ``(i, j)``, float64.  A result that compares two
trajectories (particles against the moment ODE) puts both in one Dataset, under a prefix each.
Attributes carry the run's scalar record (seed, sizes, status), so a saved file says how it
was made; values that netCDF cannot store (None, bool, nested) are written as strings or left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from riccati_verify.core.errors import InputError

__all__ = ["require_xarray", "trajectory_dataset", "write_netcdf"]


def require_xarray():
    """The xarray module; InputError naming the extra when it is not installed."""
    try:
        import xarray
    except ImportError:
        raise InputError("xarray output needs xarray, which is not installed "
                         "(pip install 'riccati-verify[xarray]')") from None
    return xarray


def _attr(v: Any):
    """A netCDF-storable attribute value, or None to leave the entry out."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (int, float, str, np.integer, np.floating)):
        return v
    return None


def trajectory_dataset(t, trajectories: dict[str, tuple[np.ndarray, np.ndarray]], attrs: dict | None = None):
    """An xarray Dataset on the times `t`: for each ``prefix -> (means (n, d), covs (n, d, d))``
    the variables ``{prefix}mean`` (t, i) and ``{prefix}cov`` (t, i, j).  InputError without
    xarray, or when a trajectory's shape does not match `t`."""
    xr = require_xarray()
    t = np.asarray(t, dtype=float)
    data = {}
    d = None
    for prefix, (means, covs) in trajectories.items():
        means, covs = np.asarray(means, dtype=float), np.asarray(covs, dtype=float)
        d = means.shape[1] if means.ndim == 2 else None
        if d is None or means.shape[0] != t.shape[0] or covs.shape != (t.shape[0], d, d):
            raise InputError(f"trajectory '{prefix}': means {means.shape} and covs {covs.shape} do not match "
                             f"{t.shape[0]} times")
        data[f"{prefix}mean"] = (("t", "i"), means)
        data[f"{prefix}cov"] = (("t", "i", "j"), covs)
    coords = {"t": t}
    if d is not None:
        coords.update(i=np.arange(d), j=np.arange(d))
    kept = {k: a for k, v in (attrs or {}).items() if (a := _attr(v)) is not None}
    return xr.Dataset(data, coords=coords, attrs=kept)


def write_netcdf(ds, path, input_record: dict | None = None) -> str:
    """Write `ds` as netCDF 3 (the scipy engine: no netCDF library needed), with the input record
    of the run (whether every number was given exactly) as attributes; InputError on a write failure."""
    if input_record is not None:
        ds = ds.assign_attrs(input_exact=str(input_record["exact"]).lower(),
                             input_float_entries=", ".join(input_record["float_entries"]))
    try:
        ds.to_netcdf(path, engine="scipy")
    except OSError as e:
        raise InputError(f"cannot write the netCDF file {path}: {e.strerror or e}") from None
    return str(path)
