"""The `trajectory_convergence` certificate kind: a valid certificate passes, tampered ones fail."""

from __future__ import annotations

import copy
import math
from fractions import Fraction as Q

import numpy as np
import pytest

from riccati_verify.checker import verify_certificate
from riccati_verify.core import exact
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.certify.certificate import make_certificate
from riccati_verify.certify.roa import region_of_attraction, trajectory_certificate
from riccati_verify.certify.stability import enclose_equilibrium, newton_equilibrium


def _problem():
    # B = I, V = -I + E/50, A = I + K: a PD equilibrium near I (bench_certify's family, d = 2)
    B = [[1, 0], [0, 1]]
    V = [[Q(-1), Q(1, 50)], [Q(0), Q(-1)]]
    A = [[1, 1], [-1, 1]]
    return Params.from_arrays(A, B, V)


@pytest.fixture(scope="module")
def made():
    p = _problem()
    S = newton_equilibrium(p, np.eye(2))
    enc = enclose_equilibrium(p, S)
    roa = region_of_attraction(p, enc.center, enc.radius)
    assert roa.proved
    # Σ0 = Σ* + sI with W(Σ0 − Σ*) about 8c: outside the region, reached after a short time
    Xf = np.array(roa.stability.X, dtype=float)
    h = np.array([1.0, 0.0, 1.0])
    s = math.sqrt(8 * float(roa.c) / float(h @ Xf @ h))
    S0 = exact.add(enc.center, exact.identity(2, Q(s).limit_denominator(10 ** 8)))
    state = Gaussian((Q(0), Q(0)), S0)
    tr = trajectory_certificate(p, state, enc.center, enc.radius, region=roa)
    assert tr.certificate is not None, tr.reason
    return p, state, tr


def test_valid_certificate_passes(made):
    _, _, tr = made
    r = verify_certificate(tr.certificate)
    assert r.valid, r.reason
    assert tr.status == "certified" and tr.T > 0


def _tampered(cert, f):
    c = copy.deepcopy(cert)
    f(c)
    return verify_certificate(c)


def test_moved_checkpoint_is_rejected(made):
    def move(c):
        seg = c["witness"]["segments"][0]
        seg["center"][0][0] = str(Q(seg["center"][0][0]) + Q(1, 1000))
    assert not _tampered(made[2].certificate, move).valid


def test_shrunk_checkpoint_radius_is_rejected(made):
    def shrink(c):
        c["witness"]["segments"][-1]["radius"] = "0"
    assert not _tampered(made[2].certificate, shrink).valid


def test_larger_c_is_rejected(made):
    def bigger(c):
        c["witness"]["c"] = str(Q(c["witness"]["c"]) * 4)
    assert not _tampered(made[2].certificate, bigger).valid


def test_changed_T_is_rejected(made):
    def shorter(c):
        for s in c["witness"]["segments"]:
            s["duration"] = str(Q(s["duration"]) / 64)
    assert not _tampered(made[2].certificate, shorter).valid


def test_different_sigma0_is_rejected(made):
    p, state, tr = made
    other = Gaussian(state.mean, exact.identity(2, 3))
    c = make_certificate("trajectory_convergence", tr.certificate["claim"], p, other, tr.certificate["witness"], "x")
    assert not verify_certificate(c).valid


def test_wrong_limit_claim_and_bad_flow_are_rejected(made):
    assert not _tampered(made[2].certificate, lambda c: c["claim"].update(limit="zero")).valid
    assert not _tampered(made[2].certificate, lambda c: c["witness"]["flow"].update(prec=10 ** 6)).valid
    assert not _tampered(made[2].certificate, lambda c: c["witness"].update(mu=str(Q(c["witness"]["mu"]) * 10))).valid


def test_unbounded_horizon_is_refused(made):
    p, state, tr = made
    assert trajectory_certificate(p, state, tr.certificate["witness"]["center"] and
                                  tuple(tuple(Q(x) for x in r) for r in tr.certificate["witness"]["center"]),
                                  horizon=1e9).reason.startswith("horizon must be")


def test_the_producer_uses_the_lohner_flow(made):
    flow = made[2].certificate["witness"]["flow"]
    assert flow["method"] == "lohner" and "validated flow (lohner, in the witness's frame)" in verify_certificate(made[2].certificate).reason


def test_wrong_flow_method_is_rejected(made):
    for bad in ("lohnerr", "", None, 3, ["lohner"]):
        r = _tampered(made[2].certificate, lambda c: c["witness"]["flow"].update(method=bad))
        assert not r.valid and "method" in r.reason, (bad, r.reason)


def test_lohner_without_jac_order_and_taylor_with_one_are_rejected(made):
    assert not _tampered(made[2].certificate, lambda c: c["witness"]["flow"].pop("jac_order")).valid
    assert not _tampered(made[2].certificate, lambda c: c["witness"]["flow"].update(jac_order=10 ** 6)).valid
    assert not _tampered(made[2].certificate, lambda c: c["witness"]["flow"].update(method="taylor")).valid


def test_taylor_flow_without_method_still_verifies(made):
    # the format before the "method" field (the plain-ball Taylor flow is the default), on the short horizon
    p, state, tr = made
    w = tr.certificate["witness"]
    center = tuple(tuple(Q(x) for x in r) for r in w["center"])
    old = trajectory_certificate(p, state, center, Q(w["radius"]), flows=({"order": 24, "prec": 320, "tol_bits": 100},),
                                 frame=None)
    assert old.certificate is not None, old.reason
    assert "method" not in old.certificate["witness"]["flow"]
    assert "validated flow (taylor)" in verify_certificate(old.certificate).reason
    # and a wrong method value in that format is rejected too
    assert not _tampered(old.certificate, lambda c: c["witness"]["flow"].update(method="taylorr")).valid


def _singular_problem():
    # general_instance(2, 2, 3): Sigma(t) -> a rank-1 equilibrium, the first of i < 40 (found by search);
    # pinned and asserted, so that a producer that stops certifying it fails instead of skipping (review s18, L8)
    from riccati_verify.testing.strategies import general_instance
    from riccati_verify.certify.stability import classify_regime

    r = classify_regime(*general_instance(2, 2, 3))
    assert r.certified and r.certificate and r.certificate["claim"].get("positive_definite") is False, r.method
    return r


def test_singular_limit_certificate_and_its_pd_claim_tampering():
    # fast since the instance is pinned (1.7 s; the search over 40 draws made it slow)
    r = _singular_problem()
    assert verify_certificate(r.certificate).valid
    # claiming the singular limit positive definite is refused
    assert not _tampered(r.certificate, lambda c: c["claim"].update(positive_definite=True)).valid
    assert not _tampered(r.certificate, lambda c: c["claim"].pop("positive_definite")).valid
    assert not _tampered(r.certificate, lambda c: c["claim"].update(positive_definite="no")).valid


def test_collapse_claim_cannot_say_positive_definite(made):
    assert not _tampered(made[2].certificate, lambda c: c["claim"].update(limit="zero", positive_definite=True)).valid


# ---------------------------------------------------------------------------
# the cubic region-of-attraction witness


def test_the_producer_certifies_with_the_cubic_bound(made):
    w = made[2].certificate["witness"]
    assert set(w["cubic"]) == {"Y", "s", "S"}
    assert made[2].region.bound in ("cauchy_schwarz", "lmi") and made[2].region.c > made[2].region.c_norm


def _scaled(key, f):
    def g(c):
        cub = c["witness"]["cubic"]
        if key == "s":
            cub["s"] = str(Q(cub["s"]) * f)
        else:
            cub[key] = [[str(Q(x) * f) for x in r] for r in cub[key]]
    return g


def test_cubic_larger_c_is_rejected_by_the_cubic_test(made):
    def bigger(c):
        c["witness"]["c"] = str(Q(c["witness"]["c"]) * 2)
    r = _tampered(made[2].certificate, bigger)
    assert not r.valid and "cubic" in r.reason, r.reason


def test_cubic_tampered_S_Y_s_are_rejected(made):
    cert = made[2].certificate
    for key, f in (("S", Q(1, 10 ** 6)), ("S", 10 ** 6), ("S", -1), ("Y", 2), ("Y", Q(1, 2)), ("s", 4)):
        r = _tampered(cert, _scaled(key, f))
        assert not r.valid and "cubic" in r.reason, (key, f, r.reason)


def test_cubic_witness_shape_is_checked(made):
    cert = made[2].certificate
    assert not _tampered(cert, lambda c: c["witness"]["cubic"].pop("S")).valid
    assert not _tampered(cert, lambda c: c["witness"]["cubic"].update(extra=1)).valid
    assert not _tampered(cert, lambda c: c["witness"]["cubic"].update(Y=[["1"]])).valid
    assert not _tampered(cert, lambda c: c["witness"]["cubic"].update(s="-1")).valid
    assert not _tampered(cert, lambda c: c["witness"].update(cubic=[1, 2])).valid


def test_dropping_the_cubic_witness_falls_back_to_the_norm_bound(made):
    # the c of the cubic bound is above μ²/(4κ²η): without its witness the old test refuses it
    r = _tampered(made[2].certificate, lambda c: c["witness"].pop("cubic"))
    assert not r.valid and "mu^2" in r.reason, r.reason


def test_old_certificates_without_cubic_still_verify(made):
    p, state, tr = made
    w = tr.certificate["witness"]
    center = tuple(tuple(Q(x) for x in r) for r in w["center"])
    roa = region_of_attraction(p, center, Q(w["radius"]), cubic=False)
    assert roa.bound == "norm" and roa.cubic is None
    old = trajectory_certificate(p, state, center, Q(w["radius"]), region=roa)
    assert old.certificate is not None and "cubic" not in old.certificate["witness"], old.reason
    assert verify_certificate(old.certificate).valid


def test_the_certificate_ends_at_its_entry_and_names_it(made):
    _, _, tr = made
    r = verify_certificate(tr.certificate)
    K = len(tr.certificate["witness"]["segments"])
    assert f"after segment {K - 1} of {K}" in r.reason and "not run" not in r.reason, r.reason
    assert tr.T == sum((Q(s["duration"]) for s in tr.certificate["witness"]["segments"]), Q(0))
    # the same facts as data (the producer reads them there, not from the prose): entry at the last
    # segment and time T, with the checker's upper bound on W there below c
    f = r.facts
    assert f["entry_segment"] == K - 1 and Q(f["entry_time"]) == tr.T
    assert Q(f["c"]) == Q(tr.certificate["witness"]["c"]) and 0 <= Q(f["W_upper"]) < Q(f["c"])
    assert r.to_dict()["facts"] == f
    assert "facts" not in verify_certificate(_tampered_doc(tr.certificate)).to_dict()


def _tampered_doc(cert):
    c = copy.deepcopy(cert)
    c["witness"]["c"] = str(Q(c["witness"]["c"]) * 4)
    return c


def test_a_segment_after_the_entry_is_not_run_and_a_checkpoint_before_it_is(made):
    # the shipped format allowed segments after the entry: they still verify, and are said not run
    def extend(c):
        segs = c["witness"]["segments"]
        segs.append({"duration": "1/8", "center": [["1000", "0"], ["0", "1000"]], "radius": "0"})
    r = _tampered(made[2].certificate, extend)
    assert r.valid and "1 later segment(s) are not run" in r.reason, r.reason

    def move_entry(c):
        seg = c["witness"]["segments"][-1]
        seg["center"][1][1] = str(Q(seg["center"][1][1]) - Q(1, 100))
    assert not _tampered(made[2].certificate, move_entry).valid


def test_the_producer_runs_the_checker_at_most_twice(made, monkeypatch):
    """One run of the checker's flow over the search grid, one on the certificate cut at the entry
    (was one per guessed T and flow: three on opposite_instance(3, 0, 2))."""
    import riccati_verify.certify.roa as roa_mod

    p, state, tr = made
    calls = []
    real = roa_mod.verify_certificate
    monkeypatch.setattr(roa_mod, "verify_certificate", lambda c: calls.append(1) or real(c))
    w = tr.certificate["witness"]
    center = tuple(tuple(Q(x) for x in r) for r in w["center"])
    again = trajectory_certificate(p, state, center, Q(w["radius"]), region=tr.region)
    assert again.certificate is not None and 1 <= len(calls) <= 2
    assert again.T == tr.T


def test_an_entry_after_the_float_time_is_found_by_the_extended_grid(made, monkeypatch):
    """With T0 where the float path still has W = 2c, the enclosure at T0 is outside the region:
    the second run adds segments up to 2·T0 and the certificate's entry is after T0."""
    import riccati_verify.certify.roa as roa_mod

    p, state, tr = made
    grids = []
    real = roa_mod._trajectory_attempt
    monkeypatch.setattr(roa_mod, "ENTRY_MARGIN", Q(1, 2))
    monkeypatch.setattr(roa_mod, "_trajectory_attempt", lambda *a: grids.append(len(a[7])) or real(*a))
    w = tr.certificate["witness"]
    center = tuple(tuple(Q(x) for x in r) for r in w["center"])
    late = trajectory_certificate(p, state, center, Q(w["radius"]), region=tr.region)
    assert late.certificate is not None, late.reason
    assert grids[0] == 4 and grids[1] == 4 + len(roa_mod.ENTRY_FACTORS), grids
    # the entry is after T0 (the end of the 4-segment grid), and the document is cut there
    assert 4 < len(late.certificate["witness"]["segments"]) <= grids[1]
    assert verify_certificate(late.certificate).valid


# ---- the frame (witness "frame"): the flow runs for T⁻¹ΣT⁻ᵀ, a change of coordinates only

def _center(w):
    return tuple(tuple(Q(x) for x in r) for r in w["center"])


def test_the_producer_proposes_a_frame_and_the_checker_maps_back(made):
    w = made[2].certificate["witness"]
    assert "frame" in w and len(w["frame"]) == 2
    T = exact.as_matrix(w["frame"])
    assert T != exact.identity(2) and exact.rank(T) == 2
    assert verify_certificate(made[2].certificate).valid


def test_framed_and_unframed_certificates_agree(made):
    p, state, tr = made
    w = tr.certificate["witness"]
    plain = trajectory_certificate(p, state, _center(w), Q(w["radius"]), region=tr.region, frame=None)
    assert plain.certificate is not None and "frame" not in plain.certificate["witness"], plain.reason
    assert verify_certificate(plain.certificate).valid
    assert plain.T == tr.T and plain.certificate["claim"] == tr.certificate["claim"]
    # the checkpoints are the same matrices in the two coordinates: Σ_k ≈ T Σ̃_k Tᵀ (float proposals, 1e-5 boxes)
    T = np.array(exact.as_matrix(w["frame"]), dtype=float)
    for sf, su in zip(w["segments"], plain.certificate["witness"]["segments"]):
        St = np.array(exact.as_matrix(sf["center"]), dtype=float)
        Su = np.array(exact.as_matrix(su["center"]), dtype=float)
        assert np.allclose(T @ St @ T.T, Su, rtol=1e-6, atol=1e-8)


def test_a_tampered_frame_is_rejected(made):
    cert = made[2].certificate

    def moved_column(c):
        F = c["witness"]["frame"]
        F[0][0] = str(Q(F[0][0]) + Q(1, 16))
    r = _tampered(cert, moved_column)
    assert not r.valid and "checkpoint" in r.reason, r.reason
    # without its frame the checkpoints (in frame coordinates) are not the unframed flow's
    r = _tampered(cert, lambda c: c["witness"].pop("frame"))
    assert not r.valid and "checkpoint" in r.reason, r.reason
    r = _tampered(cert, lambda c: c["witness"].update(frame=[["1", "2"], ["2", "4"]]))
    assert not r.valid and "invertible" in r.reason, r.reason
    for bad in ([["1", "0"]], [["1", "0"], ["0"]], "I", [["1", "x"], ["0", "1"]], [[0.5, 0], [0, 1]],
                [["1", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]], [["1" * 5000, "0"], ["0", "1"]]):
        r = _tampered(cert, lambda c: c["witness"].update(frame=bad))
        assert not r.valid and "frame" in r.reason, (bad, r.reason)


def test_a_frame_cannot_make_a_wrong_sigma0_converge(made):
    """Σ0 = 0 is itself an equilibrium (Σ ≡ 0), so 'Σ(t) → Σ*' is false from it.  A framed
    certificate whose checkpoints follow that trajectory exactly (0 in every frame) passes every
    checkpoint and is still refused: the enclosure mapped back is never in {W < c}."""
    p, state, tr = made
    w = copy.deepcopy(tr.certificate["witness"])
    for s in w["segments"]:
        s["center"] = [["0", "0"], ["0", "0"]]
        s["radius"] = "1/1000000"
    zero = Gaussian(state.mean, exact.zeros(2))
    r = verify_certificate(make_certificate("trajectory_convergence", tr.certificate["claim"], p, zero, w, "x"))
    assert not r.valid and "not certified inside the region" in r.reason, r.reason
    # and the producer's own framed document with another Σ0 fails its checkpoints
    other = Gaussian(state.mean, exact.identity(2, 3))
    r = verify_certificate(make_certificate("trajectory_convergence", tr.certificate["claim"], p, other,
                                            tr.certificate["witness"], "x"))
    assert not r.valid, r.reason


def test_a_different_frame_with_its_own_checkpoints_gives_the_same_verdict(made):
    p, state, tr = made
    w = tr.certificate["witness"]
    from riccati_verify.certify.roa import propose_frame
    for kind in ("eig", "chol", "veig"):
        T = propose_frame(p, _center(w), kind)
        if T is None:
            continue
        other = trajectory_certificate(p, state, _center(w), Q(w["radius"]), region=tr.region, frame=kind)
        assert other.certificate is not None and other.T == tr.T, (kind, other.reason)
        assert exact.as_matrix(other.certificate["witness"]["frame"]) == T


def test_a_refused_framed_attempt_falls_back_to_the_unframed_flow(made, monkeypatch):
    import riccati_verify.certify.roa as roa_mod

    p, state, tr = made
    seen = []
    real = roa_mod._trajectory_attempt

    def spoiled(*a):
        cert, res = real(*a)
        seen.append(a[9] is not None)
        if a[9] is not None:     # the checker's verdict on a framed document: refused
            return cert, type(res)(False, "spoiled framed attempt")
        return cert, res
    monkeypatch.setattr(roa_mod, "_trajectory_attempt", spoiled)
    w = tr.certificate["witness"]
    out = trajectory_certificate(p, state, _center(w), Q(w["radius"]), region=tr.region)
    assert out.certificate is not None and "frame" not in out.certificate["witness"], out.reason
    assert seen[:len(roa_mod.FRAME_FLOWS)] == [True] * len(roa_mod.FRAME_FLOWS) and seen[-1] is False, seen
    assert verify_certificate(out.certificate).valid


def test_a_frame_that_shrinks_the_state_cannot_fake_a_collapse():
    # Σ̇ = −2Σ + 2Σ² (d = 1): Σ0 = 1/2 collapses (certified), Σ0 = 1 is the equilibrium Σ* = 1 and
    # stays there.  In the frame T = 1000, Σ̃ = Σ/10⁶ sits at 10⁻⁶, deep inside the region of 0 in
    # its own numbers; only the map back Σ = TΣ̃Tᵀ = 1 (W = 1/4 > c) shows the claim is false
    p = Params(((Q(-1),),), ((Q(1),),), ((Q(1),),), (Q(0),))
    good = trajectory_certificate(p, Gaussian((Q(0),), ((Q(1, 2),),)), ((Q(0),),), Q(0)).certificate
    assert verify_certificate(good).valid
    bad = copy.deepcopy(good)
    bad["params"]["cov"] = [["1"]]
    bad["witness"]["frame"] = [["1000"]]
    bad["witness"]["segments"] = [{"duration": "1/8", "center": [["1/1000000"]], "radius": "1/1000000000"}]
    res = verify_certificate(bad)
    assert not res.valid and "not certified inside the region" in res.reason


def test_from_deep_min_n_on_the_deep_flow_comes_first_and_its_certificate_verifies(made, monkeypatch):
    import riccati_verify.certify.roa as roa_mod

    p, state, tr = made
    w = tr.certificate["witness"]
    flows = []
    real = roa_mod._trajectory_attempt

    def spy(*a):
        flows.append(a[8])
        return real(*a)
    monkeypatch.setattr(roa_mod, "_trajectory_attempt", spy)
    # below the threshold (n = 3 here) the cheap flows only
    trajectory_certificate(p, state, _center(w), Q(w["radius"]), region=tr.region)
    assert roa_mod.DEEP_FLOW not in flows, flows
    flows.clear()
    monkeypatch.setattr(roa_mod, "DEEP_MIN_N", 3)
    out = trajectory_certificate(p, state, _center(w), Q(w["radius"]), region=tr.region)
    assert flows[0] == roa_mod.DEEP_FLOW, flows
    assert out.certificate is not None and out.certificate["witness"]["flow"] == roa_mod.DEEP_FLOW, out.reason
    assert verify_certificate(out.certificate).valid
    # the deep document with another Σ0 fails its checkpoints: its flow is the checker's own run
    other = Gaussian(state.mean, exact.identity(2, 3))
    bad = make_certificate("trajectory_convergence", out.certificate["claim"], p, other, out.certificate["witness"], "x")
    assert not verify_certificate(bad).valid
    # and a caller's own flows are never overridden
    flows.clear()
    trajectory_certificate(p, state, _center(w), Q(w["radius"]), region=tr.region, flows=(roa_mod.FLOWS[1],))
    assert roa_mod.DEEP_FLOW not in flows, flows


def test_the_lyapunov_metric_flow_verifies_and_bad_metrics_are_refused(made):
    """flow "metric": "lyapunov" (the QR in X's inner product) changes the checker's work only: the
    same checkpoints verify, a wrong Σ0 still fails them, and any other value is refused."""
    _check_work_key(made, "metric", "lyapunov", ("lyap", "", 1, ["lyapunov"]), (-1, 33, "1", 1.0, True, None))


def _check_work_key(made, key, good, bads, bad_from, base_flow=None):
    """A flow key that changes the checker's work only (and its `key`_from segment index): with the
    value good the same checkpoints verify (from any segment k on), a wrong Σ0 still fails them, and
    the values bads, the taylor method, the indices bad_from and a `key`_from without the key are
    refused with a reason naming them.  base_flow: flow keys set first, in every document tried."""
    p, state, tr = made
    base = copy.deepcopy(tr.certificate)
    base["witness"]["flow"].update(base_flow or {})
    cert = copy.deepcopy(base)
    cert["witness"]["flow"][key] = good
    r = verify_certificate(cert)
    assert r.valid, r.reason
    other = Gaussian(state.mean, exact.identity(2, 3))
    bad = make_certificate("trajectory_convergence", cert["claim"], p, other, cert["witness"], "x")
    assert not verify_certificate(bad).valid
    for value in bads:
        r = _tampered(cert, lambda c: c["witness"]["flow"].update({key: value}))
        assert not r.valid and key in r.reason, (value, r.reason)
    r = _tampered(cert, lambda c: c["witness"]["flow"].update(method="taylor", jac_order=None))
    assert not r.valid
    for k in (1, 32):
        r = _tampered(cert, lambda c: c["witness"]["flow"].update({key + "_from": k}))
        assert r.valid, (k, r.reason)
    for k in bad_from:
        r = _tampered(cert, lambda c: c["witness"]["flow"].update({key + "_from": k}))
        assert not r.valid and key + "_from" in r.reason, (k, r.reason)
    r = _tampered(base, lambda c: c["witness"]["flow"].update({key + "_from": 1}))   # without the key
    assert not r.valid and key + "_from" in r.reason, r.reason


def test_the_flow_metric_is_x_in_the_frame_coordinates():
    """x̃ᵀ(PᵀXP)x̃ = hᵀXh for h the upper triangle of TΣ̃Tᵀ (exact rationals on the right)."""
    import flint
    from riccati_verify.checker.check_trajectory_convergence import _flow_metric
    from riccati_verify.core import balls
    d = 3
    pairs = exact.sym_pairs(d)
    n = len(pairs)
    T = ((Q(2), Q(1, 3), Q(0)), (Q(-1), Q(1), Q(1, 2)), (Q(1, 4), Q(0), Q(3)))
    X = tuple(tuple(Q(int(i == j) * 5 + (i * j) % 3, 1 + (i + j) % 2) for j in range(n)) for i in range(n))
    X = tuple(tuple((X[i][j] + X[j][i]) / 2 for j in range(n)) for i in range(n))
    St = ((Q(1), Q(1, 2), Q(-1, 3)), (Q(1, 2), Q(2), Q(1, 5)), (Q(-1, 3), Q(1, 5), Q(3)))
    S = exact.matmul(exact.matmul(T, St), exact.transpose(T))
    h = [S[i][j] for i, j in pairs]
    xt = [St[i][j] for i, j in pairs]
    want = sum(h[a] * X[a][b] * h[b] for a in range(n) for b in range(n))
    with flint.ctx.workprec(128):
        G = _flow_metric(balls.arb_matrix(X), balls.arb_matrix(T), d)
        got = sum((balls.arb_of(xt[a]) * G[a, b] * balls.arb_of(xt[b]) for a in range(n) for b in range(n)), flint.arb(0))
    # 64-bit balls from balls: they contain the exact value, and are tight (2^-64 relative per operation)
    with flint.ctx.workprec(256):
        assert got.contains(balls.arb_of(want)), (got, want)
    assert float(got.rad()) < 1e-12 * abs(float(want))
    # without a frame the metric is X itself
    with flint.ctx.workprec(128):
        Xa = balls.arb_matrix(X)
        assert _flow_metric(Xa, None, d) == Xa


def test_the_local_frame_flow_verifies_and_bad_values_are_refused(made):
    """flow "local_frame": true (`_lohner` point 6) changes the checker's work only, from any segment
    on (local_frame_from); a non-boolean value, the taylor method or a local_frame_from without
    local_frame is refused."""
    # the frame is point 6 of the high-order box (the producer's flows take the defect remainder)
    _check_work_key(made, "local_frame", True, (1, "true", None, [True]), (-1, 33, "1", 1.0, True),
                    base_flow={"box": "high_order"})


def test_the_defect_flow_verifies_and_bad_boxes_are_refused(made):
    """flow "box": "defect" (`_lohner` point 8) changes the checker's work only: the same checkpoints
    verify, a wrong Σ0 still fails them; an unknown box, a box with the taylor method, and "defect" with
    the local frame (point 6 needs the a-priori box) are refused with a reason naming the box."""
    p, state, tr = made
    cert = copy.deepcopy(tr.certificate)
    cert["witness"]["flow"]["box"] = "defect"
    r = verify_certificate(cert)
    assert r.valid, r.reason
    other = Gaussian(state.mean, exact.identity(2, 3))
    bad = make_certificate("trajectory_convergence", cert["claim"], p, other, cert["witness"], "x")
    assert not verify_certificate(bad).valid
    for change in ({"box": "picard"}, {"box": "defects"}, {"box": None}, {"box": ["defect"]},
                   {"local_frame": True}, {"method": "taylor", "jac_order": None}):
        r = _tampered(cert, lambda c: c["witness"]["flow"].update(change))
        assert not r.valid and "box" in r.reason, (change, r.reason)


def test_an_unknown_flow_key_is_refused(made):
    """witness["flow"] takes only FLOW_KEYS: a key the checker does not read is refused, not ignored
    (a producer that misspells a work key would otherwise get another flow than it asked for)."""
    from riccati_verify.checker.check_trajectory_convergence import FLOW_KEYS

    _, _, tr = made
    assert verify_certificate(tr.certificate).valid
    assert set(tr.certificate["witness"]["flow"]) <= FLOW_KEYS
    for key in ("local-frame", "metrics", "max_steps"):
        r = _tampered(tr.certificate, lambda c: c["witness"]["flow"].update({key: 1}))
        assert not r.valid and "unknown keys" in r.reason and key in r.reason, (key, r.reason)


def test_the_checker_reports_its_progress_per_segment_and_per_step(made, progress_events):
    """The d = 8 check runs for minutes: each segment is a unit of progress and each accepted step a
    note with the time reached (shown only through an installed renderer)."""
    seen = progress_events
    _, _, tr = made
    r = verify_certificate(tr.certificate)
    assert r.valid, r.reason
    segs = tr.certificate["witness"]["segments"]
    run = r.facts["entry_segment"] + 1
    assert seen[0] == ("open", len(segs), "flow to the ROA")
    units = [e for e in seen if e[0] == "update" and e[1] == 1]
    notes = [e[2] for e in seen if e[0] == "update" and e[1] == 0]
    assert len(units) == run and units[-1][2].startswith(f"segment {run} to t = ")
    assert notes and all(n.startswith("seg ") and " t=" in n and n.endswith(" steps") for n in notes)
    assert seen[-1] == ("close",)


def test_an_equilibrium_limit_must_exclude_zero():
    """Review of session 16: a ball {0} with limit "equilibrium" was accepted, so a collapse passed as
    convergence to an equilibrium (d = 1, A = −1, B = V = 1, Σ0 = 1/2 collapses to 0)."""
    import json
    from pathlib import Path

    doc = json.loads((Path(__file__).parent / "data" / "certificates" / "trajectory_convergence.json").read_text())
    doc["params"] = {"A": [["-1"]], "B": [["1"]], "V": [["1"]], "b": ["0"], "mean": ["0"], "cov": [["1/2"]]}
    doc["witness"] = {"center": [["0"]], "radius": "0", "X": [["1"]], "mu": "1", "eta": "2", "norm_V": "1",
                      "norm_B": "1", "c": "1/128", "segments": [{"duration": "2", "center": [["0"]], "radius": "1"}],
                      "flow": {"method": "taylor", "order": 20, "prec": 128, "tol_bits": 50}}
    doc["claim"] = {"kind": "trajectory_convergence", "limit": "zero"}
    assert verify_certificate(doc).valid                       # the collapse itself is proved
    doc["claim"] = {"kind": "trajectory_convergence", "limit": "equilibrium", "positive_definite": False}
    res = verify_certificate(doc)
    assert not res.valid and "contains 0" in res.reason


@pytest.mark.parametrize("spelling", ["{p}_0/{q}0", " {p}/{q}", "+{p}/{q}", "{p}/{q}\n", "\u0661/1"])
def test_rationals_are_read_strictly(made, spelling):
    """Review s19: the witness's rationals went through int(), which also takes underscores, spaces, a
    sign '+' and non-ASCII digits; a writer emits 'p' or 'p/q' only.  Every spelling here denotes a
    number int() reads (the first the same value), and each is now malformed."""
    def respell(c):
        x = Q(c["witness"]["c"])
        c["witness"]["c"] = spelling.format(p=x.numerator, q=x.denominator)
    r = _tampered(made[2].certificate, respell)
    assert not r.valid and "not an exact rational" in r.reason


def test_a_row_of_X_given_as_text_is_malformed(made):
    def textual(c):
        c["witness"]["X"] = ["".join(str(Q(x)) for x in row) for row in c["witness"]["X"]]
    r = _tampered(made[2].certificate, textual)
    assert not r.valid and "expected a" in r.reason and "matrix" in r.reason


def test_the_witness_rational_reader_bounds_integers_and_refuses_a_zero_denominator():
    from riccati_verify.checker.check_equilibrium import parse_rational

    assert parse_rational(10 ** 3999, "c") == 10 ** 3999 and parse_rational("-3/4", "c") == flint_q(-3, 4)
    with pytest.raises(ValueError, match="integer too long"):
        parse_rational(10 ** 4200, "c", max_chars=4000)       # a dict, not JSON, has no cap on integers
    for bad in ("1/0", "1/00", "1/-2", "--1"):
        with pytest.raises(ValueError, match="not an exact rational"):
            parse_rational(bad, "c")


def flint_q(p, q):
    import flint

    return flint.fmpq(p, q)
