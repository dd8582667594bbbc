"""How layoutsim's entry points behave: the `layoutsim` command and the `python -m` scripts of
library modules (`layoutsim.numerics.corpus`, `layoutsim.numerics.cases`, ...) alike.

Bad input is one line on stderr and exit code 2, never a traceback (argparse's own errors
included), and output piped into a reader that stops early (`| head`) ends quietly. This lives
below the command line (layoutsim/cli.py and layoutsim/commands/ use it) so that a library
module's script never imports the CLI.
"""
import argparse
import sys

from .errors import LayoutsimError, one_line
from .files import pipe_safe_stdout


class Parser(argparse.ArgumentParser):
    """argparse, with its own errors on one line (exit 2) like every other bad input."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


def run_script(main, prog, *args):
    """Run an entry point (`layoutsim`, `python -m layoutsim.numerics.cases`, ...): a
    LayoutsimError is one line on stderr and exit code 2; output may be piped into `head`."""
    with pipe_safe_stdout():
        try:
            return main(*args) or 0
        except LayoutsimError as e:
            print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
            return 2
