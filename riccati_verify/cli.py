"""The `riccati-verify` command.

Subcommands live in `riccati_verify.commands`, one module each, and are found
by name: a module defines NAME, HELP, `add_arguments(parser)` and
`run(args) -> int`.  Exit status: 0 the claim holds, 1 refuted or not
certified, 2 bad input (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import __version__, commands
from .errors import InputError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, as DESIGN.md asks
        self.exit(2, f"{self.prog}: error: {message}\n")


def command_modules():
    mods = []
    for info in pkgutil.iter_modules(commands.__path__):
        if not info.name.startswith("_"):
            mods.append(importlib.import_module(f"{commands.__name__}.{info.name}"))
    return sorted(mods, key=lambda m: m.NAME)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="riccati-verify", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"riccati-verify {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for mod in command_modules():
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args))
    except InputError as e:
        sys.stderr.write(f"riccati-verify {args.command}: error: {e}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
