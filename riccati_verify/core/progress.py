"""Progress of long work: library code counts it, the application decides whether and how it is shown.

`core` imports the standard library only, so it renders nothing itself: an application
installs a renderer with `set_renderer` (the command line installs a tqdm bar when stderr
is a terminal and neither ``--json`` nor ``--quiet`` was given, see
`riccati_verify.app.output.progress_policy`).  Without a renderer every `Progress` is
silent, so a library call never writes to a stream its caller did not ask for.

A renderer is a callable ``(total, label) -> view``; the view has ``update(n, note)``
(n units done since the last call, and a short note) and ``close()``.
"""

from __future__ import annotations

from typing import Callable, Protocol

__all__ = ["Progress", "ProgressView", "Renderer", "set_renderer"]


class ProgressView(Protocol):
    """What a renderer returns for one `Progress`."""

    def update(self, n: int, note: str) -> None:
        """`n` more units done (0: only a new note)."""

    def close(self) -> None:
        """The work is over: remove or finish the display."""


Renderer = Callable[[int | None, str], ProgressView]

_renderer: Renderer | None = None


def set_renderer(renderer: Renderer | None) -> Renderer | None:
    """Install `renderer` for every `Progress` created from now on (None: silent); returns the previous one."""
    global _renderer
    previous, _renderer = _renderer, renderer
    return previous


class Progress:
    """Counts `total` units of work (None: unknown) under `label`; shown only through the installed
    renderer, and never when `enabled` is False.  Usable as a context manager (closes on exit)."""

    def __init__(self, total: int | None, label: str, enabled: bool = True):
        self.total, self.label, self.enabled = total, label, enabled
        self.done = 0
        self._view = _renderer(total, label) if enabled and _renderer is not None else None

    def step(self, note: str = "") -> None:
        """Count one unit of work done (with a short note on what was done)."""
        self.done += 1
        if self._view is not None:
            self._view.update(1, note)
            if self.total is not None and self.done >= self.total:
                self.close()

    def note(self, text: str) -> None:
        """Show what is being done now without counting a unit."""
        if self._view is not None:
            self._view.update(0, text)

    def close(self) -> None:
        """Finish the display (idempotent)."""
        view, self._view = self._view, None
        if view is not None:
            view.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
