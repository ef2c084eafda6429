"""The README's Python API block runs as written (documentation that drifts is a defect)."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_python_api_block_runs(capsys):
    text = (ROOT / "README.md").read_text()
    block = re.search(r"Python API[^\n]*\n\n```python\n(.*?)```", text, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "certified" in out  # the rotation example's regime is certified, and its certificate verifies
    assert "True" in out.splitlines()[-1]
