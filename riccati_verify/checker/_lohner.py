"""Long-horizon enclosure of the moment flow (MATH.md eq. 1.1) without the wrapping effect.

    ṁ = (A + V) m + V Σ B m + b,   Σ̇ = J Σ + Σ Jᵀ,   J = A + V Σ B

Lohner's QR method (R. J. Lohner, "Enclosing the solutions of ordinary initial
and boundary value problems", in Computer Arithmetic, Teubner 1987; N. S.
Nedialkov, K. R. Jackson, G. F. Corliss, "Validated solutions of initial value
problems for ordinary differential equations", Appl. Math. Comput. 105 (1999),
§4, and Nedialkov & Jackson, "A new perspective on the wrapping effect in
interval methods for IVPs for ODEs", 2001), with the flow Jacobian enclosed
through the variational equation (the C¹ form used by CAPD).  Trusted core:
imports only the standard library, python-flint, `riccati_verify.core` and
`riccati_verify.checker._validated_flow` (whose Taylor recursion, Picard box
and Horner sum it reuses).

The state is x = (m, Σ_ij for i ≤ j) ∈ ℝⁿ, n = d + d(d+1)/2 (Σ stays symmetric).
After step j the enclosure is the parallelepiped  x_j ∈ x̂_j + C_j r_j  with a
point centre x̂_j, a point (exact dyadic) matrix C_j and a ball vector r_j.
One step [t_j, t_j + h], with X = the box hull of x̂_j and x̂_j + C_j r_j:

1. *A-priori box.*  `_validated_flow._picard_box` from the ball X gives E with
   X + [0, h]·f(E) ⊆ E: the solutions from every x0 ∈ X exist on the step and
   stay in E (see `_validated_flow`, point 1).
2. *Centre.*  φ_h(x̂_j) ∈ y := Σ_{k<K} x_k(x̂_j) h^k + x_K(E) h^K  (Lagrange
   remainder, `_validated_flow` point 3).
3. *Jacobian.*  Dφ_h(x0), for every x0 ∈ X, lies in
       Jh := Σ_{k<K'} Φ_k(X) h^k + [−ρ, ρ]  (every entry),
   where Φ_k(x) are the Taylor coefficients of the variational equation
   Φ̇ = G(t)Φ, G(t) = Df(x(t)), Φ(0) = I: f is quadratic, so Df(x) = Df(0) +
   Σ_c x_c Q_c and G(t) = Σ_j G_j t^j with G_0 = Df(x_0), G_j = Σ_c x_{j,c} Q_c
   (j ≥ 1), whence (k+1) Φ_{k+1} = Σ_{j≤k} G_j Φ_{k−j}, evaluated as an interval
   extension on X from the state coefficients x_j(X) (`_Variational.coefficients`;
   Q_c = Df(e_c) − Df(0) from the field with A = 0, as A enters f linearly), and ρ bounds the
   Lagrange remainder Φ_ab^{(K')}(ξ_ab) h^{K'}/K'!, ξ_ab ∈ [0, h], by a norm
   majorant (`_jacobian_remainder`; cheap: no Cauchy products on E):
   * Φ(ξ + s) = W(s) Φ(ξ) with Ẇ = G(ξ + s) W, W(0) = I, so the K'-th
     coefficient at ξ is W_{K'} Φ(ξ), and (k+1) W_{k+1} = Σ_{j≤k} G_j W_{k−j}
     with G_j the Taylor coefficients of s ↦ Df(x(ξ + s)).  f is quadratic, so
     Df is affine: G_0 = Df(x(ξ)) and G_j = Df(x_j) − Df(0) =: Q[x_j] (j ≥ 1),
     where x_j ∈ x_j(E), the state coefficients on E (x(ξ) ∈ E by point 1).
   * ‖G_0‖_∞ ≤ g_0 := the largest row sum of |Df(E)|; ‖Q[x_j]‖_∞ ≤ g_j :=
     max_a (T |x_j(E)|)_a with T_ac ≥ Σ_b |Q[e_c]_ab| (`second_row_sums`, by
     ball evaluation of Df at the unit vectors).  By induction
     ‖W_k‖_∞ ≤ w_k, w_0 = 1, (k+1) w_{k+1} = Σ_{j≤k} g_j w_{k−j}.
   * Gronwall on ‖Φ(s)‖_∞ ≤ 1 + ∫_0^s g_0 ‖Φ‖ gives ‖Φ(ξ)‖_∞ ≤ e^{h g_0}.
   Hence every entry of the remainder is at most ‖W_{K'}Φ(ξ)‖_∞ h^{K'} ≤
   ρ := w_{K'} e^{h g_0} h^{K'}, all computed in ball arithmetic and rounded up.
4. *Mean value form.*  Row by row, φ_h(x0)_a − φ_h(x̂_j)_a = ∇φ_{h,a}(ξ_a)·(x0 − x̂_j)
   with ξ_a on the segment [x̂_j, x0] ⊆ X (a convex box).  With x0 = x̂_j + C_j ρ,
   ρ ∈ r_j:  φ_h(x0) ∈ y + (Jh C_j) r_j  (ball products contain every product of members).
5. *Re-representation (QR).*  M := Jh C_j, x̂_{j+1} := mid(y); C_{j+1} := Q, an
   orthonormalised (Gram-Schmidt, in floats: any invertible point matrix is
   sound) copy of mid(M) with its columns ordered by ‖col‖·|r|, largest first
   (Lohner's pivoting); Q⁻¹ is enclosed by a ball inverse, and
       r_{j+1} := (Q⁻¹ M) r_j + Q⁻¹ (y − x̂_{j+1}).
   Every point of y + M r_j is then x̂_{j+1} + Q ρ' with ρ' ∈ r_{j+1}.
   With a metric G (`enclose_lohner`'s `metric`, symmetric positive definite) the Gram-Schmidt
   and the pivoting norms use the inner product uᵀGv instead, so QᵀGQ ≈ I: the same argument
   (Q is still an invertible point matrix and Q⁻¹ a ball inverse).  Why: the wrapping of
   r_{j+1} = |Q⁻¹M| r_j comes from the off-diagonal part of the triangular Q⁻¹M, which per unit
   time is about the off-diagonal symmetric part of the linearisation L in the frame Q.  For a
   strongly non-normal L that part is large in every orthonormal frame (d = 8, opposite_instance:
   the radius grew ~e^3 per unit time while an exact zonotope of the same local errors grew
   linearly), but in a G-orthonormal frame with LᵀG + GL ≺ 0 (a Lyapunov matrix of L) the
   symmetric part is negative definite: there the radius grew ~2700 times less over 1.5 units.

High-order box (`high_order_box=True`; the first-order Picard box needs h·‖Df(E)‖ < 1, and
‖|Df|‖ (absolute values) is often far larger than the true rates, so it caps h):

1'. *A-priori box.*  With P := Σ_{k<K} x_k(X) [0,h]^k (ball Horner in the ball [0, h]) and a
   candidate box E, if  Y := P + x_K(E)·[0,h]^K  lies in the interior of E (entrywise, arb
   `contains_interior`), then for every x0 ∈ X the solution exists on [0, h] and stays in Y ⊆ E.
   Proof: x0 ∈ X ⊆ Y ⊂ int E (every term but k = 0 contains 0).  Let τ* be the supremum of the
   τ ≤ h such that the solution exists on [0, τ] with values in E (τ* > 0: local existence and
   continuity).  For t < τ*, Taylor with the Lagrange remainder, component by component, gives
   x(t) = Σ_{k<K} x_k(x0) t^k + x_K(x(ξ)) t^K with ξ ∈ [0, t] (the K-th derivative over K! of an
   autonomous flow at ξ is x_K at x(ξ)), and x(ξ) ∈ E, so x(t) ∈ Y.  The solution stays in the
   compact Y on [0, τ*), hence extends past τ* with x(τ*) ∈ Y ⊂ int E, so it stays in E a little
   longer: τ* < h is impossible.  The remainder of point 2 then uses this E.  The argument
   holds at every order, so the test runs at Kb = `_box_order(K, Kj)` ≤ K (Y needs x_k(X),
   k < Kb, and x_Kb(E)) while point 2 keeps the order K.
   In the covariance-only mode the test is on Σ alone (m ≡ 0 exactly, and Σ̇ does not involve m).
3'. *Jacobian remainder.*  With W_k(E) the variational coefficients on E (Φ(ξ + s) = W(s)Φ(ξ),
   W the flow Jacobian from x(ξ) ∈ E, so Φ's Kj-th coefficient at ξ is W_Kj(x(ξ)) Φ(ξ)), let
   ω := ‖|W_Kj(E)|‖_∞ h^Kj (largest row sum) and p* ≥ every |entry| of Σ_{k<Kj} Φ_k(X)[0,h]^k.
   For φ* := max_{ξ ∈ [0,h]} max_ab |Φ_ab(ξ)| (finite: Φ is continuous), the Lagrange form gives
   |Φ_ab(ξ)| ≤ p* + Σ_c |W_ac| |Φ_cb(ζ)| h^Kj ≤ p* + ω φ*, so φ* ≤ p*/(1 − ω) when ω < 1, and every
   entry of the remainder is at most ρ := ω p*/(1 − ω) (required: ω < 1/2).  No Gronwall factor
   e^{h‖Df‖}, which is what limits point 3's h to about 1/‖Df(E)‖.  Point 3 holds with this E too
   (it needs only that the solutions from X stay in E on [0, h], which 1' proves), and needs no
   variational coefficients on E: its ρ is taken when it meets the Jacobian tolerance, else the
   smaller of the two.
3''. *Jacobian order.*  Points 3 and 3' hold at every order K' ≥ 1 (the Lagrange form and the
   majorant recursions do not depend on which order is chosen), so with the high-order box a step
   uses the lowest K' ≤ Kj (at least JAC_MIN_ORDER) whose ρ is below 2^-JAC_MARGIN·JAC_TOL/n², and
   K' = Kj otherwise (`_step_hoe`).  Kj = `jac_order` is thus an upper limit; the choice is a
   heuristic (work against the Jacobian's width), never a soundness matter.  Φ_k(X) and W_k(E) are
   computed only up to the order a step reads (`_Jets`).

6. *Local frame* (`local_frame=True`, with the high-order box).  For an invertible point matrix P
   (any: a real eigenbasis of Df(x̂) in floats, `_frame_basis`, is only a good choice) and a ball Pi ∋
   P⁻¹, put y = P⁻¹(x − x̂).  Then ẏ = P⁻¹f(x̂ + Py) = P⁻¹f(x̂) + L̃y + P⁻¹Q(Py, Py), L̃ = P⁻¹Df(x̂)P, Q
   the field's symmetric quadratic form (f(x) = f(0) + Df(0)x + Q(x, x)); with Q[x] := Df(x) − Df(0) =
   2Q(x, ·), linear in x, P⁻¹Q[Py]P = Σ_e y_e Q̃_e, Q̃_e := P⁻¹Q[p_e]P (p_e the e-th column of P), so
   P⁻¹Q(Pa, Pb) = ½G̃(a)b with G̃(a) := Σ_e a_e Q̃_e.  The Taylor coefficients of y(t) therefore obey
       (k+1) y_{k+1} = [k = 0] P⁻¹f(x̂) + L̃ y_k + ½ Σ_{i≤k} G̃(y_i) y_{k−i},
   and those of P⁻¹Df(x(t))P are G̃_0 = L̃ + G̃(y_0), G̃_j = G̃(y_j) (j ≥ 1).  Evaluated in balls with
   Pi, L̃ ∋ Pi·Df(x̂)·P, Q̃_e ∋ Pi·Q[p_e]·P (`_Basis.tensor`) and P⁻¹f(x̂) ∋ Pi·f(x̂), every ball contains
   the exact value (an interval extension of the recursion with the exact P⁻¹).  The step then runs
   points 1', 2 and 3/3' for the y-flow: with X_y := hull(Pi·(C(r0 + r)), 0) ∋ P⁻¹(x0 − x̂) for every x0
   in the set and for x0 = x̂ itself (r0 = 0 without a split start set, point 7), the test
   Y_y := Σ_{k<Kb} y_k(X_y)[0,h]^k + y_Kb(E_y)[0,h]^Kb ⊂ int E_y proves (point 1', the same argument
   for the polynomial y-field) that every solution from X stays in x̂ + P·E_y on [0, h]; point 2's
   remainder is x_K(ξ) = P·y_K(y(ξ)) ∈ P·y_K(E_y) (x_k = P y_k for k ≥ 1).  Jacobian remainder:
   Φ's entry (a, b) has the Lagrange remainder [W_k(x(ξ)) Φ(ξ)]_ab h^k (point 3); with W̃ := P⁻¹WP and
   Φ̃ := P⁻¹ΦP this is [P W̃_k Φ̃(ξ) P⁻¹]_ab h^k, at most ‖|P|‖_∞ · ‖W̃_k‖_∞ ‖Φ̃(ξ)‖_∞ · max_eb |P⁻¹_eb| · h^k.
   * Framed point 3: W̃ solves dW̃/ds = (P⁻¹Df(x(ξ + s))P) W̃, whose coefficients are G̃_j(y(ξ)), so
     ‖W̃_k‖_∞ ≤ w̃_k by point 3's majorant recursion on g̃_j ≥ ‖G̃_j(E_y)‖_∞; Gronwall on
     dΦ̃/dt = P⁻¹Df(x(t))P Φ̃ gives ‖Φ̃(ξ)‖_∞ ≤ e^{h g̃_0}.  ρ = ‖|P|‖_∞ max|Pi| w̃_k e^{h g̃_0} h^k.
   * Framed point 3': with ω̃ := ‖W̃_k(E_y)‖_∞ h^k (W̃_k from the G̃_j by point 3's product recursion)
     and q* ≥ every |entry| of Pi·Σ_{j<k} Φ_j(X)[0,h]^j, the entries of P⁻¹Φ(ξ) obey, as in point 3',
     ψ* ≤ q* + ω̃ψ*, so ψ* ≤ q*/(1 − ω̃) (ω̃ < 1/2), and [P W̃_k (P⁻¹Φ(ζ))]_ab h^k ≤ ‖|P|‖_∞ ω̃ ψ*:
     ρ = ‖|P|‖_∞ ω̃ q*/(1 − ω̃).
   Why: in the x-coordinates the ball recursion on the wide box E wraps through |Df| at every order,
   so x_K(E)'s radius grows like ‖|Df|‖^K / K! times E's radius; in the eigenframe it grows like
   ‖|L̃|‖^K (opposite_instance(8, 0, 0): row sums 178 against 13 in the frame, so the remainder at
   K = 28 allowed h ≈ 0.009 unframed).  Computing P⁻¹Q[Py]P as the ball product Pi·Q[Py]·P instead
   of through Q̃ wraps by |Pi|·|P| (10^5 times wider there).  The frame costs the factor ‖|P|‖_∞ ·
   max|Pi| (cond-like) in the Jacobian remainder; a step takes it only when ‖|L̃|‖ ≤ FRAME_GAIN‖|Df(x̂)|‖.

7. *Split start set* (`start` = (x̂, C, r0, r), r0 a vector of balls centred at 0).  The set is
   x̂ + C(r0 + r), and every step above runs on it (X is its hull); the update is
       r0 ← (Q⁻¹M) r0,   r ← (Q⁻¹M) r + Q⁻¹(y − x̂_{j+1}),
   which contains point 5's (Q⁻¹M)(r0 + r) + Q⁻¹(y − x̂_{j+1}) (ball products are subdistributive).
   Why: the part that comes from the start set stays apart and scales.  For 0 ≤ s ≤ 1, every point
   of x̂ + C(s·r0 + r) lies in the set, so each step's enclosures hold for it, and by induction its
   image lies in x̂_j + C_j(s·r0_j + r_j): the image of s·w for w ∈ r0_j under the exact linear map
   is s times an image of w, which r0_{j+1} contains.  A run from a generous start box thus answers
   for every smaller box with the same centre, at the smaller box's width (`_stage1`: a second process
   starts from a box it can only guess).

8. *Defect remainder* (`defect_remainder=True`; replaces points 1'-3'').  No Taylor series is taken
   on a box as wide as the step's motion, whose ball recursion wraps like ‖|Df|‖^K and is what sets h
   in points 1'-3' (on general_instance(4, 0, 15) the accepted step was a median 0.25 of the centre
   series' own guess).  Let x*_k be the exact Taylor coefficients of the solution through the centre x̂
   (balls x_k ∋ x*_k, k ≤ K + 1), P*(t) := Σ_{k≤K} x*_k t^k and δ := f(P*) − P*'.  Since
   f(x) = f(0) + Df(0)x + Q(x, x) and the x*_k obey the recursion of `_validated_flow` exactly, δ's
   coefficients below K vanish, the K-th is (K+1)x*_{K+1}, and the k-th for k > K is
   Σ_{i+j=k; i,j≤K} Q(x*_i, x*_j), with ‖Q(u, v)‖_∞ ≤ q‖u‖_∞‖v‖_∞, q := ½ max_a Σ_c T_ac (T from
   `second_row_sums`; (Q_c)_ab is the Hessian entry ∂²f_a/∂x_b∂x_c).  With a_k ≥ ‖x_k‖_∞ and A_k := a_k h^k:
       ∫_0^h ‖δ(s)‖_∞ ds ≤ I := a_{K+1} h^{K+1} + q h/(K+2) · Σ_{i+j>K; i,j≤K} A_i A_j.
   *Tube.*  Let w ≥ ‖x0 − x̂‖_∞ on the set, W > 0, E := P([0, h]) + [−W, W] (ball Horner on [0, h], so
   E contains the tube T_s := P*(s) + [−W, W], s ∈ [0, h]), μ ≥ max(0, max_a sup_E (Df_aa + Σ_{b≠a}|Df_ab|))
   (the logarithmic norm μ_∞ of every matrix in the ball matrix Df(E)), ε := e^{μh} I and w' := e^{μh} w.
   If ε + w' < W, then for every x0 in the set and t ∈ [0, h] the solution exists and
       ‖x(t; x̂) − P*(t)‖_∞ ≤ ε,   ‖x(t; x0) − P*(t)‖_∞ ≤ ε + w'.
   Proof: let τ be the supremum of the t ≤ h up to which both solutions exist and stay in the tube
   (τ > 0: at 0 the distances are 0 and ≤ w < W).  Before τ, r := x(·; x̂) − P* obeys r' = δ + M(t) r with
   M(t) = ∫_0^1 Df(P* + σr) dσ, and u := x(·; x0) − x(·; x̂) obeys u' = M'(t) u with M' the mean of Df on the
   segment between the two solutions; both segments lie in the convex slice T_t ⊆ E, so μ_∞(M), μ_∞(M') ≤ μ
   (μ_∞ is convex).  The logarithmic-norm inequality D⁺‖r‖ ≤ μ‖r‖ + ‖δ‖ gives ‖r(t)‖ ≤ ∫_0^t e^{μ(t−s)}‖δ(s)‖ ds
   ≤ ε and ‖u(t)‖ ≤ e^{μt} w ≤ w', so both stay at distance ≤ ε + w' < W from P*: bounded, hence they
   exist beyond τ, and by continuity stay in the tube a little longer, so τ = h.  Hence
       φ_h(x̂) ∈ y := Σ_{k≤K} x_k h^k + [−ε, ε]  (every entry).
   *Jacobian.*  With Φ*_i the exact Taylor coefficients of Φ(t; x̂) (`_Jets` from the centre's x_k, balls
   Φ_i ∋ Φ*_i) and Ψ_p := Σ_{i≤p} Φ*_i t^i, R := Φ(·; x0) − Ψ_p obeys R(0) = 0 and
       R' = Df(x(t; x0)) R + [Df(P*)Ψ_p − Ψ_p'] + Q[x(t; x0) − P*(t)] Ψ_p,
   (Df is affine: Df(x) − Df(P*) = Q[x − P*], ‖Q[v]‖_∞ ≤ t*‖v‖_∞, t* := max_a Σ_c T_ac = 2q).  Df(P*(t)) =
   Σ_{j≤K} G*_j t^j exactly (G*_0 = Df(x̂), G*_j = Q[x*_j], ‖G*_j‖_∞ ≤ t* a_j =: g_j), so the defect's
   coefficients below p vanish, the p-th is (p+1)Φ*_{p+1}, and the k-th, k > p, is Σ_{i≤p, j=k−i≥1} G*_j Φ*_i.
   Column by column (each column of R obeys the vector equation, and the largest entry of a column is
   at most the matrix's row-sum norm), with φ_i ≥ ‖Φ_i‖_∞ (`_row_sum_upper`), every entry of R(h) is at most
       ρ := e^{μh} [φ_{p+1} h^{p+1} + h/(p+2) Σ_{i≤p} φ_i h^i Σ_{p+1−i≤j≤K} g_j h^j + h t* (ε + w') Σ_{i≤p} φ_i h^i],
   so Dφ_h(x0) ∈ Jh := Σ_{i≤p} Φ_i h^i + [−ρ, ρ] for every x0 in the set, and points 4, 5 and 7 run
   unchanged.  The order p is the lowest from JAC_MIN_ORDER (or the last step's order − 1) whose ρ meets
   2^-JAC_MARGIN·JAC_TOL/n², else Kj, which must meet JAC_TOL/n² (as in point 3'').  The step's cost is the
   centre's series to K + 1, the centre's Jacobian jets and O(K) scalar bounds: no series on X or on E.

Precision.  Only the centre (x̂, y, and x̂ + C r) is carried at `prec` bits; the
centre's coefficient x_{k+1} is computed at the precision `_centre_bits` picks
(from the second step on: enough that its rounding, weighted by h^{k+1}, stays
2^-CENTRE_MARGIN below the smaller of the tolerance and the last step's radius
of y; at most `prec`, at least E_PREC), a width heuristic like the others.
The a-priori box E, the coefficients on it, the
coefficients on X for the Jacobian, Jh, M, Q and the ball inverse of Q use
E_PREC = JAC_PREC = 64 bits (X and the controls A, B, V, b rounded outward
to 64-bit balls first): ball arithmetic at any precision contains the exact
values, and these quantities only need a width small relative to 1 (Jh's is
≈ 2^-10/n² by the step control), not to the state.

Because C_j is (nearly) orthogonal and Q⁻¹M is nearly triangular, the radii
of r follow the linearised flow's singular values, i.e. the true contraction
or expansion, instead of growing like e^{‖|J|‖ t} as plain balls do.  Step
sizes, pivoting, Q and the centre are heuristics on midpoints: they change
the width, never soundness.  The step size is the smallest of the Taylor
guess at the centre, STEP_CAP/‖Df(X)‖ (the Picard test fails beyond), a
prediction from the last step's remainder ratios (with the shrinking trend of
the last two steps' natural sizes) and 0.95 × the last rejected
size; a rejected step shrinks by its remainder ratio (halving after 3 tries).
Failure (blow-up, radii that explode, a step size that collapses, a spent
step budget, a horizon beyond `MAX_DURATION`) is a
`LohnerEnclosure(ok=False, reason=...)`, never an exception.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import flint
from flint import arb, arb_mat

from riccati_verify.core import deadline, exact
from riccati_verify.core.balls import arb_of
from riccati_verify.core.threads import threads_for
from riccati_verify.checker._validated_flow import (
    BLOWUP_NORM, MIN_STEP_FRACTION, SAFETY, _dyadic_below, _Field, _horner, _hull, _max_abs,
    _log2_max_abs, _picard_box, _step_log2_guesses, ball_state, max_radius)

DEFAULT_PREC = 256
DEFAULT_ORDER = 36            # Taylor order of the state (the a-priori box's remainder limits h)
DEFAULT_JAC_ORDER = 10        # Taylor order of the variational (Jacobian) enclosure
DEFAULT_TOL_BITS = 100        # per-step remainder ≤ 2^-tol_bits · max(1, |state|)
JAC_TOL = 2.0 ** -10          # per step, |Jacobian remainder| ≤ JAC_TOL / n² · max(1, |Jacobian|)
E_PREC = 64                   # bits for the a-priori box E and the coefficients on it (E is wide)
DEFAULT_MAX_STEPS = 20000
MAX_DURATION = Fraction(10 ** 4)
SHRINK_TRIES = 30
HOE_TRIES = 3                 # candidate boxes per step size for the high-order a-priori test
QR_PREC = 64
JAC_PREC = 64
BOX_SLACK = 8               # log2 of (P's radius / the box's widening) when its order is below K
BOX_MIN_ORDER = 8           # the high-order box test's order is min(K, max(Kj, BOX_MIN_ORDER))
CENTRE_MARGIN = 20          # bits by which the centre's rounding stays below the step's radius
JAC_MIN_ORDER = 4           # the lowest Jacobian order a high-order-box step tries
JAC_MARGIN = 6              # (2^-4 made the turning tail of general_instance(4, 0, 7) fail)
# a lower Jacobian order is taken when its ρ ≤ 2^-JAC_MARGIN · JAC_TOL/n²
FRAME_EVERY = 4             # the local frame's eigenbasis is recomputed every FRAME_EVERY steps
FRAME_GAIN = 0.5            # a step takes the frame only when ‖|L̃|‖ ≤ FRAME_GAIN·‖|Df(x̂)|‖ (row sums)
FRAME_BITS = 30             # bits of the frame's (point) entries
STEP_CAP = 1.0              # h ≤ STEP_CAP / (∞-norm of Df's diagonal blocks): Picard rarely passes beyond

__all__ = ["LohnerEnclosure", "enclose_lohner", "enclose_lohner_params", "MAX_DURATION"]


@dataclass
class LohnerEnclosure:
    """Result of `enclose_lohner`: the final ball state, or ok=False with a reason.

    mean (d×1) and cov (d×d) are ball matrices containing m(T) and Σ(T) (None
    when not ok; mean None in the covariance-only mode); t is the time reached (= the duration when ok); radius the
    largest entry radius of the final state; history the (t, radius) after
    each step (reports only); parallelepiped the final (x̂, C, r) (when ok), with which a
    following run can continue (`enclose_lohner`'s `start`) instead of restarting from the box."""

    ok: bool
    mean: arb_mat | None
    cov: arb_mat | None
    steps: int
    reason: str = ""
    radius: float = 0.0
    t: Fraction = Fraction(0)
    history: list = field(default_factory=list)
    parallelepiped: tuple | None = None


class _Coords:
    """x = (m_0..m_{d-1}, Σ_ij for i ≤ j), or x = (Σ_ij for i ≤ j) when `mean` is False (the
    covariance-only mode: Σ̇ does not involve m): conversions and index maps."""

    def __init__(self, d: int, mean: bool = True):
        self.d = d
        self.nm = d if mean else 0            # number of mean coordinates
        self.sidx = [(i, j) for i in range(d) for j in range(i, d)]
        self.N = len(self.sidx)
        self.n = self.nm + self.N
        nm = self.nm
        pos = {ij: nm + e for e, ij in enumerate(self.sidx)}
        self.pos = lambda i, j: pos[(i, j) if i <= j else (j, i)]
        N, n = self.N, self.n
        # blockwise transpose of a d × N·d "hstack" (block e transposed in place)
        self.bt = [p * N * d + e * d + i for i in range(d) for e in range(N) for p in range(d)]
        # assembly of the n×n Jacobian from D (nm×n, flat) and H (d×N·d, flat): index into D + H + [0]
        dn = nm * n
        zero = dn + d * N * d
        amap = [r * n + c for r in range(nm) for c in range(n)]
        for (p, q) in self.sidx:
            amap += [zero] * nm + [dn + p * N * d + e * d + q for e in range(N)]
        self.amap = amap

    def to_state(self, x: arb_mat) -> tuple[arb_mat, arb_mat]:
        """(m, Σ); m is the exact 0 in the covariance-only mode."""
        d = self.d
        m = arb_mat(d, 1, [x[i, 0] for i in range(d)]) if self.nm else arb_mat(d, 1)
        S = arb_mat(d, d, [x[self.pos(i, j), 0] for i in range(d) for j in range(d)])
        return m, S

    def to_vector(self, m: arb_mat, S: arb_mat) -> arb_mat:
        return arb_mat(self.n, 1, [m[i, 0] for i in range(self.nm)] + [S[i, j] for (i, j) in self.sidx])

    def assemble(self, D: arb_mat | None, H: arb_mat) -> arb_mat:
        flat = (D.entries() if self.nm else []) + H.entries() + [arb(0)]
        return arb_mat(self.n, self.n, [flat[k] for k in self.amap])


class _Variational:
    """Taylor coefficients of the flow Jacobian Φ (Φ̇ = Df(x)Φ, Φ(0) = I).

    `coefficients` gives Φ_k as n×n matrices from Df(x) = Df(0) + Σ_c x_c Q_c (module docstring,
    point 3); `block_coefficients` is the derivative of the state recursion, used for Df itself
    (order 1) and, in the tests, as the independent second route to the same Φ_k.
    In `block_coefficients`, D_k (d×n) holds the mean rows of Φ_k; H_k (d × N·d) holds, block e, the
    symmetric Σ-part δΣ_k of column d + e (the m-columns have δΣ = 0: Σ does not
    depend on m).  Derivative of `_Field.coefficients`' recursion:
        (k+1) δm_{k+1} = (A+V) δm_k + V Σ_j (δS_j B m_{k−j} + S_j B δm_{k−j})
        (k+1) δS_{k+1} = δP + δPᵀ,  δP = A δS_k + V Σ_j (δS_j B S_{k−j} + S_j B δS_{k−j}).
    With δS, S symmetric, the right products are blockwise transposes of left
    ones: (δS_j B S_{k−j})ᵀ = S_{k−j} Bᵀ δS_j and (δS_j B m)ᵀ = (B m)ᵀ δS_j."""

    def __init__(self, F: _Field, co: _Coords):
        self.F, self.co = F, co
        d, N, n = co.d, co.N, co.n
        self.A, self.B, self.V, self.AV = F.A, F.B, F.V, F.AV
        self.Bt = self.B.transpose()
        H0 = arb_mat(d, N * d)
        for e, (i, j) in enumerate(co.sidx):
            H0[i, e * d + j] = 1
            H0[j, e * d + i] = 1
        D0 = None      # the mean rows (none in the covariance-only mode)
        if co.nm:
            D0 = arb_mat(d, n)
            for i in range(d):
                D0[i, i] = 1
        self.H0, self.D0 = H0, D0
        self._aff = None

    def df(self, m: arb_mat, S: arb_mat) -> arb_mat:
        """Df(x) (n×n, x-coordinates) at the ball state (m, S): the coefficient Φ_1 at JAC_PREC bits."""
        Ds, Hs = self.block_coefficients([m], [S], 1)
        return self.co.assemble(Ds[1], Hs[1])

    def second_row_sums(self) -> arb_mat:
        """T (n×n, exact non-negative entries) with T_ac ≥ Σ_b |∂²f_a/∂x_b∂x_c|.  Df is affine in x
        (f is quadratic): Df(x) = Df(0) + Σ_c x_c Q_c with Q_c = Df(e_c) − Df(0), so every
        row sum of |Df(x) − Df(0)| is at most (T|x|)_a."""
        co = self.co
        n = co.n
        old = flint.ctx.prec
        flint.ctx.prec = min(old, JAC_PREC)
        try:
            D0 = self.df(*co.to_state(arb_mat(n, 1)))
            T = arb_mat(n, n)
            for c in range(n):
                e = arb_mat(n, 1)
                e[c, 0] = 1
                ent = (self.df(*co.to_state(e)) - D0).entries()
                for a in range(n):
                    T[a, c] = sum((abs(ent[a * n + b]).upper() for b in range(n)), arb(0)).upper()
            return T
        finally:
            flint.ctx.prec = old

    def _bt(self, X: arb_mat) -> arb_mat:
        ent = X.entries()
        return arb_mat(X.nrows(), X.ncols(), [ent[k] for k in self.co.bt])

    def block_coefficients(self, ms: list, Ss: list, K: int) -> tuple[list, list]:
        """(D_k, H_k) for k = 0..K from the state coefficients ms[0..K-1], Ss[0..K-1], at JAC_PREC
        bits (balls at any precision are sound; the Jacobian's width only needs to be small
        relative to 1, not to the state's)."""
        old = flint.ctx.prec
        flint.ctx.prec = min(old, JAC_PREC)
        try:
            return self._coefficients(ms, Ss, K)
        finally:
            flint.ctx.prec = old

    def _affine(self):
        """(Df(0), Qt, I) at JAC_PREC bits: Df(x) = Df(0) + Σ_c x_c Q_c (f is quadratic, so Df is
        affine), with row c of the n×n² matrix Qt holding Q_c row by row, and I the n×n identity.
        Q_c = Df(e_c) − Df(0) is the same for every A (A enters f linearly), so it is taken from the
        field with A = 0: a ball A then widens Df(0) only."""
        if self._aff is None:
            co, n = self.co, self.co.n
            old = flint.ctx.prec
            flint.ctx.prec = min(old, JAC_PREC)
            try:
                D0 = self.df(*co.to_state(arb_mat(n, 1)))
                F0 = object.__new__(type(self.F))       # a shallow copy (stdlib `copy` is off the checker's list)
                F0.__dict__.update(self.F.__dict__)
                F0.A = arb_mat(co.d, co.d)
                F0.AV = F0.V
                v0 = _Variational(F0, co)
                Z0 = v0.df(*co.to_state(arb_mat(n, 1)))
                cols = []
                for c in range(n):
                    e = arb_mat(n, 1)
                    e[c, 0] = 1
                    cols.append((v0.df(*co.to_state(e)) - Z0).entries())
                Qt = arb_mat(n, n * n, [cols[c][r] for c in range(n) for r in range(n * n)])
                I = arb_mat(n, n, [arb(int(i == j)) for i in range(n) for j in range(n)])
            finally:
                flint.ctx.prec = old
            self._aff = D0, Qt, I
        return self._aff

    def coefficients(self, ms: list, Ss: list, K: int) -> list:
        """Φ_0..Φ_K (n×n balls, JAC_PREC bits) from the state coefficients ms[0..K-1], Ss[0..K-1]:
        Φ̇ = Df(x(t)) Φ with Df(x(t)) = Σ_j G_j t^j, G_0 = Df(x_0), G_j = Σ_c x_{j,c} Q_c (j ≥ 1),
        so (k+1) Φ_{k+1} = Σ_{j≤k} G_j Φ_{k−j}, Φ_0 = I (balls at any precision are sound; the
        Jacobian's width only needs to be small relative to 1).  The same coefficients as the
        derivative of the state recursion (`block_coefficients`), in one n×n product per term."""
        return _Jets(self, ms, Ss).upto(K)

    def _coefficients(self, ms: list, Ss: list, K: int) -> tuple[list, list]:
        F, co = self.F, self.co
        d = co.d
        Hs, Ds = [self.H0], [self.D0]
        mean = bool(co.nm)
        SB = [S * self.B for S in Ss[:K]] if F.quadratic else []
        SBt = [S * self.Bt for S in Ss[:K]] if F.quadratic else []
        Bm = [(self.B * m).transpose() for m in ms[:K]] if F.quadratic and mean else []
        for k in range(K):
            inv = arb(1) / (k + 1)
            P = self.A * Hs[k]
            Dn = self.AV * Ds[k] if mean else None
            if F.quadratic:
                U = SB[0] * Hs[k]
                U2 = SBt[k] * Hs[0]
                for j in range(1, k + 1):
                    U = U + SB[j] * Hs[k - j]
                    U2 = U2 + SBt[k - j] * Hs[j]
                P = P + self.V * (U + self._bt(U2))
                if mean:
                    row = Bm[k] * Hs[0]
                    c = SB[0] * Ds[k]
                    for j in range(1, k + 1):
                        row = row + Bm[k - j] * Hs[j]
                        c = c + SB[j] * Ds[k - j]
                    rent = row.entries()
                    R = arb_mat(d, co.n, [arb(0) if c_ < d else rent[(c_ - d) * d + i]
                                          for i in range(d) for c_ in range(co.n)])
                    Dn = Dn + self.V * (c + R)
            Hs.append((P + self._bt(P)) * inv)
            Ds.append(Dn * inv if mean else None)
        return Ds, Hs


class _Jets:
    """`_Variational.coefficients` on demand: upto(K) extends Φ_0..Φ_K from the state coefficients
    (ms, Ss) and keeps them, so a step that settles on a low Jacobian order pays only for that
    order, and a retry at another h reuses them (they do not depend on h)."""

    def __init__(self, var: _Variational, ms: list | None, Ss: list | None, G: list | None = None):
        self.var, self.ms, self.Ss = var, ms, Ss
        self.D0, self.Qt, I = var._affine()
        # G given: the coefficients G_j of the variational equation's matrix are known (in a frame,
        # docstring point 6: G̃_j from `_frame_coefficients`), and only the Φ_k are computed
        self.G, self.Phi = ([] if G is None else G), [I]

    def upto(self, K: int) -> list:
        co, n = self.var.co, self.var.co.n
        nn = n * n
        G, Phi = self.G, self.Phi
        old = flint.ctx.prec
        flint.ctx.prec = min(old, JAC_PREC)
        try:
            if len(G) < K:
                # row k of xs·Qᵀ is vec(Σ_c x_{k,c} Q_c): the missing G_k in one product
                lo = len(G)
                xs = arb_mat(K - lo, n, [e for k in range(lo, K)
                                         for e in co.to_vector(self.ms[k], self.Ss[k]).entries()])
                flat = (xs * self.Qt).entries()
                for k in range(lo, K):
                    Gk = arb_mat(n, n, flat[(k - lo) * nn:(k - lo + 1) * nn])
                    G.append(Gk + self.D0 if k == 0 else Gk)
            for k in range(len(Phi) - 1, K):
                acc = G[k]                  # G_k Φ_0 with Φ_0 = I exactly: no product needed
                for j in range(k):
                    acc = acc + G[j] * Phi[k - j]
                Phi.append(acc * (arb(1) / (k + 1)))
            return Phi[:K + 1]
        finally:
            flint.ctx.prec = old


class _Basis:
    """A frame's basis: P an invertible point matrix, Pi a ball matrix containing P⁻¹ (E_PREC bits),
    and, on demand, the quadratic part of Df in the frame: Q̃ (n × n², row e = vec(P⁻¹Q[p_e]P), p_e
    the e-th column of P), so that P⁻¹Q[P y]P = Σ_e y_e Q̃_e for every y (Q[x] = Df(x) − Df(0) is
    linear in x).  With a ball y this wraps once, through |y|·|Q̃|; P⁻¹Q[Py]P evaluated as a ball
    product wraps through |P⁻¹|·|Q[Py]|·|P| (10^5 times wider on opposite_instance(8, 0, 0))."""

    def __init__(self, P: arb_mat, Pi: arb_mat):
        self.P, self.Pi = P, Pi
        self.Pnorm = _row_sum_upper(P)          # ≥ ‖|P|‖_∞ (exact)
        self.factor = self.Pnorm * _abs_upper_max(Pi)      # framed point 3's ‖|P|‖_∞ · max |P⁻¹ entries|
        self._Qt = None

    def tensor(self, Qt: arb_mat) -> arb_mat:
        if self._Qt is None:
            n = self.P.nrows()
            old = flint.ctx.prec
            flint.ctx.prec = min(old, E_PREC)
            try:
                R = (self.P.transpose() * Qt).entries()            # row e: vec(Q[p_e]) = Σ_c P_ce vec(Q_c)
                rows = []
                for e in range(n):
                    rows += (self.Pi * arb_mat(n, n, R[e * n * n:(e + 1) * n * n]) * self.P).entries()
                self._Qt = arb_mat(n, n * n, rows)
            finally:
                flint.ctx.prec = old
        return self._Qt


class _Frame:
    """A step's local frame (docstring point 6): y = P⁻¹(x − x̂) with the basis (P, Pi), L̃ = Pi·Df(x̂)·P
    ∋ P⁻¹Df(x̂)P and f0 ∋ P⁻¹f(x̂), at E_PREC bits."""

    def __init__(self, basis: _Basis, L: arb_mat, f: arb_mat):
        self.basis = basis
        self.P, self.Pi = basis.P, basis.Pi
        self.Lt = self.Pi * L * self.P
        self.f0 = self.Pi * f


def _frame_basis(L: arb_mat) -> arb_mat | None:
    """A real eigenbasis of the midpoint of L (n×n) in floats: real parts of the eigenvectors of the
    real eigenvalues, real and imaginary parts of one of each conjugate pair; columns scaled to
    max-abs 1 and rounded to FRAME_BITS bits; a point matrix, or None when the eigenvalues do not
    pair up or the floats fail.  Any invertible P is sound (point 6): this only picks a good one."""
    n = L.nrows()
    old = flint.ctx.prec
    flint.ctx.prec = 53
    try:
        M = flint.acb_mat(n, n, [flint.acb(e.mid()) for e in L.entries()])
        try:
            lam, R = M.eig(right=True, algorithm="approx")
        except (ValueError, ZeroDivisionError, ArithmeticError):
            return None
        lam = [(float(z.real.mid()), float(z.imag.mid())) for z in lam]
        scale = max((abs(a) + abs(b) for a, b in lam), default=0.0)
        tiny = 1e-9 * max(scale, 1e-300)
        cols = []
        for k, (a, b) in enumerate(lam):
            if abs(b) <= tiny:
                # a complex solver returns a real eigenvector times an arbitrary phase: undo it at the
                # largest entry before taking the real part (else that part can be all rounding)
                z = [complex(float(R[i, k].real.mid()), float(R[i, k].imag.mid())) for i in range(n)]
                top = max(z, key=abs)
                u = top.conjugate() / abs(top) if abs(top) > 0 else 1
                cols.append([(w * u).real for w in z])
            elif b > 0:
                cols.append([float(R[i, k].real.mid()) for i in range(n)])
                cols.append([float(R[i, k].imag.mid()) for i in range(n)])
        if len(cols) != n or not all(math.isfinite(x) for c in cols for x in c):
            return None
        P = arb_mat(n, n)
        for j, c in enumerate(cols):
            top = max(abs(x) for x in c)
            if not top > 0:
                return None
            for i in range(n):
                P[i, j] = arb(round(c[i] / top * 2 ** FRAME_BITS)) / 2 ** FRAME_BITS    # exact dyadic
        return P
    finally:
        flint.ctx.prec = old


def _local_frame(var: _Variational, co: _Coords, mc: arb_mat, Sc: arb_mat, m1: arb_mat, S1: arb_mat,
                 basis: _Basis | None):
    """(frame or None, basis) at the centre (mc, Sc) with f(x̂) = (m1, S1): the frame of the given
    basis (from an earlier step: the eigenbasis moves slowly, Pi and Q̃ are reused), else of a fresh
    `_frame_basis`; the frame is None when P is singular or does not shrink ‖|Df|‖ by FRAME_GAIN (a
    heuristic: a step without the frame is the plain high-order step)."""
    old = flint.ctx.prec
    flint.ctx.prec = min(old, E_PREC)
    try:
        L = var.df(mc, Sc)
        if basis is None:
            P = _frame_basis(L)
            if P is None:
                return None, None
            try:
                Pi = P.inv()
            except ZeroDivisionError:
                return None, None
            if not all(e.is_finite() for e in Pi.entries()):
                return None, None
            basis = _Basis(P, Pi)
        fr = _Frame(basis, L, co.to_vector(m1 * 1, S1 * 1))
        if not float(_row_sum_upper(fr.Lt)) <= FRAME_GAIN * float(_row_sum_upper(L)):
            return None, basis
        return fr, basis
    finally:
        flint.ctx.prec = old


def _frame_coefficients(var: _Variational, fr: _Frame, y0: arb_mat, K: int) -> tuple[list, list]:
    """([y_0..y_K], [G̃_0..G̃_K]): the Taylor coefficients, in the frame, of the solutions
    y(t) = P⁻¹(x(t) − x̂) from every point of the ball vector y0, and G̃_0 = L̃ + G̃(y_0), G̃_k = G̃(y_k)
    (k ≥ 1), G̃(y) = Σ_e y_e Q̃_e ∋ P⁻¹Q[Py]P (`_Basis`), the Taylor coefficients of P⁻¹Df(x(t))P.
    Docstring point 6: with Q̃(a, b) = ½G̃(a)b ∋ P⁻¹Q(Pa, Pb), Q the field's quadratic form,
        (k+1) y_{k+1} = [k = 0] P⁻¹f(x̂) + L̃ y_k + ½ Σ_{i≤k} G̃(y_i) y_{k−i},
    at the ambient precision."""
    n = y0.nrows()
    nn = n * n
    Qt = fr.basis.tensor(var._affine()[1])
    half = arb(0.5)

    def gt(y):
        return arb_mat(n, n, (y.transpose() * Qt).entries()[:nn])

    ys, Gs = [y0], [gt(y0)]
    for k in range(K):
        acc = Gs[0] * ys[k]
        for i in range(1, k + 1):
            acc = acc + Gs[i] * ys[k - i]
        v = fr.Lt * ys[k] + acc * half
        if k == 0:
            v = v + fr.f0
        ys.append(v * (arb(1) / (k + 1)))
        Gs.append(gt(ys[-1]))
    Gs[0] = Gs[0] + fr.Lt
    return ys, Gs


def _hull_point(X: arb_mat, x: arb_mat) -> arb_mat:
    return arb_mat(X.nrows(), X.ncols(), [a.union(b) for a, b in zip(X.entries(), x.entries())])


def _block(M: arb_mat, lo: int, hi: int) -> arb_mat:
    """The diagonal block M[lo:hi, lo:hi]."""
    w = hi - lo
    return arb_mat(w, w, [M[lo + i, lo + j] for i in range(w) for j in range(w)])


def _mid(X: arb_mat) -> arb_mat:
    return X.mid()


def _inf_norm_upper(M: arb_mat) -> float:
    n, c = M.nrows(), M.ncols()
    ent = M.entries()
    return max(math.fsum(float(abs(ent[i * c + j]).upper()) for j in range(c)) for i in range(n))


def _orthonormal(M: arb_mat, order: list[int], G: arb_mat | None = None) -> arb_mat | None:
    """Gram-Schmidt (twice) of M's columns in `order`, at QR_PREC bits; a point matrix, or None.
    G: the inner product uᵀGv (a symmetric positive definite point matrix; None: the Euclidean one),
    so that QᵀGQ ≈ I (module docstring, point 5)."""
    n = M.nrows()
    old = flint.ctx.prec
    flint.ctx.prec = QR_PREC
    try:
        ent = M.entries()
        Q = arb_mat(n, n)
        for slot, c in enumerate(order):
            v = arb_mat(n, 1, [arb(ent[i * n + c].mid()) for i in range(n)])
            norm0 = _gnorm(v, G)
            for _ in range(2):
                v = v - Q * (Q.transpose() * (v if G is None else G * v))
                v = v.mid()
            nrm = _gnorm(v, G)
            if not nrm > 1e-12 * norm0 or not math.isfinite(nrm):
                return None
            inv = arb(1.0 / nrm)
            for i in range(n):
                Q[i, slot] = arb((v[i, 0] * inv).mid())
        return Q
    finally:
        flint.ctx.prec = old


def _gnorm(v: arb_mat, G: arb_mat | None) -> float:
    """sqrt(vᵀGv) in floats (G None: the Euclidean norm); nan when vᵀGv ≤ 0 (G not positive definite)."""
    q = float((v.transpose() * (v if G is None else G * v))[0, 0].mid())
    return math.sqrt(q) if q > 0 else math.nan


def _row_sum_upper(M: arb_mat) -> arb:
    """An exact arb ≥ ‖M‖_∞ (the largest row sum of |M|) for every matrix in the ball matrix M."""
    return _max_row_sum(arb_mat(M.nrows(), M.ncols(), [abs(e).upper() for e in M.entries()]))


def _max_row_sum(U: arb_mat) -> arb:
    """An exact arb ≥ max(0, every row sum of U), U of exact entries (+∞ if one is not finite)."""
    return _max_upper((U * arb_mat(U.ncols(), 1, [1] * U.ncols())).entries())   # balls ∋ the row sums


def _max_upper(balls) -> arb:
    """An exact arb ≥ the upper end of every ball (0 for none); +∞ as soon as one is not finite: a NaN
    compares false with everything, so a plain running maximum would drop it (review s19)."""
    best = arb(0)
    for b in balls:
        u = b.upper()
        if not u.is_finite():
            return arb("inf")
        if u > best:
            best = u
    return best


def _jacobian_remainder(DfE: arb_mat, T: arb_mat, rm: list, rS: list, co, hb: arb, p: int) -> arb:
    """An exact arb ρ with |Dφ_h(x0) − Σ_{k<p} Φ_k(x0) h^k| ≤ ρ entrywise, for every x0 whose
    trajectory stays in the a-priori box E on [0, h] (module docstring, point 3):
        ρ = w_p · e^{h g_0} · h^p,   (k+1) w_{k+1} = Σ_{j≤k} g_j w_{k−j},  w_0 = 1,
    g_0 ≥ ‖Df(E)‖_∞ (DfE ∋ Df(x), x ∈ E), g_j ≥ max_a (T |x_j(E)|)_a ≥ ‖Q[x_j]‖_∞ (j ≥ 1),
    x_j(E) = (rm[j], rS[j]) the state coefficients on E."""
    return _jacobian_remainders(DfE, T, rm, rS, co, hb, p)[p]


def _jacobian_remainders(DfE: arb_mat, T: arb_mat, rm: list, rS: list, co, hb: arb, p: int) -> list:
    """[ρ_0, .., ρ_p]: `_jacobian_remainder` at every order k ≤ p (ρ_k = w_k e^{h g_0} h^k; w_k
    reads g_j for j < k only, so one recursion gives them all)."""
    g = [_row_sum_upper(DfE)]
    for j in range(1, p):
        u = arb_mat(co.n, 1, [abs(e).upper() for e in co.to_vector(rm[j], rS[j]).entries()])
        g.append(_max_upper((T * u).entries()))
    return _majorant_remainders(g, hb, p)


def _majorant_remainders(g: list, hb: arb, p: int, factor: arb | None = None) -> list:
    """[ρ_0, .., ρ_p] with ρ_k = factor · w_k e^{h g_0} h^k, (k+1) w_{k+1} = Σ_{j≤k} g_j w_{k−j}, w_0 = 1
    (point 3, and point 6's framed point 3 with factor = ‖|P|‖_∞ · max |P⁻¹ entries|)."""
    w = [arb(1)]
    for k in range(p):
        w.append((sum((g[j] * w[k - j] for j in range(k + 1)), arb(0)) / (k + 1)).upper())
    gro = (hb * g[0]).exp() * (1 if factor is None else factor)
    return [(w[k] * gro * hb ** k).upper() for k in range(p + 1)]


def enclose_lohner_params(params, mean: exact.Vector, cov: exact.Matrix, duration: Fraction,
                          **kw) -> LohnerEnclosure:
    """`enclose_lohner` from exact inputs: a `core.model.Params` (A, B, V, b) and a rational
    initial point state (mean, cov); keyword arguments as for `enclose_lohner`."""
    m, S = ball_state(mean, cov, kw.get("prec", DEFAULT_PREC))
    return enclose_lohner(m, S, params.A, params.B, params.V, params.b, duration, **kw)


def enclose_lohner(mean: arb_mat, cov: arb_mat, A: exact.Matrix, B: exact.Matrix, V: exact.Matrix,
                   b: exact.Vector, duration: Fraction, *, order: int = DEFAULT_ORDER,
                   jac_order: int = DEFAULT_JAC_ORDER, prec: int = DEFAULT_PREC,
                   tol_bits: int = DEFAULT_TOL_BITS, max_steps: int = DEFAULT_MAX_STEPS,
                   max_duration: Fraction = MAX_DURATION, covariance_only: bool = False,
                   high_order_box: bool = False, width_limit: float | None = None,
                   metric: arb_mat | None = None, start: tuple | None = None,
                   local_frame: bool = False, on_step=None, defect_remainder: bool = False) -> LohnerEnclosure:
    """Enclose (m, Σ) after `duration` under constant rational controls by Lohner's QR method.

    A may also be a ball matrix (arb_mat): the enclosure then holds for every A in it.

    mean (d×1) and cov (d×d, symmetric) are ball matrices containing the initial
    state (radius 0 for a point).  Same inputs as `_validated_flow.enclose_segment`,
    plus jac_order (order of the Jacobian's Taylor enclosure; with high_order_box its upper limit,
    docstring point 3'') and the bounds on the work: at most max_steps steps, and a duration above
    max_duration is refused.
    tol_bits: each step's Taylor remainder ≤ 2^-tol_bits · max(1, |state|).
    covariance_only: enclose Σ alone (the state x = the Σ_ij, i ≤ j; `mean` and `b` are
    ignored and the result's `mean` is None).  Σ̇ = JΣ + ΣJᵀ does not involve m, so this is
    the same Σ(t); the parallelepiped then has no mean directions, whose expansion along
    an unstable M(t) = A + V + VΣB would otherwise widen the shared QR frame.
    high_order_box: the a-priori box by the high-order test and the Jacobian remainder on it by
    point 3, or point 3' where point 3's misses the tolerance (module docstring): no step limit
    h ≲ 1/‖Df‖, so far fewer steps on stiff-looking but smooth flows; the default False keeps
    the first-order Picard box and the norm-majorant Jacobian remainder.
    width_limit: the run stops (ok False) once a radius exceeds width_limit · max(1, |state|)
    (default 2^-(tol_bits // 2)); a heuristic that only saves work.
    metric: an n×n symmetric positive definite matrix G on the state coordinates x (n as above; only
    its midpoints are read): the QR re-representation orthonormalises in the inner product uᵀGv
    (module docstring, point 5); a heuristic that changes the width, never soundness.  Where G is not
    positive definite in floats the run falls back to the Euclidean QR from that step on.
    start: a previous run's `parallelepiped` (x̂, C, r) (same controls, same mode): the run starts
    from the set x̂ + C r instead of the box of (mean, cov) (which are then ignored).  Sound since the
    previous run proved that set contains its solutions at its end (docstring point 5); it saves the
    wrapping of a restart from the box, which on a far-from-normal flow costs more than any step.
    A start (x̂, C, r0, r) carries the start set r0 (balls centred at 0) apart from the errors r
    (module docstring, point 7): the run's parallelepiped is then (x̂, C, r0, r) too.
    local_frame: with high_order_box, each step takes the box, the coefficients on it and point 3' in a
    local frame y = P⁻¹(x − x̂), P a real eigenbasis of Df at the centre (module docstring, point 6),
    when that frame shrinks ‖|Df|‖ by FRAME_GAIN: the wrapping inside the Taylor recursion on the box
    then grows like the frame's ‖|P⁻¹DfP|‖^k instead of ‖|Df|‖^k (a heuristic for the width and the
    step size, never a soundness matter).
    on_step: called as on_step(t, steps) after each accepted step (t a float; progress display only).
    Runs at `prec` bits and restores the ambient precision."""
    if order < 2 or jac_order < 2:
        raise ValueError("the Taylor orders must be at least 2")
    duration = Fraction(duration)
    if duration <= 0:
        return LohnerEnclosure(False, None, None, 0, "non-positive duration")
    if duration > max_duration:
        return LohnerEnclosure(False, None, None, 0,
                               f"horizon {float(duration):.6g} exceeds the limit {float(max_duration):.6g}")
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        if covariance_only:
            # m ≡ 0 solves the mean equation with b = 0 exactly: its Taylor coefficients are exact zeros
            b = (Fraction(0),) * len(B)
            mean = arb_mat(len(B), 1)
        flint.ctx.prec = min(prec, E_PREC)
        low = _Field(A, B, V, b)                 # the controls as E_PREC-bit balls (they still contain them)
        flint.ctx.prec = prec
        # Σ's d(d+1)/2 coordinates size the Jacobian products (the mean adds d): threads change the
        # wall time only (`core.threads`: flint's products are the same balls at any thread count)
        with threads_for(len(B) * (len(B) + 1) // 2):
            return _run(mean, cov, _Field(A, B, V, b), low, duration, order, jac_order, tol_bits, max_steps,
                        not covariance_only, high_order_box or defect_remainder,
                        2.0 ** -(tol_bits // 2) if width_limit is None else float(width_limit), metric, start,
                        local_frame, on_step, defect_remainder)
    finally:
        flint.ctx.prec = old


def _centre_bits(prec: int, tol: float, y_rad: float | None, scale: float, h: float | None):
    """Working precisions for the centre's Taylor coefficients (module docstring, "Precision"): a
    rule bits(k, ms, Ss) for x_{k+1}, enough that its rounding times h^{k+1} stays 2^-CENTRE_MARGIN
    below the smaller of the tolerance and the last step's radius of y, estimated from
    |x_k| h^k ≥ |x_{k+1}| h^{k+1}; None (everything at `prec`) before the first step.  A heuristic:
    balls at any precision are sound."""
    if y_rad is None or h is None or not h > 0:
        return None
    want = min(tol, y_rad / scale)
    if not want > 0:
        return None
    top = -math.log2(want) + CENTRE_MARGIN - math.log2(scale)
    lh = _log2(h)

    def bits(k, ms, Ss):
        la = _log2_size(ms[k], Ss[k])
        if la is None:
            return min(prec, E_PREC)
        return int(min(prec, max(min(prec, E_PREC), math.ceil(top + la + k * lh))))
    return bits


def _log2_size(m: arb_mat, S: arb_mat) -> float | None:
    """log2 of the Frobenius norm of (m, S), between log2 max|entry| and that + log2(d + 1); None when
    all entries are zero.  Two small products instead of a Python loop over the entries: the centre's
    precision rule asks for it at every coefficient, where the loop cost as much as the recursion.
    A heuristic (it only picks working precisions)."""
    u = abs((S.transpose() * S).trace() + (m.transpose() * m)[0, 0]).upper()
    if not u > 0:
        return None
    f = float(u)
    if 0.0 < f < math.inf:
        return 0.5 * math.log2(f)
    return float(u.log() / arb(2).log()) / 2


def _fail(steps, t, hist, why):
    return LohnerEnclosure(False, None, None, steps, f"{why} at t = {float(t):.6g}", 0.0, t, hist)


def _run(m0, S0, F: _Field, low: _Field, duration: Fraction, K: int, Kj: int, tol_bits: int, max_steps: int,
         with_mean: bool = True, hoe: bool = False, width_limit: float = 2.0 ** -50, metric=None, start=None,
         local_frame: bool = False, on_step=None, defect: bool = False):
    co = _Coords(F.d, with_mean)
    if metric is not None:
        if metric.nrows() != co.n or metric.ncols() != co.n:
            raise ValueError(f"the metric must be {co.n}x{co.n}")
        with flint.ctx.workprec(QR_PREC):
            metric = metric.mid() * 1          # a point matrix at QR_PREC bits (only its floats matter)
    var = _Variational(low, co)
    T2 = var.second_row_sums() if F.quadratic else arb_mat(co.n, co.n)
    tstar = _max_row_sum(T2) if defect else None      # point 8's t*: a constant of the run
    n = co.n
    r0 = None            # the split start set of point 7 (start = (x̂, C, r0, r)), else None
    if start is None:
        x0 = co.to_vector(m0, (S0 + S0.transpose()) * arb(0.5))   # symmetric part: same balls as S0 when symmetric
        xc = _mid(x0)                                             # centre x̂ (point)
        C = arb_mat(n, n)
        for i in range(n):
            C[i, i] = 1
        r = x0 - xc                                               # r ∋ x0 − x̂
    else:
        if len(start) == 4:
            xc, C, r0, r = start
            if not (r0.nrows() == n and r0.ncols() == 1 and all(e.mid() == 0 for e in r0.entries())):
                raise ValueError(f"the split start set r0 must be {n} balls centred at 0")
        else:
            xc, C, r = start
        if not (xc.nrows() == C.nrows() == C.ncols() == r.nrows() == n and xc.ncols() == r.ncols() == 1):
            raise ValueError(f"the start parallelepiped must have dimension {n}")
    whole = (lambda: r) if r0 is None else (lambda: r0 + r)
    tol = 2.0 ** -tol_bits
    prec = flint.ctx.prec
    t, steps, hist = Fraction(0), 0, []
    h_model = None       # step-size prediction from the last accepted step's remainders (a heuristic)
    h_natural = None     # the last accepted step's h·grow: the size at which its remainder would meet tol
    h_fail = math.inf    # the last rejected step size, relaxed by 2% a step (a heuristic)
    y_rad = None         # the last step's largest radius of y (its remainder and rounding)
    kj_hint = None       # the last step's Jacobian order (high-order box): where the next one starts looking
    basis = None         # the local frame's basis, kept for FRAME_EVERY steps (point 6)
    while t < duration:
        if steps >= max_steps:
            return _fail(steps, t, hist, f"step budget ({max_steps}) spent (horizon {float(duration):.6g})")
        X = _hull_point(xc + C * whole(), xc)
        size = _max_abs(X)
        if not size < BLOWUP_NORM:
            return _fail(steps, t, hist, f"state norm exceeds {BLOWUP_NORM:.3g} (blow-up?)")
        scale = max(1.0, size)
        if max_radius(X) > width_limit * scale:
            return _fail(steps, t, hist, f"enclosure radius {max_radius(X):.3g} too wide "
                                        "(expanding flow or a blow-up nearby)")
        mc, Sc = co.to_state(xc)
        mX, SX = co.to_state(X)
        # point 8 reads x_{K+1}(x̂): the leading coefficient of its defect
        ms, Ss = F.coefficients(mc, Sc, K + 1 if defect else K, _centre_bits(prec, tol, y_rad, scale, h_model))
        guesses = _step_log2_guesses(ms, Ss, K, tol * scale)
        fr = ys_X = xs = Xs = None
        if defect:
            # no coefficients on X: the Jacobian's jets are the centre's, the set's spread is w
            bounds = _DefectBounds(co, tstar, ms, Ss, K)
            jets = _Jets(var, ms, Ss)
            flint.ctx.prec = min(prec, E_PREC)
            try:
                w = _abs_upper_max(X - xc)
            finally:
                flint.ctx.prec = prec
        else:
            # Jacobian coefficients on the box X (independent of h); Φ_1(X) = Df(X) also caps h
            flint.ctx.prec = min(prec, JAC_PREC, E_PREC)
            try:
                mX, SX = mX * 1, SX * 1       # rounded outward to fewer bits: balls that contain X
                # the high-order box needs x_k(X) for k < K; the Jacobian only for k < Kj
                xs, Xs = low.coefficients(mX, SX, max(_box_order(K, Kj), Kj) - 1 if hoe else Kj - 1)
            finally:
                flint.ctx.prec = prec
            jets = _Jets(var, xs, Xs)
        if hoe and local_frame and F.quadratic and not defect:
            if steps % FRAME_EVERY == 0:
                basis = None
            fr, basis = _local_frame(var, co, mc, Sc, ms[1], Ss[1], basis)
            if fr is not None:
                flint.ctx.prec = min(prec, E_PREC)
                try:
                    # the whole start set (r0 + r, point 7), hulled with 0 (the centre x̂ itself,
                    # whose trajectory point 2 encloses): Pi·(C·r) alone left out the split part r0,
                    # and a framed step then certified a box that missed solutions (review s17)
                    ys_X = _frame_coefficients(var, fr, _hull_point(fr.Pi * (C * whole()), arb_mat(n, 1)),
                                               _box_order(K, Kj))[0]
                finally:
                    flint.ctx.prec = prec
        Pj = None if hoe else jets.upto(Kj - 1)     # the high-order box picks its own order ≤ Kj
        remaining = duration - t
        # clamped at both ends: tiny controls (2^-1400) put the guess past 2^1024 (an OverflowError, not
        # ok=False), and any step beyond `remaining` is capped to it anyway
        hf = 2.0 ** min(max(min(guesses), -1000.0), 1000.0) if guesses else math.inf
        if not hoe:       # the Picard box's cap (the high-order box has none)
            Df, nm = Pj[1], co.nm
            lip = max(_inf_norm_upper(_block(Df, 0, nm)) if nm else 0.0, _inf_norm_upper(_block(Df, nm, n)))
            hf = min(STEP_CAP / max(lip, 1e-300), hf)
        hf = SAFETY * hf if h_model is None else min(SAFETY * hf, h_model)
        h_fail *= 1.02
        hf = min(hf, 0.95 * h_fail)
        h = _dyadic_below(hf, remaining) if math.isfinite(hf) else remaining
        if remaining - h < h / 16:
            h = remaining
        step = None
        for attempt in range(SHRINK_TRIES):
            if h < duration * MIN_STEP_FRACTION:
                break
            deadline.check()
            step = (_step_defect(var, co, bounds, w, jets, h, K, Kj, tol * scale, kj_hint) if defect else
                    _step_hoe(low, var, co, T2, xs, Xs, ms, Ss, jets, h, K, Kj, tol * scale, kj_hint, fr, xc, ys_X)
                    if hoe else
                    _step(low, var, co, T2, mX, SX, ms, Ss, Pj, h, K, Kj, tol * scale))
            if not isinstance(step, float):
                break
            # rejected: shrink by the predicted factor (at most 0.9; halving after 3 tries)
            h_fail = float(h)
            h = _dyadic_below(float(h) * min(step, 0.5 if attempt >= 2 else 0.9), h)
        if step is None or isinstance(step, float):
            return _fail(steps, t, hist, "no a-priori enclosure / remainder bound for any step size "
                                         "(blow-up inside the horizon?)")
        y, Jh, grow = step[:3]
        if len(step) > 3:
            kj_hint = step[3]
        y_rad = max_radius(y)
        # Towards a blow-up the natural step shrinks by a few % a step, and h·grow alone then overshoots
        # the next remainder (x_K ~ R^-K makes 3% in R a factor 3.5 at K = 40): every second step was
        # rejected.  The last two natural sizes give the trend, applied when they shrink.
        natural = float(h) * grow
        trend = 1.0 if not h_natural else min(1.0, natural / h_natural)
        h_model, h_natural = float(h) * min(2.0, grow * trend), natural
        xn = _mid(y)
        flint.ctx.prec = min(prec, JAC_PREC)     # Jh's width is ~2^-20 relative: JAC_PREC bits suffice
        try:
            M = Jh * C
            Mm = M.mid()
            rw = [float(abs(e).upper()) for e in whole().entries()]
            GM = Mm if metric is None else metric * Mm
            norms = [math.sqrt(max(0.0, sum(float(Mm[i, c]) * float(GM[i, c]) for i in range(n)))) * rw[c]
                     for c in range(n)]
            order = sorted(range(n), key=lambda c: -norms[c])
            Q = _orthonormal(Mm, order, metric)
            if Q is None and metric is not None:      # G not positive definite in floats: the plain QR
                metric = None
                Q = _orthonormal(Mm, order)
            if Q is None:
                return _fail(steps, t, hist, "degenerate Jacobian (QR failed)")
            try:
                Qi = Q.inv()
            except ZeroDivisionError:
                return _fail(steps, t, hist, "could not invert the preconditioner Q")
            QiM = Qi * M
        finally:
            flint.ctx.prec = prec
        r = QiM * r + Qi * (y - xn)
        if r0 is not None:
            r0 = QiM * r0            # 0-centred balls stay 0-centred: point 7
        C, xc = Q, xn
        if not all(e.is_finite() for e in whole().entries()):
            return _fail(steps, t, hist, "non-finite enclosure")
        t += h
        steps += 1
        hist.append((float(t), max_radius(xc + C * whole())))
        if on_step is not None:
            on_step(float(t), steps)
    mF, SF = co.to_state(xc + C * whole())
    pped = (xc, C, r) if r0 is None else (xc, C, r0, r)
    if not with_mean:
        return LohnerEnclosure(True, None, SF, steps, "", max_radius(SF), t, hist, pped)
    return LohnerEnclosure(True, mF, SF, steps, "", max_radius(mF, SF), t, hist, pped)


def _step(low, var, co, T2, mX, SX, ms, Ss, Pj, h: Fraction, K: int, Kj: int, tol: float):
    """(y ∋ φ_h(x̂), Jh ∋ Dφ_h(X), growth factor for the next step) for a step of length h; when
    it cannot be validated, a float: the factor by which to shrink h (a heuristic)."""
    hb = arb_of(h)
    H = arb(0).union(hb)
    old = flint.ctx.prec
    flint.ctx.prec = min(old, E_PREC)      # balls at any precision are sound; E is wide anyway
    try:
        E = _picard_box(mX, SX, low, H, h)
        if E is None:
            return 0.6
        Em, ES = E
        rm, rS = low.coefficients(Em, ES, max(K, Kj - 1))     # the Jacobian remainder reads x_j(E), j < Kj
    finally:
        flint.ctx.prec = old
    hK = hb ** K
    Rm, RS = rm[K] * hK, rS[K] * hK
    rem = _max_abs(Rm, RS)
    if rem > tol:
        return 0.9 * (tol / rem) ** (1.0 / (K + 1))
    rho = _jacobian_remainder(var.df(Em, ES), T2, rm, rS, co, hb, Kj)
    return _accept(co, ms, Ss, Rm, RS, Pj, hb, K, Kj, rem, tol, rho)


def _accept(co, ms, Ss, Rm, RS, Pj, hb: arb, K: int, Kj: int, rem: float, tol: float, rho: arb,
            jac_grow: bool = True, jac=None):
    """The step's (y, Jh, growth) from the centre's Taylor polynomial plus remainder (Rm, RS) and
    the Jacobian polynomial plus ρ in every entry; a shrink factor when ρ exceeds the Jacobian
    tolerance.  jac_grow False: ρ does not limit the predicted growth of the next step.  jac: the
    pair (Jacobian polynomial at h, its tolerance) when the caller has it already."""
    y = co.to_vector(_horner(ms[:K], hb) + Rm, _horner(Ss[:K], hb) + RS)
    if jac is None:
        Jpoly = _horner(Pj[:Kj], hb)
        jac = Jpoly, _jacobian_tol(co, Pj, hb, Kj, Jpoly)
    Jpoly, jtol = jac
    jrem = float(rho)
    if not jrem <= jtol:
        return 0.9 * (jtol / jrem) ** (1.0 / (Kj + 1)) if math.isfinite(jrem) and jrem > 0 else 0.5
    grow = min((tol / rem) ** (1.0 / (K + 1)) if rem > 0 else 2.0,
               (jtol / jrem) ** (1.0 / (Kj + 1)) if jrem > 0 and jac_grow else 2.0)
    Jrem = arb(0, rho)
    return y, Jpoly + arb_mat(co.n, co.n, [Jrem] * (co.n * co.n)), 0.95 * grow


def _jacobian_tol(co, Pj, hb: arb, Kj: int, Jpoly: arb_mat | None = None) -> float:
    """The step's tolerance on the Jacobian remainder: JAC_TOL/n² of max(1, |Σ_{k<Kj} Φ_k h^k|)."""
    if Jpoly is None:
        Jpoly = _horner(Pj[:Kj], hb)
    return JAC_TOL / co.n ** 2 * max(1.0, _max_abs(Jpoly))


def _box_order(K: int, Kj: int) -> int:
    """The Taylor order of the high-order box test (point 1'): E is as wide as the trajectory's
    motion over the step, far above the remainder at order Kj, so a lower order than the state's
    K passes as often (a heuristic; any order ≥ 1 is sound)."""
    return min(K, max(Kj, BOX_MIN_ORDER))


def _strictly_inside(E: arb_mat, Y: arb_mat) -> bool:
    """Every ball of Y lies in the interior of the matching ball of E."""
    return all(e.contains_interior(y) for e, y in zip(E.entries(), Y.entries()))


def _widened(M: arb_mat, delta: float | arb) -> arb_mat:
    """M with every radius increased by at least delta ≥ 0, a float or an arb (a candidate box; point 8's
    tube, which must contain the interval [mid − rad − delta, mid + rad + delta])."""
    return arb_mat(M.nrows(), M.ncols(), [arb(e.mid(), e.rad() + arb(delta).upper()) for e in M.entries()])


def _step_hoe(low, var, co, T2, xs, Xs, ms, Ss, jets: _Jets, h: Fraction, K: int, Kj: int, tol: float,
              kj_hint: int | None = None, frame: _Frame | None = None, xc: arb_mat | None = None,
              ys_X: list | None = None):
    """`_step` with the high-order a-priori box (point 1') and the Jacobian remainder of point 3
    on it, or of point 3' where point 3's misses the Jacobian tolerance; xs, Xs are the state
    coefficients on X (k < Kb, the box's order `_box_order`: point 1' holds at any order, and E
    only has to contain the trajectory, so Kb ≤ K needs fewer coefficients on X).  jets: the
    Jacobian coefficients on X (`_Jets`), computed only up to the order the step uses.
    frame: the step's local frame (point 6), with xc the centre x̂ and ys_X the frame's coefficients on
    X (k ≤ Kb): the box, the coefficients on E and point 3' are then taken in the frame.

    Jacobian order: points 3 and 3' hold at every order k ≥ 1, so the step takes the lowest
    k ≤ Kj (from kj_hint − 1 up, at least JAC_MIN_ORDER) whose ρ is below 2^-JAC_MARGIN of the
    smallest Jacobian tolerance JAC_TOL/n² (a heuristic: the margin keeps the Jacobian's width,
    which widens the parallelepiped at every step, near that of the order Kj); else the order
    Kj as before.  The accepted step returns its order as a fourth entry."""
    hb = arb_of(h)
    H = arb(0).union(hb)
    Kb = _box_order(K, Kj)
    low_k = None         # (order, ρ, point 3 alone) when an order below Kj meets the margin
    old = flint.ctx.prec
    flint.ctx.prec = min(old, E_PREC)
    try:
        lh = _log2(h)
        box = (_box_plain(low, co, xs, Xs, ms, Ss, H, lh, Kb, K, Kj, tol) if frame is None else
               _box_framed(var, co, frame, xc, ys_X, H, lh, Kb, K, Kj, tol))
        if isinstance(box, float):
            return box
        rm, rS, Gs = box       # Gs: the framed G̃_k on E (None without a frame)
        WE = _Jets(var, rm, rS) if frame is None else _Jets(var, None, None, Gs)    # W_k(E) or W̃_k(E), on demand
        hK = hb ** K
        Rm, RS = rm[K] * hK, rS[K] * hK
        rem = _max_abs(Rm, RS)
        if rem > tol:
            return 0.9 * (tol / rem) ** (1.0 / (K + 1))
        # Point 3's majorant needs only that the trajectories from X stay in E on [0, h], which 1'
        # proves, and costs no Cauchy products; point 3' (no Gronwall factor e^{h‖Df(E)‖}, so longer
        # steps) needs the variational coefficients on E, about as many products as those on X:
        # it runs only when point 3's ρ misses the Jacobian tolerance
        if frame is None:
            rhos = _jacobian_remainders(var.df(rm[0], rS[0]), T2, rm, rS, co, hb, Kj)    # ρ at every order ≤ Kj
        else:
            rhos = _majorant_remainders([_row_sum_upper(G) for G in Gs[:Kj]], hb, Kj, frame.basis.factor)
        floor = JAC_TOL / co.n ** 2 * 2.0 ** -JAC_MARGIN
        first = JAC_MIN_ORDER if kj_hint is None else max(JAC_MIN_ORDER, kj_hint - 1)
        for k in range(first, Kj):
            if float(rhos[k]) <= floor:
                low_k = k, rhos[k], True
                break
        else:
            for k in range(first, Kj):
                _, r3 = _point_3p(WE, jets, k, hb, H, floor, frame)
                if r3 is None:
                    continue
                r3p = min(rhos[k], r3)
                if float(r3p) <= floor:
                    low_k = k, r3p, False
                    break
        if low_k is None:
            rho = rhos[Kj]
            Pj = jets.upto(Kj - 1)
            flint.ctx.prec = old           # the Jacobian polynomial at the ambient precision, as `_accept` reads it
            Jpoly = _horner(Pj[:Kj], hb)
            jac = Jpoly, _jacobian_tol(co, Pj, hb, Kj, Jpoly)
            flint.ctx.prec = min(old, E_PREC)
            cheap = float(rho) <= jac[1]
            if not cheap:
                omega, r3 = _point_3p(WE, jets, Kj, hb, H, math.inf, frame)
    finally:
        flint.ctx.prec = old
    if low_k is not None:
        k, rho, alone = low_k
        Pj = jets.upto(k - 1)
        Jpoly = _horner(Pj[:k], hb)
        # the order can still rise to Kj, so ρ caps no growth of the next step
        step = _accept(co, ms, Ss, Rm, RS, Pj, hb, K, k, rem, tol, rho, jac_grow=False,
                       jac=(Jpoly, _jacobian_tol(co, Pj, hb, k, Jpoly)))
        return step if isinstance(step, float) else step + (k,)
    if cheap:       # point 3's ρ; it caps no growth: point 3' can take over where it fails
        return _accept(co, ms, Ss, Rm, RS, Pj, hb, K, Kj, rem, tol, rho, jac_grow=False, jac=jac) + (Kj,)
    if r3 is None:
        w = float(omega)
        return 0.9 * (0.25 / w) ** (1.0 / (Kj + 1)) if math.isfinite(w) and w > 0 else 0.5
    # both bounds hold: the smaller one
    rho = min(rho, r3)
    step = _accept(co, ms, Ss, Rm, RS, Pj, hb, K, Kj, rem, tol, rho, jac=jac)
    return step if isinstance(step, float) else step + (Kj,)


def _box_plain(low, co, xs, Xs, ms, Ss, H: arb, lh: float, Kb: int, K: int, Kj: int, tol: float):
    """Point 1' in the x-coordinates: (rm, rS, None) with (rm[k], rS[k]) the state coefficients on E
    (k ≤ max(K, Kj − 1); rm[0], rS[0] ∋ E); or a shrink factor when no candidate box passes."""
    HK = H ** Kb
    mean = bool(co.nm)
    Pm, PS = _horner(xs[:Kb], H), _horner(Xs[:Kb], H)   # ∋ Σ_{k<Kb} x_k(x0) t^k, x0 ∈ X, t ∈ [0, h]
    # the remainder on E, not at the centre, is what an accepted step keeps below tol, and it is
    # usually far above the centre's: 2·tol.  A ball's radius has a 30-bit mantissa, so a widening
    # below 2^-26 of it is rounded away and Y ⊂ int E fails: at least that much (heuristics)
    # Below the state's order the box's own remainder x_Kb(E)[0,h]^Kb is not small against
    # tol but is against E's radius (the motion over the step): 2^-BOX_SLACK of that radius.
    floor = 2.0 ** -E_PREC * (1 + _max_abs(PS)) + 2.0 ** -(26 if Kb == K else BOX_SLACK) * max_radius(PS)
    guess = max(4 * _term(lh, Kb, ms[Kb], Ss[Kb]), 2 * tol) + floor
    Em = _widened(Pm, guess) if mean else Pm         # covariance-only: m ≡ 0 exactly
    ES = _widened(PS, guess)
    for _ in range(HOE_TRIES):
        rm, rS = low.coefficients(Em, ES, max(K, Kj - 1))   # the variational on E reads j < Kj
        Ym, YS = Pm + rm[Kb] * HK, PS + rS[Kb] * HK
        if _strictly_inside(ES, YS) and (not mean or _strictly_inside(Em, Ym)):
            return rm, rS, None
        grow = 2 * _term(lh, Kb, rm[Kb], rS[Kb]) + 2.0 ** -E_PREC * (1 + _max_abs(YS)) + 2.0 ** -26 * max_radius(YS)
        Em = _widened(_hull(Em, Ym), grow) if mean else Pm
        ES = _widened(_hull(ES, YS), grow)
    return 0.7


def _box_framed(var, co, fr: _Frame, xc: arb_mat, ys_X: list, H: arb, lh: float, Kb: int, K: int, Kj: int,
                tol: float):
    """Point 1' in the frame y = P⁻¹(x − x̂) (point 6): a box E_y with Y_y ⊂ int E_y; returns as
    `_box_plain`, with E = x̂ + P·E_y (rm[0], rS[0] ∋ its hull, rm[k], rS[k] ∋ P y_k for k ≥ 1) and,
    third, the G̃_k of `_frame_coefficients` on E_y; or a shrink factor."""
    HK = H ** Kb
    Py = _horner(ys_X[:Kb], H)                   # ∋ Σ_{k<Kb} y_k(y0) t^k, y0 ∈ X_y, t ∈ [0, h]
    tol_y = tol / float(fr.basis.Pnorm)                # |P y| ≤ ‖|P|‖_∞ |y|: the same widening heuristics in y
    floor = 2.0 ** -E_PREC * (1 + _max_abs(Py)) + 2.0 ** -(26 if Kb == K else BOX_SLACK) * max_radius(Py)
    Ey = _widened(Py, max(4 * _term(lh, Kb, ys_X[Kb]), 2 * tol_y) + floor)
    for _ in range(HOE_TRIES):
        ys, Gs = _frame_coefficients(var, fr, Ey, max(K, Kj - 1))
        Yy = Py + ys[Kb] * HK
        if _strictly_inside(Ey, Yy):
            break
        grow = 2 * _term(lh, Kb, ys[Kb]) + 2.0 ** -E_PREC * (1 + _max_abs(Yy)) + 2.0 ** -26 * max_radius(Yy)
        Ey = _widened(_hull(Ey, Yy), grow)
    else:
        return 0.7
    states = [co.to_state(xc + fr.P * ys[0])] + [co.to_state(fr.P * y) for y in ys[1:]]
    return [m for m, _ in states], [S for _, S in states], Gs


def _point_3p(WE, jets: _Jets, k: int, hb: arb, H: arb, target: float, frame: _Frame | None = None):
    """Point 3' at order k: (ω, ρ) with ω = ‖W_k(E)‖_∞ h^k and ρ = ω p*/(1 − ω), p* ≥ every |entry|
    of Σ_{j<k} Φ_j(X)[0,h]^j; in a frame (point 6) ω = ‖W̃_k(E)‖_∞ h^k and ρ = ‖|P|‖_∞ ω q*/(1 − ω),
    q* ≥ every |entry| of P⁻¹Σ_{j<k} Φ_j(X)[0,h]^j.  ρ is None when ω ≥ 1/2, or when ρ cannot meet
    target: p* ≥ 1 (Φ_0 = I) and ‖|P|‖_∞ q* ≥ 1/n, so ω/(1 − ω) above target (n·target in a frame)
    rules the order out without the polynomial."""
    omega = (_row_sum_upper(WE.upto(k)[k]) * hb ** k).upper()
    n = jets.var.co.n
    if not omega < 0.5 or not float(omega / (1 - omega)) <= target * (1 if frame is None else n):
        return omega, None
    poly = _horner(jets.upto(k - 1)[:k], H)
    if frame is None:
        return omega, (omega * _abs_upper_max(poly) / (1 - omega)).upper()
    return omega, (frame.basis.Pnorm * omega * _abs_upper_max(frame.Pi * poly) / (1 - omega)).upper()


def _log2(h) -> float:
    """log2 of a positive step size: a Fraction's through its integers, since float(h) is 0 below
    2^-1074 and math.log2 then raised instead of the flow failing as documented."""
    if isinstance(h, Fraction):
        return math.log2(h.numerator) - math.log2(h.denominator)
    return math.log2(h)


def _term(lh: float, k: int, *Ms: arb_mat) -> float:
    """max |entry| of Ms times h^k (lh = log2 h), through logarithms: near a blow-up either factor
    alone leaves the float range (h ≈ 1e-21, k = 16), and inf·0 made the candidate box NaN."""
    la = _log2_max_abs(*Ms)
    if la is None:
        return 0.0
    e = la + k * lh
    return 2.0 ** e if e < 1000 else math.inf


def _abs_upper_max(M: arb_mat) -> arb:
    """An exact arb ≥ every |entry| of every matrix in the ball matrix M (+∞ if one is not finite)."""
    return _max_upper(abs(e) for e in M.entries())


# --- point 8: the defect remainder (no a-priori box series) ---------------------------------

DEFECT_TRIES = 3            # candidate tube half-widths per step size


class _DefectBounds:
    """What point 8 reads of one centre, for every step size: its coefficients as state vectors x_k
    (k ≤ K + 1), a_k ≥ ‖x_k‖_∞, and the run's t* ≥ ‖Q[v]‖_∞ / ‖v‖_∞ with q = t*/2 ≥ ‖Q(u, v)‖_∞ /
    (‖u‖_∞‖v‖_∞), exact arbs.  t* is the largest row sum of T (`second_row_sums`): (T|v|)_a ≤
    (Σ_c T_ac)‖v‖_∞, and Q(u, v) = ½ Q[u]v."""

    def __init__(self, co, tstar: arb, ms: list, Ss: list, K: int):
        self.x = [co.to_vector(ms[k], Ss[k]) for k in range(K + 2)]
        self.tstar = tstar
        old = flint.ctx.prec
        flint.ctx.prec = min(old, E_PREC)
        try:
            self.q = (tstar / 2).upper()
            self.a = [_abs_upper_max(x) for x in self.x]
        finally:
            flint.ctx.prec = old


def _scaled_suffix(a: list, hb: arb, top: int) -> tuple[list, list]:
    """(A, S): A_k = a_k h^k (k ≤ top), S_j = Σ_{j ≤ k ≤ top} A_k (S_{top+1} = 0), exact upper arbs."""
    A, p = [], arb(1)
    for k in range(top + 1):
        A.append((a[k] * p).upper())
        p = (p * hb).upper()
    S = [arb(0)] * (top + 2)
    for j in range(top, -1, -1):
        S[j] = (S[j + 1] + A[j]).upper()
    return A, S


def _log_norm_upper(M: arb_mat) -> arb:
    """An exact arb ≥ μ_∞(M') = max_a (M'_aa + Σ_{b≠a} |M'_ab|) for every matrix M' in the ball matrix M
    (the logarithmic norm of the ∞-norm), or 0 when that is larger; +∞ if an entry is not finite."""
    n = M.nrows()
    ent = M.entries()
    # ≥ 0: max(μ, 0) is what is used
    return _max_row_sum(arb_mat(n, n, [ent[i].upper() if i // n == i % n else abs(ent[i]).upper() for i in range(n * n)]))


def _step_defect(var, co, bounds: _DefectBounds, w: arb, jets: _Jets, h: Fraction, K: int, Kj: int, tol: float,
                 kj_hint: int | None = None):
    """One step by point 8 (module docstring): (y, Jh, growth, Jacobian order) or a shrink factor.
    bounds: the centre's coefficients x_0..x_{K+1} and their norms; w ≥ ‖x0 − x̂‖_∞ over the set; jets: Φ_k
    at the centre."""
    hb = arb_of(h)
    H = arb(0).union(hb)
    a, q, tstar = bounds.a, bounds.q, bounds.tstar
    # the Jacobian's defect argument needs Df(P*) = Σ_{j≤K} G*_j t^j to hold every G*_j its orders read
    Kj = min(Kj, K)
    old = flint.ctx.prec
    flint.ctx.prec = min(old, E_PREC)
    try:
        # ∫_0^h ‖δ(s)‖ ds: the order-K coefficient of δ is (K+1)x_{K+1} exactly; the orders above K
        # come from Q(P, P) alone: ≤ q Σ_{i+j=k; i,j≤K} a_i a_j, so their integral is at most
        # q h/(K+2) Σ_{i+j>K} A_i A_j = q h/(K+2) Σ_i A_i S_{K+1−i}
        A, S = _scaled_suffix(a, hb, K)
        pair = arb(0)
        for i in range(1, K + 1):
            pair += A[i] * S[K + 1 - i]
        I_s = (a[K + 1] * hb ** (K + 1) + q * hb * pair / (K + 2)).upper()
        if not I_s.is_finite():
            return 0.5
        Pv = bounds.x[:K + 1]
        PH = _horner(Pv, H)                  # ∋ P(s) for every s ∈ [0, h]
        W = None
        for _ in range(DEFECT_TRIES):
            if W is None:
                mu0 = _log_norm_upper(var.df(*co.to_state(_mid(Pv[0]))))
                e0 = (hb * mu0).exp().upper()
                # any W > 0 is sound; the floor keeps a motionless point (I = w = 0) from W = 0
                W = (4 * e0 * (I_s + w) + arb(2) ** -E_PREC * (1 + _abs_upper_max(Pv[0]))).upper()
            E = _widened(PH, W)
            mu = _log_norm_upper(var.df(*co.to_state(E)))
            if not mu.is_finite():
                return 0.5
            emu = (hb * mu).exp().upper()
            eps, wt = (emu * I_s).upper(), (emu * w).upper()
            inner = (eps + wt).upper()
            if inner < W:
                break
            W = (2 * inner).upper()
        else:
            return 0.7
        if not eps <= tol:
            r = float(eps)
            return 0.9 * (tol / r) ** (1.0 / (K + 2)) if math.isfinite(r) and r > 0 else 0.5
        # the Jacobian: Φ(t; x0) − Ψ_p(t) from its defect D = G Ψ_p − Ψ_p' (orders ≥ p: the order-p one
        # is (p+1)Φ_{p+1}, the higher ones ≤ Σ g_j φ_i with g_j ≤ t* a_j) and the spread
        # Df(x(t; x0)) − Df(P(t)) = Q[x − P], ‖x − P‖_∞ ≤ ε + w' (the tube just proved)
        G, Sg = _scaled_suffix([a[j] * tstar for j in range(K + 1)], hb, K)
        floor = JAC_TOL / co.n ** 2 * 2.0 ** -JAC_MARGIN
        first = min(Kj, JAC_MIN_ORDER if kj_hint is None else max(JAC_MIN_ORDER, kj_hint - 1))
        spread = (hb * tstar * inner).upper()
        chosen = None
        norms = []              # ‖Φ_i‖_∞ bounds, extended as the order rises
        for p in range(first, Kj + 1):
            Phi = jets.upto(p + 1)
            norms += [_row_sum_upper(M) for M in Phi[len(norms):]]
            phi, _ = _scaled_suffix(norms, hb, p + 1)
            psi = arb(0)
            tail = arb(0)
            for i in range(p + 1):
                psi += phi[i]
                tail += phi[i] * Sg[min(p + 1 - i, K + 1)]
            rho = (emu * (phi[p + 1] + hb * tail / (p + 2) + spread * psi)).upper()
            if not rho.is_finite():
                return 0.5
            if float(rho) <= floor or p == Kj:
                chosen = p, rho
                break
    finally:
        flint.ctx.prec = old
    p, rho = chosen
    Phi = jets.upto(p)
    Jpoly = _horner(Phi, hb)
    jtol = _jacobian_tol(co, Phi, hb, p + 1, Jpoly)
    jrem = float(rho)
    if not jrem <= jtol:
        return 0.9 * (jtol / jrem) ** (1.0 / (p + 2)) if math.isfinite(jrem) and jrem > 0 else 0.5
    y = _horner(bounds.x[:K + 1], hb) + arb_mat(co.n, 1, [arb(0, eps)] * co.n)
    r = float(eps)          # 0 when ε underflows a float: then it caps no growth
    grow = min((tol / r) ** (1.0 / (K + 2)) if r > 0 else 2.0,
               (jtol / jrem) ** (1.0 / (p + 2)) if jrem > 0 and p == Kj else 2.0)
    Jh = Jpoly + arb_mat(co.n, co.n, [arb(0, rho)] * (co.n * co.n))
    return y, Jh, 0.95 * grow, p

