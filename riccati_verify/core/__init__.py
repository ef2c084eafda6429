"""The trusted core: exact ℚ algebra, python-flint ball arithmetic, the model types
(Fractions only), untrusted-JSON parsing and the certificate envelope.  Imports the
standard library and python-flint only.
"""

__all__: list[str] = []
