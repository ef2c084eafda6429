"""The `riccati-verify` command.

Subcommands live in `riccati_verify.app.commands`, one module each, and are found
by name: a module defines NAME, HELP, `add_arguments(parser)` and
`run(args) -> int`.  Exit status: 0 the claim holds, 1 refuted or not
certified, 2 bad input (one line on stderr, no traceback), 3 an internal
error (one line on stderr; ``--debug`` before the subcommand prints the traceback).
With ``--json`` every error is also a JSON object on stdout,
``{"error": MESSAGE, "kind": "input" | "internal" | "interrupted", "command": NAME}``,
with the same exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import sys

from riccati_verify.core.version import __version__
from riccati_verify.app import commands
from riccati_verify.core.errors import InputError

__all__ = ["DESCRIPTION", "build_parser", "command_module", "main", "selected_command"]

DESCRIPTION = ("Verified analysis of mean-field Transformer dynamics on Gaussian token distributions: "
               "derive and integrate the moment ODE, classify regimes, enclose blow-up times, steer "
               "Gaussians, simulate tokens, and write certificates that 'verify' re-checks independently.")


# set by `main` for the run in progress: a usage error found by argparse is then a JSON object too
_json_errors = False


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2, as DESIGN.md asks
        if _json_errors:
            _json_error(message, "input", self.prog.removeprefix("riccati-verify").strip() or None)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _json_error(message: str, kind: str, command: str | None) -> None:
    sys.stdout.write(json.dumps({"error": message, "kind": kind, "command": command}, indent=1) + "\n")
    sys.stdout.flush()


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
    parser = _Parser(prog="riccati-verify", description=DESCRIPTION,
                     epilog="Run 'riccati-verify COMMAND --help' for a command's options. Exit status: 0 the "
                            "claim holds, 1 refuted or not certified, 2 bad input, 3 internal error.")
    parser.add_argument("--version", action="version", version=f"riccati-verify {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, help_ in sorted(commands.COMMANDS.items()):
        p = sub.add_parser(name, help=help_, description=help_)
        if argv is None or name == chosen:
            mod = command_module(name)
            p.add_argument("--json", action="store_true", help="machine-readable output on stdout (no progress)")
            mod.add_arguments(p)
            with contextlib.suppress(argparse.ArgumentError):  # a command may define its own --quiet
                p.add_argument("--quiet", action="store_true", help="no progress on stderr")
            p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line on `argv` (default sys.argv[1:]); returns the exit status."""
    global _json_errors
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = selected_command(argv)
    # --json belongs to the subcommand: it counts only after the subcommand's name
    _json_errors = chosen is not None and "--json" in argv[argv.index(chosen) + 1:]
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not getattr(args, "_run", None):
            parser.print_help()
            return 2
        return _run(args)
    finally:
        _json_errors = False


def _run(args) -> int:
    def fail(message: str, kind: str = "input", status: int = 2) -> int:
        label = "internal error" if kind == "internal" else "error"
        sys.stderr.write(f"riccati-verify {args.command}: {label}: {message}\n")
        if getattr(args, "json", False):
            _json_error(message, kind, args.command)
        return status

    from riccati_verify.app.output import progress_policy, reset_inputs

    reset_inputs()
    try:
        # a bad RICCATI_VERIFY_THREADS is refused at start, whatever the command and size
        from riccati_verify.core.threads import thread_count
        thread_count()
        with progress_policy(sys.stderr, as_json=getattr(args, "json", False), quiet=getattr(args, "quiet", False)):
            return int(args._run(args))
    except InputError as e:
        return fail(str(e))
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        if getattr(args, "json", False):
            _json_error("interrupted", "interrupted", args.command)
        return 130
    except (OverflowError, FloatingPointError) as e:
        # an exact input whose float view does not exist (|x| > 1.8e308) or whose float
        # computation overflows: the input is outside what this command can compute with
        if args.debug:
            raise
        return fail(f"a number in the input is outside the floating-point range this command computes in "
                    f"({_one_line(e)})")
    except MemoryError:
        return fail("out of memory on this input")
    except Exception as e:  # noqa: BLE001 - the boundary: never a traceback without --debug
        if args.debug:
            raise
        return fail(f"{type(e).__name__}: {_one_line(e)} (rerun with 'riccati-verify --debug {args.command} ...' "
                    f"for the traceback)", "internal", 3)
    finally:
        reset_inputs()      # a library call after this run in the same process records nothing of it


def _one_line(e: BaseException) -> str:
    s = " ".join(str(e).split())
    return s if len(s) <= 300 else s[:297] + "..."
