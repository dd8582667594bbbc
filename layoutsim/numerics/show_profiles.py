"""python -m layoutsim.numerics.show_profiles [ARCH ...] [--table | --json]: every parameter of
the numeric profiles (layoutsim/numerics/profiles.py) with its source, or one line per arch.

A script, not part of the library: nothing in layoutsim imports it.
"""
import json

from ..archs import CDNA
from ..script import Parser, run_script
from .profiles import PROFILES, profile_for


def main(argv=None):
    ap = Parser(prog="python -m layoutsim.numerics.show_profiles")
    ap.add_argument("archs", nargs="*", help="archs (default: all profiles)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--table", action="store_true", help="one line per arch, the main parameters")
    args = ap.parse_args(argv)
    profs = [profile_for(a) for a in args.archs] or list(PROFILES.values())
    if args.json:
        print(json.dumps([{"arch": p.arch, "title": p.title, "confirmed": p.confirmed,
                           "confirmed_params": list(p.confirmed_params), "verified": p.verified,
                           "parameters": {n: {"value": v, "source": s} for n, v, s in p.parameters()}}
                          for p in profs], indent=1))
        return 0
    if args.table:
        cols = ("block_16bit", "block_tf32", "block_fp8", "extra_bits", "fp32_rounding",
                "fp16_rounding", "emax_floor_f32", "emax_floor_f16", "fp8_mma_sync",
                "fp8_align_bits", "fp8_f32_bits")
        short = ("L16", "Ltf32", "Lfp8", "extra", "f32 rnd", "f16 rnd", "floor32", "floor16",
                 "fp8 mma", "fp8 F", "fp8 f32")
        print(f"{'arch':7s} " + " ".join(f"{h:>8s}" for h in short) + "  confirmed")
        for p in profs:
            if p.arch in CDNA:               # no block-FMA parameters: MMA-Sim's models
                models = ", ".join(f"{k} {m}" + (f"/{L}" if L > 1 else "") for k, m, L in p.mfma)
                text = f"(MFMA: {models or 'integer and f64 only; no float model'})"
                print(f"{p.arch:7s} {text:<98s}  {'MMA-Sim' if p.mfma else 'UNVERIFIED'}")
                continue
            vals = " ".join(f"{str(getattr(p, c)):>8s}" for c in cols)
            conf = ("H200" if p.confirmed_params else "UNVERIFIED" if not p.verified else
                    "AMD captures" if "captured on AMD hardware" in p.confirmed else "no")
            print(f"{p.arch:7s} {vals}  {conf}")
        return 0
    for p in profs:
        print(p.label())
        for name, value, source in p.parameters():
            shown = (" ".join(f"{k}={v:#x}" for k, v in value) if name == "nan_payloads" else
                     hex(value) if name.startswith("nan_") and type(value) is int else value)
            mark = "*" if name in p.confirmed_params else " "
            print(f" {mark}{name:18s} {str(shown):>20s}  {source}")
        print(" (* separated from its alternatives and confirmed on a GPU here)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(run_script(main, "python -m layoutsim.numerics.show_profiles"))
