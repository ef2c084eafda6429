"""Start-up time of the command line against a bare `python -c pass`.

Each command runs `--repeats` times (default 15, at least 10) in a fresh
subprocess, interleaved round-robin so that a burst of load on a shared
machine hits every command alike; the table gives the median wall time, the
difference to bare python and the ratio.  Goal: `riccati-verify --help` and
`riccati-verify verify CERT` within 0.3 s of bare python.

A second table names the heavy modules (numpy, scipy, sympy, cvxpy, mpmath)
each command loads, read from `sys.modules` at exit (a `sitecustomize` probe
on PYTHONPATH registers an atexit hook; it works for console scripts too).

Usage: python benchmarks/bench_startup.py [--repeats K]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["COMMANDS", "HEAVY", "GOAL_S", "heavy_modules", "main", "median_seconds"]

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "scipy", "sympy", "cvxpy", "mpmath")
GOAL_S = 0.3
"""Allowed start-up cost over bare python, in seconds."""


def _cli() -> list[str]:
    exe = shutil.which("riccati-verify", path=str(Path(sys.executable).parent)) or shutil.which("riccati-verify")
    return [exe] if exe else [sys.executable, "-m", "riccati_verify"]


COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "riccati-verify --help": _cli() + ["--help"],
    "riccati-verify verify blowup.json": _cli() + ["verify", "tests/data/certificates/blowup.json"],
    "riccati-verify verify equilibrium.json": _cli() + ["verify", "tests/data/certificates/equilibrium.json"],
    "riccati-verify verify reachability.json": _cli() + ["verify", "tests/data/certificates/reachability.json"],
}
"""Label -> command line (run from the repository root)."""

PROBE = """\
import atexit, json, os, sys
def _report():
    with open(os.environ["RV_PROBE_OUT"], "w") as f:
        json.dump(sorted({m.split(".")[0] for m in sys.modules}), f)
atexit.register(_report)
"""


def median_seconds(cmds: dict[str, list[str]], repeats: int) -> dict[str, float]:
    """Median wall time of each command over `repeats` interleaved subprocess runs."""
    times: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(repeats):
        for label, cmd in cmds.items():
            t0 = time.perf_counter()
            r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[label].append(time.perf_counter() - t0)
            if r.returncode not in (0, 1):
                raise SystemExit(f"{label}: exit status {r.returncode}")
    return {k: statistics.median(v) for k, v in times.items()}


def heavy_modules(cmd: list[str]) -> list[str]:
    """The heavy top-level modules loaded by the time `cmd` exits."""
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "sitecustomize.py").write_text(PROBE)
        out = Path(d) / "modules.json"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([d, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                   RV_PROBE_OUT=str(out))
        subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        loaded = set(json.loads(out.read_text())) if out.exists() else {"(probe failed)"}
    return [m for m in HEAVY if m in loaded] or (["(probe failed)"] if "(probe failed)" in loaded else [])


def main(argv: list[str] | None = None) -> int:
    """Print the start-up table and the heavy-module table; exit 1 when a command misses the goal."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=15, help="runs per command (median; at least 10)")
    a = ap.parse_args(argv)
    repeats = max(10, a.repeats)
    med = median_seconds(COMMANDS, repeats)
    base = med["python -c pass"]
    w = max(map(len, COMMANDS))
    print(f"start-up, median of {repeats} runs ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")
    print(f"{'command':<{w}}  {'seconds':>8}  {'- python':>8}  {'ratio':>6}  goal")
    ok = True
    for label, s in med.items():
        diff = s - base
        good = diff <= GOAL_S
        ok &= good
        goal = "" if label == "python -c pass" else ("ok" if good else f"MISSED (> {GOAL_S} s)")
        print(f"{label:<{w}}  {s:8.3f}  {diff:+8.3f}  {s / base:6.2f}  {goal}")
    print()
    print(f"{'command':<{w}}  heavy modules loaded ({', '.join(HEAVY)})")
    for label, cmd in COMMANDS.items():
        print(f"{label:<{w}}  {', '.join(heavy_modules(cmd)) or 'none'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
