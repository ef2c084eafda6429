"""The certified-tiles figure (`app.tiles.tiles_figure` / `plot_tiles`): axis labels name the
slice's parameters, the legend names every regime colour, the hatch and the closed-form
boundary, the patches are exactly the leaf tiles with their regime's colour, and the title's
certified share is the file's own."""

from __future__ import annotations

from fractions import Fraction as Q

import matplotlib
import pytest

from riccati_verify.app import tiles as tl

matplotlib.use("Agg")

SCALAR = {"family": "tiles", "params": {"A": [[0]], "B": [[0]], "V": 1, "mean": [0], "cov": [[1]]},
          "x": {"entry": "A[0][0]", "min": "-2", "max": "2", "label": "a"},
          "y": {"entry": "B[0][0]", "min": "-2", "max": "2", "label": "vbeta"},
          "min_size": "1/2"}


@pytest.fixture(scope="module")
def scalar_figure(tmp_path_factory):
    import matplotlib.pyplot as plt

    spec = tl.parse_tile_spec(SCALAR)
    out = tmp_path_factory.mktemp("fig") / "t.csv"
    tl.run_tiles(spec, out, workers=0)
    fig = tl.tiles_figure(out, spec, boundary_grid=16)
    yield spec, out, fig
    plt.close(fig)


def test_axis_labels_name_the_slice_parameters(scalar_figure):
    spec, _, fig = scalar_figure
    ax = fig.axes[0]
    assert ax.get_xlabel() == "a (A[0][0])" and ax.get_ylabel() == "vbeta (B[0][0])"
    assert ax.get_xlim() == (-2.0, 2.0) and ax.get_ylim() == (-2.0, 2.0)


def test_legend_names_regimes_hatch_and_boundary(scalar_figure):
    _, _, fig = scalar_figure
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert texts == ["certified equilibrium", "certified blowup", "certified collapse", "certified growth",
                     "not certified", "closed-form boundary (§6/§7)"]


def test_patches_are_the_leaf_tiles_in_their_regime_colour(scalar_figure):
    from matplotlib.colors import to_rgba

    spec, out, fig = scalar_figure
    rows = {r["tile"]: r for r in tl.read_tiles(out)}
    leaves = [r for r in rows.values() if r["outcome"] != "split"]
    rects = [p for p in fig.axes[0].patches]
    assert len(rects) == len(leaves)
    by_corner = {(round(p.get_x(), 9), round(p.get_y(), 9)): p for p in rects}
    certified = 0
    for r in leaves:
        p = by_corner[(round(float(Q(r["a_lo"])), 9), round(float(Q(r["vbeta_lo"])), 9))]
        assert abs(p.get_width() - float(Q(r["a_hi"]) - Q(r["a_lo"]))) < 1e-12
        if r["outcome"] == "certified":
            certified += 1
            assert p.get_facecolor()[:3] == to_rgba(tl._COLORS[r["regime"]])[:3] and not p.get_hatch()
        else:
            assert p.get_hatch() == "////"
    assert certified > 10
    frac = float(tl.area_fraction(spec, rows.values()))
    assert f"{100 * frac:.1f}% of the area" in fig.axes[0].get_title()


def test_boundary_lines_lie_on_the_closed_form_phase_boundaries(scalar_figure):
    """d = 1, σ0 = 1: the regimes change across a = 0 (vβ < 0), vβ = 0 (a > 0) and a = -vβ (vβ > 0);
    the drawn grid edges lie within one grid cell (4/16) of one of them."""
    _, _, fig = scalar_figure
    lines = [c for c in fig.axes[0].collections]
    assert len(lines) == 1
    h = 4 / 16
    for seg in lines[0].get_segments():
        for x, y in seg:
            near = min(abs(x) if y <= h else 9, abs(y) if x >= -h else 9, abs(x + y) if y >= -h else 9)
            assert near <= h + 1e-9, (x, y)


def test_local_stability_figure_has_no_regime_boundary(tmp_path):
    import matplotlib.pyplot as plt

    doc = {"family": "tiles", "property": "local_stability", "min_size": "1/8",
           "params": {"A": [[1, 1], [-1, 1]], "B": [[1, 0], [0, 1]], "V": [[-1, 0], [0, -1]],
                      "mean": [0, 0], "cov": [[1, 0], [0, 1]]},
           "x": {"entry": "A[0][0]", "min": "1", "max": "9/8", "label": "a"},
           "y": {"entry": "V[0][1]", "min": "0", "max": "1/8", "label": "w"}}
    spec = tl.parse_tile_spec(doc)
    out = tmp_path / "t.csv"
    tl.run_tiles(spec, out, workers=0)
    fig = tl.tiles_figure(out, spec, boundary_grid=4)
    try:
        texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert texts == ["certified locally stable", "not certified"] and not fig.axes[0].collections
    finally:
        plt.close(fig)
