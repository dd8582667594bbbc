"""python -m layoutsim.numerics.cases INSTRUCTION [--n N] [--seed S] [--arch A]: the plan, and how
many generated cases separate each candidate behaviour from the profile."""
from ..api import resolve
from ..plan import make_plan
from . import coverage


def main(argv=None):
    from ...script import Parser
    ap = Parser(prog="python -m layoutsim.numerics.cases", description="coverage of the generated cases")
    ap.add_argument("instruction")
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--arch", default="sm_90")
    args = ap.parse_args(argv)
    inst, prof = resolve(args.instruction, args.arch)
    print(make_plan(inst, prof).describe())
    cov = coverage(args.instruction, args.n, args.seed, args.arch)
    print(f"{args.n} cases, seed {args.seed}: cases that separate each candidate from the profile")
    for label, count in cov.items():
        print(f"  {label:32s} {count:6d}" + ("   (cannot matter here)" if count == 0 else ""))
    return 0


if __name__ == "__main__":
    from ...script import run_script
    raise SystemExit(run_script(main, "python -m layoutsim.numerics.cases"))
