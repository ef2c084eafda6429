"""The adjoint (costate) gradient of the moment system (seed 001, MATH.md §14).

Theorem.  For eq. 1.1 with piecewise-constant controls θ_k on [t_k, t_{k+1}]
and a terminal loss L(m(T), Σ(T)), let H = ⟨p, ṁ⟩ + ⟨P, Σ̇⟩ and let (p, P)
solve ṗ = −∂H/∂m, Ṗ = −∂H/∂Σ backward from (p, P)(T) = ∇L.  Then
dL/dθ_k = ∫_{t_k}^{t_{k+1}} ∂H/∂θ dt.

Symbolic route (exact): the closed forms coded in `riccati_verify.numeric.adjoint`
(`costate_rhs`, `hamiltonian_gradients`) are evaluated on sympy symbols and
compared entry by entry with sympy's own derivatives of H (d = 1, 2): the code
that computes gradients is the derivative of the Hamiltonian.

Numeric route: the adjoint gradient (mpmath, 30 digits) against central finite
differences of L at 30 digits with exact rational perturbations, in seeded
random directions, for the Frobenius and KL losses (d = 1, 2).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import sympy as sp

from riccati_verify.numeric import adjoint as AD
from riccati_verify.numeric.flow import Segment
from riccati_verify.core.model import Gaussian, Params
from riccati_verify.core.result import ProofResult, Status, Verdict, timed

__all__ = [
    "ACCEPT", "CLAIM", "DPS", "HYPOTHESES", "NAME", "RNG_SEED", "SEED", "check", "hypotheses",
    "numeric_check", "symbolic_check",
]

NAME = "adjoint"
SEED = "001"
CLAIM = "the costate (adjoint) gradient of a terminal loss equals the derivative w.r.t. piecewise-constant controls"
HYPOTHESES = ["piecewise-constant controls", "no blow-up on [0, T]", "L differentiable at x(T)"]
RNG_SEED = 1401
DPS = 30
ACCEPT = 1e-8


def _sym(name, d, vector=False):
    if vector:
        return np.array(sp.symbols(f"{name}0:{d}"), dtype=object)
    return np.array(sp.symbols(f"{name}0:{d * d}"), dtype=object).reshape(d, d)


def symbolic_check(dims=(1, 2)) -> Verdict:
    """Symbolic route: the coded costate and ∂H/∂θ formulas equal sympy's derivatives of H.

    CERTIFIED when every identity holds, REFUTED otherwise.
    """
    ev, ok = {}, True
    for d in dims:
        A, B, V, S, P = (_sym(n, d) for n in ("a", "B", "v", "s", "P"))
        b, m, p = (_sym(n, d, True) for n in ("b", "m", "p"))
        J = A + V @ S @ B
        H = p @ ((A + V + V @ S @ B) @ m + b) + np.sum(P * (J @ S + S @ J.T))
        H = sp.expand(H)
        grad = lambda X: np.vectorize(lambda x: sp.diff(H, x), otypes=[object])(X)
        dp, dP = AD.costate_rhs(A, B, V, m, S, p, P)
        gA, gB, gV, gb = AD.hamiltonian_gradients(A, B, V, m, S, p, P)
        pairs = {"-pdot=dH/dm": (dp, grad(m)), "-Pdot=dH/dSigma": (dP, grad(S)), "dH/dA": (gA, grad(A)),
                 "dH/dB": (gB, grad(B)), "dH/dV": (gV, grad(V)), "dH/db": (gb, grad(b))}
        for k, (code, exact) in pairs.items():
            same = all(sp.expand(x - y) == 0 for x, y in zip(np.ravel(code), np.ravel(exact)))
            ev[f"d={d} {k}"] = same
            ok &= same
    return Verdict(Status.CERTIFIED if ok else Status.REFUTED, ev,
                   "costate and gradient formulas equal sympy's derivatives of the Hamiltonian")


def numeric_check(seed: int = RNG_SEED) -> Verdict:
    """Numeric cross-check: adjoint gradient against central differences at 30 digits, seeded directions.

    At most CONFIRMED_NUMERICALLY (floats prove nothing).
    """
    rng = np.random.default_rng(seed)
    q = lambda x: Fraction(int(x), 8)
    ev, worst = {}, 0.0
    for d in (1, 2):
        for kind in ("frobenius", "kl"):
            mat = lambda: [[q(x) for x in r] for r in rng.integers(-2, 3, size=(d, d))]
            segs = [Segment(Fraction(1, 4), Params(*(tuple(map(tuple, mat())) for _ in range(3)),
                                                   tuple(q(x) for x in rng.integers(-4, 5, size=d))))
                    for _ in range(2)]
            s0 = Gaussian(tuple(q(x) for x in rng.integers(-8, 9, size=d)),
                          tuple(tuple(Fraction(int(i == j)) for j in range(d)) for i in range(d)))
            tgt = Gaussian(tuple(Fraction(0) for _ in range(d)),
                           tuple(tuple(Fraction(2 if i == j else 0) for j in range(d)) for i in range(d)))
            direction = [tuple(mat() for _ in range(3)) + ([q(x) for x in rng.integers(-4, 5, size=d)],)
                         for _ in segs]
            chk = AD.directional_fd_check(segs, s0, AD.TerminalLoss(kind, tgt), direction, dps=DPS)
            rel = float(chk["relative_error"])
            ev[f"d={d} {kind}"] = f"adjoint {float(chk['adjoint']):.12g}, FD {float(chk['finite_difference']):.12g}, rel {rel:.1e}"
            worst = max(worst, rel)
    ev.update(worst_relative_error=worst, seed=seed, dps=DPS)
    return Verdict(Status.CONFIRMED_NUMERICALLY if worst < ACCEPT else Status.REFUTED, ev,
                   "adjoint vs central differences (h = 1e-12) at 30 digits")


def check() -> ProofResult:
    """Run both routes, timed; `ProofResult.status` combines their verdicts into the theorem's."""
    return timed(lambda: ProofResult(NAME, SEED, CLAIM, symbolic_check(), numeric_check()))


def hypotheses(problem, *, time=None):
    """The hypotheses above that concern a parameter file (`riccati-verify hypotheses`).

    A parameter file is one constant control θ, i.e. a single piece; 'no blow-up on [0, T]' is
    decided rigorously (undecided without --time unless the solution exists for all t).  The
    loss L is not part of a parameter file, so its differentiability is not checked here."""
    from riccati_verify.certify.hypotheses import HypothesisCheck, solution_exists_on_horizon

    params, state = problem.require_params(), problem.require_state()
    return [HypothesisCheck(HYPOTHESES[0], True, {"controls": "one constant piece (parameter file)"}),
            solution_exists_on_horizon(params, state, time)]


if __name__ == "__main__":
    r = check()
    print(r.status, r.symbolic.evidence, r.numeric.evidence, sep="\n")
