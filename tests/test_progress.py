"""One progress policy: library code counts with core.progress.Progress; the command line draws a
tqdm bar only on a terminal, never under --json or --quiet, and the bar appears within a second
even while one long step runs."""

from __future__ import annotations

import contextlib
import io
import time

import pytest

from riccati_verify.app import output
from riccati_verify.app.output import progress_policy
from riccati_verify.core.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_appears_within_one_second_without_any_step():
    tty = Terminal()
    with progress_policy(tty):
        p = Progress(3, "long work")
        t0 = time.monotonic()
        while "long work" not in tty.getvalue() and time.monotonic() - t0 < 5:
            time.sleep(0.05)
        shown_after = time.monotonic() - t0
        p.step("one")
    assert "long work" in tty.getvalue()
    assert shown_after < 1.0


def test_a_bar_shows_counts_and_closes(monkeypatch):
    monkeypatch.setattr(output, "FIRST_SHOWN_S", 0.0)
    tty = Terminal()
    with progress_policy(tty):
        with Progress(2, "count") as p:
            p.step("first")
    text = tty.getvalue()
    assert "count" in text and "0/2" in text


@pytest.mark.parametrize("stream, as_json, quiet", [(io.StringIO(), False, False),   # not a terminal
                                                    (Terminal(), True, False), (Terminal(), False, True)])
def test_silent_off_a_terminal_and_under_json_or_quiet(monkeypatch, stream, as_json, quiet):
    monkeypatch.setattr(output, "FIRST_SHOWN_S", 0.0)  # a drawn bar would show at once
    with progress_policy(stream, as_json=as_json, quiet=quiet):
        p = Progress(2, "hidden")
        p.step("x")
        p.step("y")
    assert stream.getvalue() == ""


def test_library_progress_is_silent_without_a_renderer(capsys):
    p = Progress(2, "library")
    p.step("a")
    p.note("b")
    p.step("c")
    assert capsys.readouterr().err == ""


def _simulate_stderr(monkeypatch, *flags):
    from riccati_verify.app.cli import main

    monkeypatch.setattr(output, "FIRST_SHOWN_S", 0.0)  # a short run would otherwise leave no trace
    err, out = Terminal(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(["simulate", "examples/rotation_stable.json", "--tokens", "20", "--time", "0.1",
                     "--steps", "5", *flags])
    assert code in (0, 1), err.getvalue()
    return err.getvalue()


def test_cli_draws_on_a_terminal_and_not_under_json_or_quiet(monkeypatch):
    monkeypatch.chdir(__import__("pathlib").Path(__file__).resolve().parents[1])
    assert "particles (N=20" in _simulate_stderr(monkeypatch)
    assert "particles" not in _simulate_stderr(monkeypatch, "--json")
    assert "particles" not in _simulate_stderr(monkeypatch, "--quiet")


def test_sweep_follows_the_policy(monkeypatch, tmp_path):
    """`sweep` draws the common bar (it wrote its own "\\rsweep: i/n points" line before, also
    off a terminal), and nothing under --json or --quiet."""
    import json

    from riccati_verify.app.cli import main

    monkeypatch.setattr(output, "FIRST_SHOWN_S", 0.0)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"family": "scalar_grid", "classifier": "flow",
                                "a": {"min": -1, "max": 1, "num": 2}, "vbeta": {"min": -1, "max": 1, "num": 2}}))

    def stderr_of(stream, *flags):
        out = tmp_path / f"s{len(list(tmp_path.iterdir()))}.csv"
        with contextlib.redirect_stderr(stream), contextlib.redirect_stdout(io.StringIO()):
            assert main(["sweep", str(spec), "--out", str(out), "--workers", "0", *flags]) == 0
        return stream.getvalue()

    shown = stderr_of(Terminal())
    assert "sweep" in shown and "/4" in shown and "points/4" not in shown
    assert stderr_of(io.StringIO()) == ""                     # not a terminal
    assert stderr_of(Terminal(), "--json") == ""
    assert stderr_of(Terminal(), "--quiet") == ""
