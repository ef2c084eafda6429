"""The census of all PSD equilibria in a region (`certify.equilibria_all`, the `all_equilibria` kind).

Cross-checks against closed forms (diagonal systems: products of scalar Bernoulli roots; V = vI:
the unique invertible equilibrium P*⁻¹) and against sympy's Gröbner solution of F(Σ) = 0;
tampered covers and planted second equilibria must be rejected by the checker.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction as Q
from pathlib import Path

import numpy as np
import pytest

from riccati_verify.app.cli import main
from riccati_verify.checker import verify_certificate
from riccati_verify.core import exact
from riccati_verify.core.errors import InputError
from riccati_verify.core.model import Params
from riccati_verify.certify import equilibria as eq
from riccati_verify.certify.equilibria_all import apriori_radius, census


def params(A, B, V) -> Params:
    return Params.from_arrays([[Q(x) for x in r] for r in A], [[Q(x) for x in r] for r in B],
                              [[Q(x) for x in r] for r in V])


def mats(res) -> list[np.ndarray]:
    return [np.array(e["center"], dtype=float) for e in res.equilibria]


def psd_in_region(S: np.ndarray, R: float) -> bool:
    return np.linalg.eigvalsh(S)[0] >= -1e-9 and np.max(np.diag(S)) <= R


DIAG = params([[1, 0], [0, -2]], [[-1, 0], [0, -1]], [[1, 0], [0, 1]])     # roots {0, 1} x {0, -2}
GEN = params([["1/2", "1/3"], ["-1/4", 1]], [[-1, "1/2"], ["1/3", "-3/2"]], [[1, "1/4"], ["-1/2", "3/2"]])


@pytest.fixture(scope="module")
def diag_census():
    return census(DIAG, Q(2), progress=False)


def test_diagonal_system_matches_the_closed_form(diag_census):
    res = diag_census
    assert res.certificate is not None and verify_certificate(res.certificate).valid
    closed = [np.array(S, dtype=float) for S in eq.diagonal_equilibria(DIAG)]
    want = [S for S in closed if psd_in_region(S, 2)]           # 0 and diag(1, 0); diag(.., -1) is not PSD
    got = [S for S, e in zip(mats(res), res.equilibria) if e["status"] in ("pd", "psd")]
    assert len(want) == 2 and len(got) == len(want)
    assert all(any(np.allclose(S, T) for T in got) for S in want)
    assert not any(e["status"] == "undecided" for e in res.equilibria)


def test_scalar_v_has_one_pd_equilibrium_the_closed_form():
    p = params([["1/2", 1], [-1, "1/3"]], [[-1, "1/4"], ["1/4", -2]], [["3/2", 0], [0, "3/2"]])
    ric = eq.riccati_equilibrium(p)
    assert ric.positive_definite
    res = census(p, progress=False)
    assert res.certificate is not None and res.radius_source == "apriori"
    pd = [S for S, e in zip(mats(res), res.equilibria) if e["status"] == "pd"]
    assert len(pd) == 1 and np.allclose(pd[0], np.array(ric.Sigma, dtype=float), atol=1e-10)


@pytest.mark.slow
def test_general_system_matches_sympy():
    res = census(GEN, progress=False)
    assert res.certificate is not None and res.radius_source == "apriori"
    R = float(res.radius)
    sols = [np.array(S.evalf(30).tolist(), dtype=float) for S in eq.symbolic_equilibria(GEN)]
    want = [S for S in sols if psd_in_region(S, R)]
    got = [S for S, e in zip(mats(res), res.equilibria) if e["status"] in ("pd", "psd")]
    assert len(got) == len(want) == 4
    assert all(any(np.allclose(S, T, atol=1e-9) for T in got) for S in want)
    # every real equilibrium sympy finds that is PSD lies within the a-priori bound
    assert all(np.max(np.diag(S)) <= R for S in sols if np.linalg.eigvalsh(S)[0] >= -1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_random_d2_systems_match_sympy(seed):
    rng = np.random.default_rng(seed)
    M = [[[Q(int(rng.integers(-6, 7)), int(rng.choice([2, 3, 4]))) for _ in range(2)] for _ in range(2)]
         for _ in range(3)]
    p = Params.from_arrays(*M)
    res = census(p, Q(2), progress=False)
    sols = eq.symbolic_equilibria(p)
    if sols is None:
        assert res.certificate is None          # a continuum of equilibria cannot be covered
        return
    want = [np.array(S.evalf(30).tolist(), dtype=float) for S in sols]
    want = [S for S in want if np.linalg.eigvalsh(S)[0] > 1e-9 and np.max(np.diag(S)) < 2 - 1e-9]
    assert res.certificate is not None
    got = [S for S, e in zip(mats(res), res.equilibria) if e["status"] == "pd"]
    assert len(got) == len(want) and all(any(np.allclose(S, T, atol=1e-9) for T in got) for S in want)


def test_apriori_bound_needs_a_definite_trace_form():
    indefinite = params([[1, 0], [0, 1]], [[1, 0], [0, -1]], [[1, 0], [0, 1]])
    R, why = apriori_radius(indefinite)
    assert R is None and "not definite" in why
    R, _ = apriori_radius(GEN)
    assert R is not None and R > 0


def test_a_planted_second_equilibrium_is_not_certified_as_all():
    # A = diag(-1, -1): the PSD equilibria are Σ = 0 only.  The same cover for A = diag(1, -2),
    # which has the second PSD equilibrium diag(1, 0), must be rejected.
    only0 = params([[-1, 0], [0, -1]], [[-1, 0], [0, -1]], [[1, 0], [0, 1]])
    res = census(only0, Q(2), progress=False)
    assert res.certificate is not None and len(res.equilibria) == 1
    planted = copy.deepcopy(res.certificate)
    planted["params"]["A"] = [["1", "0"], ["0", "-2"]]
    assert not verify_certificate(planted).valid


def _zero_leaves(tree):
    return [k for k, t in enumerate(tree) if isinstance(t, str) and t.startswith("z")]


def test_dropping_an_equilibrium_is_rejected(diag_census):
    cert = diag_census.certificate
    k = next(k for k, e in enumerate(cert["claim"]["equilibria"]) if e["center"][0][0] == "1")
    bad = copy.deepcopy(cert)
    del bad["claim"]["equilibria"][k]
    tree = bad["witness"]["tree"]
    for i in _zero_leaves(tree):       # the dropped zero's leaves now claim no zero; renumber the rest
        j = int(tree[i][1:])
        tree[i] = "x" if j == k else f"z{j - (j > k)}"
    res = verify_certificate(bad)
    assert not res.valid and "not excluded" in res.reason


@pytest.mark.parametrize("tamper", ["leaf_o", "truncate", "extra", "radius", "status_pd", "overlap", "split",
                                    "other_ball"])
def test_tampered_covers_are_rejected(diag_census, tamper):
    bad = copy.deepcopy(diag_census.certificate)
    tree, eqs = bad["witness"]["tree"], bad["claim"]["equilibria"]
    if tamper == "leaf_o":
        tree[_zero_leaves(tree)[0]] = "o"
    elif tamper == "truncate":
        del tree[-1]
    elif tamper == "extra":
        tree.append("x")
    elif tamper == "radius":
        bad["claim"]["radius"] = "4"
    elif tamper == "status_pd":
        next(e for e in eqs if e["status"] == "psd")["status"] = "pd"
    elif tamper == "overlap":
        eqs.append(copy.deepcopy(eqs[0]))
    elif tamper == "other_ball":       # a zero leaf names the ball of another zero
        i = _zero_leaves(tree)[0]
        tree[i] = f"z{(int(tree[i][1:]) + 1) % len(eqs)}"
    elif tamper == "split":
        i = next(i for i, t in enumerate(tree) if isinstance(t, int))
        tree[i] = (tree[i] + 1) % 3
    assert not verify_certificate(bad).valid


def test_a_moved_rank_one_factor_is_rejected():
    # two irrational rank-one PSD equilibria, each proved PSD through its factor u (Σ = uuᵀ)
    res = census(params([[-1, "4/3"], ["-3/4", "-1/4"]], [[1, "1/2"], ["-5/4", "-3/2"]], [["5/2", "3/2"], [1, 0]]),
                 Q(1), progress=False)
    assert res.certificate is not None
    with_factor = [k for k, e in enumerate(res.equilibria) if "factor" in e]
    assert with_factor
    for k in with_factor:             # the factor really gives Σ: uuᵀ is within the ball of the zero
        u = np.array(res.equilibria[k]["factor"]["center"], dtype=float)
        assert np.allclose(np.outer(u, u), mats(res)[k], atol=1e-10)
    bad = copy.deepcopy(res.certificate)
    f = bad["claim"]["equilibria"][with_factor[0]]["factor"]
    f["center"][0] = str(Q(f["center"][0]) + Q(1, 1000))
    res2 = verify_certificate(bad)
    assert not res2.valid and "status 'psd' not proved" in res2.reason


def test_cli_all_writes_a_certificate_and_refuses_bad_requests(tmp_path, capsys):
    pf = tmp_path / "p.json"
    pf.write_text(json.dumps({"A": [[1, 0], [0, -2]], "B": [[-1, 0], [0, -1]], "V": [[1, 0], [0, 1]],
                              "mean": [0, 0], "cov": [[1, 0], [0, 1]]}))
    cf = tmp_path / "all.json"
    assert main(["equilibrium", str(pf), "--all", "--radius", "2", "--starts", "0", "--all-cert", str(cf),
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["all"]["all_listed"] and out["all"]["radius_source"] == "given"
    assert verify_certificate(json.loads(cf.read_text())).valid
    assert main(["equilibrium", str(pf), "--all", "--radius", str(2 ** 41), "--starts", "0"]) == 2
    assert "refused before the box cover" in capsys.readouterr().err
    big = tmp_path / "d4.json"
    big.write_text(json.dumps({"A": exact_rows(np.eye(4)), "B": exact_rows(-np.eye(4)), "V": exact_rows(np.eye(4)),
                               "mean": [0] * 4, "cov": exact_rows(np.eye(4))}))
    assert main(["equilibrium", str(big), "--all", "--starts", "0"]) == 2


def exact_rows(M):
    return [[int(x) for x in r] for r in M]


def test_a_small_box_budget_ends_not_certified():
    res = census(DIAG, Q(2), max_boxes=5, progress=False)
    assert res.certificate is None and "budget" in res.reason


def test_the_box_budget_is_bounded_before_work():
    # review s18, L9: the --max-boxes bounds had no test
    from riccati_verify.certify.equilibria_all import MAX_BOXES
    for bad in (0, -1, MAX_BOXES + 1):
        with pytest.raises(InputError, match="max-boxes"):
            census(DIAG, Q(2), max_boxes=bad, progress=False)


def test_census_refuses_large_dimension_before_work():
    p = Params.from_arrays(exact.identity(4), exact.identity(4, -1), exact.identity(4))
    with pytest.raises(InputError, match="d <= 3"):
        census(p, Q(1), progress=False)


@pytest.mark.parametrize("p", [params([[0]], [[1]], [[3]]),                       # σ' = 6σ²: 0 a double root
                               params([[1, 0], [0, -1]], [[-1, 0], [0, -1]], [[1, 0], [0, 1]])],  # a circle through 0
                         ids=["double_root", "continuum"])
def test_a_singular_zero_is_not_certified_and_says_why(p):
    res = census(p, Q(1), progress=False)
    assert res.certificate is None and ("multiple root" in res.reason or "budget" in res.reason), res.reason


def test_a_zero_beyond_the_region_is_not_counted():
    """Review of session 16: a pd ball outside the region max Σ_ii ≤ R was counted in the census.
    d = 1, A = −1, B = V = 1: F(σ) = 2σ(σ − 1), zeros 0 and 1; with R = 1/2 the region holds 0 only."""
    p = params([[-1]], [[1]], [[1]])
    doc = json.loads((Path(__file__).parent / "data" / "certificates" / "all_equilibria.json").read_text())
    doc["params"] = {"A": [["-1"]], "B": [["1"]], "V": [["1"]], "b": ["0"]}
    doc["claim"] = {"kind": "all_equilibria", "radius": "1/2",
                    "equilibria": [{"center": [["0"]], "radius": "0", "status": "psd"}]}
    doc["witness"] = {"tree": [0, "z0", "x"]}
    assert verify_certificate(doc).valid
    for ball in ({"center": [["1"]], "radius": "0", "status": "pd"},              # outside
                 {"center": [["1/2"]], "radius": "0", "status": "pd"},            # not a zero: refused anyway
                 {"center": [["1"]], "radius": "1/2", "status": "pd"}):           # reaches into the region
        bad = copy.deepcopy(doc)
        bad["claim"]["equilibria"].append(ball)
        assert not verify_certificate(bad).valid
    bad = copy.deepcopy(doc)
    bad["claim"]["equilibria"].append({"center": [["1"]], "radius": "0", "status": "pd"})
    assert "reaches past max diag" in verify_certificate(bad).reason
    # the producer lists the zero σ = 1 (inside its root box, up to 4R/3) as excluded, never pd
    res = census(p, Q(7, 8), progress=False)
    assert res.certificate is not None and verify_certificate(res.certificate).valid
    st = {float(Q(e["center"][0][0])): e["status"] for e in res.equilibria}
    assert st.get(1.0) in (None, "excluded") and st[0.0] in ("psd", "pd")


def test_a_bisection_deeper_than_the_bound_is_refused_at_once():
    """Review of session 16: a tree [0, 0, 0, ...] grew each token's cost with the tree's length (80,000
    tokens: 4.6 s, 877 MB).  The depth bound refuses it after 64·n bisections."""
    from riccati_verify.checker import check_all_equilibria as cae

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / "all_equilibria.json").read_text())
    assert verify_certificate(doc).valid
    doc["witness"]["tree"] = [0] * 200_000
    res = verify_certificate(doc)
    d = len(doc["params"]["A"])
    n = d * (d + 1) // 2
    # refused at token 64·n (the deepest allowed path), long before the tree's end
    assert not res.valid and res.reason.startswith(f"tree token {cae.MAX_DEPTH_PER_COORD * n}: bisection deeper than")
