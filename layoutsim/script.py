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
