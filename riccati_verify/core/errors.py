"""Exceptions shared by every stage.

`InputError` is the one the command line turns into exit status 2 with a
one-line message: it means the user's input was rejected, never that a claim
failed.
"""

__all__ = ["BlowupDetected", "InputError", "WorkBudgetExceeded"]


class InputError(ValueError):
    """Bad user input: a malformed file, an invalid value, a size over a bound."""


class WorkBudgetExceeded(InputError):
    """An exact step's work estimate is past its budget: refused before it starts.  Distinct from
    every mathematical outcome (a singular system, a failed proof): the question is undecided."""


class BlowupDetected(ArithmeticError):
    """A trajectory left every bounded set before the requested time."""

    def __init__(self, time: float, message: str = ""):
        super().__init__(message or f"blow-up detected near t = {time!r}")
        self.time = time
