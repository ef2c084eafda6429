"""riccati_verify: verified analysis of mean-field Transformer dynamics on Gaussian token laws.

The pipeline flows one way: model → symbolic / numeric → certify → certificate → checker.
"""

__version__ = "0.1.0"

from .errors import BlowupDetected, InputError
from .model import Gaussian, Params

__all__ = ["Gaussian", "Params", "InputError", "BlowupDetected", "__version__"]
