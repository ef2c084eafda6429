"""Certificates: a JSON envelope (schema.py), writers in the producing modules,
and an independent checker (checker.py) that re-derives every verdict from the
witness in exact rationals or ball arithmetic.

The checker side (`checker.py` and every `check_<kind>.py`) imports only
`riccati_verify.exact`, `riccati_verify.io` (parsing), `riccati_verify.model`
and python-flint: never the code that produced the certificate, never cvxpy.
"""
