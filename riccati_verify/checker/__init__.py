"""The independent checker: the trusted core of riccati_verify.

`verify_certificate(doc)` re-derives a certificate's verdict from its witness
in exact rationals or python-flint ball arithmetic.  One module
`check_<kind>.py` per claim kind; private helpers start with an underscore.

The checker imports `riccati_verify.core`, python-flint and the standard
library only: never numpy, sympy, mpmath, cvxpy, and never the code that
produced the certificate (tests/test_layers.py enforces this).  Producers
learn whether a document is valid through `verify_certificate` alone.
"""

from riccati_verify.checker.verify import CheckResult, known_kinds, verify_certificate

__all__ = ["CheckResult", "known_kinds", "verify_certificate"]
