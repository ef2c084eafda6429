"""Report figures for issue 16 (training dynamics, depth limit), in the form `app.report.FIGURES` takes.

Each function is `fig(out: Path, seed: int) -> figure_kit.Figure`, computed from the public routes of
`proofs.training_shallow`, `proofs.depth_limit` and `numeric.training` with small seeded settings
(the seed and the settings are in the facts).  `report.FIGURES` lists `TRAINING_FIGURES`, so
`prove --report DIR` draws them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from riccati_verify.app import figure_kit
from riccati_verify.app.figure_kit import Figure, legend_outside, pyplot

__all__ = ["DEEP", "TRAINING_FIGURES", "fig_depth_limit", "fig_free_energy_decay", "fig_particle_error"]

DEEP = {"regime": "deep", "A": [["-1/5", "1/2"], ["-1/2", "-1/5"]], "b": [0, 0], "mean": ["1/2", 0],
        "cov": [[1, 0], [0, "1/2"]], "T": 1, "segments": 2,
        "loss": {"kind": "kl", "target": {"mean": [0, "1/2"], "cov": [[2, 0], [0, 1]]}},
        "heads": 64, "beta": "1/200", "weight_decay": "1/2", "step": "1/20", "steps": 100, "seed": 11,
        "init": {"spread": "1/2"}}
"""The deep spec of the free-energy figure (examples/train_deep.json with the report's seed)."""


def fig_free_energy_decay(out: Path, seed: int) -> Figure:
    """Free-energy gap along training time: shallow (convex, exponential) against deep (two segments)."""
    from riccati_verify.numeric.training import spec_from_dict, train
    from riccati_verify.proofs.training_shallow import gap_decay

    g = gap_decay(seed, replicates=4)
    deep = train(spec_from_dict(dict(DEEP, seed=seed)))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.semilogy(g["s"], np.abs(g["mean_gap"]), label=f"shallow, H = {g['heads']} (mean of 4 seeds)")
    ax.semilogy(g["s"], g["closure_gap"], "--", label="shallow, H → ∞")
    facts = {"shallow_rate": g["rate"], "shallow_ci99": g["ci99"], "shallow_closure_rate": g["closure_rate"],
             "seeds": g["seeds"], "deep_seed": deep.seed}
    if deep.gap() is not None:
        ax.semilogy(deep.s, np.abs(deep.gap()), label=f"deep (T = 1, 2 segments), H = {deep.spec.heads}")
        ax.semilogy(deep.s, deep.closure_free_energy - deep.free_energy_star, "--", label="deep, H → ∞")
        facts["deep_gap_end"] = float(deep.gap()[-1])
    ax.set_xlabel("training time s"); ax.set_ylabel("|F − F*|"); legend_outside(ax)
    ax.set_title(f"free-energy gap (seed {seed})")
    return Figure("free_energy_decay", "Free-energy decay, shallow vs deep",
                  figure_kit.save(fig, out / "free_energy_decay.png"),
                  "Mean-field Langevin on the heads; F* is the fixed point of the H → ∞ law of the same scheme.",
                  facts)


def fig_particle_error(out: Path, seed: int) -> Figure:
    """Mean-square error of the head aggregates against the H → ∞ law, over H (O(1/H))."""
    from riccati_verify.proofs.training_shallow import particle_error

    pe = particle_error(seed, replicates=8)
    Hs = np.array(pe["H_grid"], float)
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for k in range(pe["errors"].shape[1]):
        ax.loglog(Hs, pe["errors"][:, k], "o", c="tab:blue", alpha=0.35, ms=4)
    f = pe["fit"]
    ax.loglog(Hs, np.exp(f.intercept) * Hs ** f.slope, "k-",
              label=f"fit H^α: α = {f.slope:.3f} CI [{f.ci[0]:.2f}, {f.ci[1]:.2f}]")
    ax.set_xlabel("heads H"); ax.set_ylabel("|V̄_H − V̄|² + ‖K_H − K‖²"); legend_outside(ax)
    ax.set_title(f"particle error after {pe['steps']} steps (seed {seed})")
    return Figure("particle_error", "Training: particle error O(1/H)",
                  figure_kit.save(fig, out / "particle_error.png"),
                  "Shallow example of proofs/training_shallow; 8 seeded replicates per H.",
                  {"slope": f.slope, "ci99": f.ci, "H_grid": pe["H_grid"], "seed": seed})


def fig_depth_limit(out: Path, seed: int) -> Figure:
    """Seed 004's depth limit: pathwise error against Δt (same Brownian path) and moment error against N."""
    from riccati_verify.proofs.depth_limit import dt_study, n_study

    dt, ns = dt_study(seed, paths=16), n_study(seed, replicates=3)
    plt = pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    x = np.array(dt["dt"])
    ax[0].loglog(x, dt["rms_error"], "o-", label=f"Euler, slope {dt['slope']:.2f} CI [{dt['ci99'][0]:.2f}, "
                                                  f"{dt['ci99'][1]:.2f}]")
    ax[0].loglog(x, dt["rms_error"][-1] * (x / x[-1]) ** 0.5, "k--", label="∝ Δt^½")
    # Δt spans about one decade: matplotlib's minor labels collide there; label the grid's own Δt
    from matplotlib.ticker import NullFormatter

    ax[0].set_xticks(x, labels=[f"{v:.3g}" for v in x])
    ax[0].xaxis.set_minor_formatter(NullFormatter())
    ax[0].set_xlabel("layer thickness Δt"); ax[0].set_ylabel("relative L² token error"); ax[0].legend(fontsize=7)
    N = np.array(ns["N_grid"], float)
    ax[1].loglog(N, ns["mean_error"], "o-", label=f"slope {ns['slope']:.2f} CI [{ns['ci99'][0]:.2f}, "
                                                   f"{ns['ci99'][1]:.2f}]")
    ax[1].loglog(N, ns["mean_error"][0] * (N / N[0]) ** -0.5, "k--", label="∝ N^−½")
    ax[1].set_xlabel("tokens N"); ax[1].set_ylabel("relative moment error at T"); ax[1].legend(fontsize=7)
    fig.suptitle(f"depth limit with common noise (seed {seed})")
    return Figure("depth_limit", "Depth limit: rates in Δt and N", figure_kit.save(fig, out / "depth_limit.png"),
                  "Discrete residual Transformer with common noise against a fine-Δt run on the same Brownian "
                  "path (left) and against the Gaussian moment SDE (right).",
                  {"dt_slope": dt["slope"], "dt_ci99": dt["ci99"], "N_slope": ns["slope"], "N_ci99": ns["ci99"],
                   "seed": seed})


TRAINING_FIGURES = [
    ("Free-energy decay, shallow vs deep", fig_free_energy_decay),
    ("Training: particle error O(1/H)", fig_particle_error),
    ("Depth limit: rates in Δt and N", fig_depth_limit),
]
"""(title, function) pairs in the form of `report.FIGURES`."""
