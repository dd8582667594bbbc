"""`layoutsim` command line: one subcommand per module in layoutsim/commands/.

Each command module defines `register(subparsers)` and `run(args) -> int` and imports its
heavy dependencies (numba) inside `run`, so `layoutsim query` starts fast. Bad input raises
LayoutsimError, printed here as one line (control characters escaped) with exit code 2. Output
piped into a reader that stops early (`| head`) ends the output quietly, not with a traceback.
"""
import argparse
import importlib
import sys

from .errors import LayoutsimError, one_line
from .files import pipe_safe_stdout

COMMANDS = ("query", "show", "list", "banks", "coalesce", "swizzle_search", "render", "desc", "ptx")


# command-line words one call may give: argparse's parsing takes time quadratic in the number of
# options (10,000 `--var` options take seconds before any command runs); no command needs more
# (`banks --var` takes at most 1000 variables, address.MAX_VARIABLES)
MAX_ARGUMENTS = 4096


class Parser(argparse.ArgumentParser):
    """argparse, with its own errors on one line (exit 2) like every other bad input."""

    def parse_known_args(self, args=None, namespace=None):
        words = sys.argv[1:] if args is None else args
        if len(words) > MAX_ARGUMENTS:
            self.error(f"{len(words)} command-line arguments given; at most {MAX_ARGUMENTS}")
        return super().parse_known_args(args, namespace)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


def build_parser(only=None):
    """The whole command line, or with `only` (a module name of COMMANDS) just that command's:
    importing every command module (and what they import) is a fifth of a cold `layoutsim query`."""
    parser = Parser(prog="layoutsim", description="Lane/register/bit-level model of GPU matrix "
                     "instructions, shared-memory banks and tensor-core arithmetic.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in ([only] if only else COMMANDS):
        importlib.import_module(f"{__package__}.commands.{name}").register(sub)
    from .commands._options import record_defaults
    record_defaults(parser)        # so a command can refuse options that mean nothing in its mode
    return parser


def _version():
    from . import __version__
    return f"layoutsim {__version__}"


def run_script(main, prog, *args):
    """Run an entry point (`layoutsim`, `python -m layoutsim.numerics.cases`, ...): a
    LayoutsimError is one line on stderr and exit code 2; Ctrl-C is one line (where a run
    stopped, when it says: layoutsim.ptx's Interrupted) and exit code 130 (128 + SIGINT), as
    shells report it; output may be piped into `head`."""
    with pipe_safe_stdout():
        try:
            return main(*args) or 0
        except LayoutsimError as e:
            print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt as e:
            print(f"{prog}: interrupted" + (f": {one_line(e)}" if str(e) else ""), file=sys.stderr)
            return 130


def _command_of(argv):
    """The module of the command argv names first, or None (help, --version, a typo: those need
    the whole parser)."""
    first = (sys.argv[1:] if argv is None else list(argv))[:1]
    name = first[0].replace("-", "_") if first else ""
    return name if name in COMMANDS else None


def main(argv=None):
    def run(argv):
        args = build_parser(_command_of(argv)).parse_args(argv)
        return args.run(args)
    return run_script(run, "layoutsim", argv)


if __name__ == "__main__":
    sys.exit(main())
