"""proofs/blowup.py: the exact route certifies and the numeric route agrees; a wrong expectation is caught."""

from fractions import Fraction

from riccati_verify.proofs import blowup as proof
from riccati_verify.core.result import Status


def test_proof_certifies_with_numeric_agreement():
    r = proof.check()
    assert r.symbolic.status is Status.CERTIFIED, r.symbolic.evidence
    assert r.numeric.status is Status.CONFIRMED_NUMERICALLY, r.numeric.evidence
    assert r.status is Status.CERTIFIED
    assert r.symbolic.evidence["rng_seed"] == proof.RNG_SEED
    labels = [k for k in r.symbolic.evidence if k.startswith("same d=")]
    assert sorted(labels) == [f"same d={d}" for d in (1, 2, 3, 5)]


def test_hurwitz_example_refutes_unconditional_same_sign_claim():
    """The seed's 'same sign ⇒ blow-up' is false without a condition on A: the Hurwitz example never blows up."""
    label, p, s = proof._examples()[-1]
    assert "Hurwitz" in label
    vBs = p.V[0][0] * p.B[0][0]
    assert vBs > 0                                        # same sign
    res, valid, reason = proof._certified(p, s, 20)
    assert res.blowup is False and valid, reason
    # ...while a larger Σ0 with the same A, B, V does blow up (the outcome depends on Σ0)
    from riccati_verify.core.model import Gaussian
    from riccati_verify.core import exact

    big = Gaussian(s.mean, exact.identity(2, Fraction(10)))
    res_big, valid_big, _ = proof._certified(p, big, 20)
    assert res_big.blowup is True and valid_big
