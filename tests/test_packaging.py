"""Installing riccati_verify adds one top-level package: proofs/ installs as riccati_verify.proofs."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out), str(ROOT)], capture_output=True, text=True, timeout=300)
    if r.returncode != 0 and "No module named" in r.stderr:
        pytest.skip(f"cannot build a wheel here: {r.stderr.strip().splitlines()[-1]}")
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("riccati_verify-*.whl")
    return zipfile.ZipFile(whl)


def test_the_wheel_has_no_top_level_proofs(wheel):
    tops = {n.split("/")[0] for n in wheel.namelist() if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"riccati_verify"}
    top_level = next(n for n in wheel.namelist() if n.endswith(".dist-info/top_level.txt"))
    assert wheel.read(top_level).decode().split() == ["riccati_verify"]


def test_every_proof_and_the_schema_are_installed(wheel):
    names = set(wheel.namelist())
    for p in sorted((ROOT / "proofs").glob("*.py")):
        assert f"riccati_verify/proofs/{p.name}" in names
    assert "riccati_verify/certify/schemas/certificate.schema.json" in names
