"""Producers of certified results: regimes, equilibria, blow-up times, reachability and
minimal time.  Each result carries `status`, `to_dict()` and `certificate`; a certificate
is kept only when `riccati_verify.checker.verify_certificate` accepts it.
"""

__all__: list[str] = []
