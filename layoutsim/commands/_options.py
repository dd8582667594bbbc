"""Options that mean nothing in the combination given are refused, never silently ignored.

An ignored option reads as if it had been applied (`render ... --desc 0x... --lanes 0-7` drew no
highlight, `desc check --tma-at 1,1` without `--tma-box` said "sound"). So `cli.build_parser`
records every (sub)command's options and their defaults on the parsed arguments
(`record_defaults`), and a command states, for the mode its command line chose, which options
apply there (`only`): every other option that was given (set to anything but its default) is
refused in one line naming all of them. An option added to a command later is therefore refused
in the modes that do not list it, instead of being ignored there.
"""
import argparse

from ..errors import LayoutsimError


def record_defaults(parser):
    """Store {dest: (default, --spelling)} of the options of `parser` and of every subcommand
    below it; argparse leaves the innermost subcommand's on the parsed arguments."""
    opts = {a.dest: (a.default, max(a.option_strings, key=len)) for a in parser._actions
            if a.option_strings and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))}
    parser.set_defaults(_options=opts)
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub in set(a.choices.values()):
                record_defaults(sub)


def given(args):
    """dest of every option the command line set (arguments built by hand record none)."""
    return [d for d, (default, _) in getattr(args, "_options", {}).items() if getattr(args, d, default) != default]


def spelling(args, dest):
    return getattr(args, "_options", {}).get(dest, (None, "--" + dest.replace("_", "-")))[1]


def only(args, allowed, where, hint=""):
    """Refuse every given option not in `allowed` (dests), in one line: `where` says in which
    mode the command is ("with --desc"), `hint` what the refused options need instead."""
    refuse(args, [d for d in given(args) if d not in set(allowed)], where, hint)


def refuse(args, dests, where, hint=""):
    """Refuse the given options among `dests` (one line naming all of them)."""
    bad = [d for d in dests if d in given(args)]
    if bad:
        names = ", ".join(spelling(args, d) for d in bad)
        raise LayoutsimError(f"{names} {'does' if len(bad) == 1 else 'do'} not apply {where}"
                             + (f": {hint}" if hint else "") + "; drop " + ("it" if len(bad) == 1 else "them"))
