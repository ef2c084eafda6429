"""Shared fixtures.

Two ways to run the command line:

- `run_cli` / the `cli_subprocess` fixture: a fresh `python -m riccati_verify`
  subprocess, exactly what a user runs (start-up, entry point, module loading).
  The golden-output test and the tests whose point is the process use it.
- the `cli` fixture: the same `riccati_verify.app.cli.main` in this process, with
  stdout, stderr and stdin redirected, the working directory set to the
  repository root and Python's default warning filters, so a warning lands in
  stderr as it would in a subprocess.  It returns the same `CompletedProcess`
  and saves the 1–3 s start-up (numpy, scipy, sympy) that each subprocess pays
  again.  An uncaught exception is raised in the test instead of being printed
  as a traceback: stricter than checking stderr for "Traceback".
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# pytest-xdist already runs one worker per core: flint's own threads (core/threads.py) would
# oversubscribe them
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("RICCATI_VERIFY_THREADS", "1")
    # and OpenBLAS's: on the optimisers' tiny matrices (expm_frechet's lu_solve) its threads only fight
    # the other worker (session 19: the 11 slowest such tests took 234 and 314 s of CPU with two BLAS
    # threads, 123 and 100 s with one; `.ci/run` exports the same).  The variables reach the CLI
    # subprocesses; threadpoolctl covers a numpy that a plugin imported before this file.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)

# Python's own default filters (a fresh interpreter without -W or PYTHONWARNINGS)
_DEFAULT_FILTERS = [("default", DeprecationWarning, "__main__"), ("ignore", DeprecationWarning, None),
                    ("ignore", PendingDeprecationWarning, None), ("ignore", ImportWarning, None),
                    ("ignore", ResourceWarning, None)]


def run_cli(*args, input_text=None):
    """Run the installed CLI in a subprocess (exactly what a user runs)."""
    return subprocess.run([sys.executable, "-m", "riccati_verify", *map(str, args)], capture_output=True,
                          text=True, input=input_text, cwd=ROOT, timeout=600)


def _show_on_stderr(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def call_cli(*args, input_text=None):
    """Run `riccati_verify.app.cli.main` in this process as `run_cli` runs the subprocess."""
    from riccati_verify.app.cli import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    stdin = sys.stdin
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_DEFAULT_FILTERS):
            if module is None:
                warnings.simplefilter(action, category)
            else:
                warnings.filterwarnings(action, category=category, module=module)
        warnings.showwarning = _show_on_stderr
        sys.stdin = io.StringIO(input_text or "")
        try:
            code = main(argv)
        except SystemExit as e:  # argparse usage errors, --help and --version exit directly
            if e.code is None or isinstance(e.code, int):
                code = e.code or 0
            else:                # sys.exit("message"): the interpreter prints it and exits 1
                sys.stderr.write(f"{e.code}\n")
                code = 1
        finally:
            sys.stdin = stdin
    return subprocess.CompletedProcess([sys.executable, "-m", "riccati_verify", *argv], code, out.getvalue(),
                                       err.getvalue())


@pytest.fixture
def cli():
    """The command line, in-process (see the module docstring); returns a CompletedProcess."""
    return call_cli


@pytest.fixture
def cli_subprocess():
    """The command line in a fresh subprocess; returns a CompletedProcess."""
    return run_cli


@pytest.fixture
def write_json(tmp_path):
    """Write an object (or a string) as a JSON file under tmp_path; returns its path."""
    def write(obj, name="p.json"):
        p = tmp_path / name
        p.write_text(obj if isinstance(obj, str) else json.dumps(obj))
        return p

    return write


@pytest.fixture
def run(capsys, write_json):
    """In-process CLI: (exit code, stdout, stderr); dict arguments are written to JSON files."""
    from riccati_verify.app.cli import main

    def call(*args):
        paths = [write_json(a, f"f{i}.json") if isinstance(a, dict) else a for i, a in enumerate(args)]
        try:
            code = main([str(a) for a in paths])
        except SystemExit as e:  # argparse usage errors exit directly
            code = e.code
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture
def progress_events():
    """A `core.progress` renderer that records every event, installed for the test: the list of
    ("open", total, label), ("update", n, note) and ("close",) in order."""
    from riccati_verify.core import progress

    seen = []

    class View:
        def __init__(self, total, label):
            seen.append(("open", total, label))

        def update(self, n, note):
            seen.append(("update", n, note))

        def close(self):
            seen.append(("close",))

    old = progress.set_renderer(View)
    try:
        yield seen
    finally:
        progress.set_renderer(old)
