"""The `prove --report DIR` report: the proofs' verdict table and the figures.

Writes DIR/report.md (figures as DIR/plots/*.png) and DIR/report.html (the
same, self-contained: figures embedded as base64 PNG).  Verdicts come from
the proof results passed in; the figures are computed here from the public
APIs with small, seeded settings, and every figure states its seed and
parameters.  A figure whose inputs cannot be computed (a module missing, a
run failing) is listed as *not produced* with the reason, never faked.
"""

from __future__ import annotations

import base64
import html
import json
import math
import time
import traceback
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np

from riccati_verify.app.figure_kit import Figure, legend_outside, pyplot, save
from riccati_verify.app.training_figures import TRAINING_FIGURES
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import ProofResult, Status
from riccati_verify.numeric.views import float_view

__all__ = [
    "BLOWUP_1D", "BLOWUP_2D", "FIGURES", "Figure", "N_RELU", "REACH_2D", "STABLE_1D", "STABLE_2D",
    "fig_head_limit", "fig_phase", "fig_pretrained", "fig_reachability", "fig_relu",
    "fig_synchronisation", "fig_token_limit", "fig_trajectories", "make_figures", "render_html",
    "render_markdown", "write_report",
]

F = Fraction


_plt, _legend_outside = pyplot, legend_outside
_save = save   # a module attribute, so tests can replace it (tests/test_figures.py)


def _p1(a, vb, s0=None):
    return Params(((F(a),),), ((F(vb),),), ((F(1),),), (F(0),))


# --------------------------------------------------------------------------- figures

STABLE_1D = (_p1(1, -1), Gaussian((F(0),), ((F(1, 5),),)))
BLOWUP_1D = (_p1(F(1, 2), 1), Gaussian((F(0),), ((F(1),),)))
STABLE_2D = (Params(((F(1), F(1, 4)), (F(0), F(1, 2))), ((F(-1), F(0)), (F(0), F(-1))),
                    ((F(1), F(0)), (F(0), F(1))), (F(0), F(0))),
             Gaussian((F(0), F(0)), ((F(3, 10), F(0)), (F(0), F(3, 10)))))
BLOWUP_2D = (Params(((F(0), F(0)), (F(0), F(0))), ((F(1), F(1, 4)), (F(1, 4), F(1, 2))),
                    ((F(1), F(0)), (F(0), F(1))), (F(0), F(0))),
             Gaussian((F(0), F(0)), ((F(1, 2), F(0)), (F(0), F(1, 2)))))


def fig_trajectories(out: Path, seed: int) -> Figure:
    """Σ(t) in the stabilising and blow-up regimes, certified T* marked."""
    from riccati_verify.app.output import enclosure_text
    from riccati_verify.certify.blowup import blowup_time
    from riccati_verify.numeric.flow import integrate_moments
    from riccati_verify.certify.stability import classify_regime

    plt = _plt()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    facts = {}
    for label, (p, s) in (("d=1: a=1, vβ=−1, σ0=1/5", STABLE_1D), ("d=2: V=I, B=−I, Re λ(A)>0", STABLE_2D)):
        reg = classify_regime(p, s)
        r = integrate_moments(p, s, 8.0, n_samples=400)
        for k in range(p.dim):
            ax1.plot(r.t, r.covs[:, k, k], label=f"{label}: Σ{k + 1}{k + 1}")
        eq = reg.equilibrium
        if eq and eq.get("cov") is not None:
            for k in range(p.dim):
                ax1.axhline(float(F(eq["cov"][k][k])), ls=":", c="gray", lw=0.8)
        facts[label] = {"regime": reg.regime, "certified": reg.certified, "method": reg.method}
    ax1.set_title("stabilising regime (dotted: Σ* from the classifier)")
    ax1.set_xlabel("t"); ax1.set_ylabel("covariance entries"); _legend_outside(ax1)
    for label, (p, s), c in (("d=1: a=1/2, vβ=1, σ0=1", BLOWUP_1D, "tab:red"),
                             ("d=2: A=0, V=I, B_s≻0", BLOWUP_2D, "tab:purple")):
        b = blowup_time(p, s, digits=12)
        facts[label] = {"blowup": b.blowup, "lower": b.lower, "upper": b.upper, "rigorous": b.rigorous,
                        "method": b.method}
        if b.blowup and b.upper:
            lo, hi = float(b.lower), float(b.upper)
            r = integrate_moments(p, s, lo * (1 - 1e-4), n_samples=400)
            ax2.semilogy(r.t, np.linalg.norm(r.covs, ord=2, axis=(1, 2)), c=c, label=f"{label}: ‖Σ(t)‖")
            ax2.axvspan(lo, hi, color=c, alpha=0.3)
            ax2.axvline(hi, c=c, ls="--", lw=1,
                        label=f"T* ∈ {enclosure_text(b.lower, b.upper)}" + (" certified" if b.rigorous else " (not rigorous)"))
    ax2.set_title("blow-up regime (dashed: enclosure of T*)")
    ax2.set_xlabel("t"); ax2.set_ylabel("‖Σ(t)‖₂"); _legend_outside(ax2)
    return Figure("trajectories", "Covariance trajectories", _save(fig, out / "trajectories.png"),
                  "Moment ODE (DOP853) in the stabilising regime (classified by `stability.classify_regime`) and "
                  "in the blow-up regime with the enclosure of T* from `blowup.blowup_time`.", facts)


def fig_token_limit(out: Path, seed: int) -> Figure:
    """Error of the empirical covariance vs the moment ODE over a grid of N (expect N^{-1/2})."""
    from riccati_verify.numeric.flow import integrate_moments
    from riccati_verify.numeric.simulate.particles import simulate
    from riccati_verify.numeric.simulate.rates import fit_power_law

    p, s = STABLE_2D
    T, steps = 0.5, 10
    ref = integrate_moments(p, s, T)
    Ns = [64, 128, 256, 512, 1024]
    seeds = [seed + k for k in range(4)]
    E = np.array([[np.linalg.norm(simulate(p, s, n, T, steps, seed=sd).cov - ref.cov) for sd in seeds] for n in Ns])
    fit = fit_power_law(Ns, E)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for k in range(len(seeds)):
        ax.loglog(Ns, E[:, k], "o", c="tab:blue", alpha=0.5, ms=4)
    nn = np.array(Ns, float)
    ax.loglog(nn, np.exp(fit.intercept) * nn ** fit.slope, "k-",
              label=f"fit slope {fit.slope:.3f}, {int(fit.level * 100)}% CI [{fit.ci[0]:.2f}, {fit.ci[1]:.2f}]")
    ax.loglog(nn, E[0].mean() * (nn / nn[0]) ** -0.5, "k:", label="reference slope −1/2")
    ax.set_xlabel("tokens N"); ax.set_ylabel("‖Σ̂_N(T) − Σ(T)‖_F"); _legend_outside(ax)
    ax.set_title(f"token limit (T = {T}, seeds {seeds[0]}..{seeds[-1]})")
    return Figure("token_limit", "Token-limit rate", _save(fig, out / "token_limit.png"),
                  "Particle system (RK4) vs the moment ODE for the d = 2 stabilising example.",
                  {"slope": fit.slope, "ci": fit.ci, "contains_-1/2": fit.contains(-0.5), "seeds": seeds})


def fig_head_limit(out: Path, seed: int) -> Figure:
    """Velocity error of H heads vs the H → ∞ limit (seed claim H^{-1/2} √log H)."""
    from riccati_verify.numeric.simulate.heads import GaussianHeads, head_limit_errors
    from riccati_verify.numeric.simulate.rates import fit_power_law

    d = 2
    rho = GaussianHeads(0.5 * np.eye(d), -0.5 * np.eye(d), 0.5, 0.3)
    m, S = np.array([0.5, -0.2]), np.array([[1.0, 0.3], [0.3, 0.6]])
    Hs = [4, 8, 16, 32, 64, 128, 256, 512]
    seeds = [seed + k for k in range(8)]
    E = head_limit_errors(rho, m, S, Hs, seeds)
    fit, fit_log = fit_power_law(Hs, E), fit_power_law(Hs, E, log_factor=True)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    hh = np.array(Hs, float)
    for k in range(len(seeds)):
        ax.loglog(Hs, E[:, k], "o", c="tab:green", alpha=0.4, ms=4)
    ax.loglog(hh, np.exp(fit.intercept) * hh ** fit.slope, "k-",
              label=f"fit H^α: α = {fit.slope:.3f} CI [{fit.ci[0]:.2f}, {fit.ci[1]:.2f}]")
    ax.loglog(hh, np.exp(fit_log.intercept) * hh ** fit_log.slope * np.sqrt(np.log(hh)), "k--",
              label=f"fit H^α √log H: α = {fit_log.slope:.3f}")
    ax.set_xlabel("heads H"); ax.set_ylabel("‖v_H − v_∞‖ in L²(μ)"); _legend_outside(ax)
    ax.set_title(f"head limit (seeds {seeds[0]}..{seeds[-1]})")
    return Figure("head_limit", "Head-limit rate", _save(fig, out / "head_limit.png"),
                  "Exact L²(N(m,Σ)) velocity error of H heads drawn from a Gaussian ρ.",
                  {"slope": fit.slope, "ci": fit.ci, "slope_with_log": fit_log.slope, "ci_with_log": fit_log.ci,
                   "seeds": seeds})


def fig_synchronisation(out: Path, seed: int) -> Figure:
    """Pathwise and p-th moment exponents of dy = λy dt + σy dW vs their closed forms."""
    from riccati_verify.numeric.simulate.noise import moment_exponents

    lam, T, steps, paths = 0.5, 2.0, 200, 20000
    sigmas = [0.5, 1.0, 1.5, 2.0]
    ps = [0.25, 0.5, 1.0, 2.0]
    plt = _plt()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    path_rates = []
    for k, sg in enumerate(sigmas):
        ests, path = moment_exponents(lam, sg, ps, T, steps, paths, seed=seed + k)
        path_rates.append((sg, path.rate, path.stderr, path.predicted))
        if sg == 1.5:
            ax2.errorbar(ps, [e.rate for e in ests], yerr=[3 * e.stderr for e in ests], fmt="o",
                         label="measured (±3 s.e.)")
            pp = np.linspace(0, 2.2, 50)
            ax2.plot(pp, pp * (lam - sg**2 / 2) + pp**2 * sg**2 / 2, "k-", label="g(p) = p(λ−σ²/2) + p²σ²/2")
            facts_p = [{"p": e.p, "rate": e.rate, "stderr": e.stderr, "predicted": e.predicted} for e in ests]
    sg = np.array([x[0] for x in path_rates])
    ax1.errorbar(sg, [x[1] for x in path_rates], yerr=[3 * x[2] for x in path_rates], fmt="o",
                 label="measured E log|y_T| / T (±3 s.e.)")
    ss = np.linspace(0, 2.2, 50)
    ax1.plot(ss, lam - ss**2 / 2, "k-", label="λ − σ²/2")
    ax1.axhline(0, c="gray", lw=0.6)
    ax1.axvline(math.sqrt(2 * lam), c="gray", ls=":", label="σ² = 2λ")
    ax1.set_xlabel("σ"); ax1.set_ylabel("pathwise exponent"); _legend_outside(ax1)
    ax1.set_title(f"synchronisation, λ = {lam}")
    ax2.axhline(0, c="gray", lw=0.6)
    ax2.set_xlabel("p"); ax2.set_ylabel("p-th moment exponent"); _legend_outside(ax2)
    ax2.set_title("σ = 1.5: pathwise decay, yet E|y|^p grows for large p")
    return Figure("synchronisation", "Synchronisation exponents", _save(fig, out / "synchronisation.png"),
                  f"Milstein, {paths} paths, T = {T}, {steps} steps, seeds {seed}..{seed + len(sigmas) - 1}.",
                  {"pathwise": [{"sigma": a, "rate": b, "stderr": c, "predicted": d} for a, b, c, d in path_rates],
                   "moments_sigma_1.5": facts_p})


N_RELU = 2000


def fig_relu(out: Path, seed: int) -> Figure:
    """Deviation from the moment-matched Gaussian under a ReLU feed-forward."""
    from riccati_verify.numeric.simulate.relu import relu_deviation, shifted_relu, short_time_exponent

    p, s = STABLE_2D
    A = np.array(float_view(p)[0])
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 4))
    facts = {"seed": seed}
    for shift, c, name in ((0.0, "tab:red", "kink through the bulk (shift 0)"),
                           (50.0, "tab:gray", "inactive ReLU (shift 50, control)")):
        run = relu_deviation(p, s, shifted_relu(A, shift), N_RELU, 1.0, 16, seed=seed, records=8)
        y = np.maximum(run.kappa3_change[1:], 1e-300)
        ax.loglog(run.t[1:], y, "o-", c=c, label=name)
        if shift == 0.0:
            fit = short_time_exponent(run)
            facts.update({"exponent": fit.slope, "ci": fit.ci})
            ax.plot([], [], " ", label=f"fitted exponent {fit.slope:.2f} CI [{fit.ci[0]:.2f}, {fit.ci[1]:.2f}]")
        else:
            facts["control_max_kappa3_change"] = float(run.kappa3_change.max())
    # the log axis spans about one decade: matplotlib's minor labels (2e-1, 3e-1, ...) collide and its
    # major ones leave one label; label the powers of 2 instead
    from matplotlib.ticker import NullFormatter

    t_lo, t_hi = float(run.t[1]), float(run.t[-1])
    ticks = [2.0 ** k for k in range(-12, 4) if t_lo * (1 - 1e-9) <= 2.0 ** k <= t_hi * (1 + 1e-9)]
    ax.set_xticks(ticks, labels=[f"{x:g}" for x in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("t"); ax.set_ylabel("‖κ3(t) − κ3(0)‖_F"); _legend_outside(ax)
    ax.set_title(f"ReLU feed-forward deviation (N = {N_RELU}, seed {seed})")
    return Figure("relu", "ReLU deviation", _save(fig, out / "relu.png"),
                  "Standardised third cumulant change of the particle cloud (common random numbers). The control "
                  "curve (ReLU inactive, so the feed-forward is affine) is the floor set by finite N: the empirical "
                  "softmax is not exactly affine and the whitening frame rotates.", facts)


def fig_phase(out: Path, seed: int) -> Figure:
    """d = 1 phase diagram in the (a, vβ) plane from the sweep, closed-form boundary overlaid."""
    from riccati_verify.app import sweep as sw

    spec = sw.parse_spec({"family": "scalar_grid", "a": {"min": -1, "max": 1, "num": 41},
                          "vbeta": {"min": -1, "max": 1, "num": 41}, "sigma0": "1/2"})
    csv_path = out / "phase_d1.csv"
    if csv_path.exists():
        csv_path.unlink()
    s = sw.run_sweep(spec, csv_path, workers=0)
    png = sw.plot_diagram(csv_path, spec, out / "phase_d1.png")
    return Figure("phase", "Phase diagram (d = 1)", png,
                  f"{s.n_points} grid points, classifier `{s.classifier}`, compared with the exact closed form "
                  f"(MATH.md §6): {len(s.disagreements)} disagreements.",
                  {"points": s.n_points, "classifier": s.classifier, "counts": s.counts,
                   "disagreements": s.disagreements})


def fig_pretrained(out: Path, seed: int) -> Figure:
    """Per-layer Gaussianity of Gaussian hidden states through all-MiniLM-L6-v2 (needs [pretrained])."""
    from riccati_verify.numeric import pretrained as pt

    run = pt.pretrained_gaussianity(None, seed=seed)
    png = pt.plot_run(run, out / "pretrained.png")
    return Figure("pretrained", "Pretrained encoder (all-MiniLM-L6-v2)", png,
                  f"{run.model}; {run.batch}×{run.seq_len} tokens ~ N(0, I) injected past the embeddings. "
                  f"Approximately Gaussian through layer {run.through} of {run.n_layers}. Criterion: {run.criterion}.",
                  {"gaussian_through": run.through, "seed": seed,
                   "layers": [{"layer": r.layer, "mean_drift": r.mean_drift, "cov_drift": r.cov_drift,
                               "b1_over_ref": r.mardia_b1 / r.mardia_b1_ref,
                               "b2_over_null_minus_1": r.mardia_b2 / r.mardia_b2_null - 1,
                               "w2_over_ref": r.sliced_w2 / r.sliced_w2_ref, "proj_rejected": r.proj_rejected,
                               "failed": r.failed} for r in run.layers]})


REACH_2D = (Gaussian((F(1), F(0)), ((F(2), F(1, 2)), (F(1, 2), F(1)))),
            Gaussian((F(0), F(3)), ((F(1), F(0)), (F(0), F(1, 3)))))


def _rotated(t: Fraction, diag: tuple[Fraction, Fraction]) -> Gaussian:
    """N(0, R diag Rᵀ) with the rational rotation R = (I − K)(I + K)⁻¹, K = [[0, −t], [t, 0]] (angle 2 atan t)."""
    c, s = (1 - t * t) / (1 + t * t), 2 * t / (1 + t * t)
    R = ((c, -s), (s, c))
    S = tuple(tuple(sum(R[i][k] * diag[k] * R[j][k] for k in range(2)) for j in range(2)) for i in range(2))
    return Gaussian((F(0), F(0)), S)


def fig_reachability(out: Path, seed: int) -> Figure:
    """Σ(t) under the constructed controls, and the minimal-time bracket as the target rotates."""
    from riccati_verify.numeric.flow import integrate_moments
    from riccati_verify.certify.min_time import min_time_bracket
    from riccati_verify.certify.reach import reach

    plt = _plt()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    facts: dict = {}
    s0, s1 = REACH_2D
    circle = np.stack([np.cos(np.linspace(0, 2 * np.pi, 120)), np.sin(np.linspace(0, 2 * np.pi, 120))])

    def ellipse(m, S, **kw):
        w, U = np.linalg.eigh(S)
        pts = U @ (np.sqrt(np.maximum(w, 0))[:, None] * circle) + np.asarray(m)[:, None]
        ax1.plot(pts[0], pts[1], **kw)

    for attention, colour in ((False, "tab:blue"), (True, "tab:orange")):
        res = reach(s0, s1, F(1), attention_only=attention, verify=False)
        r = integrate_moments(res.segments, s0, 1.0, n_samples=101)
        for k in range(0, 101, 20):
            ellipse(r.means[k], r.covs[k], c=colour, lw=0.8, alpha=0.35 + 0.65 * k / 100)
        ax1.plot(r.means[:, 0], r.means[:, 1], c=colour, lw=1.5, label=res.mode)
        m1, S1 = float_view(s1)
        facts[res.mode] = {"segments": len(res.segments), "energy": res.energy, "max_norm": res.max_norm,
                           "float_terminal_error": float(max(np.max(np.abs(r.mean - m1)), np.max(np.abs(r.cov - S1))))}
    ellipse(*float_view(s0), c="k", ls="--", lw=1.5, label="start N(m0, Σ0)")
    ellipse(*float_view(s1), c="k", lw=1.5, label="target N(m1, Σ1)")
    ax1.set_aspect("equal")
    ax1.set_title("1σ ellipses of Σ(t), t = 0, 0.2, …, 1")
    ax1.set_xlabel("x₁"); ax1.set_ylabel("x₂")
    _legend_outside(ax1)

    ts = [F(k, 10) for k in range(11)]
    start = Gaussian((F(0), F(0)), ((F(1), F(0)), (F(0), F(1, 4))))
    angles, lows, highs, rows = [], [], [], []
    for t in ts:
        rep = min_time_bracket(start, _rotated(t, (F(4), F(1, 2))), F(1)).report()
        angles.append(2 * np.degrees(np.arctan(float(t))))
        lows.append(float(rep["time_lower_bound"]))
        highs.append(float(rep["time_upper_bound"]))
        rows.append({"t": str(t), "lower": str(rep["time_lower_bound"]), "upper": str(rep["time_upper_bound"]),
                     "determined": rep["determined"], "criterion": rep["lower_bound_criterion"]})
    ax2.fill_between(angles, lows, highs, color="tab:gray", alpha=0.3, label="not certified")
    ax2.plot(angles, lows, "o-", c="tab:red", label="T_lower (rigorous: unreachable below)")
    ax2.plot(angles, highs, "s-", c="tab:green", label="T_upper (exact controls within the bound reach)")
    ax2.set_xlabel("rotation of the target's eigenbasis (degrees)")
    ax2.set_ylabel("minimal time under ‖A‖₂, |b| ≤ 1")
    ax2.set_title("Σ0 = diag(1, 1/4) → R diag(4, 1/2) Rᵀ, B = V = 0")
    _legend_outside(ax2)
    facts["bracket (M = 1, congruence)"] = rows
    return Figure("reachability", "Reachability and minimal time", _save(fig, out / "reachability.png"),
                  "Left: the moment flow (DOP853) under the constructed congruence (B = V = 0) and attention-only "
                  "(A = 0) controls from `reach.reach`. Right: the certified bracket of the minimal time from "
                  "`min_time.min_time_bracket`; it closes where the eigenbases align and opens as the target rotates.",
                  facts)


FIGURES: list[tuple[str, Callable[[Path, int], Figure]]] = [
    ("Covariance trajectories", fig_trajectories),
    ("Token-limit rate", fig_token_limit),
    ("Head-limit rate", fig_head_limit),
    ("Synchronisation exponents", fig_synchronisation),
    ("ReLU deviation", fig_relu),
    ("Phase diagram (d = 1)", fig_phase),
    ("Reachability and minimal time", fig_reachability),
    ("Pretrained encoder (all-MiniLM-L6-v2)", fig_pretrained),
    *TRAINING_FIGURES,
]


def make_figures(plots: Path, seed: int, progress: Callable[[str], None] | None = None,
                 only: list[str] | None = None) -> list[Figure]:
    """Compute the figures (all, or the keys in `only`); a figure that fails is returned with its error, not raised."""
    figs = []
    for title, fn in FIGURES:
        key = fn.__name__.removeprefix("fig_")
        if only is not None and key not in only:
            continue
        t0 = time.perf_counter()
        try:
            f = fn(plots, seed)
        except Exception as e:  # reported in the document as "not produced", with the reason
            f = Figure(key, title, error=f"{type(e).__name__}: {e}",
                       facts={"traceback": traceback.format_exc(limit=3)})
        f.seconds = time.perf_counter() - t0
        figs.append(f)
        if progress:
            progress(f"{key}: {'ok' if f.png else 'not produced'}")
    return figs


# --------------------------------------------------------------------------- documents

def _facts_text(facts: dict) -> str:
    from riccati_verify.app.output import jsonable

    return json.dumps(jsonable({k: v for k, v in facts.items() if k != "traceback"}), indent=1,
                      default=str, ensure_ascii=False)[:3000]


def render_markdown(results: list[ProofResult], figs: list[Figure], seed: int) -> str:
    """report.md: the verdict table, each proof's evidence, and the figures."""
    L = ["# riccati-verify proofs report", "",
         f"Seed for the figures: {seed}.  Verdicts are those returned by each `proofs/` module's `check()`.", "",
         "| theorem | seed | claim | verdict | exact / symbolic | numeric | time |",
         "|---|---|---|---|---|---|---|"]
    esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    for r in results:
        L.append(f"| {esc(r.name)} | {esc(r.seed)} | {esc(r.claim)} | **{r.status}** | "
                 f"{esc(r.symbolic.status)}: {esc(r.symbolic.note)} | {esc(r.numeric.status)}: {esc(r.numeric.note)} "
                 f"| {r.seconds:.1f}s |")
    counts = {str(s): sum(1 for r in results if r.status is s) for s in Status}
    L += ["", "Totals: " + ", ".join(f"{k} {v}" for k, v in counts.items()), ""]
    if results:
        L += ["## Evidence", ""]
        for r in results:
            L += [f"### {r.name}", "", f"Exact/symbolic ({r.symbolic.status}):", "", "```json",
                  _facts_text(r.symbolic.evidence), "```", "", f"Numeric ({r.numeric.status}):", "", "```json",
                  _facts_text(r.numeric.evidence), "```", ""]
    for f in figs:
        L += [f"## {f.title}", ""]
        if f.png:
            L += [f"![{f.title}](plots/{f.png.name})", "", f.caption, "",
                  "```json", _facts_text(f.facts), "```", ""]
        else:
            L += [f"**Not produced:** {f.error}", ""]
    return "\n".join(L) + "\n"


def render_html(results: list[ProofResult], figs: list[Figure], seed: int) -> str:
    """report.html: the same as the Markdown, self-contained (figures inlined as base64)."""
    e = html.escape
    color = {Status.CERTIFIED: "#1a7f37", Status.CONFIRMED_NUMERICALLY: "#0969da",
             Status.NOT_CERTIFIED: "#9a6700", Status.REFUTED: "#cf222e"}
    rows = "".join(
        f"<tr><td>{e(r.name)}</td><td>{e(r.seed)}</td><td>{e(r.claim)}</td>"
        f"<td style='color:{color[r.status]};font-weight:bold'>{e(str(r.status))}</td>"
        f"<td>{e(str(r.symbolic.status))}: {e(r.symbolic.note)}</td>"
        f"<td>{e(str(r.numeric.status))}: {e(r.numeric.note)}</td><td>{r.seconds:.1f}s</td></tr>"
        for r in results)
    parts = []
    for f in figs:
        if f.png:
            b64 = base64.b64encode(f.png.read_bytes()).decode()
            parts.append(f"<h2>{e(f.title)}</h2><img alt='{e(f.title)}' src='data:image/png;base64,{b64}'>"
                         f"<p>{e(f.caption)}</p><pre>{e(_facts_text(f.facts))}</pre>")
        else:
            parts.append(f"<h2>{e(f.title)}</h2><p><b>Not produced:</b> {e(f.error)}</p>")
    evidence = "".join(
        f"<details><summary>{e(r.name)}</summary><p>exact/symbolic ({e(str(r.symbolic.status))}):</p>"
        f"<pre>{e(_facts_text(r.symbolic.evidence))}</pre><p>numeric ({e(str(r.numeric.status))}):</p>"
        f"<pre>{e(_facts_text(r.numeric.evidence))}</pre></details>" for r in results)
    return ("<!DOCTYPE html><html><head><meta charset='utf-8'><title>riccati-verify proofs report</title>"
            "<style>body{font-family:sans-serif;max-width:1200px;margin:auto}table{border-collapse:collapse}"
            "td,th{border:1px solid #ccc;padding:4px;font-size:13px;vertical-align:top}img{max-width:100%}"
            "pre{background:#f6f8fa;font-size:11px;max-height:220px;overflow:auto}</style></head><body>"
            "<h1>riccati-verify proofs report</h1>"
            f"<p>Seed for the figures: {seed}. Verdicts are those returned by each proofs/ module's check().</p>"
            "<table><tr><th>theorem</th><th>seed</th><th>claim</th><th>verdict</th><th>exact / symbolic</th>"
            f"<th>numeric</th><th>time</th></tr>{rows}</table><h2>Evidence</h2>{evidence}"
            f"{''.join(parts)}</body></html>\n")


def write_report(directory: str | Path, results: list[ProofResult], *, seed: int = 0,
                 only: list[str] | None = None, progress: bool = True) -> list[Path]:
    """Write report.md, report.html and plots/ into `directory`; return the two document paths."""
    from riccati_verify.core.errors import InputError
    from riccati_verify.app.output import Progress

    d = Path(directory)
    try:
        (d / "plots").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create report directory '{directory}': {e.strerror}") from None
    n = len(FIGURES) if only is None else len(only)
    bar = Progress(n, "report figures", enabled=progress)
    from riccati_verify.app.sweep import single_threaded_blas

    with single_threaded_blas():
        figs = make_figures(d / "plots", seed, bar.step, only)
    md, htm = d / "report.md", d / "report.html"
    md.write_text(render_markdown(results, figs, seed), encoding="utf-8")
    htm.write_text(render_html(results, figs, seed), encoding="utf-8")
    return [md, htm]
