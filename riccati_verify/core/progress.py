"""Progress of long work, on stderr."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """A one-line progress counter on stderr; silent when `enabled` is False."""

    def __init__(self, total: int, label: str, enabled: bool = True):
        self.total, self.label, self.enabled = total, label, enabled
        self.done = 0
        self.t0 = time.monotonic()

    def step(self, note: str = "") -> None:
        """Count one unit of work done and redraw the line."""
        self.done += 1
        if self.enabled:
            el = time.monotonic() - self.t0
            sys.stderr.write(f"\r{self.label}: {self.done}/{self.total} ({el:.1f}s) {note[:40]:<40}")
            if self.done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()
