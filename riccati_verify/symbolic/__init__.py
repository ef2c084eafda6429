"""Symbolic derivations (sympy): the moment ODE, multi-head, mixture and common-noise identities.

Exact symbolic algebra, no floats.  Import the submodules directly: this
package loads none of them, so importing it does not load sympy.
"""

__all__ = ["mixture", "moments", "multihead", "noise", "views"]
