"""Symbolic derivations (sympy): the moment ODE, equilibria, closed forms."""
