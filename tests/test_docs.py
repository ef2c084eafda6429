"""The documentation site (docs/): the pages cover the public API and every subcommand, and its
Python examples run.  The full Sphinx build with warnings as errors is a CI step (.ci/run) and
the slow test below; it needs the `docs` extra."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_api_reference_documents_every_public_name():
    import riccati_verify

    api = (DOCS / "reference" / "api.md").read_text()
    missing = [n for n in riccati_verify.__all__ if n != "__version__" and not re.search(rf"\.{n}\b", api)]
    assert not missing, missing


def test_python_examples_in_the_docs_run():
    blocks = [b for p in sorted(DOCS.rglob("*.md")) for b in _python_blocks(p.read_text())]
    assert blocks, "no example found"
    for code in blocks:
        exec(compile(code, "<docs example>", "exec"), {"__name__": "__docs__"})


def test_readme_links_the_docs_and_says_how_to_build_them():
    readme = (ROOT / "README.md").read_text()
    assert "docs/index.md" in readme
    assert "python -m sphinx -W --keep-going -b html docs docs/_build/html" in readme
    assert "python -m sphinx -W --keep-going -b html docs docs/_build/html" in (DOCS / "index.md").read_text()


@pytest.mark.slow
def test_docs_build_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOCS),
                        str(tmp_path / "html")], capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert (tmp_path / "html" / "reference" / "kinds.html").is_file()


def test_every_example_file_the_readme_names_is_shipped():
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"examples/[\w.-]+\.json", readme))
    assert named and all((ROOT / p).is_file() for p in named), sorted(p for p in named if not (ROOT / p).is_file())


def test_the_reach_example_files_are_certified_and_print_decimal_tolerances(cli, tmp_path):
    """examples/reach_init.json -> examples/reach_target.json (the README's reach example): the
    controls are certified, the certificate verifies, and neither command prints 1/10^30 as a fraction."""
    cert = tmp_path / "c.json"
    r = cli("reach", "examples/reach_init.json", "--target", "examples/reach_target.json", "--time", "1",
            "--cert", cert)
    assert r.returncode == 0, r.stdout + r.stderr
    v = cli("verify", cert)
    assert v.returncode == 0
    for out in (r.stdout, v.stdout):
        assert "within 1e-30 of the target" in out and "1/1000000000" not in out
