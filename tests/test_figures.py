"""Render test of the figures: every axes is labelled, no legend covers data (matplotlib's
bounding boxes, in display coordinates), and an enclosure printed in a figure is not degenerate.
The fast tests render the cheap figures (the ReLU one at a small N); `-m slow` renders every
report figure at its real size."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


def _data_points(ax) -> np.ndarray:
    """Display coordinates of every plotted point of `ax` (lines, markers, filled bands)."""
    pts = []
    for line in ax.get_lines():
        xy = line.get_xydata()
        if len(xy):
            pts.append(line.get_transform().transform(xy))
    for coll in ax.collections:
        for path in coll.get_paths():
            if len(path.vertices):
                pts.append(coll.get_transform().transform(path.vertices))
        offsets = coll.get_offsets()
        if len(offsets):
            pts.append(coll.get_offset_transform().transform(offsets))
    for patch in ax.patches:                      # tiles, bars, ellipses: their corners
        pts.append(patch.get_transform().transform(patch.get_path().vertices))
    pts = [p[np.all(np.isfinite(p), axis=1)] for p in pts]
    return np.concatenate(pts) if pts else np.empty((0, 2))


def figure_problems(fig) -> list[str]:
    fig.canvas.draw()
    problems = []
    axes = [a for a in fig.axes if a.get_label() != "<colorbar>"]
    data = [_data_points(a) for a in axes]
    for k, ax in enumerate(axes):
        name = ax.get_title() or f"axes {k}"
        if not data[k].size:
            continue
        if not ax.get_xlabel().strip() or not ax.get_ylabel().strip():
            problems.append(f"{name}: unlabelled axis (x {ax.get_xlabel()!r}, y {ax.get_ylabel()!r})")
        leg = ax.get_legend()
        if leg is not None:
            box = leg.get_window_extent()
            for j, pts in enumerate(data):
                inside = ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1))
                if inside.any():
                    problems.append(f"{name}: the legend covers {int(inside.sum())} data points of axes {j}")
            # a patch (a tile, a bar) under the legend, even where none of its corners is
            for j, other in enumerate(axes):
                for patch in other.patches:
                    ext = patch.get_window_extent()
                    if ext.width > 0 and ext.height > 0 and ext.overlaps(box):
                        problems.append(f"{name}: the legend covers a patch of axes {j}")
                        break
        labels = [ax.get_xticklabels() + ax.get_xticklabels(minor=True),
                  ax.get_yticklabels() + ax.get_yticklabels(minor=True)]
        for ticks in labels:
            shown = [t for t in ticks if t.get_text().strip() and t.get_visible()]
            boxes = [t.get_window_extent() for t in shown]
            if any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]):
                problems.append(f"{name}: tick labels collide")
    texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text)]
    for text in texts:
        for lo, hi in re.findall(r"\(([-0-9.]+), ([-0-9.]+)\]", text):
            if Fraction(lo) >= Fraction(hi):
                problems.append(f"degenerate enclosure in {text!r}")
    return problems


def test_the_checks_see_a_covering_legend_and_missing_labels():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot(np.linspace(0, 1, 50), np.linspace(0, 1, 50), label="data")
    ax.legend(loc="center")                                  # right on the line
    ax.set_title("T* ∈ (0.3465, 0.3465]")
    problems = figure_problems(fig)
    plt.close(fig)
    assert any("legend covers" in p for p in problems)
    # a big patch whose corners all lie outside the legend, but which the legend covers
    fig, ax = plt.subplots()
    ax.add_patch(matplotlib.patches.Rectangle((0, 0), 1, 1, label="tile"))
    ax.set_xlim(-0.1, 1.1); ax.set_ylim(-0.1, 1.1); ax.set_xlabel("x"); ax.set_ylabel("y")
    ax.legend(loc="center")
    assert any("legend covers a patch" in p for p in figure_problems(fig))
    plt.close(fig)
    assert any("unlabelled" in p for p in problems)
    assert any("degenerate enclosure" in p for p in problems)
    # the old ReLU figure: a log axis over t in [1/8, 1] whose minor labels run into each other
    fig, ax = plt.subplots(figsize=(5.5, 4))
    ax.loglog(np.linspace(0.125, 1, 8), np.linspace(0.1, 1, 8), "o-")
    ax.set_xlabel("t"); ax.set_ylabel("y")
    assert any("tick labels collide" in p for p in figure_problems(fig))
    plt.close(fig)


def test_simulate_plot(tmp_path):
    import matplotlib.pyplot as plt

    from riccati_verify.app.commands.simulate import plot_figure
    from riccati_verify.core.io import load_problem
    from riccati_verify.numeric.simulate.compare import simulate_tokens


    prob = load_problem(Path(__file__).resolve().parents[1] / "examples" / "rotation_stable.json")
    r = simulate_tokens(prob.params, prob.state, 60, 0.4, steps=8, seed=2)
    fig = plot_figure(r.t, r.means, r.covs, r.predicted_means, r.predicted_covs, 60, 2)
    assert figure_problems(fig) == []
    labels = [t.get_text() for ax in fig.axes for t in ax.get_legend().get_texts()]
    assert "Σ12 particles" in labels and "Σ12 moment ODE" in labels           # every entry, i <= j
    for ax in fig.axes:                       # particles and moment ODE of one entry share a colour
        lines = {ln.get_label(): ln.get_color() for ln in ax.get_lines()}
        for name, colour in lines.items():
            if name.endswith(" particles"):
                assert lines[name.replace(" particles", " moment ODE")] == colour
    plt.close(fig)


@pytest.fixture
def captured(monkeypatch):
    """Run report figures with `_save` replaced by the checks (no PNG written)."""
    from riccati_verify.app import report

    found = {}

    def save(fig, path):
        import matplotlib.pyplot as plt

        found[path.name] = figure_problems(fig)
        plt.close(fig)
        return path

    from riccati_verify.app import figure_kit

    monkeypatch.setattr(report, "_save", save)
    monkeypatch.setattr(figure_kit, "save", save)      # the figures of app.training_figures
    return found


@pytest.mark.parametrize("name", ["relu", "head_limit", "synchronisation"])   # the others: -m slow
def test_cheap_report_figures(captured, monkeypatch, tmp_path, name):
    from riccati_verify.app import report

    monkeypatch.setattr(report, "N_RELU", 200)           # the layout does not depend on N
    getattr(report, f"fig_{name}")(tmp_path, 0)
    assert captured and all(p == [] for p in captured.values()), captured


@pytest.mark.slow
def test_every_report_figure(captured, tmp_path):
    from riccati_verify.app import report

    figs = report.make_figures(tmp_path, 0)
    assert all(f.png is not None or "torch" in f.error for f in figs), [f.error for f in figs]
    assert all(p == [] for p in captured.values()), captured


def _phase_rows(tmp_path, n):
    """A results file for an n×n scalar grid, each point labelled by the exact closed form
    (`scalar_regime`, no classifier run), and its spec."""
    from riccati_verify.app import sweep as sw

    spec = sw.parse_spec({"family": "scalar_grid", "a": {"min": -1, "max": 1, "num": n},
                          "vbeta": {"min": -1, "max": 1, "num": n}, "sigma0": "1/2"})
    out = tmp_path / "phase.csv"
    sw.open_output(out, spec, "flow")
    rows = []
    for i in range(spec.n_points):
        _, _, coords = sw.point(spec, i)
        regime = sw.scalar_regime(Fraction(coords["a"]), Fraction(coords["vbeta"]), Fraction(1, 2))[0]
        rows.append({"index": i, **coords, "regime": regime, "certified": 1, "reference": regime, "agree": 1,
                     "note": "", "seconds": "0", "certificate": ""})
    sw.append_rows(out, rows)
    return spec, out


def test_phase_diagram_has_no_seams(tmp_path, monkeypatch):
    """The d = 1 phase diagram (report figure phase_d1): labelled, legend off the data, and the
    grid cells tile the axes: no column or row of background pixels inside the data area (the
    square-marker version left a white line near a ≈ −0.62 on the report's 41 × 41 grid, and one
    on this 21 × 21 grid)."""
    import matplotlib.pyplot as plt

    from riccati_verify.app import sweep as sw

    spec, out = _phase_rows(tmp_path, 21)                  # the marker version has a seam at 21 and 41
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)           # keep the figure plot_diagram draws
    sw.plot_diagram(out, spec, tmp_path / "phase.png")
    fig = figs[-1]
    fig.set_dpi(110)                                          # the resolution plot_diagram saves at
    assert figure_problems(fig) == []
    ax = fig.axes[0]
    img = np.asarray(fig.canvas.buffer_rgba())[:, :, :3]
    h = img.shape[0]
    # the data area, in pixels (display y runs upwards, image rows downwards), a pixel in from each edge
    (x0, y0), (x1, y1) = ax.transData.transform([(-1, -1), (1, 1)])
    inner = img[int(h - y1) + 2:int(h - y0) - 2, int(x0) + 2:int(x1) - 2]
    white = np.all(inner > 245, axis=2)
    assert inner.size and not white.all(axis=0).any() and not white.all(axis=1).any()
    assert white.mean() < 0.001
    assert {t.get_text() for t in ax.get_legend().get_texts()} >= {"equilibrium", "blowup", "collapse", "growth"}
    plt.close(fig)


def test_phase_diagram_of_a_random_family(tmp_path, monkeypatch):
    """The random family's diagram (counts of computed regime against the closed form)."""
    import matplotlib.pyplot as plt

    from riccati_verify.app import sweep as sw

    spec = sw.parse_spec({"family": "random", "dim": 2, "count": 6, "seed": 3, "structure": "riccati_definite",
                          "classifier": "flow"})
    out = tmp_path / "r.csv"
    sw.run_sweep(spec, out, workers=0)
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    sw.plot_diagram(out, spec, tmp_path / "r.png")
    assert figure_problems(figs[-1]) == []
    plt.close(figs[-1])


def test_training_figure(tmp_path):
    """`train --plot`: both panels labelled, legends below the data; one panel without a gap."""
    import dataclasses
    import json

    import matplotlib.pyplot as plt

    from riccati_verify.app.commands.train import figure
    from riccati_verify.numeric.training import load_spec, train

    spec = json.loads((Path(__file__).resolve().parents[1] / "examples" / "train_shallow.json").read_text())
    spec.update(heads=16, steps=3)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(spec))
    r = train(load_spec(p))
    # without a particle free-energy estimate (too few heads for the entropy) there is no gap
    for res, panels in ((r, 2), (dataclasses.replace(r, free_energy=None), 1)):
        fig = figure(res)
        assert len(fig.axes) == panels and (res.gap() is not None) == (panels == 2)
        assert figure_problems(fig) == []
        plt.close(fig)


def test_rate_fit_figure():
    import matplotlib.pyplot as plt

    from riccati_verify.numeric.simulate.rates import fit_power_law, rate_fit_figure

    ns = np.array([10, 100, 1000])
    E = np.array([[1.0, 0.9], [0.31, 0.33], [0.1, 0.11]])
    fig = rate_fit_figure(ns, E, fit_power_law(ns, E), title="test")
    assert figure_problems(fig) == []
    plt.close(fig)


def test_tiles_figure(tmp_path):
    """`sweep --tiles --plot`: labels, the legend off the tiles, digits of the title."""
    import matplotlib.pyplot as plt

    from riccati_verify.app import tiles as tl

    spec = tl.parse_tile_spec({"family": "tiles", "params": {"A": [[0]], "B": [[0]], "V": 1, "mean": [0], "cov": [[1]]},
                               "x": {"entry": "A[0][0]", "min": "-2", "max": "2", "label": "a"},
                               "y": {"entry": "B[0][0]", "min": "-2", "max": "2", "label": "vbeta"},
                               "min_size": "1/2"})
    out = tmp_path / "t.csv"
    tl.run_tiles(spec, out, workers=0)
    fig = tl.tiles_figure(out, spec, boundary_grid=16)
    assert figure_problems(fig) == []
    plt.close(fig)
