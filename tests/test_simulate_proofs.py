"""The five simulator-backed proofs (slow: each runs in 10–30 s) and fast pieces of them."""


import pytest

from riccati_verify.core.result import Status

PROOFS = {"head_limit": Status.CERTIFIED, "common_noise": Status.CERTIFIED, "relu_short_time": Status.CERTIFIED,
          "mixture_noninvariance": Status.CERTIFIED,
          # the propagation of chaos over [0, T] is not proved symbolically (only the fixed-query
          # lemma), so the evidence is numerical only
          "token_limit": Status.CONFIRMED_NUMERICALLY}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROOFS))
def test_proof_verdicts(name):
    from riccati_verify import proofs
    mod = proofs.load(name)
    assert mod.NAME == name and mod.CLAIM and mod.HYPOTHESES and mod.SEED
    r = mod.check()
    assert r.status is PROOFS[name], (r.symbolic, r.numeric)
    assert r.numeric.status is Status.CONFIRMED_NUMERICALLY
    assert r.seconds < 60


def test_milstein_discrete_rate_tends_to_g_of_p():
    from riccati_verify.proofs.common_noise import milstein_discrete_rate
    lam, sigma = 0.2, 1.0
    for p in (0.0, 0.5, 1.0, 2.0):
        g = (lam - sigma**2 / 2) if p == 0 else p * (lam - sigma**2 / 2) + p * p * sigma**2 / 2
        gaps = [abs(milstein_discrete_rate(lam, sigma, p, h) - g) for h in (0.02, 0.01)]
        assert gaps[1] < 0.6 * gaps[0] + 1e-12     # an O(h) gap: halves with h


def test_token_limit_lemma_is_exact():
    from riccati_verify.proofs.token_limit import attention_clt_lemma
    lem = attention_clt_lemma()
    assert lem["tilted_mean_ok"] and lem["clt_variance_ok"] and lem["ess_ratio_ok"]


def test_common_noise_symbolic_reports_seed_imprecision():
    from riccati_verify.proofs.common_noise import symbolic_check
    v = symbolic_check()
    assert v.status is Status.CERTIFIED
    assert "false" in v.evidence["seed_claim_expected_energy_decays"]
