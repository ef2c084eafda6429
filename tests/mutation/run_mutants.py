#!/usr/bin/env python3
"""Mutation check: every deliberate bug below must be caught by the test suite.

For each mutant, the package (riccati_verify/, proofs/, tests/, pyproject.toml)
is copied to a temporary directory, ONE source edit is applied to the copy
(never to the working tree), and the mutant's test selection runs there under
the `riccati-ci-mutation` hypothesis profile (the `riccati-ci` profile's examples, without
shrinking the counterexample: a test fails under one iff it fails under the
other), with the copy first on PYTHONPATH.  The mutant is
*killed* when pytest reports failing tests (exit status 1); it *survives* when
the tests pass.  Before the mutants, the same selections run on an unmutated
copy and must pass, so a kill means the mutation was detected, not that the
suite was already red.

Exit status: 0 every mutant killed; 1 a mutant survived, the baseline failed,
or a mutation no longer applies (its source text changed: update this list);
2 bad usage.

    python tests/mutation/run_mutants.py [--only NAME ...] [--list] [--keep]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COPY = ("riccati_verify", "proofs", "tests", "pyproject.toml", "examples")


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str           # file inside the repository
    old: str            # exact source text, must occur exactly once
    new: str
    tests: tuple[str, ...]   # pytest node ids / files (run with -x).  The owners' own test files
    # (test_flow.py, test_equilibria.py, test_blowup.py) take minutes each on the 2-core CI machine,
    # so the selections are the property suites of riccati_verify.testing, which target these bugs.
    why: str


SUITE = "tests/test_testing.py"
MUTANTS = [
    Mutant("moment-ode-sign-flip", "riccati_verify/numeric/flow.py",
           "    J = A + VS @ B\n", "    J = A - VS @ B\n",
           (f"{SUITE}::test_moment_ode_holds_for_the_project_rhs",),
           "sign flip of the attention term VΣB in the moment ODE (moment_rhs)"),
    Mutant("moment-ode-transposed-B", "riccati_verify/numeric/flow.py",
           "    J = A + VS @ B\n", "    J = A + VS @ B.T\n",
           (f"{SUITE}::test_moment_ode_holds_for_the_project_rhs",),
           "B transposed in moment_rhs (the other kernel convention, silently)"),
    Mutant("moment-ode-mean-drops-Vm", "riccati_verify/numeric/flow.py",
           "    return J @ m + V @ m + b, JS + JS.T\n", "    return J @ m + b, JS + JS.T\n",
           (f"{SUITE}::test_moment_ode_holds_for_the_project_rhs",),
           "the V m term of the mean equation dropped"),
    Mutant("linearisation-dropped-term-np", "riccati_verify/certify/equilibria.py",
           "    return pair_operator_np([(J, np.eye(d)), (V, W)], d)\n",
           "    return pair_operator_np([(J, np.eye(d))], d)\n",
           (f"{SUITE}::test_linearisation_matches_exact_central_difference",),
           "DF(Σ*) (floats) without the VHBΣ* + Σ*BᵀHVᵀ terms"),
    Mutant("linearisation-dropped-term-exact", "riccati_verify/certify/equilibria.py",
           "    J = A + V * Sq * B\n", "    J = A\n",
           (f"{SUITE}::test_linearisation_matches_exact_central_difference",),
           "DF(Σ*) (exact) without the VΣ*BH + HBᵀΣ*Vᵀ terms"),
    Mutant("radon-off-by-one", "riccati_verify/certify/blowup/radon.py",
           "tuple(-2 * v * Bs[i][j] for j in range(d))", "tuple(-1 * v * Bs[i][j] for j in range(d))",
           (f"{SUITE}::test_radon_linearisation_matches_moment_flow",),
           "coupling 2v B_s of Radon's Hamiltonian off by one (v B_s)"),
    Mutant("radon-sign", "riccati_verify/certify/blowup/radon.py",
           "tuple(-A[j][i] for j in range(d))", "tuple(A[j][i] for j in range(d))",
           (f"{SUITE}::test_radon_linearisation_matches_moment_flow",),
           "sign error in the −Aᵀ block of Radon's Hamiltonian"),
    Mutant("validated-flow-drops-remainder", "riccati_verify/checker/_validated_flow.py",
           "                return _horner(ms[:K], hb) + Rm, _horner(Ss[:K], hb) + RS, h\n",
           "                return _horner(ms[:K], hb), _horner(Ss[:K], hb), h\n",
           ("tests/test_validated_flow.py::test_low_order_loose_tolerance_still_encloses",),
           "the Taylor remainder x_K(E)·h^K left out of the certificate checker's step enclosure"),
    Mutant("validated-flow-remainder-at-start", "riccati_verify/checker/_validated_flow.py",
           "        E = _picard_box(m, S, F, H, h)\n",
           "        E = (m, S)\n",
           ("tests/test_validated_flow.py::test_low_order_loose_tolerance_still_encloses",),
           "the remainder coefficient evaluated at the step's start instead of on the a-priori box"),
    Mutant("validated-flow-skips-picard", "riccati_verify/checker/_validated_flow.py",
           "        if _contains(Em, Nm) and _contains(ES, NS):\n",
           "        if True:\n",
           ("tests/test_validated_flow.py::test_no_a_priori_box_is_claimed_across_a_blowup",),
           "the a-priori box E accepted without the Picard containment test"),
    Mutant("lohner-drops-centre-error", "riccati_verify/checker/_lohner.py",
           "        r = QiM * r + Qi * (y - xn)\n",
           "        r = QiM * r\n",
           ("tests/test_lohner.py::test_bernoulli_closed_form_is_enclosed_and_tight",),
           "Lohner's re-representation drops Q⁻¹(y − x̂): the Taylor remainder and the centre's rounding"),
    Mutant("blowup-general-skips-contraction", "riccati_verify/checker/check_blowup_general.py",
           "        if not balls.proves_positive_definite(Nm):\n",
           "        if False:\n",
           ("tests/test_blowup_general.py::test_tampered_certificate_is_rejected",),
           "the ellipsoid at infinity is never proved forward invariant (a too-large beta passes)"),
    Mutant("blowup-general-one-sided-rate", "riccati_verify/checker/check_blowup_general.py",
           "    T = balls.arb_of(t1) + w1 / lam\n",
           "    T = balls.arb_of(t1) + w1 / lam.upper()\n",
           ("tests/test_blowup_general.py::test_tampered_certificate_is_rejected",),
           "the upper end of T* uses the largest rate instead of the smallest (a bracket too narrow passes)"),
    Mutant("stage1-speculation-skips-containment", "riccati_verify/checker/_stage1.py",
           "    if not s <= 1:\n",
           "    if False:\n",
           ("tests/test_stage1_speculative.py::test_a_box_that_does_not_contain_the_chain_is_refused",),
           "the second process's enclosure counts without its start box containing the chain's enclosure"),
    Mutant("stage1-speculation-drops-start-set", "riccati_verify/checker/_stage1.py",
           "    x = xc + C * (r0 * balls.arb_of(s).upper() + r)\n",
           "    x = xc + C * r\n",
           ("tests/test_stage1_speculative.py::test_a_box_that_contains_the_chain_lets_the_second_half_count_scaled_to_it",),
           "the second process's answer forgets the part of the set that comes from its start box"),
    Mutant("unreachable-rank-takes-a-bool-for-an-int", "riccati_verify/checker/check_unreachable_rank.py",
           "    if any(not isinstance(c, int) or isinstance(c, bool) for c in (c0, c1)):\n",
           "    if False:\n",
           ("tests/test_hygiene.py::test_unreachable_rank_refuses_a_rank_that_is_no_integer",),
           "a rank given as JSON true or 1.0 counts as the integer rank 1"),
    Mutant("all-equilibria-counts-a-zero-beyond-the-region", "riccati_verify/checker/check_all_equilibria.py",
           "        if status in (\"pd\", \"psd\") and not diagonal_within(boxes[k][1], R, d):\n",
           "        if False:\n",
           ("tests/test_all_equilibria.py::test_a_zero_beyond_the_region_is_not_counted",),
           "a pd ball outside max diag <= R is counted among the region's equilibria"),
    Mutant("trajectory-equilibrium-ball-may-hold-zero", "riccati_verify/checker/check_trajectory_convergence.py",
           "    if limit == \"equilibrium\" and not any(abs(x) > radius for r in center for x in r):\n",
           "    if False:\n",
           ("tests/test_trajectory_convergence.py::test_an_equilibrium_limit_must_exclude_zero",),
           "a collapse to 0 passes as convergence to the equilibrium {0}"),
    Mutant("family-riccati-p-star-reads-v-off-any-matrix", "riccati_verify/checker/check_family_riccati.py",
           "    v = ball(scalar_v_interval(box))      # P = Σ⁻¹ solves the Lyapunov form only for V = vI\n",
           "    v = ball(box.V[0][0])\n",
           ("tests/test_family.py::test_the_p_star_routes_refuse_a_matrix_v",),
           "the P* routes take v = V[0][0] of a matrix V"),
    Mutant("lohner-defect-drops-leading-term", "riccati_verify/checker/_lohner.py",
           "        I_s = (a[K + 1] * hb ** (K + 1) + q * hb * pair / (K + 2)).upper()\n",
           "        I_s = (q * hb * pair / (K + 2)).upper()\n",
           ("tests/test_lohner_defect.py",),
           "point 8's defect integral without its order-K coefficient (K+1)x_{K+1}: the centre's remainder is missed"),
    Mutant("lohner-defect-jacobian-drops-leading-term", "riccati_verify/checker/_lohner.py",
           "            rho = (emu * (phi[p + 1] + hb * tail / (p + 2) + spread * psi)).upper()\n",
           "            rho = (emu * (hb * tail / (p + 2) + spread * psi)).upper()\n",
           ("tests/test_lohner_defect.py",),
           "point 8's Jacobian remainder without the defect's order-p coefficient (p+1)Φ_{p+1}"),
    Mutant("lohner-split-start-set-not-propagated", "riccati_verify/checker/_lohner.py",
           "            r0 = QiM * r0            # 0-centred balls stay 0-centred: point 7\n",
           "            pass\n",
           ("tests/test_lohner.py::test_a_split_start_set_is_carried_and_scales",),
           "the split start set r0 of point 7 is not carried through the steps (its image is lost)"),
    Mutant("lohner-framed-box-drops-split-start-set", "riccati_verify/checker/_lohner.py",
           "                    ys_X = _frame_coefficients(var, fr, _hull_point(fr.Pi * (C * whole()), arb_mat(n, 1)),\n",
           "                    ys_X = _frame_coefficients(var, fr, fr.Pi * (C * r),\n",
           ("tests/test_lohner_review.py::test_a_framed_step_encloses_the_whole_split_start_set",),
           "a framed step's a-priori box starts from Pi·(C·r) only: the split start set r0 is left out"),
    Mutant("blowup-continuum-skips-scalar-check", "riccati_verify/checker/_continuum_tail.py",
           "        if any(V[i][j] != (V[0][0] if i == j else 0) for i in range(d) for j in range(d)):\n",
           "        if False:\n",
           ("tests/test_blowup_continuum.py::test_non_scalar_v_is_rejected",),
           "the continuum tail uses G(p, 0) = 0 for a V that is not scalar"),
    Mutant("blowup-continuum-no-drift", "riccati_verify/checker/_continuum_tail.py",
           "            reach = abs(p1[j] - balls.arb_of(self.p_hat[j])) + self.drift_per_rho[j] * rho1\n",
           "            reach = abs(p1[j] - balls.arb_of(self.p_hat[j]))\n",
           ("tests/test_blowup_continuum.py::test_scaled_tail_entry_is_rejected",),
           "the direction box is tested at entry only, not against the drift along the continuum"),
    Mutant("blowup-continuum-skips-contraction", "riccati_verify/checker/_continuum_tail.py",
           "        if not balls.proves_positive_definite(-(K + K.transpose()) - self.P * (2 * betab)):\n",
           "        if False:\n",
           ("tests/test_blowup_continuum.py::test_scaled_tail_entry_is_rejected",),
           "the transverse contraction at rate β is never proved (a β above g passes)"),
    Mutant("lohner-run-drops-second-derivative-bound", "riccati_verify/checker/_lohner.py",
           "    T2 = var.second_row_sums() if F.quadratic else arb_mat(co.n, co.n)\n",
           "    T2 = arb_mat(co.n, co.n)\n",
           ("tests/test_lohner_review.py::test_run_passes_the_second_derivative_bound_of_a_quadratic_field",),
           "point 3's majorant gets T = 0 in _run: the g_j (j >= 1) of a quadratic field vanish, ρ too small"),
    Mutant("blowup-continuum-jacobian-at-y0", "riccati_verify/checker/_continuum_tail.py",
           "        y = [arb(0, 1) * h for h in self.yhalf]\n",
           "        y = [arb(0) for h in self.yhalf]\n",
           ("tests/test_continuum_review.py::test_a_much_wider_tail_box_is_rejected",),
           "the Jacobian blocks and g are evaluated on the stratum y = 0 only, not on Z's y-box"),
    Mutant("blowup-continuum-jacobian-at-p-centre", "riccati_verify/checker/_continuum_tail.py",
           "        p = [balls.arb_of(c) + arb(0, 1) * balls.arb_of(r) for c, r in zip(self.p_hat, self.r_p)]\n",
           "        p = [balls.arb_of(c) for c, r in zip(self.p_hat, self.r_p)]\n",
           ("tests/test_continuum_review.py::test_a_much_wider_tail_box_is_rejected",),
           "the Jacobian blocks, g and the rate are evaluated at p̂ only, not on Z's p-box"),
    Mutant("blowup-continuum-entry-at-midpoint", "riccati_verify/checker/_continuum_tail.py",
           "        c1 = S1[0, 0]\n",
           "        S1 = S1.mid()\n        c1 = S1[0, 0]\n",
           ("tests/test_continuum_review.py::test_entry_reads_the_whole_stage1_enclosure",),
           "the entry test reads the midpoint of the stage-1 enclosure, not all of it"),
    Mutant("family-scalar-skips-diagonal-check", "riccati_verify/checker/check_family_scalar.py",
           "    if d > 1 and not all(_off_diagonal_zero(M) for M in (box.A, box.B, box.V, box.cov)):\n",
           "    if False:\n",
           ("tests/test_family.py::test_diagonal_blowup_bracket_contains_integrated_times_and_tampering_is_rejected",),
           "a box with off-diagonal entries is read as decoupled scalar equations"),
    Mutant("family-scalar-lower-from-sure-coordinates", "riccati_verify/checker/check_family_scalar.py",
           "        fastest = [T(a[1], k[1]) for a, _, k in ranges if k[1] > 0 and a[1] + k[1] > 0]\n",
           "        fastest = [T(a[1], k[1]) for (a, _, k), r in zip(ranges, per) if r == \"blowup\"]\n",
           ("tests/test_family.py::test_diagonal_blowup_bracket_contains_integrated_times_and_tampering_is_rejected",),
           "the lower end of T* ignores coordinates that blow up for some members only (earlier blow-ups pass)"),
    Mutant("family-growth-accepts-negative-Y", "riccati_verify/checker/_family.py",
           "    if exact.is_psd(exact.scale(-1, Y)):\n",
           "    if False:\n",
           ("tests/test_family.py::test_growth_of_a_linear_flow_and_tampering",),
           "a growth claim with Y <= 0 (which proves A Hurwitz, i.e. collapse) is accepted"),
    Mutant("family-stability-cells-not-counted", "riccati_verify/checker/check_family_stability.py",
           "    if not isinstance(cells, list) or len(cells) != len(pieces):\n",
           "    if not isinstance(cells, list):\n",
           ("tests/test_family.py::test_subdivided_robust_stability_covers_the_box_and_tampering_is_rejected",),
           "a subdivided witness with a missing cell covers only part of the box"),
    Mutant("lohner-hoe-drops-jacobian-remainder", "riccati_verify/checker/_lohner.py",
           "    rho = min(rho, r3)\n",
           "    rho = arb(0)\n",
           ("tests/test_lohner.py::test_high_order_box_one_step_jacobian_contains_the_closed_form_derivative",),
           "high-order box: the Jacobian remainder ω p*/(1 − ω) of point 3' dropped (Jh the polynomial alone)"),
    Mutant("lohner-hoe-drops-point-3-remainder", "riccati_verify/checker/_lohner.py",
           "        return _accept(co, ms, Ss, Rm, RS, Pj, hb, K, Kj, rem, tol, rho, jac_grow=False, jac=jac) + (Kj,)\n",
           "        return _accept(co, ms, Ss, Rm, RS, Pj, hb, K, Kj, rem, tol, arb(0), jac_grow=False, jac=jac) + (Kj,)\n",
           ("tests/test_lohner.py::test_high_order_box_one_step_jacobian_contains_the_closed_form_derivative",),
           "high-order box: point 3's majorant on the box, when it meets the tolerance, dropped (Jh the "
           "polynomial alone)"),
    Mutant("lohner-hoe-low-order-drops-remainder", "riccati_verify/checker/_lohner.py",
           "        step = _accept(co, ms, Ss, Rm, RS, Pj, hb, K, k, rem, tol, rho, jac_grow=False,\n",
           "        step = _accept(co, ms, Ss, Rm, RS, Pj, hb, K, k, rem, tol, arb(0), jac_grow=False,\n",
           ("tests/test_lohner.py::test_high_order_box_step_at_a_lower_jacobian_order_contains_the_closed_form_derivative",),
           "high-order box at a Jacobian order below jac_order: the remainder ρ dropped (Jh the polynomial alone)"),
    Mutant("lohner-hoe-low-order-remainder-of-the-top-order", "riccati_verify/checker/_lohner.py",
           "                low_k = k, rhos[k], True\n",
           "                low_k = k, rhos[Kj], True\n",
           ("tests/test_lohner.py::test_high_order_box_step_at_a_lower_jacobian_order_contains_the_closed_form_derivative",),
           "high-order box at a lower Jacobian order k: point 3's ρ of the order jac_order (far smaller) "
           "paired with the polynomial of order k"),
    Mutant("lohner-hoe-low-order-drops-point-3p", "riccati_verify/checker/_lohner.py",
           "                r3p = min(rhos[k], r3)\n",
           "                r3p = arb(0)\n",
           ("tests/test_lohner.py::test_high_order_box_step_at_a_lower_jacobian_order_contains_the_closed_form_derivative",),
           "high-order box at a lower Jacobian order: the ω p*/(1 − ω) of point 3' replaced by 0"),
    Mutant("lohner-hoe-skips-box-test", "riccati_verify/checker/_lohner.py",
           "        if _strictly_inside(ES, YS) and (not mean or _strictly_inside(Em, Ym)):\n",
           "        if True:\n",
           ("tests/test_lohner.py::test_high_order_step_is_refused_without_the_a_priori_box",),
           "high-order box: the first candidate E accepted without Y ⊂ int E (point 1')"),
    Mutant("lohner-frame-skips-box-test", "riccati_verify/checker/_lohner.py",
           "        if _strictly_inside(Ey, Yy):\n",
           "        if True:\n",
           ("tests/test_lohner_frame.py::test_a_framed_step_is_refused_without_its_a_priori_box",),
           "local frame: the first candidate E_y accepted without Y_y ⊂ int E_y (points 1' and 6)"),
    Mutant("lohner-frame-drops-the-field-at-the-centre", "riccati_verify/checker/_lohner.py",
           "            v = v + fr.f0\n",
           "            v = v\n",
           ("tests/test_lohner_frame.py::test_frame_coefficients_contain_the_plain_coefficients_of_sampled_starts",),
           "local frame: the constant term P⁻¹f(x̂) of the framed recursion dropped (point 6)"),
    Mutant("lohner-hoe-box-boundary", "riccati_verify/checker/_lohner.py",
           "    return all(e.contains_interior(y) for e, y in zip(E.entries(), Y.entries()))\n",
           "    return all(e.contains(y) for e, y in zip(E.entries(), Y.entries()))\n",
           ("tests/test_lohner.py::test_the_a_priori_box_needs_the_interior",),
           "high-order box: Y on E's boundary accepted (the existence argument needs the interior)"),
    Mutant("all-equilibria-ball-not-in-widened-box", "riccati_verify/checker/check_all_equilibria.py",
           "                if not all(ci - ri <= a and b <= ci + ri for ci, ri, a, b in zip(c, rw, blo, bhi)):\n",
           "                if False:\n",
           ("tests/test_all_equilibria.py::test_tampered_covers_are_rejected",),
           "a zero leaf may name any listed ball: its zero need not be that ball's (a zero goes unlisted)"),
    Mutant("wellposed-riccati-comparison-halved", "riccati_verify/certify/training_wellposed.py",
           "    den = 1 - 2 * k * s0 * q\n", "    den = 1 - k * s0 * q\n",
           ("tests/test_training_wellposed.py::test_riccati_comparison_is_sharp_in_d1",),
           "the comparison Riccati bound S' = 2aS + 2kS² with k halved: no-blow-up claimed past the true blow-up"),
    Mutant("ntk-drops-a-sensitivity-term", "riccati_verify/certify/training_ntk.py",
           "                            PS1[q * d + i, e] += s * Sb[q, l]\n", "",
           ("tests/test_training_certificate.py::test_validated_ntk_encloses_the_d1_closed_form_and_refuses_bad_heads",),
           "the Σ(δK:Σ)ᵀ term of the covariance sensitivity dropped: the enclosure misses the true kernel"),
    Mutant("family-pstar-blowup-unchecked", "riccati_verify/checker/check_family_riccati.py",
           "    return lambda P: None if balls.proves_not_positive_semidefinite(balls.symmetrized(of(P))) else \\\n",
           "    return lambda P: None if True else \\\n",
           ("tests/test_family.py::test_p_star_routes_blowup_and_equilibrium_with_semidefinite_or_indefinite_vBs",
            "tests/test_family.py::test_initial_state_blowup_without_a_bracket_and_tampering"),
           "the P* routes' blow-up skips the negative direction (of P*, of P0 - P*): members that settle pass"),
    Mutant("routh-counts-sign-keeps", "riccati_verify/core/exact.py",
           "    plus = sum(1 for x, y in zip(firsts, firsts[1:]) if (x > 0) != (y > 0))\n",
           "    plus = sum(1 for x, y in zip(firsts, firsts[1:]) if (x > 0) == (y > 0))\n",
           ("tests/test_reliability.py::test_routh_inertia_on_known_spectra",),
           "Routh's count of eigenvalues with Re > 0 taken from sign keeps instead of sign changes"),
    Mutant("cover-budget-by-rank", "riccati_verify/checker/_reduced_riccati.py",
           "    budget = _Budget(balls.cover_unit(sys.d, prec))\n",
           "    budget = _Budget(balls.cover_unit(sys.r, prec))\n",
           ("tests/test_reliability.py::test_box_cover_unit_is_the_dimension_not_the_rank",),
           "the box-cover work unit from the covariance's rank (the exponential is of the 2d x 2d block)"),
    Mutant("roa-cubic-half-rho", "riccati_verify/checker/check_trajectory_convergence.py",
           "    if not _pd(N - R * (rho / 2)):\n", "    if not _pd(N - R * (rho / 4)):\n",
           ("tests/test_trajectory_convergence.py::test_cubic_larger_c_is_rejected_by_the_cubic_test",),
           "the checker's cubic region test with ρ/4 for ρ/2 (accepts a c up to 4 times the proved one)"),
    Mutant("roa-cubic-no-Sinv-term", "riccati_verify/certify/roa.py",
           "        R = R + Gk * Sinv * Gk\n", "        R = R\n",
           ("tests/test_roa.py::test_cubic_holds_rejects_a_too_large_rho_and_a_bad_S",),
           "the producer's cubic test without the Σ_k Ĝ_k S⁻¹ Ĝ_k term (only S is left)"),
    Mutant("frame-not-mapped-back", "riccati_verify/checker/check_trajectory_convergence.py",
           "            Sx = S if Tb is None else Tb * S * Tb.transpose()",
           "            Sx = S",
           ("tests/test_trajectory_convergence.py::test_a_frame_that_shrinks_the_state_cannot_fake_a_collapse",),
           "the checker tests W < c on the framed Σ̃ instead of Σ = TΣ̃Tᵀ (a frame could then fake entry)"),
]


# --- the turning tail of blowup_general (checker/_turning_tail.py and its dispatch; review h8) ------
_TT, _CB, _RV = ("riccati_verify/checker/_turning_tail.py", "riccati_verify/checker/check_blowup_general.py",
                 "tests/test_turning_review.py")
TURNING_MUTANTS = [
    Mutant("turning-kappa-ends-swapped", _TT,
           "        klo, khi = arb(self.kappa.lower()), arb(self.kappa.upper())\n",
           "        khi, klo = arb(self.kappa.lower()), arb(self.kappa.upper())\n",
           (f"{_RV}::test_bracket_encloses_the_geometric_sums_from_the_ball_ends",),
           "the bracket sums the geometric series with κlo and κhi swapped (a bracket inside the true one)"),
    Mutant("turning-bracket-rounds-inward", _TT,
           "        return arb(below.lower()), arb(above.upper())\n",
           "        return arb(below.upper()), arb(above.lower())\n",
           (f"{_RV}::test_bracket_encloses_the_geometric_sums_from_the_ball_ends",),
           "the bracket's ends are rounded inward"),
    Mutant("turning-eps1-ends-swapped", _TT,
           "        below = arb(eps1.lower()) * tau * khi / (khi - 1)\n",
           "        below = arb(eps1.upper()) * tau * khi / (khi - 1)\n",
           (f"{_RV}::test_bracket_encloses_the_geometric_sums_from_the_ball_ends",),
           "the lower end of T* − t1 uses the largest ε1"),
    Mutant("turning-no-eps-bar-check", _TT,
           "        if not eps1 <= balls.arb_of(self.eps_bar):\n",
           "        if False:\n",
           (f"{_RV}::test_entry_refuses_eps1_above_eps_bar",),
           "ε1 ≤ ε̄ is not checked: the return map may hold only for scales smaller than the entry's"),
    Mutant("turning-box-skips-diagonal", _TT,
           "            for j in range(i, self.d):\n",
           "            for j in range(i + 1, self.d):\n",
           (f"{_RV}::test_entry_tests_every_entry_but_S11_in_the_tail_frame",
            f"{_RV}::test_a_pinned_second_diagonal_is_rejected"),
           "the box test skips the diagonal entries S_ii, i ≥ 2"),
    Mutant("turning-entry-forgets-rescale", _TT,
           "        eps1 = balls.arb_of(Fraction(1, 2 ** E)) / c1\n",
           "        eps1 = arb(1) / c1\n",
           (f"{_RV}::test_entry_eps1_is_two_to_minus_E_over_S11", f"{_RV}::test_a_rescaled_stage1_gives_the_same_bracket"),
           "ε1 = 1/S1_11 in stage 1's rescaled variables Σ/2^E (a factor 2^E off)"),
    Mutant("turning-entry-scale-multiplied", _TT,
           "                S1[i, j] = S1[i, j] / balls.arb_of(self.scale[i] * self.scale[j])\n",
           "                S1[i, j] = S1[i, j] * balls.arb_of(self.scale[i] * self.scale[j])\n",
           (f"{_RV}::test_entry_tests_every_entry_but_S11_in_the_tail_frame",),
           "the entry maps Σ̂(t1) to the tail frame with D instead of D⁻¹"),
    Mutant("turning-return-frame-inverted", _TT,
           "        D = [[self.scale[i] if i == j else Fraction(0) for j in range(d)] for i in range(d)]\n",
           "        D = [[1 / self.scale[i] if i == j else Fraction(0) for j in range(d)] for i in range(d)]\n",
           (f"{_RV}::test_the_same_box_in_a_rescaled_tail_frame_is_accepted",),
           "the return map runs in the frame T·D⁻¹ while the entry uses T·D"),
    Mutant("turning-no-A-ball", _TT,
           "            Ab = balls.arb_matrix(frame_params.A) * balls.interval(Fraction(0), self.eps_bar)\n",
           "            Ab = balls.arb_matrix(frame_params.A) * 0\n",
           (f"{_RV}::test_a_scale_bound_where_A_matters_is_rejected_by_the_return_map",),
           "the return map is flowed with A = 0, not with every εA, ε ≤ ε̄"),
    Mutant("turning-A-at-eps-bar-only", _TT,
           "            Ab = balls.arb_matrix(frame_params.A) * balls.interval(Fraction(0), self.eps_bar)\n",
           "            Ab = balls.arb_matrix(frame_params.A) * balls.arb_of(self.eps_bar)\n",
           (f"{_RV}::test_a_return_that_holds_at_the_scale_eps_bar_only_is_rejected",),
           "the return map is flowed at the scale ε̄ only, not at every ε ≤ ε̄ that later turns use"),
    Mutant("turning-flows-centre-only", _TT,
           "                    X[i, j] = arb(1) if i == j == 0 else arb(0) + arb(0, 1) * balls.arb_of(self.H[i][j])\n",
           "                    X[i, j] = arb(1) if i == j == 0 else arb(0)\n",
           (f"{_RV}::test_a_much_wider_box_is_rejected_by_the_return_map",),
           "the return map flows the box's centre e1e1ᵀ only"),
    Mutant("turning-no-growth-check", _TT,
           "            if not self.kappa > 1:\n",
           "            if not self.kappa > 0:\n",
           (f"{_RV}::test_a_return_into_its_box_without_growth_is_rejected_by_the_growth_check_alone",
            f"{_RV}::test_a_changed_return_time_is_rejected_by_the_right_check"),
           "κ > 1 is not required (κ ≤ 1: no geometric series, no blow-up proved)"),
    Mutant("turning-no-image-box-test", _TT,
           "            why = self.in_box(Z, self.kappa)\n",
           "            why = ''\n",
           (f"{_RV}::test_a_changed_return_time_is_rejected_by_the_right_check",),
           "the image of the box is never tested to lie in the box"),
    Mutant("witness-rational-lenient", "riccati_verify/checker/_reduced_riccati.py",
           "    if len(x) > MAX_RATIONAL_CHARS or not _WITNESS_RATIONAL.fullmatch(x):\n",
           "    if len(x) > MAX_RATIONAL_CHARS or not _WITNESS_RATIONAL.fullmatch(x.strip().lstrip('+')):\n",
           ("tests/test_blowup_certificates.py::test_the_witness_rational_reader_is_strict",),
           "a witness rational with blanks or a '+' sign is read (review s19, L4: one strict grammar)"),
    Mutant("turning-replaced-keys-allowed", "riccati_verify/checker/_reduced_riccati.py",
           "    if clash:\n",
           "    if False:\n",
           (f"{_RV}::test_rate_keys_and_replaced_keys_are_refused",),
           "a witness with a turning tail and the ellipsoid's keys is read (the keys silently ignored)"),
    Mutant("turning-claim-upper-unchecked", _CB,
           "            if not (balls.arb_of(lo) < Tlo.lower() and Thi.upper() <= balls.arb_of(hi)):\n",
           "            if not (balls.arb_of(lo) < Tlo.lower()):\n",
           (f"{_RV}::test_a_false_claim_beside_the_closed_form_is_rejected",),
           "the claim's upper end is not compared with the proved bracket"),
    Mutant("turning-claim-lower-unchecked", _CB,
           "            if not (balls.arb_of(lo) < Tlo.lower() and Thi.upper() <= balls.arb_of(hi)):\n",
           "            if not (Thi.upper() <= balls.arb_of(hi)):\n",
           (f"{_RV}::test_a_false_claim_beside_the_closed_form_is_rejected",),
           "the claim's lower end is not compared with the proved bracket"),
    Mutant("turning-rate-claim-accepted", _CB,
           "        if \"rate_lower\" in claim or \"rate_upper\" in claim:\n",
           "        if False:\n",
           (f"{_RV}::test_rate_keys_and_replaced_keys_are_refused",),
           "a turning certificate may claim a rate that nothing proves"),
    Mutant("turning-return-map-unframed", _CB,
           "        why = tail.returns(framed)\n",
           "        why = tail.returns(params)\n",
           (f"{_RV}::test_a_rescaled_stage1_gives_the_same_bracket",),
           "the return map runs in the original coordinates while stage 1 and the entry use the frame T"),
]
MUTANTS += TURNING_MUTANTS
MUTANTS += [
    Mutant("stationary-state-skips-F", "riccati_verify/checker/check_stationary_state.py",
           "    if not ok:\n", "    if False:\n",
           ("tests/test_stationary_state.py::test_tampered_stationary_certificates_are_rejected",),
           "a stationary_state certificate is accepted without F(Sigma0) = 0"),
    Mutant("diagonal-regime-not-diagonal", "riccati_verify/checker/check_diagonal_regime.py",
           "        if any(M[i][j] != 0 for i in range(d) for j in range(d) if i != j):\n",
           "        if False:\n",
           ("tests/test_regime_certificates.py",),
           "the diagonal regime is accepted for coupled (non-diagonal) parameters"),
]
MUTANTS.append(
    Mutant("particle-agreement-always", "riccati_verify/numeric/simulate/compare.py",
           "        err_m <= Z_AGREE * se_m and err_S <= Z_AGREE * se_S\n",
           "        True\n",
           ("tests/test_simulate_compare.py::test_a_wrong_moment_prediction_is_not_confirmed",),
           "the particle-agreement verdict ignores the errors: any prediction is confirmed numerically"))
MUTANTS.append(
    Mutant("budget-disabled", "riccati_verify/checker/check_equilibrium.py",
           "    limit = MAX_PRODUCT_WORK // size ** 3\n",
           "    limit = 1 << 62\n",
           ("tests/test_product_budget.py",),
           "the shared exact-product budget is off: a hostile witness is multiplied out instead of refused"))

def make_copy(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for item in COPY:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, dest / item, ignore=ignore)
        elif src.exists():
            shutil.copy2(src, dest / item)
    # proofs/ is installed as riccati_verify.proofs (pyproject package-dir): lay the copy out the same way.
    shutil.copytree(ROOT / "proofs", dest / "riccati_verify" / "proofs", ignore=ignore)


def apply(m: Mutant, dest: Path) -> None:
    f = dest / m.path
    text = f.read_text()
    n = text.count(m.old)
    if n != 1:
        raise LookupError(f"mutant '{m.name}': the source text occurs {n} times in {m.path} (expected 1)")
    f.write_text(text.replace(m.old, m.new))


def run_tests(dest: Path, tests: tuple[str, ...]) -> tuple[int, str, float]:
    env = dict(os.environ, CI="1", PYTHONPATH=str(dest), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_ADDOPTS", None)
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-rf", "-p", "no:cacheprovider",
           "--hypothesis-profile", "riccati-ci-mutation", *tests]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=dest, env=env, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr, time.perf_counter() - t0


def imported_from(dest: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(dest))
    r = subprocess.run([sys.executable, "-c", "import riccati_verify, riccati_verify.proofs as p; "
                        "print(riccati_verify.__file__); print(p.__file__)"], cwd=dest, env=env, capture_output=True, text=True)
    return r.stdout


def killer(output: str) -> str:
    m = re.search(r"^FAILED (\S+)", output, re.M)
    return m.group(1) if m else "?"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="run only these mutants")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--keep", action="store_true", help="keep the temporary copies (printed)")
    args = ap.parse_args(argv)
    mutants = MUTANTS
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:34s} {m.path}: {m.why}")
        return 0
    if args.only:
        unknown = set(args.only) - {m.name for m in MUTANTS}
        if unknown:
            print(f"unknown mutant(s): {sorted(unknown)}", file=sys.stderr)
            return 2
        mutants = [m for m in MUTANTS if m.name in args.only]

    t_start = time.perf_counter()
    failures = 0
    with tempfile.TemporaryDirectory(prefix="riccati-mutants-") as tmp:
        tmp = Path(tmp)
        base = tmp / "baseline"
        base.mkdir()
        make_copy(base)
        where = imported_from(base)
        if not all(line.startswith(str(base)) for line in where.split()):
            print(f"the copy is not what gets imported (got {where!r}); aborting", file=sys.stderr)
            return 1
        selections = sorted({t for m in mutants for t in m.tests})
        rc, out, secs = run_tests(base, tuple(selections))
        print(f"baseline (unmutated copy, {len(selections)} selections): "
              f"{'pass' if rc == 0 else 'FAIL'} in {secs:.1f} s", flush=True)
        if rc != 0:
            print(out[-3000:], file=sys.stderr)
            return 1
        for m in mutants:
            dest = tmp / m.name
            dest.mkdir()
            make_copy(dest)
            try:
                apply(m, dest)
            except LookupError as e:
                print(f"STALE    {m.name}: {e}", flush=True)
                failures += 1
                continue
            rc, out, secs = run_tests(dest, m.tests)
            if rc == 1:
                print(f"killed   {m.name:34s} {secs:6.1f} s  by {killer(out)}", flush=True)
            elif rc == 0:
                print(f"SURVIVED {m.name:34s} {secs:6.1f} s  ({m.why})", flush=True)
                failures += 1
            else:
                print(f"ERROR    {m.name:34s} pytest exit status {rc}\n{out[-2000:]}", flush=True)
                failures += 1
        if args.keep:
            keep = Path(tempfile.mkdtemp(prefix="riccati-mutants-kept-"))
            shutil.copytree(tmp, keep, dirs_exist_ok=True)
            print(f"copies kept in {keep}")
    total = time.perf_counter() - t_start
    print(f"{len(mutants) - failures}/{len(mutants)} mutants killed in {total:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
