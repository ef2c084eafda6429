"""Trajectories as xarray Datasets (the optional `xarray` extra; in [test], so CI runs these)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scipy.linalg import expm

from riccati_verify import Gaussian, Params, integrate_moments, load_problem, simulate_tokens
from riccati_verify.core.errors import InputError

xr = pytest.importorskip("xarray", reason="xarray export needs the optional extra: pip install 'riccati-verify[xarray]'")

A = [[-1, 2], [0, "-1/2"]]
ZERO = [[0, 0], [0, 0]]


def test_flow_dataset_follows_the_closed_form():
    """With B = V = 0 the flow is linear: m(t) = e^{At} m0, Σ(t) = e^{At} Σ0 e^{Aᵀt}; the Dataset
    holds that solution on its own time coordinate (so coordinates and values are aligned)."""
    p = Params.from_arrays(A=A, B=ZERO, V=ZERO)
    s = Gaussian.from_arrays(mean=[1, -1], cov=[[2, "1/2"], ["1/2", 1]])
    ds = integrate_moments(p, s, 2.0).to_xarray()
    assert ds["cov"].dims == ("t", "i", "j") and ds["mean"].dims == ("t", "i")
    assert float(ds.t[0]) == 0.0 and float(ds.t[-1]) == 2.0 and ds.attrs["blowup"] == "false"
    An, m0, S0 = np.array([[-1, 2], [0, -0.5]]), np.array([1.0, -1.0]), np.array([[2, 0.5], [0.5, 1]])
    for t in (0.0, float(ds.t[len(ds.t) // 3]), 2.0):
        E = expm(An * t)
        got = ds.sel(t=t)
        assert np.allclose(got["mean"].values, E @ m0, rtol=1e-7, atol=1e-9)
        assert np.allclose(got["cov"].values, E @ S0 @ E.T, rtol=1e-7, atol=1e-9)


def test_simulation_dataset_and_netcdf_round_trip(tmp_path):
    prob = load_problem(__import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "rotation_stable.json")
    r = simulate_tokens(prob.params, prob.state, 40, 0.3, steps=6, seed=5)
    ds = r.to_xarray()
    assert set(ds.data_vars) == {"particles_mean", "particles_cov", "ode_mean", "ode_cov"}
    assert ds.sizes["t"] == 7 and ds.attrs["seed"] == 5 and ds.attrs["tokens"] == 40
    assert ds.attrs["status"] == str(r.status)
    # the prediction starts at the initial law exactly; both time axes span [0, T]
    m0 = np.array([float(x) for x in prob.state.mean])
    assert np.array_equal(ds["ode_mean"].sel(t_ode=0.0).values, m0)
    assert float(ds.t_ode[-1]) == pytest.approx(0.3) and float(ds.t[-1]) == pytest.approx(0.3)
    # the particles' covariance is symmetric at every recorded time
    c = ds["particles_cov"].values
    assert np.allclose(c, np.swapaxes(c, 1, 2))
    path = tmp_path / "run.nc"
    ds.to_netcdf(path, engine="scipy")
    with xr.open_dataset(path, engine="scipy") as back:
        xr.testing.assert_allclose(back.load(), ds)
        assert back.attrs["seed"] == 5


def test_without_xarray_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "xarray", None)           # import xarray now fails
    p = Params.from_arrays(A=A, B=ZERO, V=ZERO)
    f = integrate_moments(p, Gaussian.from_arrays(mean=[0, 0], cov=[[1, 0], [0, 1]]), 0.5)
    with pytest.raises(InputError, match=r"riccati-verify\[xarray\]"):
        f.to_xarray()


def test_mismatched_shapes_are_refused():
    from riccati_verify.numeric.export import trajectory_dataset

    with pytest.raises(InputError, match="do not match"):
        trajectory_dataset([0.0, 1.0], {"": (np.zeros((3, 2)), np.zeros((3, 2, 2)))})


def test_flow_and_simulate_write_netcdf(cli, write_json, tmp_path):
    """`flow --netcdf` and `simulate --netcdf`: the file holds the trajectory and the input record."""
    p = write_json({"A": [[-1, 0.5], [0, -1]], "B": ZERO, "V": 1})            # 0.5: a JSON float
    nc = tmp_path / "flow.nc"
    r = cli("flow", p, "--time", "1", "--netcdf", nc, "--json")
    assert r.returncode == 0, r.stderr
    with xr.open_dataset(nc, engine="scipy") as ds:
        assert ds.attrs["input_exact"] == "false" and ds.attrs["input_float_entries"] == "A[0][1]"
        E = expm(np.array([[-1, 0.5], [0, -1]]))
        assert np.allclose(ds["cov"].sel(t=1.0).values, E @ E.T, rtol=1e-7)      # from N(0, I)
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    nc2 = tmp_path / "sim.nc"
    r = cli("simulate", root / "examples" / "rotation_stable.json", "--tokens", "30", "--time", "0.2",
            "--steps", "4", "--seed", "3", "--netcdf", nc2, "--quiet")
    assert r.returncode in (0, 1) and "trajectories (netCDF)" in r.stdout, r.stderr
    with xr.open_dataset(nc2, engine="scipy") as ds:
        assert ds.sizes["t"] == 5 and ds.attrs["seed"] == 3 and ds.attrs["input_exact"] == "true"


def test_netcdf_without_xarray_fails_before_the_work(cli, write_json, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "xarray", None)
    r = cli("flow", write_json({"A": [[-1]], "B": [[0]], "V": 1}), "--time", "1", "--netcdf", tmp_path / "f.nc")
    assert r.returncode == 2 and "riccati-verify[xarray]" in r.stderr
    assert not (tmp_path / "f.nc").exists()
