"""Reusable property suites: point them at your own model, parameter family or certificate producer.

Each `check_*` function runs a hypothesis property over the strategies you give
(defaults from `riccati_verify.testing.strategies`) and raises `AssertionError` with a
shrunk counterexample when the property fails.  Call them from a plain pytest
test; the active hypothesis profile (e.g. `riccati-ci`, `riccati-dev`, `riccati-thorough`,
registered by the riccati_verify pytest plugin and loaded on request) applies unless you pass `settings=`.

Every suite compares against an *independent* route, with a tolerance derived
from that route's own error estimate:

- `check_gaussian_invariance`: the velocity field on a Gaussian must be affine
  on the support (then the flow maps Gaussians to Gaussians);
- `check_moment_ode`: a moment right-hand side (ṁ, Σ̇) must equal the transport
  identity d/dt E[φ(X)] = E[∇φ(X)·v(X)] for φ = x and φ = (x − m)(x − m)ᵀ,
  evaluated by Gauss–Hermite quadrature of the velocity field itself — the
  moment formula is never used — and, for d ≤ 2, the sympy-derived right-hand side;
- `check_rank_invariance`: along piecewise-constant controls, Σ(t) stays PSD
  with the rank of Σ0 (MATH.md §3), with a resolution derived from the
  norm-comparison bound of MATH.md §8 and the integrator tolerance;
- `check_certificates_roundtrip`: certificates you produce pass the independent
  checker, still pass after a JSON round trip, and every tampering you name is
  rejected.
"""

from __future__ import annotations

import copy
import json
import math
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from hypothesis import given, note, settings as hsettings, strategies as st
from hypothesis.strategies import SearchStrategy
from numpy.polynomial.hermite_e import hermegauss

from riccati_verify.core import bernoulli, exact
from riccati_verify.testing import strategies as rst
from riccati_verify.numeric.flow import Segment, integrate_moments, moment_rhs
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.numeric.views import float_view

__all__ = [
    "attention_velocity_quadrature", "transport_moment_rhs", "check_gaussian_invariance",
    "check_moment_ode", "check_rank_invariance", "check_linearisation", "check_radon_linearisation",
    "check_scalar_bernoulli", "check_riccati_regimes", "check_reachability", "check_certificates_roundtrip",
    "perturb_entry",
]

EPS = np.finfo(float).eps
VelocityFn = Callable[[Params, Gaussian, np.ndarray], Any]


# -- an independent route: Gauss–Hermite quadrature of the velocity field ---------

def _support_factor(state: Gaussian) -> tuple[np.ndarray, np.ndarray]:
    """(m, L) with Σ = L Lᵀ and L of width rank Σ (the exact rank), from a float eigendecomposition."""
    m, S = (np.array(a, dtype=float) for a in float_view(state))
    r = state.rank
    w, Q = np.linalg.eigh(S)
    idx = np.argsort(w)[::-1][:r]
    return m, Q[:, idx] * np.sqrt(np.clip(w[idx], 0.0, None))


def _tensor_nodes(r: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Probabilists' Gauss–Hermite nodes in ℝ^r (n per axis) and weights summing to 1."""
    if r == 0:
        return np.zeros((1, 0)), np.ones(1)
    z, w = hermegauss(n)
    w = w / w.sum()
    grids = np.meshgrid(*([z] * r), indexing="ij")
    wg = np.meshgrid(*([w] * r), indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1), np.prod(np.stack([g.ravel() for g in wg]), axis=0)


def _tilted_mean(m: np.ndarray, L: np.ndarray, C: np.ndarray, n: int) -> np.ndarray:
    """∫ y e^{⟨c,y⟩} N(m, LLᵀ)(dy) / ∫ e^{⟨c,y⟩} N(m, LLᵀ)(dy) for each row c of C, by quadrature."""
    Z, w = _tensor_nodes(L.shape[1], n)
    Y = m + Z @ L.T                       # quadrature nodes in the support
    logits = C @ Y.T                      # (q, nodes)
    logits -= logits.max(axis=1, keepdims=True)
    K = np.exp(logits) * w
    return (K @ Y) / K.sum(axis=1, keepdims=True)


def attention_velocity_quadrature(params: Params, state: Gaussian, X: np.ndarray, *, nodes: int = 40
                                  ) -> tuple[np.ndarray, float]:
    """The mean-field velocity v[μ](x) = Ax + b + V·∫y e^{⟨Bx,y⟩}μ(dy)/∫e^{⟨Bx,y⟩}μ(dy) at the rows
    of X, for μ = N(m, Σ), by tensor Gauss–Hermite quadrature over the support of μ (rank Σ axes).

    Returns (values, error_estimate): the estimate is the largest difference to the same
    quadrature with nodes + 12 points per axis, times ‖V‖₂, plus a rounding term.  Nothing here
    uses the tilting identity or the moment ODE.  Cost: O(len(X)·nodes^rank)."""
    A, B, V, b = float_view(params)
    X = np.atleast_2d(np.asarray(X, dtype=float))
    m, L = _support_factor(state)
    C = X @ B.T
    t1 = _tilted_mean(m, L, C, nodes)
    t2 = _tilted_mean(m, L, C, nodes + 12)
    vals = X @ A.T + b + t2 @ V.T
    scale = np.max(np.abs(X @ A.T)) + np.max(np.abs(b)) + np.linalg.norm(V, 2) * np.max(np.abs(t2)) + 1.0
    err = float(np.max(np.abs(t1 - t2))) * np.linalg.norm(V, 2) + 256 * EPS * scale
    return vals, err


def _call_velocity(fn: VelocityFn, p: Params, g: Gaussian, X: np.ndarray) -> tuple[np.ndarray, float | None]:
    out = fn(p, g, X)
    if isinstance(out, tuple):
        vals, err = out
        return np.asarray(vals, dtype=float), float(err)
    return np.asarray(out, dtype=float), None


def transport_moment_rhs(velocity_fn: VelocityFn, params: Params, state: Gaussian, *, nodes: int = 3
                         ) -> tuple[np.ndarray, np.ndarray, float | None]:
    """(ṁ, Σ̇, error) from the transport equation: ṁ = E[v(X)], Σ̇ = E[(X−m)v(X)ᵀ + v(X)(X−m)ᵀ],
    X ~ N(m, Σ), by Gauss–Hermite quadrature with `nodes` points per support axis (exact for
    integrands of degree ≤ 2·nodes − 1, so for any affine v with nodes ≥ 2).  `error` propagates
    the velocity's own error estimate (None when velocity_fn gives none):
    |Δṁ| ≤ e_v and |ΔΣ̇| ≤ 2 e_v E|X − m| ≤ 2 e_v √tr Σ."""
    m, L = _support_factor(state)
    Z, w = _tensor_nodes(L.shape[1], nodes)
    X = m + Z @ L.T
    v, ev = _call_velocity(velocity_fn, params, state, X)
    Y = X - m
    mdot = w @ v
    G = (Y * w[:, None]).T @ v
    err = None if ev is None else ev * (1 + 2 * math.sqrt(max(float(np.trace(L @ L.T)), 0.0)))
    return mdot, G + G.T, err


# -- composing strategies -----------------------------------------------------------

def _default_states(d: int) -> SearchStrategy[Gaussian]:
    return rst.gaussians(d, max_mean=1, max_eigenvalue=1)


def _problems(params: SearchStrategy[Params] | None, states: Callable[[int], SearchStrategy[Gaussian]] | None):
    params = rst.params(st.integers(1, 3), max_magnitude=1) if params is None else params
    states = _default_states if states is None else states

    @st.composite
    def build(draw):
        p = draw(params)
        return p, draw(states(p.dim))

    return build()


def _run(test, settings: hsettings | None):
    """Run the property; several distinct failures come back as one AssertionError (the first)."""
    try:
        (settings(test) if settings is not None else test)()
    except BaseExceptionGroup as group:
        first = group.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        if isinstance(first, AssertionError):
            raise AssertionError(f"{first} (and {len(group.exceptions) - 1} more distinct failure(s))") from group
        raise


# -- suites -------------------------------------------------------------------

def check_gaussian_invariance(velocity_fn: VelocityFn = attention_velocity_quadrature, *,
                              params: SearchStrategy[Params] | None = None,
                              states: Callable[[int], SearchStrategy[Gaussian]] | None = None,
                              probes: int = 6, rtol: float = 1e-8,
                              settings: hsettings | None = None) -> None:
    """Property: for every drawn (params, Gaussian state), x ↦ velocity_fn(params, state, x) is
    affine on the support m + range Σ, so the flow maps the Gaussian to a Gaussian (MATH.md §2).

    velocity_fn(params, state, X) gets X of shape (n, d) and returns the velocities (n, d), or a
    pair (velocities, absolute error estimate).  The velocity is probed at the rank Σ + 1 + probes
    points m + L z (Σ = LLᵀ) with z = 0, the unit vectors and `probes` uniform points in
    [−2, 2]^rank from a seed drawn by hypothesis (and recorded with `note`).  The affine
    least-squares fit must leave a residual at most (1 + √n)·error for n probes when an error
    estimate is given (an orthogonal projector P on n points has ‖I − P‖∞ ≤ 1 + √n, so errors of
    size ≤ error cannot leave more), else rtol·(1 + max |v|)."""

    @given(_problems(params, states), st.integers(0, 2**32 - 1))
    def prop(problem, seed):
        p, g = problem
        m, L = _support_factor(g)
        r = L.shape[1]
        note(f"probe seed {seed}")
        Z = np.vstack([np.zeros((1, r)), np.eye(r), np.random.default_rng(seed).uniform(-2, 2, (probes, r))])
        X = m + Z @ L.T
        v, err = _call_velocity(velocity_fn, p, g, X)
        design = np.hstack([np.ones((len(Z), 1)), Z])
        coef, *_ = np.linalg.lstsq(design, v, rcond=None)
        resid = float(np.max(np.abs(design @ coef - v)))
        tol = (1 + math.sqrt(len(Z))) * err if err is not None else rtol * (1 + float(np.max(np.abs(v))))
        note(f"rank Σ = {r}, affine-fit residual {resid:.3e}, tolerance {tol:.3e}")
        assert resid <= tol, (f"velocity is not affine on the support of N(m, Σ) (rank {r}): "
                              f"residual {resid:.3e} > tolerance {tol:.3e}")

    _run(prop, settings)


_SYMBOLIC_RHS: dict[int, Callable] = {}


def _symbolic_rhs(d: int):
    if d not in _SYMBOLIC_RHS:
        from riccati_verify.symbolic.moments import lambdified_rhs

        _SYMBOLIC_RHS[d] = lambdified_rhs(d)
    return _SYMBOLIC_RHS[d]


def check_moment_ode(params: SearchStrategy[Params] | None = None, *,
                     states: Callable[[int], SearchStrategy[Gaussian]] | None = None,
                     rhs: Callable = moment_rhs, velocity_fn: VelocityFn = attention_velocity_quadrature,
                     symbolic_max_dim: int = 2, settings: hsettings | None = None) -> None:
    """Property: rhs(A, B, V, b, m, Σ) → (ṁ, Σ̇) (default `flow.moment_rhs`) equals

    1. the transport identity for the velocity field (`transport_moment_rhs(velocity_fn, ...)`,
       by default the attention velocity by quadrature — independent of eq. 1.1), within 4× the
       propagated quadrature error estimate plus 64·eps·(the rhs evaluated on |A|, |B|, ...);
    2. for d ≤ symbolic_max_dim, the right-hand side derived symbolically by sympy from the
       velocity field (`symbolic.moments.lambdified_rhs`), within the same rounding bound.

    Default parameters: `strategies.params(1..3)`, non-symmetric B and V, states of any rank."""

    @given(_problems(params, states))
    def prop(problem):
        p, g = problem
        A, B, V, b = float_view(p)
        m, S = (np.array(a) for a in float_view(g))
        mdot, Sdot = (np.asarray(x, dtype=float) for x in rhs(A, B, V, b, m, S))
        # rounding bound: the same products evaluated on absolute values (γ_n-style bound)
        am, aS = moment_rhs(np.abs(A), np.abs(B), np.abs(V), np.abs(b), np.abs(m), np.abs(S))
        rnd_m = 64 * p.dim * EPS * (np.abs(am) + 1e-300)
        rnd_S = 64 * p.dim * EPS * (np.abs(aS) + 1e-300)
        tm, tS, err = transport_moment_rhs(velocity_fn, p, g)
        err = 0.0 if err is None else err
        dm, dS = np.abs(mdot - tm), np.abs(Sdot - tS)
        note(f"transport route: |Δṁ| = {dm.max():.3e}, |ΔΣ̇| = {dS.max():.3e}, error estimate {err:.3e}")
        assert np.all(dm <= 4 * err + rnd_m), f"ṁ disagrees with E[v(X)]: {mdot} vs {tm}"
        assert np.all(dS <= 4 * err + rnd_S), f"Σ̇ disagrees with E[(X−m)vᵀ + v(X−m)ᵀ]:\n{Sdot}\nvs\n{tS}"
        if p.dim <= symbolic_max_dim:
            sm, sS = _symbolic_rhs(p.dim)(A, B, V, b, m, S)
            assert np.all(np.abs(mdot - sm) <= rnd_m) and np.all(np.abs(Sdot - sS) <= rnd_S), \
                "rhs disagrees with the sympy-derived moment ODE"

    _run(prop, settings)


def _norm_bound_horizon(segments: Sequence[Segment], S0: np.ndarray) -> tuple[float, float, float]:
    """(T_safe, σ_max, L): half the norm-comparison lower bound on the blow-up time (MATH.md §8,
    d‖Σ‖/dt ≤ 2a‖Σ‖ + 2k‖Σ‖², a = max‖A‖, k = max‖V‖‖B‖ over the segments), the bound on ‖Σ‖
    on [0, T_safe] from the comparison Bernoulli solution, and L ≥ ‖A + VΣB‖ there."""
    a = max(np.linalg.norm(float_view(s.params)[0], 2) for s in segments)
    k = max(np.linalg.norm(float_view(s.params)[2], 2) * np.linalg.norm(float_view(s.params)[1], 2) for s in segments)
    s0 = float(np.linalg.norm(S0, 2))
    T = math.inf if s0 == 0 or k == 0 else float(bernoulli.scalar_blowup_time(a, k, s0))
    t = T / 2
    if not math.isfinite(t):
        t = sum(s.duration for s in segments)
    if a == 0:
        smax = s0 / (1 - 2 * k * s0 * t) if k else s0
    else:
        e = math.exp(2 * a * t)
        smax = a * s0 * e / (a + k * s0 * (1 - e))
    return T / 2, smax, a + k * smax


def check_rank_invariance(controls: SearchStrategy[list[Segment]] | None = None, *,
                          states: Callable[[int], SearchStrategy[Gaussian]] | None = None,
                          rtol: float = 1e-11, integrate: Callable = integrate_moments,
                          settings: hsettings | None = None) -> None:
    """Property (MATH.md §3): integrating eq. 1.1 with `flow.integrate_moments` along a
    piecewise-constant control sequence from N(m, Σ0), Σ(t) stays positive semidefinite with
    rank Σ(t) = rank Σ0 at every sample time.

    The horizon is cut at half the norm-comparison lower bound on the blow-up time, where
    ‖Σ(t)‖ ≤ σ_max and ‖J(t)‖ ≤ L.  Then the nonzero eigenvalues stay ≥ λ⁺ = λ⁺_min(Σ0)·e^{−2Lt},
    and the integration error is taken as ε = 1e3·(rtol·σ_max·(1 + Lt) + atol); eigenvalues
    below −ε fail PSD, and the rank counts eigenvalues above √(ε λ⁺).  `integrate` (same
    signature and result as `flow.integrate_moments`) lets you test your own integrator.  An example where ε ≥ λ⁺/100
    (beyond the check's resolution) is an error, not a pass: use better-conditioned strategies."""
    if controls is None:
        controls = rst.control_sequences(st.integers(1, 3), max_segments=3, max_duration=0.25,
                                         segment_params=lambda d: rst.params(d, max_magnitude=Fraction(1, 2)))
    states = _default_states if states is None else states

    @st.composite
    def problems(draw):
        segs = draw(controls)
        return segs, draw(states(segs[0].params.dim))

    @given(problems())
    def prop(problem):
        segs, g = problem
        S0 = np.array(float_view(g)[1])
        r = g.rank
        T_safe, smax, L = _norm_bound_horizon(segs, S0)
        T = min(sum(s.duration for s in segs), T_safe)
        atol = 1e-14
        res = integrate(segs, g, T, rtol=rtol, atol=atol, n_samples=21)
        assert not res.blowup, f"blow-up reported inside the norm-comparison safe horizon: {res.reason}"
        # the r = rank Σ0 (exact) largest eigenvalues are the nonzero ones
        lam_lo = float(np.sort(np.linalg.eigvalsh(S0))[-r]) * math.exp(-2 * L * T) if r else 0.0
        eps = 1e3 * (rtol * smax * (1 + L * T) + atol)
        assert r == 0 or eps < lam_lo / 100, f"example beyond the check's resolution (ε = {eps:.2e}, λ⁺ ≥ {lam_lo:.2e})"
        thresh = math.sqrt(eps * lam_lo) if r else eps
        for t, S in zip(res.t, res.covs):
            w = np.linalg.eigvalsh((S + S.T) / 2)
            assert w.min() >= -eps, f"Σ(t) lost positive semidefiniteness at t = {t}: λ_min = {w.min():.3e}"
            rank_t = int(np.sum(w > thresh))
            assert rank_t == r, f"rank changed from {r} to {rank_t} at t = {t}; eigenvalues {w}"

    _run(prop, settings)


def _exact_cov_rhs(p: Params, S: exact.Matrix) -> np.ndarray:
    """Σ̇ of `flow.moment_rhs` evaluated exactly (object arrays of Fractions)."""
    obj = lambda M: np.array(M, dtype=object)
    _, Sdot = moment_rhs(obj(p.A), obj(p.B), obj(p.V), obj(p.b), np.array(p.b, dtype=object), obj(S))
    return Sdot


def _sym_coords(d: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(d) for j in range(i, d)]


def _as_fraction(x) -> Fraction:
    if hasattr(x, "p") and hasattr(x, "q"):  # flint.fmpq
        return Fraction(int(x.p), int(x.q))
    return Fraction(x)


def _default_linearisations():
    from riccati_verify.certify.equilibria import linearisation_fmpq, linearisation_np

    def exact_route(p, S):
        M = linearisation_fmpq(p, S)
        return [[M[i, j] for j in range(M.ncols())] for i in range(M.nrows())], None

    def float_route(p, S):
        A, B, V, _ = float_view(p)
        return linearisation_np(A, B, V, np.array(S, dtype=float)), "float"

    return {"linearisation_fmpq": exact_route, "linearisation_np": float_route}


def check_linearisation(params: SearchStrategy[Params] | None = None, *,
                        points: Callable[[int], SearchStrategy[exact.Matrix]] | None = None,
                        linearisations: Mapping[str, Callable] | None = None,
                        settings: hsettings | None = None) -> None:
    """Property (MATH.md §5): the matrix of DF(Σ)[H] on symmetric upper-triangle coordinates
    (h_ij, i ≤ j, row-major) equals the exact central difference (F(Σ + H) − F(Σ − H))/2 of
    F(Σ) = Σ̇ from `flow.moment_rhs` (exact, not a limit: F is quadratic), at every drawn
    symmetric Σ (any inertia, default `strategies.symmetric_matrices`).

    linearisations: name → fn(params, Σ) returning (matrix, kind) with kind None for an exact
    matrix (entries Fractions or fmpq; compared for equality) or "float" (compared within
    64·n·eps·(the same central difference on |A|, |B|, |V|, |Σ|)).  Default: the exact and float
    linearisations of `riccati_verify.certify.equilibria`."""
    routes = _default_linearisations() if linearisations is None else linearisations
    params = rst.params(st.integers(1, 3)) if params is None else params
    points = (lambda d: rst.symmetric_matrices(d, max_abs_eigenvalue=1)) if points is None else points

    @st.composite
    def problems(draw):
        p = draw(params)
        return p, draw(points(p.dim))

    @given(problems())
    def prop(problem):
        p, S = problem
        d = p.dim
        idx = _sym_coords(d)
        cols = []
        for (i, j) in idx:
            H = [[Fraction(0)] * d for _ in range(d)]
            H[i][j] = H[j][i] = Fraction(1)
            plus = _exact_cov_rhs(p, exact.add(S, tuple(map(tuple, H))))
            minus = _exact_cov_rhs(p, exact.sub(S, tuple(map(tuple, H))))
            cols.append([(plus[a][b] - minus[a][b]) / 2 for a, b in idx])
        L_ref = [[cols[k][r] for k in range(len(idx))] for r in range(len(idx))]
        absp = Params(*(tuple(tuple(abs(x) for x in r) for r in M) for M in (p.A, p.B, p.V)), p.b)
        for name, fn in routes.items():
            L, kind = fn(p, S)
            if kind is None:
                got = [[_as_fraction(x) for x in row] for row in L]
                assert got == L_ref, f"{name}: DF(Σ) differs from the exact central difference of F"
            else:
                Lf = np.asarray(L, dtype=float)
                ref = np.array(L_ref, dtype=float)
                # rounding bound from the same computation on absolute values
                Sabs = tuple(tuple(abs(x) for x in r) for r in S)
                mag = np.array([[float(abs(x)) for x in r] for r in _abs_central(absp, Sabs, idx)])
                tol = 64 * len(idx) * EPS * (mag + 1.0)
                assert np.all(np.abs(Lf - ref) <= tol), f"{name}: DF(Σ) differs from the exact central difference"

    _run(prop, settings)


def _abs_central(p: Params, S: exact.Matrix, idx) -> list[list[Fraction]]:
    d = p.dim
    cols = []
    for (i, j) in idx:
        H = [[Fraction(0)] * d for _ in range(d)]
        H[i][j] = H[j][i] = Fraction(1)
        plus = _exact_cov_rhs(p, exact.add(S, tuple(map(tuple, H))))
        cols.append([plus[a][b] for a, b in idx])
    return [[cols[k][r] for k in range(len(idx))] for r in range(len(idx))]


def check_radon_linearisation(params: SearchStrategy[Params] | None = None, *,
                              states: Callable[[int], SearchStrategy[Gaussian]] | None = None,
                              hamiltonian: Callable | None = None, time: float = 0.5,
                              settings: hsettings | None = None) -> None:
    """Property (MATH.md §7): for V = vI, Σ(t) = Y X⁻¹ with [X; Y](t) = e^{Ht} [I; Σ0] and
    H = hamiltonian(A, v, B) (default `blowup.radon.radon_hamiltonian`) equals the covariance from
    integrating eq. 1.1 (`flow.integrate_moments`), for t = min(time, half the norm-comparison
    lower bound on the blow-up time).  Tolerance: the integration error ε of `check_rank_invariance`
    plus 1e3·eps·κ(X)·‖e^{Ht}‖·(1 + ‖Σ(t)‖) for the float matrix exponential and solve.
    Default parameters: `strategies.params(1..3, scalar_V=True, max_magnitude=1/2)`, states of
    any rank."""
    from scipy.linalg import expm

    if hamiltonian is None:
        from riccati_verify.certify.blowup.radon import radon_hamiltonian as hamiltonian
    params = rst.params(st.integers(1, 3), scalar_V=True, max_magnitude=Fraction(1, 2)) if params is None else params
    states = _default_states if states is None else states

    @given(_problems(params, states))
    def prop(problem):
        p, g = problem
        v = p.V_scalar
        assert v is not None, "check_radon_linearisation needs parameters with V = vI"
        d = p.dim
        S0 = np.array(float_view(g)[1])
        T_safe, smax, L = _norm_bound_horizon([Segment(time, p)], S0)
        t = min(time, T_safe)
        H = np.array([[float(x) for x in r] for r in hamiltonian(p.A, v, p.B)])
        E = expm(H * t)
        XY = E @ np.vstack([np.eye(d), S0])
        X, Y = XY[:d], XY[d:]
        S_radon = np.linalg.solve(X.T, Y.T).T
        rtol, atol = 1e-12, 1e-14
        res = integrate_moments(p, g, t, rtol=rtol, atol=atol, n_samples=2)
        assert not res.blowup, res.reason
        eps_int = 1e3 * (rtol * smax * (1 + L * t) + atol)
        tol = eps_int + 1e3 * EPS * np.linalg.cond(X) * np.linalg.norm(E, 2) * (1 + smax)
        diff = float(np.max(np.abs(S_radon - res.cov)))
        note(f"t = {t}, |Σ_radon − Σ_flow| = {diff:.3e}, tolerance {tol:.3e}")
        assert diff <= tol, f"Radon's Y X⁻¹ differs from the moment flow by {diff:.3e} > {tol:.3e} at t = {t}"

    _run(prop, settings)


def scalar_bernoulli_solution(a: float, c: float, s0: float, t: float) -> float:
    """σ(t) for σ̇ = 2aσ + 2cσ², σ(0) = s0 (MATH.md §6), via u = 1/σ: u̇ = −2au − 2c."""
    if s0 == 0:
        return 0.0
    u = ((1 / s0 + c / a) * math.exp(-2 * a * t) - c / a) if a != 0 else 1 / s0 - 2 * c * t
    return 1 / u


def scalar_blowup_time(a: Fraction, c: Fraction, s0: Fraction) -> float | None:
    """T* of MATH.md §6 (None when there is no blow-up): blow-up iff c > 0 and a + c s0 > 0."""
    if not bernoulli.scalar_blows_up(a, c, s0):
        return None
    return float(bernoulli.scalar_blowup_time(a, c, s0))


def check_scalar_bernoulli(params: SearchStrategy[Params] | None = None, *,
                           states: Callable[[int], SearchStrategy[Gaussian]] | None = None,
                           integrate: Callable = integrate_moments, horizon: float = 5.0,
                           settings: hsettings | None = None) -> None:
    """Property (MATH.md §6, proofs/bernoulli_scalar): in d = 1 with a = A, c = vβ = V·B, the
    integrated covariance (`integrate`, default `flow.integrate_moments`) agrees with the closed form
    σ(t) = 1/((1/σ0 + c/a)e^{−2at} − c/a) at t1 = min(1, T*/2) within ε = 1e3·(rtol·σ(t1)·(1 + 2|a|t1
    + 4|c|σ(t1)t1) + atol); it reports blow-up at a time in [T*(1 − 1e-6), T*(1 + 1e-6)] when the
    closed form predicts T* ≤ horizon (blow-up iff c > 0 and a + cσ0 > 0), and no blow-up on
    [0, horizon] otherwise.  The flow starts from mean 0 with b = 0: σ does not depend on them, and
    an exponentially growing mean would trip the flow's overflow guard."""
    params = rst.params(1, max_magnitude=1) if params is None else params
    states = (lambda d: rst.gaussians(d, rank=d)) if states is None else states

    @given(_problems(params, states))
    def prop(problem):
        p, g = problem
        assert p.dim == 1, "check_scalar_bernoulli needs d = 1"
        a, c, s0 = p.A[0][0], p.V[0][0] * p.B[0][0], g.cov[0][0]
        T = scalar_blowup_time(a, c, s0)
        note(f"a = {a}, vβ = {c}, σ0 = {s0}, T* = {T}")
        t1 = min(1.0, T / 2) if T is not None else 1.0
        rtol, atol = 1e-12, 1e-14
        p = Params(p.A, p.B, p.V, (Fraction(0),))      # σ does not depend on (m, b); see below
        g = Gaussian((Fraction(0),), g.cov)
        res = integrate(p, g, t1, rtol=rtol, atol=atol, n_samples=2)
        expect = scalar_bernoulli_solution(float(a), float(c), float(s0), t1)
        eps = 1e3 * (rtol * abs(expect) * (1 + 2 * abs(float(a)) * t1 + 4 * abs(float(c) * expect) * t1) + atol)
        assert not res.blowup and abs(res.cov[0, 0] - expect) <= eps, \
            f"σ({t1}) = {res.cov[0, 0]!r} but the closed form gives {expect!r} (tolerance {eps:.2e})"
        if T is not None and T <= horizon:
            res = integrate(p, g, 2 * T, rtol=rtol, atol=atol, n_samples=2)
            assert res.blowup and abs(res.time - T) <= 1e-6 * T, \
                f"closed-form blow-up at T* = {T!r}, flow: blowup={res.blowup} at t = {res.time!r}"
        elif T is None:
            res = integrate(p, g, horizon, rtol=rtol, atol=atol, n_samples=2)
            assert not res.blowup, f"no blow-up by the closed form, but the flow reports: {res.reason}"

    _run(prop, settings)


def check_riccati_regimes(params: SearchStrategy[Params] | None = None, *,
                          states: Callable[[int], SearchStrategy[Gaussian]] | None = None,
                          integrate: Callable = integrate_moments, time: float = 40.0,
                          settings: hsettings | None = None) -> None:
    """Property (MATH.md §7, proofs/stability): V = vI with Re λ(A) > 0 and v·B_s definite.
    P* solves AᵀP* + P*A = −2vB_s (scipy's Lyapunov solver, not the project's exact one) and
    P(t) − P* = e^{−Aᵀt}(P0 − P*)e^{−At} for P = Σ⁻¹.

    - v·B_s ≺ 0: P* ≻ 0 and the integrated Σ(time) is within
      ‖Σ(T)‖‖Σ*‖‖e^{−AT}‖²‖P0 − P*‖ + ε of Σ* = P*⁻¹ (ε as in `check_rank_invariance`);
    - v·B_s ≻ 0: P* ≺ 0 and the flow reports blow-up (or stalls, `FlowResult.stalled`) no later
      than the first grid time t with ‖e^{−At}‖²‖P0 − P*‖ < −λ_max(P*) (P(t) is no longer
      positive definite by then).

    Default: `strategies.params(1..3, signs=opposite|same, scalar_V=True, A_spectrum="anti_hurwitz")`
    and positive definite Σ0."""
    from scipy.linalg import expm, solve_continuous_lyapunov

    if params is None:
        params = st.sampled_from(["opposite", "same"]).flatmap(
            lambda s: rst.params(st.integers(1, 3), signs=s, scalar_V=True, A_spectrum="anti_hurwitz"))
    states = (lambda d: rst.gaussians(d, rank=d)) if states is None else states

    @given(_problems(params, states))
    def prop(problem):
        p, g = problem
        v = p.V_scalar
        assert v is not None and v != 0, "check_riccati_regimes needs V = vI, v ≠ 0"
        # The covariance equation does not involve (m, b); the mean may grow exponentially (M =
        # A + V + VΣ*B need not be Hurwitz) and trip the flow's overflow guard, so take m = b = 0.
        p = Params(p.A, p.B, p.V, (Fraction(0),) * p.dim)
        g = Gaussian((Fraction(0),) * p.dim, g.cov)
        A, B, _, _ = float_view(p)
        Bs = (B + B.T) / 2
        P_star = solve_continuous_lyapunov(A.T, -2 * float(v) * Bs)
        P_star = (P_star + P_star.T) / 2
        S0 = np.array(float_view(g)[1])
        P0 = np.linalg.inv(S0)
        gap = np.linalg.norm(P0 - P_star, 2)
        w = np.linalg.eigvalsh(P_star)
        opposite = bool(np.all(np.linalg.eigvalsh(float(v) * Bs) < 0))
        if opposite:
            assert w.min() > 0, f"v·B_s ≺ 0 but P* is not positive definite: eigenvalues {w}"
            res = integrate(p, g, time, n_samples=2)
            assert not res.blowup, f"v·B_s ≺ 0, yet the flow reports blow-up: {res.reason}"
            S_star = np.linalg.inv(P_star)
            decay = np.linalg.norm(expm(-A * time), 2) ** 2 * gap
            S_T = res.cov
            smax = max(np.linalg.norm(S_T, 2), np.linalg.norm(S0, 2), np.linalg.norm(S_star, 2))
            L = np.linalg.norm(A, 2) + abs(float(v)) * np.linalg.norm(B, 2) * smax
            eps = 1e3 * (1e-12 * smax * (1 + L * time) + 1e-14)
            tol = np.linalg.norm(S_T, 2) * np.linalg.norm(S_star, 2) * decay + eps
            diff = float(np.linalg.norm(S_T - S_star, 2))
            note(f"|Σ(T) − Σ*| = {diff:.3e}, tolerance {tol:.3e}")
            assert diff <= tol, f"Σ({time}) is {diff:.3e} away from Σ* = P*⁻¹ (tolerance {tol:.3e})"
        else:
            assert w.max() < 0, f"v·B_s ≻ 0 but P* is not negative definite: eigenvalues {w}"
            grid = np.linspace(0, time, 4001)[1:]
            late = [t for t in grid if np.linalg.norm(expm(-A * t), 2) ** 2 * gap < -w.max()]
            assert late, "P(t) stays near P0 on the whole horizon: increase `time`"
            T_up = float(late[0])
            res = integrate(p, g, T_up, n_samples=2)
            # The flow may stop with `stalled` (step budget spent near the pole) instead of crossing its
            # norm bound; stopping before T_up is what the theorem predicts, so both count.
            stopped = res.blowup or (getattr(res, "stalled", False) and res.time <= T_up)
            assert stopped, f"P(t) loses definiteness by t = {T_up}, but the flow reports no blow-up"

    _run(prop, settings)


def check_reachability(steer: Callable | None = None, *, dims: SearchStrategy[int] | None = None,
                       time: Fraction = Fraction(1), attention_only: bool = False,
                       integrate: Callable = integrate_moments, settings: hsettings | None = None) -> None:
    """Property (MATH.md §3–4, proofs/reachability): for N(m0, Σ0) and a target N(m1, Σ1) drawn with
    the same exact rank, steer(state0, target, time) (default `reach.reach`, mpmath self-check
    off) returns reachable controls, and integrating eq. 1.1 under them with `integrate` (scipy
    DOP853 by default: a route independent of the construction's mpmath) lands on the target
    within ε = 1e3·(rtol·s·(1 + L·T) + atol)·e^{2LT}, s and L the largest ‖Σ(t)‖ and ‖J(t)‖ + 1 seen
    along the computed trajectory.  For a target of another rank, steer must report unreachable
    (rank obstruction).  attention_only=True uses the A = 0 route (positive definite states)."""
    if steer is None:
        from riccati_verify.certify.reach import reach

        def steer(s0, s1, T):
            return reach(s0, s1, T, attention_only=attention_only, verify=False)
    dims = st.integers(1, 3) if dims is None else dims

    @st.composite
    def pairs(draw):
        d = draw(dims)
        r0 = d if attention_only else draw(st.integers(0, d))
        same = draw(st.booleans()) or attention_only
        r1 = r0 if same else draw(st.integers(0, d).filter(lambda r: r != r0))
        return draw(rst.gaussians(d, rank=r0)), draw(rst.gaussians(d, rank=r1))

    @given(pairs())
    def prop(pair):
        s0, s1 = pair
        res = steer(s0, s1, time)
        if s0.rank != s1.rank:
            assert not res.reachable, f"rank {s0.rank} → {s1.rank} reported reachable: {res.reason}"
            return
        assert res.reachable, f"same rank {s0.rank}, but reported unreachable: {res.reason}"
        total = sum(Fraction(seg.duration) for seg in res.segments)
        assert total == time, f"the controls last {total}, not {time}"
        rtol, atol = 1e-12, 1e-14
        out = integrate(res.segments, s0, float(time), rtol=rtol, atol=atol)
        assert not out.blowup, out.reason
        smax = float(max(np.linalg.norm(S, 2) for S in out.covs))
        L = 1.0 + max(float(np.linalg.norm(float_view(seg.params)[0], 2) + np.linalg.norm(float_view(seg.params)[2], 2)
                            * np.linalg.norm(float_view(seg.params)[1], 2) * smax) for seg in res.segments)
        eps = 1e3 * (rtol * max(smax, 1.0) * (1 + L * float(time)) + atol) * math.exp(2 * L * float(time))
        m1, S1 = (np.array(a) for a in float_view(s1))
        dm, dS = float(np.max(np.abs(out.mean - m1))), float(np.max(np.abs(out.cov - S1)))
        note(f"{len(res.segments)} segments; |Δm| = {dm:.2e}, |ΔΣ| = {dS:.2e}, ε = {eps:.2e}")
        assert dm <= eps * (1 + float(np.max(np.abs(m1)))) and dS <= eps, \
            f"the controls miss the target: |Δm| = {dm:.2e}, |ΔΣ| = {dS:.2e} > ε = {eps:.2e}"

    _run(prop, settings)


# -- certificates -------------------------------------------------------------

def perturb_entry(doc: dict, path: Sequence[str | int], delta: Fraction | int | str) -> dict | None:
    """A copy of `doc` with the exact rational at `path` (keys/indices) shifted by `delta`;
    None when the path does not exist or does not hold a rational string or number."""
    out = copy.deepcopy(doc)
    node: Any = out
    try:
        for key in path[:-1]:
            node = node[key]
        old = node[path[-1]]
    except (KeyError, IndexError, TypeError):
        return None
    if isinstance(old, bool) or not isinstance(old, (str, int)):
        return None
    try:
        new = Fraction(old) + Fraction(delta)
    except (ValueError, ZeroDivisionError):
        return None
    node[path[-1]] = exact.frac_to_str(new) if isinstance(old, str) else (int(new) if new.denominator == 1 else exact.frac_to_str(new))
    return out


Tamper = Callable[[dict, Any], "dict | None"]


def check_certificates_roundtrip(produce: Callable[[Any], dict | None], inputs: SearchStrategy, *,
                                 tampers: Mapping[str, Tamper], settings: hsettings | None = None,
                                 min_certified: int = 1) -> None:
    """Property: for x drawn from `inputs`, cert = produce(x) (None = the producer could not certify,
    which is allowed) is accepted by `certificates.checker.verify_certificate`, is still accepted
    after `json.loads(json.dumps(cert))`, and for every named tamper(cert, x) → doc (None = not
    applicable) the checker rejects doc.  Fails if fewer than `min_certified` certificates were
    produced in the whole run (a suite that certifies nothing tests nothing).

    `perturb_entry(cert, path, delta)` builds tampers, e.g.
    ``{"shift T_lo": lambda c, x: perturb_entry(c, ["witness", "T_lo"], "1/1000")}``."""
    from riccati_verify.checker import verify_certificate

    made = [0]

    @given(inputs)
    def prop(x):
        cert = produce(x)
        if cert is None:
            note("producer returned None (not certified)")
            return
        made[0] += 1
        res = verify_certificate(cert)
        assert res.valid, f"a produced certificate is rejected: {res.reason}"
        rt = json.loads(json.dumps(cert))
        res = verify_certificate(rt)
        assert res.valid, f"the JSON round trip broke the certificate: {res.reason}"
        for name, tamper in tampers.items():
            doc = tamper(copy.deepcopy(cert), x)
            if doc is None:
                continue
            res = verify_certificate(doc)
            assert not res.valid, f"tampered certificate ({name}) was accepted"

    _run(prop, settings)
    assert made[0] >= min_certified, (f"the producer certified {made[0]} input(s), fewer than "
                                      f"min_certified = {min_certified}: the suite tested nothing")
