"""The `riccati-verify` command.

Subcommands live in `riccati_verify.app.commands`, one module each, and are found
by name: a module defines NAME, HELP, `add_arguments(parser)` and
`run(args) -> int`.  Exit status: 0 the claim holds, 1 refuted or not
certified, 2 bad input (one line on stderr, no traceback), 3 an internal
error (one line on stderr; ``--debug`` before the subcommand prints the traceback).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from riccati_verify.core.version import __version__
from riccati_verify.app import commands
from riccati_verify.core.errors import InputError

__all__ = ["build_parser", "command_module", "main", "selected_command"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, as DESIGN.md asks
        self.exit(2, f"{self.prog}: error: {message}\n")


def command_module(name: str):
    """The module of one subcommand (imported on demand: it may load numerics)."""
    return importlib.import_module(f"{commands.__name__}.{name}")


def selected_command(argv: list[str]) -> str | None:
    """The subcommand named in argv: the first word that is not an option."""
    for a in argv:
        if not a.startswith("-"):
            return a if a in commands.COMMANDS else None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; only the subcommand named in `argv` gets its arguments (and its imports).

    With argv None every subcommand is imported and complete (for documentation tools).
    """
    chosen = selected_command(argv) if argv is not None else None
    parser = _Parser(prog="riccati-verify", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"riccati-verify {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, help_ in sorted(commands.COMMANDS.items()):
        p = sub.add_parser(name, help=help_, description=help_)
        if argv is None or name == chosen:
            mod = command_module(name)
            p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
            mod.add_arguments(p)
            p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line on `argv` (default sys.argv[1:]); returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv)
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
    except (OverflowError, FloatingPointError) as e:
        # an exact input whose float view does not exist (|x| > 1.8e308) or whose float
        # computation overflows: the input is outside what this command can compute with
        if args.debug:
            raise
        sys.stderr.write(f"riccati-verify {args.command}: error: a number in the input is outside the "
                         f"floating-point range this command computes in ({_one_line(e)})\n")
        return 2
    except MemoryError:
        sys.stderr.write(f"riccati-verify {args.command}: error: out of memory on this input\n")
        return 2
    except Exception as e:  # noqa: BLE001 - the boundary: never a traceback without --debug
        if args.debug:
            raise
        sys.stderr.write(f"riccati-verify {args.command}: internal error: {type(e).__name__}: {_one_line(e)} "
                         f"(rerun with 'riccati-verify --debug {args.command} ...' for the traceback)\n")
        return 3


def _one_line(e: BaseException) -> str:
    s = " ".join(str(e).split())
    return s if len(s) <= 300 else s[:297] + "..."
