"""What every report figure module shares: the `Figure` record and the matplotlib helpers.

A module of its own so that figure modules (`app.report`, `app.training_figures`) import it and
`app.report` can list the others' figures without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Figure", "legend_outside", "pyplot", "save"]


@dataclass
class Figure:
    """One report figure: its PNG (None if not produced, with `error`), caption, and the facts it shows."""

    key: str
    title: str
    png: Path | None = None
    caption: str = ""
    facts: dict = field(default_factory=dict)
    error: str = ""
    seconds: float = 0.0


def pyplot():
    """matplotlib.pyplot on the Agg backend (the report runs headless)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def legend_outside(ax) -> None:
    """The legend below the axes, where it can cover no data."""
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1, frameon=False)


def save(fig, path: Path) -> Path:
    """Write `fig` to `path` as PNG and close it."""
    fig.tight_layout()
    fig.savefig(path, dpi=100, bbox_inches="tight")   # "tight": the legends below the axes stay in
    pyplot().close(fig)
    return path
