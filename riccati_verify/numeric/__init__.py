"""Floating-point numerics: integration of the moment ODE, adjoints, particle simulators
and the float views of the exact model.  Nothing here decides a certified verdict.
"""

__all__: list[str] = []
