"""`layoutsim list`: the catalog, optionally for one arch or family."""
from . import print_json


def register(sub):
    p = sub.add_parser("list", help="list instructions in the catalog",
                       description="List the catalog's instructions, optionally for one arch.")
    p.add_argument("--arch", help="only instructions available on this arch (sm_90, gfx1201, ...)")
    p.add_argument("--family", help="mma, ldmatrix, stmatrix, wgmma, wmma (AMD v_wmma_* and nvcuda::wmma "
                   "fragments), wmma.load (nvcuda::wmma only), swmmac")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run)


def run(args):
    from ..archs import generation, normalize
    from ..isa.registry import listing
    arch = normalize(args.arch)
    entries = listing(arch, args.family)
    if args.json:
        print_json({"arch": arch, "family": args.family, "instructions": [
            {"name": e.name, "family": e.family, "vendor": e.vendor, "archs": list(e.archs),
             "wave": e.wave, "aliases": list(e.aliases), "summary": e.summary} for e in entries]})
        return 0
    width = max((len(e.name) for e in entries), default=0)
    for e in entries:
        first = e.archs[0] + ("+" if e.vendor == "nvidia" and len(e.archs) > 1 else "")
        where = first if e.vendor == "nvidia" else generation(e.archs[0])
        print(f"{e.name:<{width}}  {where:<7} {e.summary}")
    print(f"{len(entries)} instructions" + (f" on {arch}" if arch else ""))
    if any(e.vendor == "amd" for e in entries):
        print("AMD layouts come from AMD's ISA guides and matrix instruction calculator; "
              "not run on AMD hardware here.")
    return 0
