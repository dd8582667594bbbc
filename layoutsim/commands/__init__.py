"""One module per `layoutsim` subcommand: register(subparsers) and run(args)."""
import json
import sys


def print_json(obj):
    json.dump(obj, sys.stdout, indent=1)
    sys.stdout.write("\n")


def add_arch(parser, help_text="target arch (sm_80, sm_90, gfx1100, gfx1201, ...)"):
    parser.add_argument("--arch", help=help_text)
