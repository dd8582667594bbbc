"""`layoutsim` command line: one subcommand per module in layoutsim/commands/.

Each command module defines `register(subparsers)` and `run(args) -> int` and imports its
heavy dependencies (numba) inside `run`, so `layoutsim query` starts fast. Bad input raises
LayoutsimError, printed as one line (control characters escaped) with exit code 2; output
piped into a reader that stops early (`| head`) ends quietly, not with a traceback: both by
layoutsim/script.py, which the `python -m` scripts of library modules use too.
"""
import importlib
import os
import sys

from .script import Parser, run_script

COMMANDS = ("query", "show", "list", "banks", "coalesce", "swizzle_search", "render", "desc", "ptx", "triton")


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


def _command_of(argv):
    """The module of the command argv names first, or None (help, --version, a typo: those need
    the whole parser)."""
    first = (sys.argv[1:] if argv is None else list(argv))[:1]
    name = first[0].replace("-", "_") if first else ""
    return name if name in COMMANDS else None


def main(argv=None):
    # numpy's OpenBLAS starts a spinning thread per core as numpy is imported: ~0.1 s of CPU in
    # every command (half of numpy's import), taken from the main thread on a busy machine. Our
    # only BLAS calls are numerics/api._int_matmul's small exact products (the same whatever the
    # thread count), so one thread, unless the user chose otherwise (issue 26).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

    def run(argv):
        args = build_parser(_command_of(argv)).parse_args(argv)
        return args.run(args)
    return run_script(run, "layoutsim", argv)


if __name__ == "__main__":
    sys.exit(main())
