"""N tokens against the moment prediction: the particle-agreement verdict.

`simulate_tokens` draws N tokens (seeded), runs the particle simulator and
compares the final empirical moments with the Gaussian moment prediction:
the moment ODE (plain attention, ReLU), the multi-head moment ODE with the
drawn heads, or the moment SDE along the same Brownian path (common noise).
With a ReLU feed-forward or a Gaussian-mixture initial law the Gaussian
prediction is a reference, not a claim: the result then measures the
deviation from Gaussian and makes no agreement claim.

The verdict (identity activation only): the final mean and covariance agree
with the prediction when both errors are within `Z_AGREE` standard errors.
The standard error combines, in quadrature, the i.i.d. error of n_eff =
min(N, median ESS) draws from the predicted Gaussian at T and (plain mode,
d ≤ 8) the initial sampling error transported by the moment flow's Jacobian
(`rates.propagated_standard_errors`), which alone matches the measured RMS
error across seeds to ~10 % in the examples tried.  Agreement is floating-point
evidence, so the strongest status a simulation gives is CONFIRMED_NUMERICALLY;
a disagreement, a blow-up or an unchecked claim is NOT_CERTIFIED (a statistical
disagreement is not a proof that the moment theory is false).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from riccati_verify.core.errors import InputError
from riccati_verify.core.io import parse_matrix, parse_vector, read_json_file
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import Status
from riccati_verify.core.serial import jsonable
from riccati_verify.numeric.flow import integrate_moments
from riccati_verify.numeric.simulate import heads as H_
from riccati_verify.numeric.simulate import particles as P_
from riccati_verify.numeric.simulate.mixture import MAX_COMPONENTS, GaussianMixture
from riccati_verify.numeric.views import float_view

__all__ = ["DEFAULT_STEP", "MAX_WORK", "SimulationComparison", "Z_AGREE", "iid_standard_errors", "load_head_list",
           "load_mixture", "simulate_tokens"]

MAX_WORK = 2e12
"""Bound on N²·(d+1)·(attention evaluations): beyond it a run takes far too long."""
Z_AGREE = 4.0
"""Agreement means both moment errors are within this many standard errors."""
DEFAULT_STEP = 0.02
"""Time step when the number of steps is not given."""
RELU_NOTE = "ReLU feed-forward: the Gaussian prediction below is the affine reference; see the Gaussianity statistics"


@dataclass(frozen=True)
class SimulationComparison:
    """Particles against the moment prediction; follows the `core.result.Result` protocol.

    `data` is the measurement record (seed, sizes, empirical and predicted
    moments, errors and standard errors, ESS, blow-up, warnings and the
    mode-specific statistics); `agree` is the particle-agreement verdict (None
    when no claim is checked: ReLU feed-forward or a mixture initial law);
    `notes` are explanatory lines for a report.  The trajectories (recording
    times, empirical and predicted moments) are kept for plotting; they are
    None for a mixture run.
    """

    data: dict
    seed: int
    agree: bool | None
    blowup: bool
    notes: tuple[str, ...] = ()
    t: np.ndarray | None = field(default=None, repr=False)
    means: np.ndarray | None = field(default=None, repr=False)
    covs: np.ndarray | None = field(default=None, repr=False)
    predicted_means: np.ndarray | None = field(default=None, repr=False)
    predicted_covs: np.ndarray | None = field(default=None, repr=False)
    predicted_t: np.ndarray | None = field(default=None, repr=False)   # the prediction's own times

    @property
    def claim_checked(self) -> bool:
        """Whether the Gaussian prediction is a claim here (identity activation, Gaussian initial law)."""
        return self.agree is not None

    @property
    def status(self) -> Status:
        """CONFIRMED_NUMERICALLY when the particles agree with the prediction, else NOT_CERTIFIED."""
        return Status.CONFIRMED_NUMERICALLY if self.agree else Status.NOT_CERTIFIED

    @property
    def certificate(self) -> None:
        """A simulation proves nothing, so it carries no certificate."""
        return None

    def to_dict(self) -> dict:
        """JSON form: the status followed by the measurement record `data`."""
        return jsonable({"status": str(self.status), **self.data})

    def to_xarray(self):
        """The recorded trajectories as one xarray Dataset: ``particles_mean``/``particles_cov``
        (the empirical moments) on the recording times ``t``, and ``ode_mean``/``ode_cov`` (the
        moment prediction) on its own times ``t_ode``, with the status, seed and the record's
        scalar entries as attributes.
        Needs the `xarray` extra; InputError without it, or for a mixture run (no trajectory)."""
        from riccati_verify.numeric.export import trajectory_dataset

        if self.t is None:
            raise InputError("this run kept no trajectory (a mixture initial law): nothing to export")
        attrs = {"status": str(self.status), "seed": self.seed, **self.data}
        particles = trajectory_dataset(self.t, {"particles_": (self.means, self.covs)}, attrs)
        # the prediction has its own sample times: on a coordinate of its own, t_ode
        ode = trajectory_dataset(self.predicted_t, {"ode_": (self.predicted_means, self.predicted_covs)})
        return particles.merge(ode.rename(t="t_ode"))


def iid_standard_errors(S: np.ndarray, n_eff: float) -> tuple[float, float]:
    """SE of ‖m̂ − m‖ and ‖Σ̂ − Σ‖_F for n_eff i.i.d. draws of N(m, Σ): √(tr Σ/n), √((tr²Σ + tr Σ²)/n)."""
    tr = float(np.trace(S))
    return math.sqrt(max(tr, 0) / n_eff), math.sqrt(max(tr**2 + float(np.trace(S @ S)), 0) / n_eff)


def load_head_list(path: str, d: int) -> H_.ListHeads:
    """The head measure ρ uniform on the list in a JSON file {"heads": [{"V": .., "B": ..}, ...]}
    (untrusted input: parsed, never evaluated)."""
    doc = read_json_file(path, "head list")
    if not isinstance(doc, dict) or not isinstance(doc.get("heads"), list) or not doc["heads"]:
        raise InputError("head list must be an object with a non-empty list 'heads'")
    if len(doc["heads"]) > H_.MAX_HEADS:
        raise InputError(f"head list has more than {H_.MAX_HEADS} heads")
    Vs, Bs = [], []
    for k, h in enumerate(doc["heads"]):
        if not isinstance(h, dict) or set(h) != {"V", "B"}:
            raise InputError(f"heads[{k}] must be an object with exactly the keys V and B")
        for nm, out in (("V", Vs), ("B", Bs)):
            M, _ = parse_matrix(h[nm], f"heads[{k}].{nm}")
            if len(M) != d:
                raise InputError(f"heads[{k}].{nm} is {len(M)}x{len(M)} but the parameters have d = {d}")
            out.append(np.array(M, dtype=float))
    return H_.ListHeads(np.array(Vs), np.array(Bs))


def load_mixture(path: str, d: int) -> GaussianMixture:
    """A Gaussian mixture from a JSON file {"weights": [..], "means": [[..]], "covs": [[[..]]]} (untrusted)."""
    doc = read_json_file(path, "mixture file")
    if not isinstance(doc, dict) or set(doc) != {"weights", "means", "covs"}:
        raise InputError("mixture file must be an object with exactly the keys weights, means, covs")
    w, _ = parse_vector(doc["weights"], "weights")
    K = len(w)
    if K > MAX_COMPONENTS or not isinstance(doc["means"], list) or not isinstance(doc["covs"], list) \
            or len(doc["means"]) != K or len(doc["covs"]) != K:
        raise InputError(f"mixture: weights, means and covs must have the same length (≤ {MAX_COMPONENTS})")
    if any(x <= 0 for x in w) or sum(w) != 1:
        raise InputError("mixture weights must be positive and sum exactly to 1")
    comps = [Gaussian(parse_vector(doc["means"][k], f"means[{k}]")[0], parse_matrix(doc["covs"][k], f"covs[{k}]")[0])
             for k in range(K)]
    if any(g.dim != d for g in comps):
        raise InputError(f"mixture components must have dimension d = {d}")
    return GaussianMixture(np.array([float(x) for x in w]), np.array([float_view(g)[0] for g in comps]),
                           np.array([float_view(g)[1] for g in comps]))


def _in_range(what: str, x: float, lo: float, hi: float) -> None:
    if not (math.isfinite(x) and lo <= x <= hi):
        raise InputError(f"{what} must be finite and in [{lo}, {hi}], got {x}")


def _choice(what: str, x: str, options: tuple[str, ...]) -> None:
    if x not in options:
        raise InputError(f"unknown {what} {x!r} (choose {', '.join(options)})")


def simulate_tokens(params: Params, state: Gaussian | None, n_tokens: int, time: float, *, steps: int | None = None,
                    seed: int = 0, method: str = "rk4", dtype: str = "float64", heads: int | None = None,
                    head_spread: float = 0.0, head_corr: float = 0.0, head_law=None, noise: float = 0.0,
                    scheme: str = "milstein", calculus: str = "ito", activation: str = "identity",
                    relu_shift: float = 0.0, mixture: GaussianMixture | None = None,
                    progress: bool = False) -> SimulationComparison:
    """Simulate N seeded tokens and compare their moments with the Gaussian moment prediction.

    Conventions: the velocity is v[μ](x) = A x + b + V ∫ y e^{⟨Bx, y⟩} μ(dy) / ∫ e^{⟨Bx, y⟩} μ(dy)
    with the query x and the kernel exp(⟨Bx, y⟩), so a Transformer head with scores ⟨Qx, Ky⟩ has
    B = KᵀQ; the softmax runs over all N tokens, self included.  The prediction is the moment ODE
    ṁ = (A + V)m + VΣBm + b, Σ̇ = JΣ + ΣJᵀ, J = A + VΣB (the multi-head ODE with the drawn heads;
    the moment SDE along the same Brownian path with common noise).

    Parameters
    ----------
    params : Params
        A, B, V, b (exact; read through their float view).
    state : Gaussian or None
        The initial law N(m, Σ) the tokens are drawn from; may be None only with `mixture`.
    n_tokens : int
        N, the number of tokens (2 .. `attention.MAX_TOKENS`).
    time : float
        The horizon T > 0.
    steps : int, optional
        Fixed time steps over [0, T]; default ⌈T / 0.02⌉.
    seed : int
        Seed of every random draw (tokens, heads, Brownian path); recorded in the result.
    method : {"rk4", "heun", "euler"}
        ODE integrator (without noise).
    dtype : {"float64", "float32"}
        Floating-point type of the token positions.
    heads : int, optional
        H: simulate H heads drawn from `head_law` (seeded) instead of the single head (V, B).
    head_spread, head_corr : float
        When `head_law` is None, heads are V_h = V + s E, B_h = B + s F with s = `head_spread` ≥ 0
        and entrywise correlation `head_corr` ∈ [-1, 1] of the standard normal E and F.
    head_law : heads.GaussianHeads or heads.ListHeads, optional
        The head measure ρ the H heads are drawn from (see `load_head_list`).
    noise : float
        Common-noise level σ ≥ 0; σ > 0 compares with the moment SDE along the simulated path.
    scheme : {"euler", "milstein"}, calculus : {"ito", "stratonovich"}
        The SDE scheme and calculus (with noise).
    activation : {"identity", "relu"}
        Feed-forward x ↦ Ax, or A(ReLU(x + c·1) − c·1) with c = `relu_shift` (no agreement claim).
    relu_shift : float
        c for the ReLU feed-forward.
    mixture : mixture.GaussianMixture, optional
        A Gaussian-mixture initial law instead of `state` (plain attention only; no agreement claim).
    progress : bool
        Show progress on stderr.

    Returns
    -------
    SimulationComparison
        `status` CONFIRMED_NUMERICALLY when the final mean and covariance agree with the prediction
        within `Z_AGREE` standard errors, NOT_CERTIFIED otherwise (disagreement, blow-up or overflow,
        or no claim checked); `certificate` None; `to_dict()` the status and the measurement record,
        which includes the seed.

    Raises
    ------
    InputError
        On out-of-range or incompatible options, or a run that would need more than `MAX_WORK`
        flops.  A blow-up is a finding, not an error: it is reported in the result.
    """
    d = params.dim
    _in_range("the horizon", time, 0.0, math.inf)
    if time <= 0:
        raise InputError(f"the horizon must be positive, got {time}")
    _in_range("the common-noise level", noise, 0.0, 1e3)
    _in_range("the head spread", head_spread, 0.0, 1e3)
    _in_range("the head correlation", head_corr, -1.0, 1.0)
    _in_range("the ReLU shift", relu_shift, -1e6, 1e6)
    _choice("integrator", method, ("rk4", "heun", "euler"))
    _choice("dtype", dtype, ("float64", "float32"))
    _choice("activation", activation, ("identity", "relu"))
    steps = steps or max(1, math.ceil(time / DEFAULT_STEP))
    stages = {"rk4": 4, "heun": 2, "euler": 1}[method] if noise == 0 else 1
    work = float(n_tokens) ** 2 * (d + 1) * steps * stages * (heads or 1)
    if work > MAX_WORK:
        raise InputError(f"the run needs about {work:.2g} flops (N²·(d+1)·steps·stages·heads), over the bound "
                         f"{MAX_WORK:.0e}: use fewer tokens, steps or heads")
    if mixture is not None and (noise or heads or activation == "relu"):
        raise InputError("a mixture initial law combines with plain attention only (no heads, noise or ReLU)")
    if heads and noise:
        raise InputError("several heads and common noise cannot be combined (the moment SDE here is single-head)")
    if head_law is not None and not heads:
        raise InputError("a head law needs the number of heads drawn from it")
    data: dict = {"seed": seed, "tokens": n_tokens, "time": time, "steps": steps, "dtype": dtype, "dim": d}
    if mixture is not None:
        return _mixture(params, mixture, n_tokens, time, steps, seed, method, data)
    if state is None:
        raise InputError("an initial Gaussian state is needed (or a mixture initial law)")
    if state.dim != d:
        raise InputError(f"parameters have d = {d} but the state has d = {state.dim}")
    return _gaussian(params, state, n_tokens, time, steps, seed, method, np.dtype(dtype).type, heads, head_spread,
                     head_corr, head_law, noise, scheme, calculus, activation, relu_shift, progress, data)


def _gaussian(params, state, n_tokens, time, steps, seed, method, dtype, n_heads, head_spread, head_corr, rho,
              noise, scheme, calculus, activation, relu_shift, progress, data) -> SimulationComparison:
    A, B, V, b = float_view(params)
    m0, S0 = float_view(state)
    notes: list[str] = []
    ff = None
    if activation == "relu":
        from riccati_verify.numeric.simulate.relu import shifted_relu
        ff = shifted_relu(A, relu_shift)
    heads = None
    if n_heads:
        if rho is None:
            rho = H_.GaussianHeads(np.array(V), np.array(B), head_spread, head_corr)
        heads = rho.sample(n_heads, np.random.default_rng([seed, 1]))
        data["heads"] = n_heads

    if noise > 0:
        from riccati_verify.numeric.simulate.noise import simulate_common_noise
        r = simulate_common_noise(params, state, n_tokens, time, steps, sigma=noise, seed=seed, scheme=scheme,
                                  calculus=calculus, dtype=dtype, feedforward=ff, heads=heads, progress=progress)
        pm, pc, pt = r.predicted_means, r.predicted_covs, r.t
        J = A + V @ pc[-1] @ B if np.all(np.isfinite(pc[-1])) else None
        data.update(noise=noise, scheme=scheme, calculus=calculus,
                    pathwise_rate=r.pathwise_rate() if not r.blowup else None, brownian_W_T=float(r.W[-1]))
        if J is not None and n_heads is None:
            lam = float(np.max(np.linalg.eigvals(J).real))
            data["pathwise_rate_prediction_frozen_J"] = lam - (noise**2 / 2 if calculus == "ito" else 0)
        warns = r.warnings
    else:
        r = P_.simulate(params, state, n_tokens, time, steps, seed=seed, dtype=dtype, method=method, heads=heads,
                        feedforward=ff, progress=progress)
        warns = r.warnings
        if heads is not None:
            mT, ST, _, _ = H_.integrate_multihead_moments(A, b, lambda S: H_.head_averages(heads, S), m0, S0, r.time)
            mL, SL, _, _ = H_.integrate_multihead_moments(A, b, lambda S: (rho.mean_V(S), rho.mean_VSB(S)),
                                                          m0, S0, r.time)
            pm, pc, pt = np.array([m0, mT]), np.array([S0, ST]), np.array([0.0, r.time])
            data.update(predicted_mean_head_limit=mL, predicted_cov_head_limit=SL,
                        velocity_error_L2=H_.velocity_error(heads, rho, m0, S0))
        else:
            f = integrate_moments(params, state, r.time)
            pm, pc, pt = f.means, f.covs, f.t
            if f.blowup:
                warns = warns + [f"moment ODE: {f.reason}"]
        if ff is not None:
            from riccati_verify.numeric.simulate.relu import gaussianity
            # the same initial draw as P_.simulate (same seed, same generator)
            g0 = gaussianity(P_.sample_gaussian(state, n_tokens, np.random.default_rng(seed)))
            if not r.blowup:
                gT = gaussianity(r.X, seed=seed)
                data.update(relu_inactive=ff.inactive_on(r.X), mardia_b1=gT.mardia_b1,
                            mardia_b1_pvalue=gT.mardia_b1_pvalue, mardia_b2_z=gT.mardia_b2_z,
                            sliced_w2_to_moment_matched=gT.sliced_w2,
                            kappa3_change=float(np.linalg.norm(gT.kappa3 - g0.kappa3)),
                            kappa4_change=float(np.linalg.norm(gT.kappa4 - g0.kappa4)))
            notes.append(RELU_NOTE)

    blow = r.blowup
    mean, cov = r.means[-1], r.covs[-1]
    predicted_mean, predicted_cov = pm[-1], pc[-1]
    err_m = float(np.linalg.norm(mean - predicted_mean))
    err_S = float(np.linalg.norm(cov - predicted_cov))
    n_eff = max(1.0, min(float(n_tokens), r.ess_median))
    se_m, se_S = iid_standard_errors(predicted_cov if np.all(np.isfinite(predicted_cov)) else cov, n_eff)
    if noise == 0 and heads is None and not blow:
        from riccati_verify.numeric.simulate.rates import propagated_standard_errors
        prop = propagated_standard_errors(params, state, time, n_eff)
        if prop is not None:
            data.update(stderr_mean_propagated=prop[0], stderr_cov_propagated=prop[1])
            se_m, se_S = math.hypot(se_m, prop[0]), math.hypot(se_S, prop[1])
    claim_checked = activation == "identity"
    agree = (not blow) and math.isfinite(err_m) and math.isfinite(err_S) and \
        err_m <= Z_AGREE * se_m and err_S <= Z_AGREE * se_S
    data.update(mean=mean, cov=cov, predicted_mean=predicted_mean, predicted_cov=predicted_cov,
                error_mean=err_m, error_cov=err_S, stderr_mean=se_m, stderr_cov=se_S, n_eff=n_eff,
                ess_min=r.ess_min, ess_median=r.ess_median, blowup=blow, blowup_interval=r.blowup_interval,
                reason=r.reason, time_reached=float(r.t[-1]), agree=agree if claim_checked else None,
                warnings=warns)
    return SimulationComparison(data, seed, agree if claim_checked else None, blow, tuple(notes),
                                r.t, r.means, r.covs, pm, pc, pt)


def _mixture(params, mix, n_tokens, time, steps, seed, method, data) -> SimulationComparison:
    from riccati_verify.numeric.simulate.mixture import kappa3_rate, mixture_run

    if mix.dim != params.dim:
        raise InputError(f"mixture components must have dimension d = {params.dim}")
    r = mixture_run(params, mix, n_tokens, time, steps, seed=seed, method=method)
    m = r.X.mean(axis=0)
    Y = r.X - m
    data.update(mean=m, cov=Y.T @ Y / len(Y), ess_min=r.ess_min, ess_median=r.ess_median, blowup=r.blowup,
                reason=r.reason, component_skewness_0=r.skew0, component_skewness_T=r.skewT,
                ks_two_component_fit=r.ks_two_component, ks_critical_1pct=r.ks_critical_1pct,
                predicted_mean=None, predicted_cov=None, error_mean=None, error_cov=None)
    if params.dim == 1:
        data["kappa3_rate_t0"] = [kappa3_rate(params, mix, k) for k in range(len(mix.weights))]
    return SimulationComparison(data, seed, None, r.blowup)
