"""riccati_verify: verified analysis of mean-field Transformer dynamics on Gaussian token laws.

Conventions, everywhere in the package: the attention kernel is exp(⟨Bx, y⟩)
with the query x, so a Transformer head with scores ⟨Qx, Ky⟩ has B = KᵀQ; the
softmax runs over all tokens, self included.  Gaussian laws N(m, Σ) stay
Gaussian under v(x) = Ax + b + V·Attn_B[μ](x), with
ṁ = (A + V)m + VΣBm + b and Σ̇ = JΣ + ΣJᵀ, J = A + VΣB.

The package is in layers, imports pointing one way (see CONTRIBUTING.md):

    core      exact ℚ algebra, ball arithmetic, the model types, untrusted-JSON parsing
    checker   the independent certificate checker (core and python-flint only)
    symbolic  sympy derivations
    numeric   integration and particle simulators
    certify   regimes, equilibria, blow-up, reachability: results and certificates
    testing   hypothesis strategies and property checks
    app       the command line, reports, sweeps

The public names below are loaded on first use (PEP 562), so ``import
riccati_verify`` costs almost nothing and loads no numerics.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from riccati_verify.core.version import __version__

_PUBLIC = {
    "moment_ode": "riccati_verify.symbolic.moments",
    "integrate_moments": "riccati_verify.numeric.flow",
    "classify_regime": "riccati_verify.certify.stability",
    "find_equilibria": "riccati_verify.certify.stability",
    "blowup_time": "riccati_verify.certify.blowup",
    "decide_blowup": "riccati_verify.certify.global_existence",
    "reach": "riccati_verify.certify.reach",
    "simulate_tokens": "riccati_verify.numeric.simulate.compare",
    "verify_certificate": "riccati_verify.checker",
    "load_problem": "riccati_verify.core.io",
    "Params": "riccati_verify.core.model",
    "Gaussian": "riccati_verify.core.model",
    "Status": "riccati_verify.core.result",
    "InputError": "riccati_verify.core.errors",
    "BlowupDetected": "riccati_verify.core.errors",
}

__all__ = sorted(_PUBLIC) + ["__version__"]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names load lazily
    from riccati_verify.certify.blowup import blowup_time
    from riccati_verify.certify.global_existence import decide_blowup
    from riccati_verify.certify.reach import reach
    from riccati_verify.certify.stability import classify_regime, find_equilibria
    from riccati_verify.checker import verify_certificate
    from riccati_verify.core.errors import BlowupDetected, InputError
    from riccati_verify.core.io import load_problem
    from riccati_verify.core.model import Gaussian, Params
    from riccati_verify.core.result import Status
    from riccati_verify.numeric.flow import integrate_moments
    from riccati_verify.numeric.simulate.compare import simulate_tokens
    from riccati_verify.symbolic.moments import moment_ode


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'riccati_verify' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
