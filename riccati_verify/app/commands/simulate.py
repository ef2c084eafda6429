"""`riccati-verify simulate PARAMS --tokens N --time T ...`: particles against the moment prediction.

Modes (combinable where it makes sense): plain N-token attention; `--heads H`
(heads drawn around the file's V, B with `--head-spread`, or from
`--head-list FILE`); `--noise SIGMA` (common noise); `--activation relu`
(feed-forward A(ReLU(x + c·1) − c·1), c = `--relu-shift`); `--mixture FILE`
(initial law a Gaussian mixture instead of the file's Gaussian).

The prediction, the standard errors and the agreement verdict are
`riccati_verify.simulate_tokens` (`numeric.simulate.compare`); this module
parses the arguments, calls it and prints.  Exit status: 0 when the run
completed and (identity activation) the final moments agree with the
prediction within 4 standard errors; 1 on blow-up/overflow or disagreement;
2 on bad input.
"""

from __future__ import annotations


import numpy as np

from riccati_verify.app.commands import COMMANDS
from riccati_verify.app.commands._common import bounded_int, finite_in, output_file, positive_float
from riccati_verify.app.output import emit, format_matrix
from riccati_verify.core.errors import InputError
from riccati_verify.app.commands._common import load_for_floats, record_file, require

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "simulate"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """The arguments of `riccati-verify simulate`."""
    from riccati_verify.numeric.simulate.attention import MAX_TOKENS
    from riccati_verify.numeric.simulate.heads import MAX_HEADS
    from riccati_verify.numeric.simulate.particles import MAX_STEPS

    p.add_argument("params", help="parameter file (A, B, V, b and the initial mean, cov)")
    p.add_argument("--tokens", "-N", type=bounded_int(2, MAX_TOKENS), required=True, help=f"N (2..{MAX_TOKENS})")
    p.add_argument("--time", "-T", type=positive_float, required=True, help="final time T > 0 of the simulation")
    p.add_argument("--steps", type=bounded_int(1, MAX_STEPS), help="time steps (default: step 0.02)")
    p.add_argument("--method", choices=("rk4", "heun", "euler"), default="rk4", help="ODE integrator (no noise)")
    p.add_argument("--dtype", choices=("float64", "float32"), default="float64",
                   help="floating-point type of the particles (default float64; float32 is faster, less accurate)")
    p.add_argument("--seed", type=bounded_int(0, 2**63 - 1), default=0, help="seed of every random draw")
    p.add_argument("--heads", "-H", type=bounded_int(1, MAX_HEADS), help=f"number of heads (1..{MAX_HEADS})")
    p.add_argument("--head-spread", type=finite_in(0.0, 1e3), default=0.0, help="heads: V_h = V + s E, B_h = B + s F")
    p.add_argument("--head-corr", type=finite_in(-1.0, 1.0), default=0.0,
                   help="heads: entrywise correlation of E and F")
    p.add_argument("--head-list", help="JSON file {\"heads\": [{\"V\": .., \"B\": ..}, ...]}: ρ uniform on it")
    p.add_argument("--noise", type=finite_in(0.0, 1e3), default=0.0, help="common-noise level σ ≥ 0")
    p.add_argument("--scheme", choices=("euler", "milstein"), default="milstein",
                   help="SDE scheme with --noise: Euler-Maruyama or Milstein (default milstein)")
    p.add_argument("--calculus", choices=("ito", "stratonovich"), default="ito",
                   help="interpretation of the common noise: Itô (default) or Stratonovich")
    p.add_argument("--activation", choices=("identity", "relu"), default="identity",
                   help="feed-forward activation: identity (the moment ODE applies, default) or relu "
                        "(A(ReLU(x + c) - c), c = --relu-shift)")
    p.add_argument("--relu-shift", type=finite_in(-1e6, 1e6), default=0.0, help="c in A(ReLU(x + c) − c)")
    p.add_argument("--mixture", help="JSON file {\"weights\": [..], \"means\": [[..]], \"covs\": [[[..]]]}")
    p.add_argument("--plot", type=output_file, help="write a PNG of the moment trajectories")
    p.add_argument("--netcdf", type=output_file, default=None,
                   help="also write the trajectories (particles on t, moment ODE on t_ode) as netCDF via "
                        "xarray (the xarray extra)")
    p.add_argument("--threads", type=bounded_int(1, 256), default=1,
                   help="BLAS threads (default 1: oversubscribed multi-threaded BLAS is far slower here)")


def run(args) -> int:
    """Parse the files, run `simulate_tokens` under the BLAS thread limit, print; the exit status."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(args.threads):
        return _run(args)


def _run(args) -> int:
    from riccati_verify.numeric.simulate.compare import load_head_list, load_mixture, simulate_tokens

    prob = load_for_floats(args.params)
    params = prob.require_params()
    d = params.dim
    if args.head_list and not args.heads:
        raise InputError("--head-list needs --heads H (the number of heads drawn from the list)")
    mix = load_mixture(args.mixture, d) if args.mixture else None
    if args.mixture:
        record_file(args.mixture, "mixture file")
    head_law = load_head_list(args.head_list, d) if args.head_list else None
    if args.head_list:
        record_file(args.head_list, "head list")
    state = None if mix is not None else prob.require_state()
    if args.netcdf:
        from riccati_verify.numeric.export import require_xarray

        require(mix is None, "--netcdf: a mixture run keeps no trajectory")
        require_xarray()                    # before the work, so that none is lost to a missing extra
    r = simulate_tokens(params, state, args.tokens, args.time, steps=args.steps, seed=args.seed, method=args.method,
                        dtype=args.dtype, heads=args.heads, head_spread=args.head_spread, head_corr=args.head_corr,
                        head_law=head_law, noise=args.noise,
                        scheme=args.scheme, calculus=args.calculus, activation=args.activation,
                        relu_shift=args.relu_shift, mixture=mix, progress=not args.quiet)
    if mix is not None:
        emit(r.data, _mixture_text(r.data), args.json)
        return 1 if r.blowup else 0
    if args.plot:
        _plot(args.plot, r.t, r.means, r.covs, r.predicted_means, r.predicted_covs, args)
    text = _text(r)
    if args.netcdf:
        from riccati_verify.app.output import input_record
        from riccati_verify.numeric.export import write_netcdf

        r.data["netcdf"] = write_netcdf(r.to_xarray(), args.netcdf, input_record())
        text += f"\ntrajectories (netCDF): {args.netcdf}"
    emit(r.data, text, args.json)
    return 1 if r.blowup or r.agree is False else 0


def _text(r) -> str:
    from riccati_verify.numeric.simulate.compare import Z_AGREE

    x = r.data
    lines = list(r.notes)
    lines += [f"particles: N = {x['tokens']}, T = {x['time']}, steps = {x['steps']}, seed = {x['seed']}, {x['dtype']}",
              f"ESS of the softmax weights: min {x['ess_min']:.4g}, median {x['ess_median']:.4g}"]
    if r.blowup:
        lines.append(f"BLOW-UP: {x['reason']}")
    lines += ["empirical mean:  " + np.array2string(x["mean"], precision=6),
              "predicted mean:  " + np.array2string(x["predicted_mean"], precision=6),
              "empirical cov:\n" + format_matrix(x["cov"]), "predicted cov:\n" + format_matrix(x["predicted_cov"]),
              f"|mean error| = {x['error_mean']:.4g} (SE {x['stderr_mean']:.3g}),  "
              f"|cov error|_F = {x['error_cov']:.4g} (SE {x['stderr_cov']:.3g})"]
    for k in ("pathwise_rate", "pathwise_rate_prediction_frozen_J", "velocity_error_L2", "mardia_b1_pvalue",
              "sliced_w2_to_moment_matched", "kappa3_change"):
        if x.get(k) is not None:
            lines.append(f"{k}: {x[k]:.6g}")
    lines += [f"warning: {w}" for w in x["warnings"]]
    if r.claim_checked:
        lines.append(f"agreement within {Z_AGREE:g} SE: " + ("yes" if r.agree else "NO"))
    return "\n".join(lines)


def _mixture_text(x: dict) -> str:
    lines = [f"mixture: N = {x['tokens']}, T = {x['time']}, seed = {x['seed']}; ESS min {x['ess_min']:.4g}"]
    lines += [f"component {s0.component}: skewness {s0.skewness:+.4f} -> {sT.skewness:+.4f} (SE {sT.stderr:.3g})"
              for s0, sT in zip(x["component_skewness_0"], x["component_skewness_T"])]
    if x["ks_two_component_fit"] is not None:
        lines.append(f"KS distance to the EM two-component fit: {x['ks_two_component_fit']:.4g} "
                     f"(1% critical value for a fixed law {x['ks_critical_1pct']:.4g})")
    if x["blowup"]:
        lines.append(f"BLOW-UP: {x['reason']}")
    return "\n".join(lines)


def _plot(path, t, means, covs, pm, pc, args) -> None:
    import matplotlib.pyplot as plt

    fig = plot_figure(t, means, covs, pm, pc, args.tokens, args.seed)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


def plot_figure(t, means, covs, pm, pc, tokens: int, seed: int):
    """The moment trajectories: particles (solid, ±2 SE band) and the moment ODE (dashed) in the
    same colour per entry; every mean entry and every covariance entry Σij, i ≤ j."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d = means.shape[1]
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    tp = np.linspace(0, t[-1], len(pm)) if len(pm) != len(t) else t
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # standard errors of N i.i.d. draws of N(m, Σ): Var m̂_i = Σii/N, Var Σ̂ij = (Σii Σjj + Σij²)/N
    var = np.diagonal(covs, axis1=1, axis2=2)
    for i in range(d):
        c = colours[i % len(colours)]
        se = 2 * np.sqrt(np.maximum(var[:, i], 0) / tokens)
        ax[0].plot(t, means[:, i], c=c, label=f"m{i + 1} particles")
        ax[0].fill_between(t, means[:, i] - se, means[:, i] + se, color=c, alpha=0.2, lw=0)
        ax[0].plot(tp, pm[:, i], "--", c=c, label=f"m{i + 1} moment ODE")
    k = 0
    for i in range(d):
        for j in range(i, d):
            c = colours[k % len(colours)]
            k += 1
            se = 2 * np.sqrt(np.maximum(var[:, i] * var[:, j] + covs[:, i, j] ** 2, 0) / tokens)
            ax[1].plot(t, covs[:, i, j], c=c, label=f"Σ{i + 1}{j + 1} particles")
            ax[1].fill_between(t, covs[:, i, j] - se, covs[:, i, j] + se, color=c, alpha=0.2, lw=0)
            ax[1].plot(tp, pc[:, i, j], "--", c=c, label=f"Σ{i + 1}{j + 1} moment ODE")
    ax[0].set_ylabel("mean entries"); ax[1].set_ylabel("covariance entries")
    for a in ax:
        a.set_xlabel("t")
        a.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False)
    fig.suptitle(f"N = {tokens} tokens, seed = {seed}; bands: ±2 standard errors (i.i.d. Gaussian)")
    fig.tight_layout()
    return fig
