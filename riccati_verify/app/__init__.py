"""The application layer: the command line, reports, sweeps and printing.  It parses,
calls the library and prints; verdicts live in the layers below.
"""

__all__: list[str] = []
