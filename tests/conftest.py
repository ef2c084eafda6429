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
