"""The overall verdict of a proof never claims more than its weakest supporting route."""

import itertools

import pytest

from riccati_verify.core.result import ProofResult, Status, Verdict

C, R, N, Q = Status.CERTIFIED, Status.REFUTED, Status.NOT_CERTIFIED, Status.CONFIRMED_NUMERICALLY


def overall(s, n):
    return ProofResult("x", "000", "claim", Verdict(s), Verdict(n)).status


@pytest.mark.parametrize("s,n", list(itertools.product(Status, Status)))
def test_only_the_exact_route_refutes_and_certified_needs_both(s, n):
    # a float or Monte-Carlo route is never proof: its "refuted" leaves the claim not certified
    o = overall(s, n)
    if s is R:
        assert o is R
    elif n is R:
        assert o is N
    elif o is C:
        assert s is C and n in (C, Q)
    else:
        assert o in (Q, N)


def test_table():
    assert overall(C, Q) is C
    assert overall(C, N) is N          # a cross-check that could not run: not certified
    assert overall(N, Q) is Q          # numerical evidence only
    assert overall(N, N) is N
    assert overall(Q, C) is Q
