"""Stage 1 of a blow-up certificate on two cores (`checker/_stage1.py`): the chain cut in two, a second
process that starts the second half from a box around a midpoint march, and the containment test that
alone lets its result count.

References: the chain's own verdict on one core (the speculative route must agree with it and may
never replace it by an unproved enclosure), and the validated flow for the march (a point near the
validated enclosure, within the march's own per-step tolerance).
"""

from __future__ import annotations

import json
from fractions import Fraction as Q

import pytest
from flint import arb, arb_mat, ctx

import riccati_verify.checker._stage1 as stage1
from riccati_verify.checker import verify_certificate
from riccati_verify.checker._lohner import enclose_lohner
from riccati_verify.checker._stage1 import Segment, candidates, cut_point, march
from riccati_verify.core import balls
from riccati_verify.certify.blowup.compactified import certify_general_blowup
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.testing.strategies import general_instance

# blows up at T* ≈ 0.0623; its 10-digit certificate checks in about a second
P2, S2 = general_instance(2, 0, 2)


@pytest.fixture(scope="module")
def cert():
    out = certify_general_blowup(P2, S2, 10)
    assert out["ok"], out["reason"]
    return make_certificate("blowup_general", out["claim"], P2, S2, out["witness"], out["method"])


def _segments(doc):
    w = doc["witness"]
    return [Segment(Q(s["duration"]), s["rescale_log2"], s.get("order", w["flow"]["order"]),
                    s.get("tol_bits", w["flow"]["tol_bits"])) for s in w["segments"]]


def test_cut_point_splits_the_modelled_work_and_stays_inside_its_segment():
    segs = [Segment(Q(1, 40), 0, 48, 144), Segment(Q(1, 10 ** 10), 30, 40, 120),
            Segment(Q(1, 10 ** 19), 30, 30, 90)]
    s, tau = cut_point(segs, Q(1, 10 ** 21))
    assert 0 < tau < segs[s].duration
    # the model: growth bits × (order² + STEP_WORK); the parent's share is 1/(2 − MARCH_COST) of it
    g = [stage1.math.log2(segs[0].duration / segs[1].duration), stage1.math.log2(segs[1].duration / segs[2].duration),
         stage1.math.log2(segs[2].duration / Q(1, 10 ** 21))]
    w = [gk * (seg.order ** 2 + stage1.STEP_WORK) for gk, seg in zip(g, segs)]
    share = sum(w) / (2 - stage1.MARCH_COST)
    assert sum(w[:s]) < share <= sum(w[:s + 1])
    # at the cut, the fraction of segment s's growth equals the fraction of its work left to the parent
    x = -stage1.math.log2(1 - float(tau / segs[s].duration)) / g[s]
    assert abs(x - (share - sum(w[:s])) / w[s]) < 1e-3


def test_cut_point_declines_small_work():
    assert cut_point([Segment(Q(1, 4), 0, 20, 60)], Q(1, 100)) is None


def test_march_lands_inside_the_validated_enclosure():
    """The march is no proof; its point must still be where the validated flow says Σ is, to within the
    2^-tol per-step tolerance it was run at (a handful of steps over this span)."""
    prec, tol = 128, 90
    with ctx.workprec(prec):
        S0 = balls.arb_matrix(S2.cov)
        r = enclose_lohner(None, S0, P2.A, P2.B, P2.V, None, Q(1, 32), order=30, jac_order=10, prec=prec,
                           tol_bits=tol, covariance_only=True)
        assert r.ok, r.reason
        M = march(S0, P2.A, P2.B, P2.V, Q(1, 32), 30, tol, 1000)
        slack = arb(2) ** (20 - tol)
        for i in range(2):
            for j in range(2):
                e = r.cov[i, j]
                assert abs(M[i, j] - e.mid()) < e.rad() + slack * abs(e.mid()), (i, j)


def test_march_gives_up_beyond_its_step_budget():
    with ctx.workprec(128):
        assert march(balls.arb_matrix(S2.cov), P2.A, P2.B, P2.V, Q(1, 32), 20, 90, 2) is None


def _answer(X: arb_mat, shift=Q(0), half=None, r0=Q(1, 1000), r=Q(1, 10 ** 6)):
    """An answer of the second process: its box centred at mid(X) + shift, and a final set
    x̂ + I·(r0 + r) with x̂_k = k + 1 (coordinates Σ_ij, i ≤ j) and the given radii."""
    d = X.nrows()
    n = d * (d + 1) // 2
    c = [[balls.fraction_of_mid(X[i, j]) + shift for j in range(d)] for i in range(d)]
    h = half if half is not None else 2 * max(balls.fraction_of_mid(e.rad()) for e in X.entries()) + Q(1, 10 ** 30)
    ball = lambda m, rad: [stage1._q(Q(m)), stage1._q(Q(rad))]       # noqa: E731
    return {"ok": True, "centre": stage1._matrix_text(c), "half": stage1._q(h),
            "xc": [ball(k + 1, 0) for k in range(n)],
            "C": [ball(int(i == j), 0) for i in range(n) for j in range(n)],
            "r0": [ball(0, r0)] * n, "r": [ball(0, r)] * n, "steps": 1}


def test_a_box_that_contains_the_chain_lets_the_second_half_count_scaled_to_it():
    """Point 7 of `_lohner`: the start set's part of the answer scales with the share s of the box that
    the chain's enclosure fills; the local errors r do not."""
    with ctx.workprec(128):
        X = arb_mat([[arb(1, 1e-20), arb(1) / 3], [arb(1) / 3, arb(2, 1e-20)]])
    S = stage1._accepted(X, _answer(X, half=Q(4, 10 ** 20)), 128)
    assert S is not None
    # Σ_11 is coordinate 0 (x̂ = 1), Σ_12 = Σ_21 coordinate 1 (x̂ = 2), Σ_22 coordinate 2 (x̂ = 3)
    assert [float(S[i, j].mid()) for i in range(2) for j in range(2)] == [1.0, 2.0, 2.0, 3.0]
    # s ≈ 1e-20 / 4e-20 = 1/4: the radius is about s/1000 + 1e-6 (rounded up), far below 1/1000
    rad = float(S[0, 0].rad())
    assert 0.25e-3 + 1e-6 <= rad < 0.26e-3 + 1e-6


def test_containment_is_decided_on_exact_rationals_whatever_the_ambient_precision():
    """A box centre that differs from the chain's by less than a 53-bit rounding but more than the
    box's half-width is refused, also when the caller's precision is 53 bits (the comparison runs at
    the flow's precision, and its balls enclose the exact values at any precision)."""
    with ctx.workprec(200):
        X = arb_mat([[arb(1) + arb(2) ** -100, arb(0)], [arb(0), arb(1)]])
    a = _answer(X, shift=Q(1, 2 ** 80), half=Q(1, 2 ** 90))
    assert stage1._accepted(X, a, 53) is None and stage1._accepted(X, a, 200) is None
    assert stage1._accepted(X, _answer(X, half=Q(1, 2 ** 90)), 200) is not None


@pytest.mark.parametrize("how", ["moved", "narrow", "negative_half", "short", "not_rational", "missing",
                                 "r0_off_centre"])
def test_a_box_that_does_not_contain_the_chain_is_refused(how):
    """The containment is the whole argument: a box beside the chain's enclosure, one narrower than it,
    a start set not centred at 0 (point 7's scaling would not hold) or a malformed answer never lets
    the second half count."""
    with ctx.workprec(128):
        X = arb_mat([[arb(1, 1e-20), arb(0)], [arb(0), arb(2, 1e-20)]])
    if how == "moved":
        a = _answer(X, shift=Q(1, 10 ** 12))
    elif how == "narrow":
        a = _answer(X, half=Q(1, 10 ** 25))
    elif how == "negative_half":
        a = _answer(X, half=Q(-1))
    elif how == "short":
        a = _answer(X)
        a["xc"] = a["xc"][:2]
    elif how == "not_rational":
        a = _answer(X)
        a["half"] = "1e-3x"
    elif how == "r0_off_centre":
        a = _answer(X)
        a["r0"] = [["1/10", "1/1000"]] * 3
    else:
        a = _answer(X)
        del a["C"]
    assert stage1._accepted(X, a, 128) is None


def test_the_second_process_checks_the_second_half(cert, monkeypatch):
    """On two cores (the work threshold lowered so that this small certificate is cut), the spawned
    process's enclosure counts: it is accepted, and the verdict is the chain's.  The chain polls B after
    every step of its own second half; here the first poll waits for B's answer (a chain slower than B),
    so B's answer is heard whatever the machine's speed."""
    monkeypatch.setattr(stage1, "MIN_WORK", 0)
    monkeypatch.setattr(stage1._Speculation, "poll", lambda self: self.result(timeout=600))
    used = []
    real = stage1._accepted
    monkeypatch.setattr(stage1, "_accepted", lambda X, a, p: used.append(real(X, a, p)) or used[-1])
    monkeypatch.setenv("RICCATI_VERIFY_THREADS", "2")
    r2 = verify_certificate(cert)
    monkeypatch.setenv("RICCATI_VERIFY_THREADS", "1")
    r1 = verify_certificate(cert)
    assert r1.valid and r2.valid, (r1.reason, r2.reason)
    assert r1.reason == r2.reason
    assert len(used) == 1 and used[0] is not None


def test_a_refused_second_half_falls_back_to_the_chain(cert, monkeypatch):
    """A second process whose box misses the chain's enclosure (here: an answer moved far away) is not
    used: this process goes on from its own enclosure and reaches the chain's verdict."""
    monkeypatch.setattr(stage1, "MIN_WORK", 0)
    def far(self, timeout=None):
        return _answer(arb_mat(2, 2), shift=Q(100), half=Q(1))
    monkeypatch.setattr(stage1._Speculation, "poll", far)
    seen = []
    real = stage1._accepted
    monkeypatch.setattr(stage1, "_accepted", lambda X, a, p: seen.append(real(X, a, p)) or seen[-1])
    monkeypatch.setenv("RICCATI_VERIFY_THREADS", "2")
    r = verify_certificate(cert)
    assert r.valid, r.reason
    assert seen == [None]


def test_a_tampered_certificate_is_refused_on_two_cores(cert, monkeypatch):
    """The speculative route changes the work, not the claim's check: a bracket moved off T* fails."""
    import copy
    monkeypatch.setattr(stage1, "MIN_WORK", 0)
    monkeypatch.setenv("RICCATI_VERIFY_THREADS", "2")
    bad = copy.deepcopy(cert)
    lo, hi = Q(bad["claim"]["lower"]), Q(bad["claim"]["upper"])
    bad["claim"]["lower"], bad["claim"]["upper"] = str(hi), str(hi + (hi - lo))
    assert not verify_certificate(bad).valid


def test_the_chain_is_cut_at_the_same_place_on_one_core(cert, monkeypatch):
    """The cut comes from the witness alone, so one core checks the same chain as two."""
    monkeypatch.setattr(stage1, "MIN_WORK", 0)
    segs = _segments(cert)
    cut = cut_point(segs)
    assert cut is not None
    runs = []
    real = stage1.enclose_lohner
    monkeypatch.setattr(stage1, "enclose_lohner", lambda *a, **k: runs.append(a[6]) or real(*a, **k))
    out = list(candidates(P2.A, P2.B, P2.V, S2.cov, segs, cert["witness"]["precision_bits"],
                          cert["witness"]["flow"]["jac_order"], cert["witness"]["flow"].get("box", "picard"),
                          None, 40000, parallel=False))
    assert len(out) == 1
    assert runs[cut[0]] == cut[1] and runs[cut[0] + 1] == segs[cut[0]].duration - cut[1]


def test_no_second_process_means_the_chain_alone(cert, monkeypatch):
    """A second process that cannot start (no interpreter at that path) leaves the chain's check."""
    monkeypatch.setattr(stage1, "MIN_WORK", 0)
    monkeypatch.setattr(stage1.sys, "executable", "/nonexistent/python")
    monkeypatch.setenv("RICCATI_VERIFY_THREADS", "2")
    assert stage1._Speculation.start({}) is None
    r = verify_certificate(cert)
    assert r.valid, r.reason


def test_a_second_process_that_does_not_answer_in_time_is_stopped():
    import subprocess
    import sys

    spec = stage1._Speculation.__new__(stage1._Speculation)
    spec.proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE)
    spec.proc.stdin.close()
    spec.proc.stdin = None
    answer = spec.result(timeout=0.2)
    assert answer["ok"] is False and "no answer within" in answer["reason"]
    spec.close()
    assert spec.proc.returncode is not None


def test_polling_a_second_process_at_work_is_no_answer_and_keeps_it():
    """`poll` answers None while B works (B goes on), then B's answer once it has one."""
    import subprocess
    import sys

    spec = stage1._Speculation.__new__(stage1._Speculation)
    spec.proc = subprocess.Popen([sys.executable, "-c", "import time, sys; time.sleep(1); sys.stdout.write('{}')"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    spec.proc.stdin.close()
    spec.proc.stdin = None
    assert spec.poll() is None and spec.proc.poll() is None
    answer = spec.result(timeout=60)
    assert answer["ok"] is False and answer["reason"] == "no answer"
    spec.close()


def test_a_malformed_job_gets_a_refusal_not_a_crash():
    """B's own entry point answers {"ok": false} with the reason on a job it cannot read."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "from riccati_verify.checker._stage1 import _main; _main()"],
                         input=b'{"A": 1}', capture_output=True, timeout=60)
    import json
    answer = json.loads(out.stdout)
    assert answer["ok"] is False and answer["reason"]


def test_the_second_process_loads_the_checker_only():
    """B is checker code in a fresh interpreter: its entry point loads none of the producer's libraries."""
    import subprocess
    import sys

    probe = ("from riccati_verify.checker._stage1 import _main; import sys; "
             "print(sorted(m for m in ('numpy', 'scipy', 'sympy', 'mpmath', 'cvxpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_cut_point_takes_durations_beyond_the_float_range():
    """The witness's durations are untrusted rationals of up to thousands of digits: the plan still comes
    out (or no cut), never an overflow."""
    segs = [Segment(Q(1, 3), 0, 48, 144), Segment(Q(1, 10 ** 900), 30, 40, 120), Segment(Q(1, 10 ** 1900), 30, 30, 90)]
    out = cut_point(segs, Q(1, 10 ** 2500))
    assert out is None or 0 < out[1] < segs[out[0]].duration


def test_the_containment_bound_is_the_exact_largest_deviation():
    """Review of session 16: the largest |X_ij − centre_ij| was picked by its float value, which
    overflows past 2^1024 (and ties within 2^-53).  An answer whose half-width covers the first
    deviation but not a larger one must be refused, whatever their float images."""
    big = arb(2) ** 1100
    with ctx.workprec(256):
        X = arb_mat([[big, 3 * big], [3 * big, arb(0)]])
    a = _answer(arb_mat(2, 2), half=Q(2) ** 1100)
    assert stage1._accepted(X, a, 256) is None
    # ties in floats: deviations 2^-60 apart at 1, the second (larger) one over the half-width
    with ctx.workprec(256):
        Y = arb_mat([[arb(1), arb(1) + arb(2) ** -60], [arb(1) + arb(2) ** -60, arb(0)]])
    assert stage1._accepted(Y, _answer(arb_mat(2, 2), half=Q(1)), 256) is None
    assert stage1._accepted(Y, _answer(arb_mat(2, 2), half=Q(1) + Q(1, 2 ** 59)), 256) is not None


@pytest.mark.parametrize("how", ["infinity", "exponent", "float", "nested", "bool_pair"])
def test_a_malformed_answer_is_no_answer_not_a_crash(how):
    """Every malformed answer means "no speculative result" (the chain goes on); a JSON Infinity, an
    exponent form (its parse has no cost bound), a float, a deeply nested list or a pair that is not
    two strings is refused without an exception."""
    with ctx.workprec(128):
        X = arb_mat([[arb(1, 1e-20), arb(0)], [arb(0), arb(2, 1e-20)]])
    a = _answer(X)
    if how == "infinity":
        a["half"] = float("inf")
    elif how == "exponent":
        a["half"] = "1e2000000"
    elif how == "float":
        a["xc"][0] = [1.0, "0"]
    elif how == "nested":
        deep = []
        for _ in range(50):
            deep = [deep]
        a["r"] = deep
    else:
        a["r"][0] = "10"
    assert stage1._accepted(X, a, 128) is None


def test_an_answer_from_another_copy_of_the_checker_is_no_answer():
    """B must run this very file: an answer naming another one is refused before it is read."""
    import subprocess
    import sys

    spec = stage1._Speculation.__new__(stage1._Speculation)
    for module, ok in ((stage1._MODULE, True), ("/elsewhere/riccati_verify/checker/_stage1.py", False)):
        text = json.dumps({"ok": True, "module": module})
        spec.proc = subprocess.Popen([sys.executable, "-c", f"print({text!r})"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        spec.proc.stdin.close()
        spec.proc.stdin = None
        answer = spec.result(timeout=60)
        spec.close()
        assert answer["ok"] is ok, answer


def test_the_second_process_does_not_import_from_the_current_directory(tmp_path, monkeypatch):
    """`python -c` puts the current directory first on the import path: a `riccati_verify` there would
    run in place of the checker (review of session 16).  B starts with -P."""
    fake = tmp_path / "riccati_verify" / "checker"
    fake.mkdir(parents=True)
    for f in (tmp_path / "riccati_verify" / "__init__.py", fake / "__init__.py"):
        f.write_text("")
    (fake / "_stage1.py").write_text("def _main():\n    print('{\"ok\": true, \"forged\": true}')\n")
    monkeypatch.chdir(tmp_path)
    spec = stage1._Speculation.start({"A": 1})
    assert spec is not None
    answer = spec.result(timeout=120)
    spec.close()
    assert answer["ok"] is False and "forged" not in answer


def test_a_second_half_past_the_step_budget_does_not_count(cert, monkeypatch):
    """B's flow must fit the steps the chain had left: the budget means the same on one core and two."""
    monkeypatch.setattr(stage1, "MIN_WORK", 0)
    real = stage1._Speculation.result

    def greedy(self):
        a = real(self, 600)
        if a["ok"]:
            a["steps"] = 10 ** 9
        return a
    monkeypatch.setattr(stage1._Speculation, "poll", greedy)
    seen = []
    acc = stage1._accepted
    monkeypatch.setattr(stage1, "_accepted", lambda X, a, p: seen.append(1) or acc(X, a, p))
    monkeypatch.setenv("RICCATI_VERIFY_THREADS", "2")
    r = verify_certificate(cert)
    assert r.valid, r.reason
    assert seen == []


def test_a_number_past_the_int_text_limit_means_no_second_process(monkeypatch):
    """Review s19 F2: an exact control past CPython's 4300-digit int-to-text limit (a dense frame's T⁻¹AT
    reaches it at d = 4) made building B's job raise ValueError, so two cores refused with "malformed
    witness" where one core ran the chain.  Now no second process is started and the chain runs."""
    monkeypatch.setattr(stage1, "MIN_WORK", 0)
    started = []
    monkeypatch.setattr(stage1._Speculation, "start", classmethod(lambda cls, job: started.append(job)))
    A = [[Q(1, 10 ** 4400), Q(0)], [Q(0), Q(0)]]    # a 4401-digit denominator: str() refuses it
    segs = [Segment(Q(1, 100), 0, 20, 40), Segment(Q(1, 100), 0, 20, 40)]
    assert cut_point(segs) is not None

    class Stop(Exception):
        pass

    def before():
        raise Stop

    with pytest.raises(Stop):
        next(candidates(A, P2.B, P2.V, S2.cov, segs, 128, 8, True, None, 1000, parallel=True, before=before))
    assert started == []
    # the same controls with a short entry do start it: the test sees the speculation path
    A[0][0] = Q(1, 3)
    with pytest.raises(Stop):
        next(candidates(A, P2.B, P2.V, S2.cov, segs, 128, 8, True, None, 1000, parallel=True, before=before))
    assert len(started) == 1
