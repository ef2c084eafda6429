"""Blow-up / no-blow-up certificates: valid ones verify, tampered ones are rejected."""

from __future__ import annotations

import ast
import copy
from fractions import Fraction as F
from pathlib import Path

import mpmath
import pytest

from riccati_verify.core import exact
from riccati_verify.certify.blowup import blowup_time
from riccati_verify.checker import verify_certificate
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.core.model import Gaussian, Params


def params(A, B, V):
    d = len(A)
    Vm = exact.identity(d, V) if not isinstance(V, (tuple, list)) else exact.as_matrix(V)
    return Params(exact.as_matrix(A), exact.as_matrix(B), Vm, (F(0),) * d)


def gaussian(cov):
    return Gaussian(tuple(F(0) for _ in cov), exact.as_matrix(cov))


def certify(P, S, digits=30, horizon=None):
    res = blowup_time(P, S, digits=digits, horizon=horizon)
    assert res.certificate_spec is not None, res
    c = res.certificate_spec
    return res, make_certificate(c["kind"], c["claim"], P, S, c["witness"], c["method"])


def valid(doc):
    return verify_certificate(doc).valid


def qs(x: F) -> str:
    return f"{x.numerator}/{x.denominator}"


# d = 1: T* = ln(1 + a/c)/(2a) with a = 1/3, c = vβσ0 = 1  (known independently of the tool)
SCALAR = (params([[F(1, 3)]], [[1]], F(1, 2)), gaussian([[2]]))
with mpmath.workdps(80):
    T_SCALAR = F(mpmath.nstr(mpmath.log(1 + mpmath.mpf(1) / 3) * 3 / 2, 70))
MIXED = (params([[F(1, 2), 1], [0, -1]], [[1, 0], [0, -2]], F(1, 2)), gaussian([[1, 0], [0, 1]]))


@pytest.fixture(scope="module")
def scalar_cert():
    return certify(*SCALAR)


@pytest.fixture(scope="module")
def mixed_cert():
    return certify(*MIXED, digits=25)


def test_monotone_blowup_certificate_verifies(scalar_cert):
    res, doc = scalar_cert
    assert doc["witness"]["route"] == "radon-monotone"
    assert F(res.lower) < T_SCALAR <= F(res.upper)
    r = verify_certificate(doc)
    assert r.valid, r.reason


@pytest.mark.parametrize("how", ["shift_up", "shift_down", "narrow_upper_past", "narrow_lower_past", "swap"])
def test_wrong_brackets_are_rejected(scalar_cert, how):
    _, doc = scalar_cert
    lo, hi = F(doc["claim"]["lower"]), F(doc["claim"]["upper"])
    w = hi - lo
    new = {"shift_up": (lo + 10 * w, hi + 10 * w), "shift_down": (lo - 10 * w, hi - 10 * w),
           "narrow_upper_past": (lo, (lo + T_SCALAR) / 2), "narrow_lower_past": ((T_SCALAR + hi) / 2, hi),
           "swap": (hi, lo)}[how]
    bad = copy.deepcopy(doc)
    bad["claim"]["lower"], bad["claim"]["upper"] = qs(new[0]), qs(new[1])
    assert not valid(bad)


@pytest.mark.parametrize("what", ["B", "A", "V", "cov"])
def test_perturbed_parameters_are_rejected(scalar_cert, what):
    _, doc = scalar_cert
    bad = copy.deepcopy(doc)
    key = what
    x = F(bad["params"][key][0][0])
    bad["params"][key][0][0] = qs(x + F(1, 10 ** 12))
    assert not valid(bad)


def test_tampered_witness_is_rejected(scalar_cert, mixed_cert):
    _, doc = scalar_cert
    for mutate in (lambda w: w.__setitem__("factor_D", ["1"]),              # Σ0 ≠ C D Cᵀ
                   lambda w: w.__setitem__("precision_bits", 10 ** 9),       # unbounded work
                   lambda w: w.__setitem__("precision_bits", 53),            # too coarse to prove the bracket
                   lambda w: w.__setitem__("route", "magic"),
                   lambda w: w.__setitem__("factor_D", [2.0])):              # a float where exact is required
        bad = copy.deepcopy(doc)
        mutate(bad["witness"])
        assert not valid(bad)
    # a float in the claim
    bad = copy.deepcopy(doc)
    bad["claim"]["lower"] = float(F(doc["claim"]["lower"]))
    assert not valid(bad)
    # the monotone argument claimed for mixed-sign parameters
    _, mdoc = mixed_cert
    bad = copy.deepcopy(mdoc)
    bad["witness"]["route"] = "radon-monotone"
    del bad["witness"]["boxes"]
    assert not valid(bad)
    bad["witness"]["route"] = "diagonal-closed-form"     # A is not diagonal
    assert not valid(bad)


def test_cover_certificate_verifies_and_rejects_broken_covers(mixed_cert):
    res, doc = mixed_cert
    assert doc["witness"]["route"] == "radon-cover" and res.rigorous
    assert verify_certificate(doc).valid
    boxes = doc["witness"]["boxes"]
    assert len(boxes) >= 2
    gap = copy.deepcopy(doc)
    del gap["witness"]["boxes"][0]                       # [0, b0] uncovered
    assert not valid(gap)
    short = copy.deepcopy(doc)
    del short["witness"]["boxes"][-1]                    # does not reach lower
    assert not valid(short)
    overlap = copy.deepcopy(doc)
    overlap["witness"]["boxes"][1][1] = overlap["witness"]["boxes"][0][1]   # not contiguous
    assert not valid(overlap)
    # a box claimed PD although N is not PD on it: stretch the cover past T*
    stretched = copy.deepcopy(doc)
    stretched["witness"]["boxes"][-1][2] = doc["claim"]["upper"]
    stretched["claim"]["lower"] = doc["claim"]["upper"]
    stretched["claim"]["upper"] = qs(F(doc["claim"]["upper"]) * 2)
    assert not valid(stretched)


def test_diagonal_closed_form_certificate():
    P = params([[1, 0], [0, -1]], [[1, 0], [0, 2]], [[2, 0], [0, 3]])
    res, doc = certify(P, gaussian([[1, 0], [0, 1]]))
    assert doc["witness"]["route"] == "diagonal-closed-form" and valid(doc)
    lo, hi = F(res.lower), F(res.upper)
    bad = copy.deepcopy(doc)
    bad["claim"]["lower"], bad["claim"]["upper"] = qs(hi), qs(2 * hi - lo)
    assert not valid(bad)
    bad = copy.deepcopy(doc)
    bad["params"]["A"][0][1] = "1/1000"                  # no longer diagonal
    assert not valid(bad)


def test_no_blowup_certificates():
    # opposite sign, forever
    P, S = params([[F(1, 2), 1], [0, -1]], [[-1, 0], [0, -2]], F(1, 2)), gaussian([[1, 0], [0, 1]])
    _, doc = certify(P, S)
    assert doc["witness"]["route"] == "opposite-sign" and valid(doc)
    bad = copy.deepcopy(doc)
    bad["params"]["V"] = [["-1/2", "0"], ["0", "-1/2"]]  # same sign now: blows up
    assert not valid(bad)
    # Lyapunov bound, forever
    P, S = params([[-2, 1], [0, -3]], [[1, 0], [0, 1]], F(1)), gaussian([[F(1, 10), 0], [0, F(1, 10)]])
    _, doc = certify(P, S)
    assert doc["witness"]["route"] == "lyapunov" and valid(doc)
    bad = copy.deepcopy(doc)
    bad["witness"]["W"][0][0] = qs(F(doc["witness"]["W"][0][0]) + F(1, 100))
    assert not valid(bad)
    bad = copy.deepcopy(doc)
    bad["params"]["cov"] = [["10", "0"], ["0", "10"]]
    assert not valid(bad)
    # zero covariance and A = 0 routes
    _, doc = certify(params([[1, 0], [0, 1]], [[1, 0], [0, 1]], 1), gaussian([[0, 0], [0, 0]]))
    assert doc["witness"]["route"] == "zero-covariance" and valid(doc)
    bad = copy.deepcopy(doc)
    bad["params"]["cov"] = [["1", "0"], ["0", "0"]]
    assert not valid(bad)
    _, doc = certify(params([[0, 0], [0, 0]], [[0, 0], [1, 0]], F(1, 2)), gaussian([[1, 0], [0, 0]]))
    assert doc["witness"]["route"] == "a-zero" and valid(doc)
    bad = copy.deepcopy(doc)
    bad["params"]["B"] = [["1", "0"], ["1", "0"]]
    assert not valid(bad)


@pytest.mark.parametrize("problem", ["monotone", "mixed"])
def test_no_blowup_on_horizon_and_rejection_past_T(problem):
    if problem == "monotone":
        P, S = params([[F(1, 2), 1], [0, -1]], [[1, 0], [0, 2]], F(1, 2)), gaussian([[1, 0], [0, 1]])
    else:
        P, S = MIXED
    full = blowup_time(P, S, digits=10)
    T = F(full.lower)
    res, doc = certify(P, S, digits=10, horizon=T * F(9, 10))
    assert res.blowup is False and valid(doc)
    assert doc["witness"]["route"] == ("radon-monotone" if problem == "monotone" else "radon-cover")
    bad = copy.deepcopy(doc)
    bad["claim"]["horizon"] = qs(F(full.upper) * F(11, 10))
    if problem == "mixed":
        bad["witness"]["boxes"][-1][2] = bad["claim"]["horizon"]
    assert not valid(bad)
    bad = copy.deepcopy(doc)
    bad["claim"]["horizon"] = None                        # "forever" from a finite-horizon argument
    assert not valid(bad)


def test_checkers_import_only_the_trusted_core():
    root = Path(__file__).resolve().parents[1] / "riccati_verify" / "checker"
    allowed = {"__future__", "fractions", "flint", "riccati_verify.core", "riccati_verify.core.balls",
               "riccati_verify.core.exact", "riccati_verify.core.io", "riccati_verify.core.model",
               # the one copy of the scalar blow-up time (core, trusted), for the diagonal closed form
               "riccati_verify.core.bernoulli",
               "riccati_verify.checker.verify", "riccati_verify.checker._reduced_riccati",
               # the no_blowup route lohner runs the checker's own validated flow
               "riccati_verify.checker._lohner", "riccati_verify.checker.check_blowup_general"}
    for name in ("check_blowup.py", "check_no_blowup.py", "_reduced_riccati.py"):
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = "." * node.level + (node.module or "")
                assert mod in allowed, (name, mod)
                if mod == "riccati_verify.core":
                    assert {a.name for a in node.names} <= {"balls", "exact"}, (name, node.names)
            elif isinstance(node, ast.Import):
                assert all(a.name in {"fractions", "flint", "re"} for a in node.names), name


from hypothesis import given, strategies as st  # noqa: E402

from riccati_verify.testing.strategies import psd_matrices, rational_matrices, rationals, reference_blowup  # noqa: E402


@given(d=st.integers(1, 3), data=st.data())
def test_random_certificates_verify_and_shifted_ones_do_not(d, data):
    """Producer (Radon Hamiltonian) and checker (Van Loan / inverse form) agree on random V = vI problems."""
    A = data.draw(rational_matrices(d, max_magnitude=1, max_denominator=4))
    B = data.draw(rational_matrices(d, max_magnitude=2, max_denominator=4))
    v = data.draw(rationals(-2, 2).filter(lambda x: x != 0))
    S0 = data.draw(psd_matrices(d, rank=st.integers(1, d)))
    P, S = params(A, B, v), gaussian(S0)
    res = blowup_time(P, S, digits=20, horizon=4)
    if res.certificate_spec is None:
        return
    c = res.certificate_spec
    doc = make_certificate(c["kind"], c["claim"], P, S, c["witness"], c["method"])
    r = verify_certificate(doc)
    assert r.valid, r.reason
    if c["kind"] == "blowup":
        lo, hi = F(res.lower), F(res.upper)
        bad = copy.deepcopy(doc)
        bad["claim"]["lower"], bad["claim"]["upper"] = qs(hi), qs(2 * hi - lo)
        if "boxes" in bad["witness"]:
            bad["witness"]["boxes"][-1][2] = bad["claim"]["lower"]
        assert not valid(bad)


@pytest.mark.parametrize("d,digits", [(8, 200), (2, 1000)])
def test_large_certificates_verify(d, digits):
    import numpy as np

    rng = np.random.default_rng(d * 1000 + digits)
    q = lambda: F(int(rng.integers(-4, 5)), 8)
    A = tuple(tuple(q() for _ in range(d)) for _ in range(d))
    M = [[q() for _ in range(d)] for _ in range(d)]
    B = exact.add(exact.matmul(M, exact.transpose(M)), exact.identity(d, F(1, 2)))
    P, S = params(A, B, F(1, 2)), gaussian(exact.identity(d))
    res, doc = certify(P, S, digits=digits)
    assert res.digits == digits and F(res.upper) - F(res.lower) <= F(1, 10 ** (digits - 1))
    assert valid(doc)
    lo, hi = F(res.lower), F(res.upper)
    bad = copy.deepcopy(doc)
    bad["claim"]["lower"], bad["claim"]["upper"] = qs(hi), qs(2 * hi - lo)   # claims T* > hi: false
    assert not valid(bad)


def test_ill_conditioned_mixed_sign_cover_regression():
    """A mixed-sign d = 4, rank-2 case whose first-order box cover stalled (λ_min ≪ ‖N‖ and fast
    Ṅ); the second-order Taylor/convexity boxes close it, and the checker agrees."""
    A = [[-1, F(-3, 4), F(3, 4), F(-9, 8)], [F(3, 2), F(1, 4), 0, F(-21, 8)],
         [F(5, 8), F(-7, 8), 2, F(9, 4)], [F(-3, 8), F(-3, 4), F(7, 8), 0]]
    B = [[0, F(-3, 2), 0, 0], [F(5, 4), -1, F(3, 2), F(-1, 2)], [F(-7, 4), F(1, 2), F(1, 2), F(7, 4)],
         [F(1, 4), F(5, 4), -1, F(-3, 2)]]
    S0 = [[F(25, 16), F(5, 2), F(35, 16), F(-5, 4)], [F(5, 2), 8, F(5, 2), 1],
          [F(35, 16), F(5, 2), F(53, 16), F(-5, 2)], [F(-5, 4), 1, F(-5, 2), F(13, 4)]]
    res, doc = certify(params(A, B, F(7, 4)), gaussian(S0), digits=30)
    assert res.blowup is True and doc["witness"]["route"] == "radon-cover"
    # the independent reference (its own compactified DOP853; not the producer's float search, whose
    # crossing this pinned before, review s18) meets the certified bracket
    ref = reference_blowup(params(A, B, F(7, 4)), gaussian(S0))
    assert ref["t_star"][0] <= float(F(res.upper)) and float(F(res.lower)) <= ref["t_star"][1]
    assert valid(doc)


def test_the_lohner_no_blowup_route_refuses_a_dimension_beyond_its_bound():
    """Review of session 16: the route had no dimension bound (about 22 hours at d = 12 within the
    other bounds); it stops at LOHNER_MAX_DIM before any flow work."""
    from riccati_verify.certify.certificate import make_certificate
    from riccati_verify.checker import check_no_blowup
    from riccati_verify.checker import verify_certificate as verify
    from riccati_verify.core.model import Gaussian, Params

    def doc(d):
        I = tuple(tuple(F(int(i == j)) for j in range(d)) for i in range(d))
        Z = tuple(tuple(F(0) for _ in range(d)) for _ in range(d))
        p, s = Params(A=Z, B=Z, V=Z, b=tuple(F(0) for _ in range(d))), Gaussian(tuple(F(0) for _ in range(d)), I)
        witness = {"route": "lohner", "precision_bits": 128,
                   "flow": {"order": 20, "jac_order": 8, "tol_bits": 50, "max_steps": 100}}
        return make_certificate("no_blowup", {"horizon": "1/8"}, p, s, witness, "test")

    assert verify(doc(2)).valid                          # B = V = 0: Σ(t) = Σ0, no blow-up
    d = check_no_blowup.LOHNER_MAX_DIM + 1
    res = verify(doc(d))
    assert not res.valid and f"up to d = {check_no_blowup.LOHNER_MAX_DIM}" in res.reason


def test_radon_monotone_evaluations_have_a_work_bound():
    """Review of session 16: radon-monotone allowed 40,000 bits at any d (about 3 h at d = 64); its
    evaluations of N now count against the cover budget.  The d = 1 certificate passes at 40,000 bits;
    the same claim shape at d = 16 is refused before any exponential."""
    from pathlib import Path
    import json

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / "blowup.json").read_text())
    doc["witness"]["precision_bits"] = 40_000
    assert verify_certificate(doc).valid
    d = 16
    I = [["1" if i == j else "0" for j in range(d)] for i in range(d)]
    doc["params"] = {"A": I, "B": I, "V": I, "b": ["0"] * d, "mean": ["0"] * d, "cov": I}
    doc["witness"]["factor_C"], doc["witness"]["factor_D"] = I, ["1"] * d
    res = verify_certificate(doc)
    assert not res.valid and "exceeds the checker's work budget" in res.reason


def test_no_blowup_refuses_witness_keys_its_route_does_not_read():
    """Review s17: the opposite-sign route accepted anything in factor_C / factor_D, which it never read.
    A route now reads every key it is given, or refuses it."""
    from riccati_verify.core.model import Gaussian, Params

    I = ((F(1), F(0)), (F(0), F(1)))
    p = Params(I, ((F(-1), F(0)), (F(0), F(-1))), I, (F(0), F(0)))
    res = blowup_time(p, Gaussian((F(0), F(0)), I), digits=10)
    cert = res.certificate
    assert cert["witness"]["route"] == "opposite-sign" and verify_certificate(cert).valid
    bad = copy.deepcopy(cert)
    bad["witness"]["factor_C"] = [["7", "0"], ["0", "7"]]
    assert not verify_certificate(bad).valid
    extra = copy.deepcopy(cert)
    extra["witness"]["W"] = [["1", "0"], ["0", "1"]]
    r = verify_certificate(extra)
    assert not r.valid and "does not read" in r.reason


# ---- one grammar for every witness rational (review s19, L4) ------------------------------------------

def test_the_witness_rational_reader_is_strict():
    from riccati_verify.checker import _reduced_riccati as rr

    assert rr.rational("-3/4", "x") == F(-3, 4) and rr.rational("0.125", "x") == F(1, 8) and rr.rational("7", "x") == 7
    # the parameter files' lenient forms are refused in a witness, as check_equilibrium.parse_fraction does
    for bad in (" 1/2", "1/2 ", "+1/2", "1e-3", "1/0", "1/-2", "0x10", "½", "", "1.", ".5"):
        with pytest.raises(rr.WitnessError, match="witness rational"):
            rr.rational(bad, "x")
    with pytest.raises(rr.WitnessError):
        rr.rational(0.5, "x")


def _first_rational_path(node, path=()):
    """The path of the first 'p/q' string leaf below node (depth first), or None."""
    if isinstance(node, str) and "/" in node and node.lstrip("-").replace("/", "").isdigit():
        return path
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        p = _first_rational_path(v, path + (k,))
        if p is not None:
            return p
    return None


@pytest.mark.parametrize("name", ["blowup_general.json", "blowup_general.turning.json"])
def test_a_lenient_rational_in_a_blowup_witness_is_refused(name):
    import json

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / name).read_text())
    assert verify_certificate(doc).valid
    path = _first_rational_path(doc["witness"])
    assert path is not None
    for spelling in ("+{}", " {}"):
        bad = copy.deepcopy(doc)
        node = bad["witness"]
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = spelling.format(node[path[-1]])
        res = verify_certificate(bad)
        assert not res.valid and "witness rational" in res.reason, (path, res.reason)
