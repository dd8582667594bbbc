"""`layoutsim` command line: one subcommand per module in layoutsim/commands/.

Each command module defines `register(subparsers)` and `run(args) -> int` and imports its
heavy dependencies (numba) inside `run`, so `layoutsim query` starts fast. Bad input raises
LayoutsimError, printed here as one line with exit code 2.
"""
import argparse
import importlib
import sys

from .errors import LayoutsimError

COMMANDS = ("query", "show", "list", "banks", "swizzle_search", "render")


class _Parser(argparse.ArgumentParser):
    def error(self, message):           # argparse's own errors: one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser():
    parser = _Parser(prog="layoutsim", description="Lane/register/bit-level model of GPU matrix "
                     "instructions, shared-memory banks and tensor-core arithmetic.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"{__package__}.commands.{name}").register(sub)
    return parser


def _version():
    from . import __version__
    return f"layoutsim {__version__}"


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.run(args) or 0
    except LayoutsimError as e:
        print(f"layoutsim: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
