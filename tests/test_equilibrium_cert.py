"""`equilibrium --cert FILE`: a lyapunov_stability certificate for each equilibrium certified
stable, independent of any initial state, which `verify` re-checks."""

from __future__ import annotations

import json
from fractions import Fraction
from types import SimpleNamespace

ROTATION = "examples/rotation_stable.json"   # V = vI: the exact PD equilibrium is stable


def test_stable_equilibrium_certificate_verifies(cli, tmp_path):
    cert = tmp_path / "stab.json"
    r = cli("equilibrium", ROTATION, "--starts", "0", "--cert", cert, "--json")
    assert r.returncode == 0, r.stderr
    written = json.loads(r.stdout)["certificates"]
    assert [w["path"] for w in written] == [str(cert)] and written[0]["kind"] == "lyapunov_stability"
    doc = json.loads(cert.read_text())
    assert doc["claim"]["kind"] == "lyapunov_stability"
    assert doc["claim"]["initial_state_in_region"] is False          # a claim about Σ* alone
    assert "mean" not in doc["params"] and "cov" not in doc["params"]
    assert cli("verify", cert).returncode == 0
    # the certificate speaks of the enclosed Σ*: moved elsewhere, the checker refuses it
    c = doc["witness"]["center"]
    c[0][0] = str(Fraction(c[0][0]) + 1)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert cli("verify", bad).returncode == 1


def test_no_stable_equilibrium_writes_nothing(cli, write_json, tmp_path):
    cert = tmp_path / "none.json"
    # dΣ/dt = 2Σ: the only equilibrium, Σ = 0, is unstable
    r = cli("equilibrium", write_json({"A": [[1]], "B": [[0]], "V": 0}), "--cert", cert)
    assert "no equilibrium is certified stable" in r.stdout and not cert.exists()


def test_several_stable_equilibria_get_one_file_each(tmp_path):
    from riccati_verify.app.commands.equilibrium import _write_stability_certificates

    doc = json.loads((__import__("pathlib").Path(__file__).parent / "data" / "certificates" /
                      "lyapunov_stability.json").read_text())
    rep = SimpleNamespace(stable=True, stable_certified=True, certificate=doc)
    unstable = SimpleNamespace(stable=False, stable_certified=True, certificate=None)
    lines: list[str] = []
    out = _write_stability_certificates(str(tmp_path / "s.json"), [rep, unstable, rep], lines)
    assert [w["path"] for w in out] == [str(tmp_path / "s-0.json"), str(tmp_path / "s-2.json")]
    assert all((tmp_path / n).exists() for n in ("s-0.json", "s-2.json")) and not (tmp_path / "s.json").exists()
