"""Exceptions shared by every stage.

`InputError` is the one the command line turns into exit status 2 with a
one-line message: it means the user's input was rejected, never that a claim
failed.
"""

__all__ = ["BlowupDetected", "InputError"]


class InputError(ValueError):
    """Bad user input: a malformed file, an invalid value, a size over a bound."""


class BlowupDetected(ArithmeticError):
    """A trajectory left every bounded set before the requested time."""

    def __init__(self, time: float, message: str = ""):
        super().__init__(message or f"blow-up detected near t = {time!r}")
        self.time = time
