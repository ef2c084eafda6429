"""The shared exact-product budget (`check_equilibrium.exact_matmul` / `MAX_PRODUCT_WORK`) refuses a
hostile witness by its *reason*, quickly, and lets one just inside the budget through to the mathematics.

Small enough for the mutation run (`budget-disabled` in tests/mutation/run_mutants.py): with the budget
off, the 8,000-bit product is computed in well under a second and the certificate is refused for the
Lyapunov equation instead, so the reason assertion fails.  At d = 64 the budget per factor is
2·10⁹ / 64³ ≈ 7,629 bits.
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

from riccati_verify.checker import check_equilibrium, verify_certificate

D = 64
BASE = json.loads((Path(__file__).parent / "data" / "certificates" / "riccati_regime.json").read_text())


def _doc(big: str | None = None, denominators: list[int] | None = None) -> dict:
    """A d = 64 equilibrium claim (A = I, B = I, v = −1: P* = I, Y = I/2) with Y[0][1] = Y[1][0] = `big`,
    or with distinct denominators on the first rows of Y (each mirrored, so Y stays symmetric)."""
    I = [["1" if i == j else "0" for j in range(D)] for i in range(D)]
    Y = [["1/2" if i == j else "0" for j in range(D)] for i in range(D)]
    if big is not None:
        Y[0][1] = Y[1][0] = big
    for k, q in enumerate(denominators or []):
        i, j = divmod(k, D - 1)
        j += j >= i                       # off the diagonal
        Y[i][j] = Y[j][i] = f"1/{q}"
    doc = copy.deepcopy(BASE)
    doc.update(params={"A": I, "B": I, "V": "-1", "b": ["0"] * D, "mean": ["0"] * D, "cov": I},
               claim={"kind": "riccati_regime", "regime": "equilibrium", "scope": "all_pd_states"},
               witness={"Y": Y, "P_star": I})
    return doc


def _limit() -> int:
    return check_equilibrium.MAX_PRODUCT_WORK // D ** 3


def test_an_entry_past_the_budget_is_refused_for_the_budget():
    assert 7000 < _limit() < 8000      # the two witnesses below straddle it
    t = time.perf_counter()
    res = verify_certificate(_doc(big=str(2 ** 8000 + 1)))
    assert not res.valid and "over the checker's product budget" in res.reason, res.reason
    assert "entry passes" in res.reason
    assert time.perf_counter() - t < 5
    # inside the budget the product is computed and the (wrong) Lyapunov equation refuses it
    res = verify_certificate(_doc(big=str(2 ** 7000 + 1)))
    assert not res.valid and "budget" not in res.reason and "does not solve" in res.reason, res.reason


def test_a_common_denominator_past_the_budget_is_refused_for_the_budget():
    # 70 distinct primes of about 120 bits: their lcm (~8,400 bits) passes the limit after ~64 of them
    primes, q = [], 2 ** 119
    while len(primes) < 70:
        q += 1
        if all(q % p for p in (2, 3, 5, 7, 11, 13)) and pow(2, q - 1, q) == 1 and pow(3, q - 1, q) == 1:
            primes.append(q)
    t = time.perf_counter()
    res = verify_certificate(_doc(denominators=primes))
    assert not res.valid and "common denominator passes" in res.reason and "budget" in res.reason, res.reason
    assert time.perf_counter() - t < 5
    # half of them (~4,200 bits) stay inside: refused for the mathematics, not the budget
    res = verify_certificate(_doc(denominators=primes[:35]))
    assert not res.valid and "budget" not in res.reason, res.reason
