"""One executable check per theorem of the source papers.

Each module here defines:

- NAME:  short identifier (the module name);
- SEED:  which source summary states the theorem ("000", "001", "002", "004");
- CLAIM: the statement, one sentence;
- HYPOTHESES: list of hypothesis descriptions;
- check() -> riccati_verify.core.result.ProofResult: a symbolic/exact check and an
  independent numeric cross-check, each a Verdict with evidence.

The module docstring states the theorem in full.  `all_proofs()` lists them;
`riccati-verify prove` runs them.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["all_proofs", "load"]


def all_proofs() -> list[str]:
    """The proof modules' names, found on disk: a new theorem file is picked up without registering it."""
    return sorted(i.name for i in pkgutil.iter_modules(__path__) if not i.name.startswith("_"))


def load(name: str):
    """Import one proof module by name; InputError for an unknown name (it comes from the command line)."""
    if name not in all_proofs():
        from riccati_verify.core.errors import InputError

        raise InputError(f"unknown proof '{name}'; available: {', '.join(all_proofs())}")
    return importlib.import_module(f"{__name__}.{name}")
