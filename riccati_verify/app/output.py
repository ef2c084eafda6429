"""Printing results and progress: JSON or text on stdout, progress bars on stderr.

The one progress policy: library code counts its work with `core.progress.Progress`; the
command line shows it with tqdm only when stderr is a terminal and neither ``--json`` nor
``--quiet`` was given (`progress_policy`).  A bar appears within a second of the work
starting and its clock keeps moving while one long step runs (a refresh thread), so a run
is never silent on a terminal; everywhere else progress writes nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import threading
import time

from riccati_verify.core import progress as _progress
from riccati_verify.core.progress import Progress
from riccati_verify.core.serial import jsonable

__all__ = ["Progress", "decimal_powers", "describe", "emit", "enclosure_text", "float_entries", "format_matrix",
           "human", "input_note", "input_record", "with_input_record", "jsonable", "progress_policy", "record_input", "reset_inputs",
           "show_progress"]

FIRST_SHOWN_S = 0.5
"""A bar is drawn once its work has lasted this long (shorter work leaves no trace)."""
TICK_S = 0.5
"""The refresh period of the elapsed-time clock while no unit of work finishes."""


MAX_LISTED_FLOATS = 1000
"""At most this many float entries are named in a record (then one "(and N more)" entry)."""

# (file role, float entries) of each input file read in this command run; `cli` resets it
_inputs: list[tuple[str, list[str]]] = []


def float_entries(doc, where: str = "") -> list[str]:
    """The places in a parsed JSON document that hold a binary float (``A[0][1]``, ``V``, ...)."""
    if isinstance(doc, float):
        return [where or "(the value)"]
    if isinstance(doc, dict):
        return [e for k, v in doc.items() for e in float_entries(v, f"{where}.{k}" if where else str(k))]
    if isinstance(doc, list):
        return [e for i, v in enumerate(doc) for e in float_entries(v, f"{where}[{i}]")]
    return []


def record_input(what: str, doc) -> None:
    """Remember which entries of the input file `what` (its role: "parameter file", "target
    file", ...) were JSON floats, for the JSON output, the text output and the certificates."""
    _inputs.append((what, float_entries(doc)))


def reset_inputs() -> None:
    """Forget the input files recorded so far (one command run)."""
    _inputs.clear()


def input_record() -> dict | None:
    """``{"exact": bool, "float_entries": [...]}`` over the files read in this run (None: none
    read).  An entry of a file other than the parameter file is prefixed with its role."""
    if not _inputs:
        return None
    names = [e if what == "parameter file" else f"{what}: {e}" for what, entries in _inputs for e in entries]
    if len(names) > MAX_LISTED_FLOATS:
        names = names[:MAX_LISTED_FLOATS - 1] + [f"(and {len(names) - MAX_LISTED_FLOATS + 1} more)"]
    return {"exact": not names, "float_entries": names}


def with_input_record(cert: dict) -> dict:
    """The certificate `cert` with this run's input record (`input_record`), if a file was read:
    the checker accepts the record and ignores it for the verdict."""
    rec = input_record()
    return cert if rec is None else {**cert, "input": rec}


def input_note() -> str:
    """One line for text output when the input was not exact, else ''."""
    rec = input_record()
    if rec is None or rec["exact"]:
        return ""
    shown = rec["float_entries"][:6]
    more = len(rec["float_entries"]) - len(shown)
    return (f"input not exact: {', '.join(shown)}{f' and {more} more' if more else ''} "
            + ("was a JSON float, read as the binary number it denotes " if len(rec["float_entries"]) == 1 else
               "were JSON floats, read as the binary numbers they denote ") +
            "(0.1 is not 1/10; write \"0.1\" or \"1/10\" for the exact value)")


def emit(data: dict, text: str, as_json: bool) -> None:
    """Print `data` as JSON (with ``--json``) or `text`; both carry the input record (`input_record`)."""
    rec = input_record()
    if as_json:
        if rec is not None and "input" not in data:
            data = {**data, "input": rec}
        sys.stdout.write(json.dumps(jsonable(data), indent=1) + "\n")
    else:
        note = input_note()
        sys.stdout.write(text.rstrip("\n") + ("\nnote: " + note if note else "") + "\n")


def human(v, missing: str = "n/a") -> str:
    """A JSON-like value as text for people: no Python `None`, no quotes, no escaped unicode
    (`missing` stands for None)."""
    v = jsonable(v)
    if v is None:
        return missing
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {human(x, missing)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(human(x, missing) for x in v) + "]"
    return str(v)


_RATIONAL = re.compile(r"(?<![\w./])(-?\d+)/(1(0+))(?![\w./])")


def decimal_powers(text: str) -> str:
    """Rewrite each exact rational p/10^k in `text` as the same number in scientific notation
    (``1/100000000000000000000000000000`` -> ``1e-29``): equal, and readable."""
    def short(m: re.Match) -> str:
        p, k = m.group(1), len(m.group(3))
        sign, digits = ("-", p[1:]) if p.startswith("-") else ("", p)
        digits = digits.lstrip("0") or "0"
        if digits == "0":
            return "0"
        exponent = len(digits) - 1 - k       # p/10^k = d.ddd × 10^exponent
        mantissa = digits[0] + ("." + digits[1:].rstrip("0") if digits[1:].rstrip("0") else "")
        return f"{sign}{mantissa}e{exponent}"

    return _RATIONAL.sub(short, text)


def enclosure_text(lower, upper, extra: int = 1) -> str:
    """``(lo, hi]`` for a proved enclosure lower < T* <= upper, short but never degenerate: the
    decimals up to the first place where the ends differ (plus `extra`), the lower end rounded
    down and the upper end rounded up (`certify.reach.outward_bracket`), so the printed interval
    still contains the proved one."""
    from fractions import Fraction

    from riccati_verify.certify.reach import outward_bracket

    lo, hi = Fraction(str(lower)), Fraction(str(upper))
    if lo >= hi:
        return f"({lower}, {upper}]"
    a, b = outward_bracket(lo, hi, extra)
    return f"({a}, {b}]"


def bound_text(x, direction: str, digits: int = 3) -> str:
    """A proved bound for print: x (a rational, float, int or decimal string) rounded to `digits`
    significant digits 'up' (an upper bound, a radius) or 'down' (a lower bound), so the printed
    bound still holds."""
    from decimal import Decimal
    from fractions import Fraction

    from riccati_verify.certify.stability import decimal_str

    q = Fraction(str(x)) if isinstance(x, str) else Fraction(x)
    text = decimal_str(q, digits, direction)
    # the rounded decimal has `digits` significant digits: the exponent form below is exact
    return text if q == 0 or 1e-4 <= abs(q) < 1e6 else f"{Decimal(text):.{digits - 1}e}"


def describe(fields: dict, missing: str = "n/a") -> str:
    """``key: value; ...`` for people (see `human`)."""
    return "; ".join(f"{k}: {human(x, missing)}" for k, x in fields.items())


def format_matrix(M, fmt: str = "{:.6g}") -> str:
    """A matrix as indented rows of formatted floats."""
    import numpy as np  # here, not at import time: `verify` must not load numpy

    M = np.atleast_2d(np.asarray(M, dtype=float))
    return "\n".join("  [" + ", ".join(fmt.format(v) for v in row) + "]" for row in M)


def show_progress(stream, as_json: bool = False, quiet: bool = False) -> bool:
    """The policy: progress is shown only on a terminal, and never under --json or --quiet."""
    isatty = getattr(stream, "isatty", None)
    return not (as_json or quiet) and bool(isatty and isatty())


class _TqdmRenderer:
    """`core.progress` renderer: one tqdm bar per `Progress`, and one thread that redraws the open
    bars every TICK_S (tqdm itself redraws only when a unit finishes)."""

    def __init__(self, stream):
        self.stream = stream
        self.views: list[_TqdmView] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __call__(self, total, label):
        view = _TqdmView(self, total, label)
        with self.lock:
            self.views.append(view)
            if self.thread is None:
                self.thread = threading.Thread(target=self._tick, name="riccati-verify-progress", daemon=True)
                self.thread.start()
        return view

    def _tick(self) -> None:
        while not self.stop.wait(TICK_S / 2):
            with self.lock:
                views = list(self.views)
            for v in views:
                v.tick()

    def forget(self, view) -> None:
        with self.lock:
            if view in self.views:
                self.views.remove(view)

    def close_all(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()
        for v in list(self.views):
            v.close()


def _columns(stream) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return 0


class _TqdmView:
    def __init__(self, owner: _TqdmRenderer, total, label):
        from tqdm import tqdm

        self.owner, self.t0, self.last = owner, time.monotonic(), 0.0
        fmt = None if total is not None else "{desc}: {elapsed}{postfix}"
        # delay: tqdm draws nothing for work shorter than FIRST_SHOWN_S; `tick` draws after it
        # a terminal that reports 0 x 0 (an unsized pty) would get no bar at all: 80 x 24 then
        self.bar = tqdm(total=total, desc=label, file=owner.stream, leave=False, mininterval=0.2,
                        delay=FIRST_SHOWN_S, bar_format=fmt,
                        **({"dynamic_ncols": True} if _columns(owner.stream) else {"ncols": 80, "nrows": 24}))

    def update(self, n: int, note: str) -> None:
        if note:
            self.bar.set_postfix_str(note[:40], refresh=False)
        self.bar.update(n)

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.t0 >= FIRST_SHOWN_S and now - self.last >= TICK_S:
            self.last = now
            self.bar.refresh()

    def close(self) -> None:
        self.owner.forget(self)
        self.bar.close()


@contextlib.contextmanager
def progress_policy(stream=None, as_json: bool = False, quiet: bool = False):
    """Within the block, every `Progress` is drawn as a tqdm bar on `stream` (default stderr) if
    `show_progress` allows it, else silent; bars still open at the end are closed."""
    stream = sys.stderr if stream is None else stream
    if not show_progress(stream, as_json, quiet):
        previous = _progress.set_renderer(None)
        try:
            yield
        finally:
            _progress.set_renderer(previous)
        return
    renderer = _TqdmRenderer(stream)
    previous = _progress.set_renderer(renderer)
    try:
        yield
    finally:
        _progress.set_renderer(previous)
        renderer.close_all()
