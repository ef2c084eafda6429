"""`riccati-verify train SPEC [--json] [--plot FILE]`: mean-field Langevin training of the head measure.

SPEC is a JSON file (exact rationals or decimals as in parameter files, no evaluation):

    {"regime": "shallow" | "deep",
     "A": [[..]], "b": [..], "mean": [..], "cov": [[..]],          (token law N(mean, cov))
     "loss": {"kind": "regression", "G": [[..]], "c": [..]}        (shallow: E|y − (Gx + c)|²)
           | {"kind": "frobenius" | "kl", "target": {"mean", "cov"}} (deep: terminal moment loss)
     "T": depth, "segments": K,                                     (deep only; ρ_k per segment)
     "heads": H, "beta": β ≥ 0, "weight_decay": λ ≥ 0, "step": η > 0, "steps": n, "seed": s,
     "init": {"V": [[..]], "B": [[..]], "spread": s0}, "record_every": k}

The library (`numeric.training.train`) runs the particles, the H → ∞ Gaussian reference of the
same scheme and its fixed point; this module prints.  Exit 0 when the run finished and the
free energy (or, without an entropy estimate, the regularised objective) decreased; 1 when
it stopped early or did not decrease; 2 on bad input.
"""

from __future__ import annotations

from riccati_verify.app.commands import COMMANDS
from riccati_verify.app.commands._common import bounded_int, output_file, record_file
from riccati_verify.app.output import emit

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "train"
HELP = COMMANDS[NAME]


def add_arguments(p):
    """The arguments of `riccati-verify train`."""
    p.add_argument("spec", help="training spec (JSON; see the module docstring or the README)")
    p.add_argument("--plot", type=output_file, help="write a PNG of loss, free energy and gap along s")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--threads", type=bounded_int(1, 256), default=1, help="BLAS threads (default 1)")


def run(args) -> int:
    """Load the spec, train, print; the exit status."""
    from threadpoolctl import threadpool_limits

    from riccati_verify.core.result import Status
    from riccati_verify.numeric.training import load_spec, train

    spec = load_spec(args.spec)
    record_file(args.spec, "training spec")        # its JSON floats: "exact": false in the output
    with threadpool_limits(args.threads):
        r = train(spec, progress=not args.quiet)
    if args.plot:
        _plot(args.plot, r)
    emit(r.to_dict(), "" if args.json else _text(r), args.json)
    return 0 if r.status is Status.CONFIRMED_NUMERICALLY else 1


def _text(r) -> str:
    x = r.spec.to_dict()
    lines = [f"training ({x['regime']}, loss {x['loss']}): H = {x['heads']} heads x {x['segments']} segment(s), "
             f"beta = {x['beta']:g}, lambda = {x['weight_decay']:g}, step = {x['step']:g}, "
             f"{x['steps']} steps, seed = {x['seed']}"]
    if not len(r.loss):         # stopped before its first record (e.g. the initial heads' flow blows up)
        return "\n".join(lines + [f"STOPPED before the first record: {r.stopped}", f"status: {r.status}"])
    lines += [f"loss L:            {r.loss[0]:.6g} -> {r.loss[-1]:.6g}",
             f"objective L+reg:   {r.objective[0]:.6g} -> {r.objective[-1]:.6g}"]
    if r.free_energy is not None:
        lines.append(f"free energy (est): {r.free_energy[0]:.6g} -> {r.free_energy[-1]:.6g}")
    lines.append(f"entropy: {r.entropy_note}")
    if r.closure_free_energy is not None:
        lines.append(f"mean-field (H -> inf) free energy: {r.closure_free_energy[0]:.6g} -> "
                     f"{r.closure_free_energy[-1]:.6g}")
    if r.free_energy_star is not None:
        g = r.gap()       # None without a particle free-energy estimate (too few heads for the entropy)
        lines.append(f"F* (fixed point of the H -> inf scheme): {r.free_energy_star:.6g}"
                     + (f"; particle gap {g[0]:.3g} -> {g[-1]:.3g}" if g is not None else ""))
    elif r.closure_free_energy is not None:
        lines.append("F*: the mean-field fixed point was not found" if not r.fixed_point_converged else "")
    mom = r.moments[-1][0]
    lines.append(f"head measure at the end (segment 1): E|theta|^2 = {mom['second_moment']:.6g}, "
                 f"tr Cov = {mom['cov_trace']:.6g}")
    if r.stopped:
        lines.append(f"STOPPED: {r.stopped}")
    lines.append(f"status: {r.status} ({r.seconds:.2f} s)")
    return "\n".join(l for l in lines if l)


def _plot(path, r) -> None:
    import matplotlib.pyplot as plt

    fig = figure(r)
    fig.savefig(path, dpi=100, bbox_inches="tight")    # "tight": the legends below the axes stay in
    plt.close(fig)


def figure(r):
    """The training figure: loss, regularised objective and free energies along the training time
    (left) and, when a particle free-energy estimate exists, the gap to F* (right, log scale)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    g = r.gap()
    fig, axes = plt.subplots(1, 2 if g is not None else 1, figsize=(10 if g is not None else 5.5, 4), squeeze=False)
    ax = axes[0]
    ax[0].plot(r.s, r.loss, label="loss L (particles)")
    ax[0].plot(r.s, r.objective, label="L + (λ/2)E|θ|²")
    if r.free_energy is not None:
        ax[0].plot(r.s, r.free_energy, label="free energy (estimate)")
    if r.closure_free_energy is not None:
        ax[0].plot(r.s, r.closure_free_energy, "--", label="free energy, H → ∞")
    ax[0].set_ylabel("loss, objective, free energy")
    if g is not None:
        ax[1].semilogy(r.s, np.abs(g), label="|F̂ − F*| particles")
        ax[1].semilogy(r.s, np.abs(r.closure_free_energy - r.free_energy_star), "--", label="|F − F*|, H → ∞")
        ax[1].set_ylabel("free-energy gap to F*")
    for a in ax:
        a.set_xlabel("training time s")
        a.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    fig.suptitle(f"{r.spec.regime}, H = {r.spec.heads}, seed = {r.seed}")
    fig.tight_layout()
    return fig
