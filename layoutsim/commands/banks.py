"""`layoutsim banks`: wavefronts of one warp's shared-memory (LDS) access.

    layoutsim banks --op ld.shared.v4.b32 --addr "lane*16"
    layoutsim banks --op ldmatrix.x4 --addr "(lane%8)*stride + (lane//8)*16" --var stride=144
    layoutsim banks --op ld.shared.b32 --offsets 0,128,256,... --active 0xffff
    layoutsim banks --op ldmatrix.x4 --tile 64x32 --pad 8 --fragment mma.m16n8k16.f32.f16.f16.f32:A --at 16,16
    layoutsim banks --op st.shared.v4.b32 --tile 64x32 --pad 8 --fill
    layoutsim banks --op ds_read_b128 --arch gfx1201 --addr "lane*16"
    layoutsim banks --op ds_read_b128 --arch gfx942 --addr "lane*16"      (CDNA: wave64)

--json prints {"op","arch","wavefronts","ideal","conflicts","phases":[{"lanes","wavefronts",
"banks","words","serves","source"}],"extrapolated","notes"} (a list of them for --fill without
--index); "extrapolated" is true on an NVIDIA arch other than the measured sm_90 (H200), and a
note says which rules are carried over.
"""
import json

from . import add_arch
from ._options import only, refuse
from ..errors import LayoutsimError
from ..inputs import lane_mask, pair, parse_int, shape


def dumps(obj, indent=0):
    """JSON with objects one key per line and lists of numbers on one line (readable, still JSON)."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {dumps(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in obj):
            return json.dumps(list(obj))
        return "[\n" + ",\n".join(inner + dumps(v, indent + 1) for v in obj) + "\n" + pad + "]"
    return json.dumps(obj)


def print_json(obj):
    print(dumps(obj))


def register(sub):
    p = sub.add_parser("banks", help="shared-memory / LDS bank conflicts of one warp access",
                       description="Wavefronts, phases and bank conflicts of one warp's shared-memory "
                                   "(NVIDIA) or LDS (AMD) access.")
    p.add_argument("--op", required=True, help="ld.shared.b32, st.shared.v4.b32, ldmatrix.x4.trans, "
                   "stmatrix.x2, LDS.128, ds_read_b128 (AMD, with --arch), ...")
    add_arch(p, "arch: sm_90 (default for NVIDIA ops), sm_80, gfx1100, gfx1201, gfx942, gfx950, ...")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--addr", help="byte offset as an expression in lane, e.g. \"(lane%%8)*144 + (lane//8)*16\"")
    src.add_argument("--offsets", help="32 (CDNA: 64) comma-separated byte offsets ('_' = the lane gives none); "
                     "ldmatrix/stmatrix also take just the 8/16/32 row addresses")
    src.add_argument("--tile", help="ROWSxCOLS tile in shared memory (with --fragment/--block/--fill)")
    p.add_argument("--var", action="append", metavar="NAME=VALUE", help="variable for --addr (repeatable)")
    p.add_argument("--active", help="active lanes: a hex mask (0xffff) or lanes and ranges (0-15,20); default all")
    t = p.add_argument_group("tile layout (with --tile)")
    t.add_argument("--dtype", help="element format (default f16)")
    t.add_argument("--pad", type=int, help="padding elements after each row")
    t.add_argument("--pitch", type=int, help="elements from one row to the next (instead of --pad)")
    t.add_argument("--swizzle", help="CuTe Swizzle<B,M,S> as B,M,S, or xor:SRC->DST,... (bits of the element offset)")
    t.add_argument("--swizzle-unit", choices=("elem", "byte"),
                   help="swizzle the element offset (default) or the byte offset")
    t.add_argument("--base", type=int, help="byte offset of the tile in shared memory")
    g = p.add_argument_group("which access (with --tile)")
    g.add_argument("--fragment", help="INSTRUCTION:OPERAND moved by ldmatrix/stmatrix, e.g. "
                   "mma.m16n8k16.f32.f16.f16.f32:A (with --at)")
    g.add_argument("--at", help="ROW,COL of the fragment's (0,0) in the tile (default 0,0)")
    g.add_argument("--stored", choices=("row", "col"),
                   help="operand element (r,c) lies at tile (r,c) (row, the default) or (c,r) (col)")
    g.add_argument("--block", help="ROW,COL: ldmatrix/stmatrix of the 8-row blocks at this tile position")
    g.add_argument("--fill", action="store_true", help="the row-wise accesses of the op's width covering the tile")
    g.add_argument("--index", type=int, help="with --fill: only warp access K")
    p.add_argument("--rules", help="NVIDIA merge rules to use instead of the default, e.g. "
                   "wide_ld=none,matrix=as-v4 (see layoutsim/banks/nvidia.py)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("-v", "--verbose", action="store_true", help="list the words each wavefront serves")
    p.set_defaults(run=run)


def parse_offsets(text):
    out = []
    for part in str(text).replace(" ", "").split(","):
        if part in ("-", "_", "none", ""):
            out.append(None)
            continue
        out.append(parse_int(part, "--offsets: byte offset"))
    return out


def parse_rules(text):
    from ..banks.nvidia import parse_rules as parse
    return parse(text) if text else None


# options of every access, and (below) those that only mean something with --tile; any other
# option given is refused (commands/_options.py)
ACCESS_OPTIONS = ("op", "arch", "active", "rules", "json", "verbose")
TILE_OPTIONS = ("dtype", "pad", "pitch", "swizzle", "swizzle_unit", "base", "fragment", "at", "stored",
                "block", "fill", "index")


def reject_tile_options(args, names=TILE_OPTIONS):
    """Without --tile these options would be ignored, which reads as if they had been applied:
    refuse them instead (`banks` and `render --banks` alike)."""
    for name in names:
        if getattr(args, name, None) not in (None, False, []):
            raise LayoutsimError(f"--{name.replace('_', '-')} describes a tile: give --tile ROWSxCOLS "
                                 f"too, or drop it")


def variables_from_args(args, exprs):
    """--var NAME=VALUE as {name: value}, each one used by an --addr expression (or by a later
    variable that is): a variable nothing reads would be ignored, so it is refused."""
    from ..address import Expr, parse_variables
    variables = parse_variables(args.var)
    if variables and not exprs:
        raise LayoutsimError("--var is for --addr expressions")
    used = set().union(*(Expr(e).names for e in exprs)) if exprs else set()
    for item in reversed(args.var or []):         # a variable may be read by the ones after it
        name, text = (s.strip() for s in item.split("=", 1))
        if name in used:
            used |= Expr(text).names
    unused = [n for n in variables if n not in used]
    if unused:
        raise LayoutsimError(f"--var {', '.join(unused)}: not used by --addr {' / '.join(map(repr, exprs))}; "
                             f"drop it or use it in the expression")
    return variables


def check_swizzle_unit(args):
    if args.swizzle_unit and not args.swizzle:
        raise LayoutsimError(f"--swizzle-unit {args.swizzle_unit} says what --swizzle XORs: give --swizzle too, "
                             f"or drop it")


def tile_from_args(args):
    from ..address import Tile, parse_swizzle
    check_swizzle_unit(args)
    rows, cols = shape(args.tile)
    return Tile(rows, cols, args.dtype or "f16", pad=args.pad or 0, pitch=args.pitch, base=args.base or 0,
                swizzle=parse_swizzle(args.swizzle), unit=args.swizzle_unit or "elem")


def accesses_from_args(args):
    """[(label, offsets)] for the arguments: one access, or several for --fill."""
    from .. import address
    from ..banks.model import check_tile
    from ..banks.ops import parse
    if args.tile is None:
        reject_tile_options(args)
        only(args, ACCESS_OPTIONS + ("addr", "offsets", "var"), "with --addr/--offsets")
        return [(None, args.addr if args.addr is not None else parse_offsets(args.offsets))]
    only(args, ACCESS_OPTIONS + ("tile",) + TILE_OPTIONS, "with --tile", "--var is for --addr")
    from ..banks.model import lanes_of
    tile = tile_from_args(args)
    spec = parse(args.op)
    lanes = lanes_of(check_tile(tile, spec.name, args.arch))      # 64 on CDNA (wave64)
    modes = [m for m in ("fragment", "block", "fill") if getattr(args, m)]
    if len(modes) != 1:
        raise LayoutsimError("with --tile give one of --fragment (with --at), --block ROW,COL or --fill")
    for opt, owner in (("at", "fragment"), ("stored", "fragment"), ("index", "fill")):
        if getattr(args, opt) is not None and not getattr(args, owner):
            raise LayoutsimError(f"--{opt} goes with --{owner}")
    if args.fragment:
        r, c = pair(args.at, "--at", 0, max(tile.rows, tile.cols) - 1) if args.at else (0, 0)
        offs = address.fragment_offsets(tile, spec, args.fragment, r, c, args.stored or "row")
        return [(f"{args.fragment} at ({r}, {c}) of {tile.describe()}", offs)]
    if args.block:
        r, c = pair(args.block, "--block", 0, max(tile.rows, tile.cols) - 1)
        return [(f"blocks at ({r}, {c}) of {tile.describe()}", address.block_offsets(tile, spec, r, c))]
    if spec.is_matrix:
        raise LayoutsimError(f"--fill covers the tile with per-lane vector accesses; for {spec.name} "
                             f"use --fragment or --block")
    total = address.fill_count(tile, spec.width, lanes)
    if args.index is not None:
        offs = address.fill_offsets(tile, spec.width, args.index, 1, lanes)
        return [(f"access {args.index} of {total} filling {tile.describe()}", offs[0])]
    return [(f"access {k} of {total} filling {tile.describe()}", o)
            for k, o in enumerate(address.fill_offsets(tile, spec.width, lanes=lanes))]


def run(args):
    from ..archs import normalize
    from ..banks.model import analyze, lanes_of
    variables = variables_from_args(args, [args.addr] if args.addr is not None else [])
    active = lane_mask(args.active, lanes=lanes_of(normalize(args.arch)))   # CDNA: wave64
    rules = parse_rules(args.rules)
    if args.json:
        refuse(args, ("verbose",), "with --json", "the JSON lists the words each wavefront serves")
    accesses = accesses_from_args(args)
    reports = [(label, offs, analyze(args.op, offs, args.arch, active, rules, variables))
               for label, offs in accesses]
    if args.json:
        objs = [r.to_json() for _, _, r in reports]
        print_json(objs[0] if len(objs) == 1 and not (args.fill and args.index is None) else objs)
        return 0
    if len(reports) == 1:
        label, offs, r = reports[0]
        if label:
            print(label)
        if not isinstance(offs, str) and (args.tile or args.verbose):
            print("lane offsets (bytes): " + ", ".join("-" if o is None else str(o) for o in offs))
        print(r.format(verbose=args.verbose))
        return 0
    total = sum(r.wavefronts for _, _, r in reports)
    ideal = sum(r.ideal for _, _, r in reports)
    first = reports[0][2]
    print(f"{first.op} on {first.arch}: {len(reports)} warp accesses filling "
          f"{reports[0][0].split(' filling ', 1)[1]}")
    print(f"  {'access':>6}  {'wavefronts':>10}  {'ideal':>5}  conflicts")
    for k, (_, _, r) in enumerate(reports):
        print(f"  {k:>6}  {r.wavefronts:>10}  {r.ideal:>5}  {r.conflicts}")
    print(f"total: {total} wavefronts (ideal {ideal}, {total - ideal} from bank conflicts)")
    print(f"phases: {first.rule}")
    print(f"model: {first.status}")
    for n in first.notes:
        print(f"note: {n}")
    return 0
