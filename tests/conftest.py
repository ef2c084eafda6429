import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args, input_text=None):
    """Run the installed CLI in a subprocess (exactly what a user runs)."""
    return subprocess.run([sys.executable, "-m", "riccati_verify", *map(str, args)], capture_output=True,
                          text=True, input=input_text, cwd=ROOT, timeout=600)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture
def write_json(tmp_path):
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
