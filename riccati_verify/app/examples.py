"""Built-in example problems, one or more per regime, d = 1 … 4, exact rationals.

Each example carries the regime it must land in.  The expected regime is
justified in a comment from a closed form (MATH.md §6/§7 or a short energy
argument written out here), never from running the classifier.
`riccati-verify check` with no argument runs them all.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as Q

from riccati_verify.core import exact
from riccati_verify.core.model import Gaussian, Params

__all__ = ["EXAMPLES", "Example", "by_name"]


@dataclass(frozen=True)
class Example:
    """One built-in problem with the regime it must land in and why (a closed form, not the classifier)."""

    name: str
    params: Params
    state: Gaussian
    expected: str
    why: str


def _P(A, B, V, b=None) -> Params:
    d = len(A)
    Vm = exact.identity(d, Q(V)) if not isinstance(V, (list, tuple)) else exact.as_matrix(V)
    return Params(exact.as_matrix(A), exact.as_matrix(B), Vm, exact.as_vector(b or [0] * d))


def _G(cov, mean=None) -> Gaussian:
    d = len(cov)
    return Gaussian(exact.as_vector(mean or [0] * d), exact.as_matrix(cov))


def _diag(*xs):
    return [[Q(xs[i]) if i == j else Q(0) for j in range(len(xs))] for i in range(len(xs))]


def _matmul(X, Y):
    return [[sum(Q(X[i][k]) * Q(Y[k][j]) for k in range(len(Y))) for j in range(len(Y[0]))] for i in range(len(X))]


def _add(X, Y):
    return [[Q(a) + Q(b) for a, b in zip(r, s)] for r, s in zip(X, Y)]


# General-V examples with a known equilibrium Σ* = I.  Take B symmetric ≻ 0,
# V = −B and A = B² + K with K skew.  Then
#     F(I) = A + Aᵀ + VB + BᵀVᵀ = 2B² − B² − B² = 0,
# and with H = Σ − I, F(I + H) = KH − HK − 2BHB − BHBH − HBHB, so
#     d/dt ½‖H‖²_F = −2 tr(HBHB) − 2 tr(HBHBH)
#                  ≤ −2 λ_min(B)² ‖H‖² + 2 ‖B‖² ‖H‖³
# (tr(H(KH − HK)) = 0; tr(HBHB) = ‖B^½HB^½‖² ≥ λ_min(B)²‖H‖²).  Hence ‖H‖_F
# decreases to 0 whenever ‖H(0)‖_F < λ_min(B)²/‖B‖₂².  For the B below the
# eigenvalues are 1 and 3, so the bound is 1/9; Σ0 = (201/200)I has
# ‖H(0)‖_F = √d/200 ≤ 1/100 < 1/9 for d ≤ 4 (chosen well inside, so that the
# tool's more conservative certified region of attraction can contain it).  V is not a multiple of I and not
# diagonal, so only the general (numerical + certificate) route applies.
_B3 = [[2, 1, 0], [1, 2, 0], [0, 0, 1]]
_K3 = [[0, 1, 0], [-1, 0, 1], [0, -1, 0]]
_B4 = [[2, 1, 0, 0], [1, 2, 0, 0], [0, 0, 2, 1], [0, 0, 1, 2]]
_K4 = [[0, 1, 0, 0], [-1, 0, 1, 0], [0, -1, 0, 1], [0, 0, -1, 0]]


def _general_equilibrium(B, K) -> Params:
    V = [[-Q(x) for x in r] for r in B]
    return _P(_add(_matmul(B, B), K), B, V)


EXAMPLES: list[Example] = [
    # d = 1, a = 1, v = −1, β = 2: vβ = −2 < 0 and a > 0, so by §6 σ → σ* = −a/(vβ) = 1/2
    # from any σ0 > 0.  M = a + v + vσ*β = −1 < 0: the mean tends to m* = −b/M = 1.
    Example("scalar_equilibrium", _P([[1]], [[2]], -1, [1]), _G([[1]]), "equilibrium",
            "d=1, a>0, v*beta<0: sigma -> -a/(v beta) = 1/2 (MATH.md 6)"),
    # d = 1, a = 1, vβ = 1, σ0 = 1: vβ > 0 and a + vβσ0 = 2 > 0, blow-up at
    # T* = (1/2a) ln(1 + a/(vβσ0)) = ln(2)/2 ≈ 0.3466 (§6).
    Example("scalar_blowup", _P([[1]], [[1]], 1), _G([[1]]), "blowup",
            "d=1, v*beta>0, a+v*beta*sigma0>0: T* = ln(2)/2 (MATH.md 6)"),
    # d = 1, a = −1, vβ = −1 < 0: σ̇ = −2σ − 2σ² < 0 for σ > 0 and σ → 0 (§6: the
    # positive root −a/(vβ) = −1 is not in the state space).
    Example("scalar_collapse", _P([[-1]], [[-1]], 1), _G([[2]]), "collapse",
            "d=1, a<0, v*beta<0: sigma -> 0 (MATH.md 6)"),
    # d = 2, V = −I, B_s = [[2,1],[1,2]] ≻ 0, so −vB_s ≻ 0; A upper triangular with
    # eigenvalues 1, 2 > 0.  §7: P(t) = e^{−Aᵀt}P0e^{−At} + ∫ e^{−Aᵀs}(2B_s)e^{−As} ds ≻ 0
    # for all t and P(t) → P* ≻ 0: global convergence Σ(t) → P*⁻¹.
    Example("riccati_equilibrium_2d", _P([[1, 1], [0, 2]], [[2, 1], [1, 2]], -1, [1, 0]),
            _G([[1, 0], [0, 1]]), "equilibrium",
            "V=-I, B_s>0, Re lambda(A)>0: global convergence via the P-equation (MATH.md 7)"),
    # d = 2, B = 0: Σ(t) = e^{At}Σ0e^{Aᵀt}; with A = diag(1, −1) and Σ0 = I,
    # Σ(t) = diag(e^{2t}, e^{−2t}): unbounded, finite for all t.
    Example("linear_growth_2d", _P([[1, 0], [0, -1]], [[0, 0], [0, 0]], [[1, 2], [0, 1]]),
            _G([[1, 0], [0, 1]]), "growth",
            "B=0: Sigma(t) = e^{At} Sigma0 e^{A^T t} = diag(e^{2t}, e^{-2t})"),
    # d = 2, diagonal A = 0, V = diag(1, 2), B = I, Σ0 = I: two decoupled scalar
    # equations σ̇_i = 2v_iσ_i² with blow-up times 1/(2v_i) (§6, a = 0): T* = 1/4.
    Example("diagonal_blowup_2d", _P([[0, 0], [0, 0]], _diag(1, 1), _diag(1, 2)),
            _G([[1, 0], [0, 1]]), "blowup",
            "diagonal, a=0, v_i beta_i>0: T* = min 1/(2 v_i beta_i sigma_i) = 1/4 (MATH.md 6)"),
    # d = 3, A = V = B = Σ0 = I: Σ(t) = σ(t)I with σ̇ = 2σ + 2σ², σ0 = 1: the §6
    # formula with a = vβ = σ0 = 1 gives T* = ln(2)/2.  (Same signs, Re λ(A) > 0:
    # §7 says blow-up for every Σ0.)
    Example("riccati_blowup_3d", _P(_diag(1, 1, 1), _diag(1, 1, 1), 1), _G(_diag(1, 1, 1)), "blowup",
            "V=B=A=I: Sigma = sigma I, sigma' = 2 sigma + 2 sigma^2, T* = ln(2)/2"),
    # d = 3, the general-V construction above, Σ0 = (21/20)I: converges to Σ* = I.
    Example("general_equilibrium_3d", _general_equilibrium(_B3, _K3), _G(_diag(*[Q(201, 200)] * 3)),
            "equilibrium", "V=-B, A=B^2+K: Sigma*=I, energy estimate ||Sigma0-I||_F < 1/9 (Sigma0 = 1.005 I)"),
    # d = 2, general V, A Hurwitz, small Σ0 = I/20.  For A = [[-2,1],[0,-1]] the Lyapunov
    # equation AᵀP + PA = −I gives P = [[1/4, 1/12], [1/12, 7/12]] (by hand: −4p = −1,
    # p − 3q = 0, 2q − 2r = −1), λ_min(P) = (5 − √5)/12 > 0.2303, ‖PV‖₂ ≤ ‖PV‖_F = √140/12 < 0.987,
    # ‖B‖₂ = (1 + √5)/2 < 1.619, so λ_min(P)/(2‖PV‖‖B‖) > 0.072 > tr(PΣ0) = 1/24.  The
    # linear Lyapunov function tr(PΣ) on the PSD cone (see certificates/check_cone_collapse.py)
    # then decreases to 0: Σ(t) → 0.
    Example("general_collapse_2d", _P([[-2, 1], [0, -1]], [[1, 1], [0, 1]], [[1, 2], [0, 1]]),
            _G([[Q(1, 20), 0], [0, Q(1, 20)]]), "collapse",
            "A Hurwitz, tr(P Sigma0) = 1/24 < lambda_min(P)/(2||PV|| ||B||): linear Lyapunov function on the PSD cone"),
    # d = 4, same construction.
    Example("general_equilibrium_4d", _general_equilibrium(_B4, _K4), _G(_diag(*[Q(201, 200)] * 4)),
            "equilibrium", "V=-B, A=B^2+K: Sigma*=I, energy estimate ||Sigma0-I||_F = 1/100 < 1/9"),
    # d = 4, diagonal, A = −diag(1,2,3,1) Hurwitz, V = diag(1,2,3,4) ≻ 0, B = −I ≺ 0:
    # every coordinate has a < 0 and vβ < 0, so σ_i → 0 (§6).  The seeds' sign
    # rule (opposite signs ⇒ PD equilibrium) does NOT apply: A is Hurwitz.
    Example("diagonal_collapse_4d", _P(_diag(-1, -2, -3, -1), _diag(-1, -1, -1, -1), _diag(1, 2, 3, 4)),
            _G(_diag(1, 1, 1, 1)), "collapse",
            "diagonal, a_i<0, v_i beta_i<0: sigma_i -> 0 (MATH.md 6); seed sign rule fails"),
    # d = 4, V = B = I (same signs), A = −I, Σ0 = I/2: Σ = σI with σ̇ = −2σ + 2σ²,
    # a + vβσ0 = −1/2 < 0, so σ → 0 (§6): no blow-up despite the same signs.
    Example("riccati_collapse_4d", _P(_diag(-1, -1, -1, -1), _diag(1, 1, 1, 1), 1),
            _G(_diag(*[Q(1, 2)] * 4)), "collapse",
            "V=B=I, A=-I, Sigma0=I/2: a+v beta sigma0 = -1/2 < 0, sigma -> 0 (MATH.md 6); seed sign rule fails"),
]


def by_name(name: str) -> Example:
    """The example called `name`; KeyError if there is none."""
    for e in EXAMPLES:
        if e.name == name:
            return e
    raise KeyError(name)
