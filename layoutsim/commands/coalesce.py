"""`layoutsim coalesce`: requests and sectors of one warp's global-memory access.

    layoutsim coalesce --op ld.global.v4.b32 --addr "lane*16"
    layoutsim coalesce --op ld.global.b32 --addr "lane*stride*4" --var stride=33 --active 0xffff
    layoutsim coalesce --op st.global.b32 --offsets 0,4,8,... -v
    layoutsim coalesce --op ld.global.b32 --stride                 (strides 1, 2, 4, ... 32 elements)
    layoutsim coalesce --op ld.global.v4.b32 --addr "lane*48" --picture sectors.svg
    layoutsim coalesce --op global_load_b32 --arch gfx1201 --stride   (AMD, from documents)
    layoutsim coalesce --list-ops

--json prints the dict of layoutsim.memory.coalesce: {"op", "arch", "vendor", "active_lanes",
"requests", "sectors", "ideal_sectors", "excess_sectors", "lines", "wavefronts", "sector_bytes",
"bytes_requested", "bytes_fetched", "sector_lanes": [{"sector", "lanes"}], "rule", "source",
"status", "extrapolated", "notes"}; with --stride {"op", "arch", "base", "sector_bytes", "rows": [{"stride",
"stride_bytes", "requests", "sectors", "ideal_sectors", "lines", "wavefronts"}], "rule", "source", "status",
"extrapolated", "notes"}; "extrapolated" is true on an NVIDIA arch other than the measured sm_90 (H200).
"""
from ._options import only, refuse
from .banks import print_json              # compact: lists of numbers on one line
from ..errors import LayoutsimError

DEFAULT_STRIDES = (1, 2, 4, 8, 16, 32)
MAX_STRIDE = 1 << 20


def register(sub):
    p = sub.add_parser("coalesce", help="requests and sectors of one warp's global-memory access",
                       description="L1TEX requests, 32-byte sectors, 128-byte lines and wavefronts of "
                                   "one warp's global load/store/atomic, as Nsight Compute counts them, "
                                   "and how far that is from ideal.")
    p.add_argument("--op", help="ld.global.b32, ld.global.v4.b32, ld.global.nc.v2.b32, st.global.b8, "
                   "atom.global.add.u32, red.global.add.f32, cp.async.ca.shared.global.16, "
                   "global_load_b128 (AMD, with --arch), ...")
    p.add_argument("--arch", help="arch: sm_90 (default for NVIDIA ops), sm_80, gfx1100, gfx1201, ...")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--addr", help="byte offset from a 256-byte aligned buffer, as an expression in "
                     "lane, e.g. \"lane*16\" or \"(lane%%8)*row + (lane//8)*16\"")
    src.add_argument("--offsets", help="32 comma-separated byte offsets ('_' = the lane gives none)")
    src.add_argument("--stride", nargs="?", const=",".join(map(str, DEFAULT_STRIDES)), metavar="LIST",
                     help="table over element strides: lane L at BASE + L*stride*width (default "
                          "1,2,4,8,16,32)")
    p.add_argument("--base", type=int, default=0, help="with --stride: byte offset of lane 0 (default 0)")
    p.add_argument("--var", action="append", metavar="NAME=VALUE", help="variable for --addr (repeatable)")
    p.add_argument("--active", help="active lanes: a hex mask (0xffff) or lanes and ranges (0-15,20); default all")
    p.add_argument("--rules", help="NVIDIA counting rules instead of the model's, e.g. "
                   "requests=per_128B,ideal=unique (see layoutsim/memory/nvidia.py)")
    p.add_argument("--picture", metavar="FILE", help="also draw the touched lines, each 4-byte word "
                   "coloured by the lane that reads it (svg, png or html)")
    p.add_argument("--format", help="picture format: svg, png or html (default: from FILE)")
    p.add_argument("--list-ops", action="store_true", help="print the op spellings the model knows")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("-v", "--verbose", action="store_true", help="list every sector and its lanes")
    p.set_defaults(run=run)


def _strides(text):
    try:
        vals = [int(v, 0) for v in str(text).replace(" ", "").split(",") if v]
    except ValueError:
        raise LayoutsimError(f"--stride wants comma-separated element strides, e.g. 1,2,4, not {text!r}") from None
    if not vals or any(not 0 <= v <= MAX_STRIDE for v in vals) or len(vals) > 64:
        raise LayoutsimError(f"--stride: 1 to 64 strides of 0..{MAX_STRIDE} elements, not {text!r}")
    return vals


def stride_table(op, strides, base=0, active=None, arch=None, rules=None):
    """{"op", "arch", "base", "rows", "rule", "source", "status", "extrapolated", "notes"} for lane L
    at base + L*s*width."""
    import numpy as np
    from ..memory.batch import coalesce_batch, resolve_arch
    from ..memory.model import about, carried
    from ..memory.ops import parse
    spec = parse(op)
    arch_ = resolve_arch(spec, arch)
    lane = np.arange(32, dtype=np.int64)
    offs = np.array([base + lane * s * spec.width for s in strides], np.int64)
    masks = None if active is None else np.full(len(strides), active, np.uint64)
    counts = coalesce_batch(op, offs, masks, arch_, rules)
    rows = [{"stride": s, "stride_bytes": s * spec.width,
             **{k: (None if spec.vendor == "amd" and k == "wavefronts" else int(counts[k][i]))
                for k in ("requests", "sectors", "ideal_sectors", "lines", "wavefronts")}}
            for i, s in enumerate(strides)]
    unit, rule, source, status = about(spec, rules)
    return {"op": spec.name, "arch": arch_, "base": base, "sector_bytes": unit, "rows": rows,
            "rule": rule, "source": source, "status": status, **carried(spec, arch_)}


def format_table(t):
    out = [f"{t['op']} on {t['arch']}: lane L at {t['base']} + L*stride*width "
           f"(sectors of {t['sector_bytes']} B)",
           f"  {'stride':>6} {'bytes':>6} {'requests':>8} {'sectors':>7} {'ideal':>5} {'lines':>5} "
           f"{'wavefronts':>10} {'sectors/req':>11}"]
    for r in t["rows"]:
        per = f"{r['sectors'] / r['requests']:.1f}" if r["requests"] else "-"
        wf = "-" if r["wavefronts"] is None else r["wavefronts"]
        out.append(f"  {r['stride']:>6} {r['stride_bytes']:>6} {r['requests']:>8} {r['sectors']:>7} "
                   f"{r['ideal_sectors']:>5} {r['lines']:>5} {wf:>10} {per:>11}")
    out += [f"rule: {t['rule']}", f"model: {t['status']}", f"source: {t['source']}"]
    out += [f"note: {n}" for n in t["notes"]]
    return "\n".join(out)


def run(args):
    from ..inputs import lane_mask                # the `layoutsim banks --active` spelling
    from .banks import parse_offsets, variables_from_args
    if args.list_ops:
        only(args, ("list_ops",), "with --list-ops", "it lists the op spellings the model knows")
        from ..memory import op_names
        print(", ".join(op_names("nvidia")))
        print("AMD (with --arch gfx1100..gfx1201): " + ", ".join(op_names("amd")))
        return 0
    if not args.op:
        raise LayoutsimError("give --op (e.g. ld.global.b32), or --list-ops")
    if args.addr is None and args.offsets is None and args.stride is None:
        raise LayoutsimError("give the addresses: --addr EXPR, --offsets LIST or --stride [LIST]")
    variables = variables_from_args(args, [args.addr] if args.addr is not None else [])
    if args.base and args.stride is None:
        raise LayoutsimError("--base is for --stride tables (put a base into --addr instead)")
    if args.base < 0 or args.base > (1 << 40):
        raise LayoutsimError(f"--base must be 0 .. 2**40 bytes, not {args.base}")
    rules = None
    if args.rules:
        from ..memory.nvidia import parse_rules
        rules = parse_rules(args.rules)
    if args.format and args.picture is None:
        raise LayoutsimError("--format is for --picture FILE")
    if args.picture is not None:             # refused before any work ('' too): the folder must exist (files.py)
        from ..files import check_target
        check_target(args.picture, "picture")
    active = lane_mask(args.active)
    from ..memory import coalesce, format_report
    common = ("op", "arch", "active", "rules", "json")
    if args.stride is not None:
        if args.picture:
            raise LayoutsimError("--picture draws one access: give --addr or --offsets instead of --stride")
        only(args, common + ("stride", "base"), "with --stride", "the table has no per-sector detail")
        table = stride_table(args.op, _strides(args.stride), args.base, active, args.arch, rules)
        if args.json:
            print_json(table)
        else:
            print(format_table(table))
        return 0
    only(args, common + ("addr", "offsets", "var", "picture", "format", "verbose"), "with --addr/--offsets")
    if args.json:
        refuse(args, ("verbose",), "with --json", "the JSON lists every sector and its lanes")
    offsets = args.addr if args.addr is not None else parse_offsets(args.offsets)
    result = coalesce(args.op, offsets, active, args.arch or None, rules, variables)
    record = None
    if args.picture:
        from ..render import save
        from ..render.sectors import sector_scene
        record = save(sector_scene(args.op, offsets, active, args.arch or None, variables),
                      args.picture, args.format)
    if args.json:
        if record:
            result = dict(result, picture=record)
        print_json(result)
        return 0
    print(format_report(result, args.verbose))
    if record:
        print(f"wrote {record['file']} ({record['format']}, {record['width']}x{record['height']})")
    return 0
