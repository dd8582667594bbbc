"""`layoutsim render`: pictures (SVG, HTML, PNG) of fragments and of shared-memory banks.

    layoutsim render INSTR --operand A [-o FILE] [--format svg|png|html] [highlights]
    layoutsim render WGMMA --operand A|B --desc 0x... [--trans]              a descriptor's tile, by bank
    layoutsim render --banks --op OP --addr EXPR [--addr EXPR ...]         raw accesses, side by side
    layoutsim render --banks --op OP --tile 64x32 [--pad 8 | --swizzle 2,3,3] [--layout SPEC ...]
                     [--fragment INSTR:OPERAND --at ROW,COL | --block ROW,COL | --fill [--index K]]

Any `layoutsim banks` command line becomes a picture with `render --banks` in front of it;
--layout adds more layouts of the same tile beside the first, --addr/--offsets repeat.

Matplotlib is needed for PNG only and is imported only then.
"""
from . import print_json
from ._options import only
from ..errors import LayoutsimError

# the options each kind of picture uses; any other option given is refused (commands/_options.py)
OUTPUT = ("output", "format", "json")
DESC_OPTIONS = OUTPUT + ("desc", "trans", "operand")
FRAGMENT_OPTIONS = OUTPUT + ("operand", "arch", "wave", "lane", "lanes", "reg", "phase", "access", "rows", "cols",
                             "first_holder")
BANK_OPTIONS = OUTPUT + ("banks", "op", "arch", "active", "label")
BANK_ADDR_OPTIONS = BANK_OPTIONS + ("addr", "offsets", "var")
BANK_TILE_OPTIONS = BANK_OPTIONS + ("tile", "dtype", "pad", "pitch", "swizzle", "swizzle_unit", "base", "layout",
                                    "fragment", "at", "stored", "block", "fill", "index")


def register(sub):
    p = sub.add_parser(
        "render", help="draw a fragment or a bank map as SVG, HTML or PNG",
        description="Draw an operand as a grid (each cell names lane and register, coloured by "
                    "lane), or, with --banks, a shared-memory access: memory rows coloured by bank, "
                    "the lanes of each phase, conflicting words outlined in red.",
        epilog="examples:\n"
               "  layoutsim render mma.m16n8k16.f32.f16.f16.f32 --operand C --lane 13 -o c.svg\n"
               "  layoutsim render ldmatrix.x4 -o ldm.png\n"
               "  layoutsim render wgmma.m64n64k16.f32.f16.f16 --operand A --desc 0x4000004000010040 -o a.svg\n"
               "  layoutsim render --banks --op ldmatrix.x4 --addr '(lane%8)*128 + (lane//8)*16' "
               "--addr '(lane%8)*144 + (lane//8)*16' -o pitch.svg\n"
               "  layoutsim render --banks --op ldmatrix.x4 --tile 64x32 --layout pad=8 "
               "--layout swizzle=2,3,3 --fragment mma.m16n8k16.f32.f16.f16.f32:A --at 16,16 -o a.html",
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    p.add_argument("instruction", nargs="?", help="catalog instruction to draw (none with --banks)")
    p.add_argument("--operand", help="A, B, C, D (R for ldmatrix/stmatrix registers)")
    p.add_argument("--arch", help="target arch: sm_80, sm_90, gfx1100, gfx1201, ...")
    p.add_argument("--wave", type=int, choices=(32, 64), help="AMD wave size (default 32)")
    p.add_argument("-o", "--output", metavar="FILE", help="file to write (default: derived from the input, "
                   "in the current folder)")
    p.add_argument("--format", help="svg, png or html (default: from the file name, else svg)")
    p.add_argument("--json", action="store_true", help='print {"file", "format", ...} instead of a line')
    p.add_argument("--desc", metavar="VALUE", help="draw the shared-memory tile a wgmma descriptor reads "
                   "(with the wgmma instruction and --operand A|B): each word coloured by bank")
    p.add_argument("--trans", action="store_true", help="with --desc: the operand is MN-major (imm-trans)")
    g = p.add_argument_group("fragment highlights")
    g.add_argument("--lane", type=int, help="emphasise the elements this lane holds")
    g.add_argument("--lanes", help="emphasise several lanes: 0-7 or 0-3,16-19")
    g.add_argument("--reg", help="emphasise one register: an element name (c2, a5, r1.hi, v0[15:0]) "
                   "or a 32-bit register index (0, 1, ...)")
    g.add_argument("--phase", type=int, help="emphasise the lanes of bank phase K of --access")
    g.add_argument("--access", help="shared-memory op whose phases --phase counts (default: the "
                   "instruction itself for ldmatrix/stmatrix, else ld.shared.b32); e.g. ld.shared.v4.b32")
    g.add_argument("--rows", help="emphasise matrix rows: 0 or 0-3 (e.g. the real row of a padded tile)")
    g.add_argument("--cols", help="emphasise matrix columns: 0 or 0-7")
    g.add_argument("--first-holder", action="store_true",
                   help="replicated layouts: name only the lowest holding lane (marked '+')")
    b = p.add_argument_group("bank pictures (the options of `layoutsim banks`, plus --layout/--label)")
    b.add_argument("--banks", action="store_true", help="draw a shared-memory access instead of a fragment")
    b.add_argument("--op", help="the access: ld.shared.v4.b32, st.shared.b32, ldmatrix.x4, "
                   "ds_read_b128 (with --arch gfx1201), ...")
    b.add_argument("--addr", action="append", metavar="EXPR", help="per-lane byte offsets as an "
                   "expression in lane, e.g. 'lane*16'; repeat to draw several side by side")
    b.add_argument("--offsets", action="append", metavar="LIST", help="32 comma-separated byte offsets "
                   "('-' = lane gives none; or the 8/16/32 row addresses of ldmatrix/stmatrix); repeatable")
    b.add_argument("--var", action="append", metavar="NAME=VALUE", help="a variable for --addr, e.g. pitch=144")
    b.add_argument("--active", help="active lanes: a mask (0xffff) or ranges (0-15,20); default all")
    b.add_argument("--label", action="append", help="a caption per access or layout, in order")
    b.add_argument("--tile", metavar="ROWSxCOLS", help="a shared-memory tile, e.g. 64x32 (elements)")
    b.add_argument("--dtype", help="tile element format (default f16)")
    b.add_argument("--pad", type=int, help="padding elements after each row")
    b.add_argument("--pitch", type=int, help="elements from one row to the next (instead of --pad)")
    b.add_argument("--swizzle", help="CuTe Swizzle<B,M,S> as B,M,S, or xor:SRC->DST,...")
    b.add_argument("--swizzle-unit", choices=("elem", "byte"), help="swizzle element (default) or byte offsets")
    b.add_argument("--base", type=int, help="byte offset of the tile in shared memory")
    b.add_argument("--layout", action="append", metavar="SPEC", help="another layout of the same tile, "
                   "drawn beside the first: 'pad=8', 'swizzle=3,3,3', 'pitch=72 base=0'; repeatable")
    b.add_argument("--fragment", metavar="INSTR:OPERAND", help="with --tile: the ldmatrix/stmatrix that "
                   "moves this mma operand, e.g. mma.m16n8k16.f32.f16.f16.f32:A")
    b.add_argument("--at", metavar="ROW,COL", help="tile position of --fragment (default 0,0)")
    b.add_argument("--stored", choices=("row", "col"), help="operand stored row- or col-major (default row)")
    b.add_argument("--block", metavar="ROW,COL", help="with --tile: ldmatrix/stmatrix of the 8-row blocks here")
    b.add_argument("--fill", action="store_true", help="with --tile: the row-wise accesses of the op's "
                   "width that fill the tile (one picture: --index K, default 0)")
    b.add_argument("--index", type=int, help="with --fill: which warp access (default 0)")
    p.set_defaults(run=run)


def _default_name(args, fmt):
    base = ((args.op if args.banks else args.instruction) or "picture").replace("/", "_")
    if args.banks:
        base += "-banks"
    elif args.operand:
        base += f"-{args.operand.upper()}"
    return f"{base}.{fmt}"


def run(args):
    from ..render.output import resolve_format
    if args.desc:
        scene = _desc_scene(args)
    elif args.banks:
        if args.instruction:
            raise LayoutsimError(f"give either an instruction ({args.instruction!r}) or --banks OP, not both")
        scene = _bank_scene(args)
    else:
        if not args.instruction:
            raise LayoutsimError("give an instruction to draw (e.g. mma.m16n8k16.f32.f16.f16.f32 --operand C) "
                                 "or --banks OP with --addr/--offsets/--tile")
        scene = _fragment_scene(args)
    fmt = resolve_format(args.format, args.output)
    path = args.output if args.output is not None else _default_name(args, fmt)   # -o '': refused
    from ..render.output import save
    record = save(scene, path, fmt)
    if args.json:
        print_json(record)
    else:
        print(f"wrote {record['file']} ({fmt}, {record['width']}x{record['height']} px)")
    return 0


# ---- descriptors --------------------------------------------------------------------------
def _desc_scene(args):
    from ..render.smem import descriptor_scene
    from .desc import _num
    if args.banks or not args.instruction:
        raise LayoutsimError("--desc draws a wgmma operand: give the wgmma instruction and --operand A|B "
                             "(and no --banks)")
    only(args, DESC_OPTIONS, "with --desc", "it draws the tile the descriptor reads, each word by bank, "
                                            "with no highlights")
    return descriptor_scene(args.instruction, args.operand or "A", _num(args.desc, "--desc"), args.trans)


# ---- fragments ----------------------------------------------------------------------------
def _fragment_scene(args):
    from ..render import highlight_for
    from ..inputs import ranges
    from ..render.fragment import fragment_scene
    from ..labels import default_operand
    from ._common import resolve
    for opt in ("op", "addr", "offsets", "tile", "layout", "fragment", "fill", "block"):
        if getattr(args, opt):
            raise LayoutsimError(f"--{opt} belongs to bank pictures: add --banks (and drop the instruction)")
    only(args, FRAGMENT_OPTIONS, "to a fragment picture", "--trans goes with --desc, the bank options with --banks")
    inst, arch = resolve(args)
    op = default_operand(inst, args.operand)
    if args.first_holder and op.fragment.replication == 1:
        raise LayoutsimError(f"--first-holder names the lowest of several holders, but operand {op.name} of "
                             f"{inst.name} holds every element once; drop it")
    phase_lanes, phase_label, phase_matrix = None, "", None
    if args.phase is not None:
        phase_lanes, phase_label = _phase_lanes(inst, arch, args.phase, args.access)
        if inst.family in ("ldmatrix", "stmatrix") and inst.addressing is not None and \
                (args.access is None or _same_op(args.access, inst)):
            # a matrix op's phase k moves the matrix whose row addresses those lanes give
            mats = {m for m in range(inst.addressing.lanes.shape[0])
                    if set(int(v) for v in inst.addressing.lanes[m]) <= set(phase_lanes)}
            phase_matrix, phase_lanes = mats, None
            phase_label = phase_label.replace(" (lanes", f": matrix {', '.join(map(str, sorted(mats)))} (row addresses from lanes")
    elif args.access:
        raise LayoutsimError("--access only says whose phases --phase counts: give --phase K too")
    hl = highlight_for(op, lane=args.lane, lanes=args.lanes, reg=args.reg,
                       phase_lanes=phase_lanes, phase_label=phase_label)
    if phase_matrix is not None:
        from ..render.fragment import Highlight
        hl = hl or Highlight()
        hl.matrices = phase_matrix
        hl.label = f"{hl.label} + {phase_label}" if hl.active else phase_label
        hl.active = True
    if args.rows or args.cols:
        from ..render.fragment import Highlight
        nm, nr, nc = op.fragment.shape
        rows = set(ranges(args.rows, nr, "row", "the operand has rows")) if args.rows else None
        cols = set(ranges(args.cols, nc, "column", "the operand has columns")) if args.cols else None
        hl = hl or Highlight()
        hl.rows, hl.cols = rows, cols
        label = " ".join(x for x in (f"rows {args.rows}" if rows else "", f"cols {args.cols}" if cols else "") if x)
        hl.label = f"{hl.label} + {label}" if hl.active else label
        hl.active = True
    return fragment_scene(inst, op, arch, hl, all_holders=not args.first_holder)


def _same_op(access, inst):
    from ..banks.ops import parse
    return parse(access).catalog == inst.name


def _phase_lanes(inst, arch, k, access):
    """Lanes of phase k of the access op, from the bank model (natural, conflict-free addresses)."""
    from ..banks.model import analyze
    from ..banks.ops import parse
    if access is None:
        access = inst.aliases[0] if inst.family in ("ldmatrix", "stmatrix") and inst.aliases else (
            "ds_read_b32" if inst.vendor == "amd" else "ld.shared.b32")
    spec = parse(access)
    bank_arch = arch if (spec.vendor == "amd") == (inst.vendor == "amd") else None
    if spec.is_matrix:
        offs = [16 * i for i in range(32)]
    else:
        offs = [spec.width * i for i in range(32)]
    report = analyze(access, offs, arch=bank_arch)
    phases = [p for p in report.phases if p.lanes]
    if not 0 <= k < len(phases):
        have = "only phase 0" if len(phases) == 1 else f"phases 0-{len(phases) - 1}"
        raise LayoutsimError(f"phase {k} out of range: {report.op} has {have}")
    lanes = sorted(int(l) for l in phases[k].lanes)
    from ..access import lane_ranges
    return lanes, f"phase {k} of {report.op} (lanes {lane_ranges(lanes)})"


# ---- banks ---------------------------------------------------------------------------------
def _bank_scene(args):
    from ..render.banks import Access, access_scene, tile_scene
    from .banks import check_swizzle_unit
    for opt in ("lane", "lanes", "reg", "phase", "rows", "cols"):
        if getattr(args, opt) is not None:
            raise LayoutsimError(f"--{opt} highlights a fragment picture; with --banks the picture "
                                 f"marks phases and conflicts itself")
    if not args.op:
        raise LayoutsimError("--banks needs --op (ld.shared.v4.b32, ldmatrix.x4, ds_read_b128, ...)")
    labels = list(args.label or [])
    from ..archs import normalize
    from ..banks.model import lanes_of
    from ..inputs import lane_mask               # the `layoutsim banks --active` spelling
    lanes = lanes_of(normalize(args.arch))       # 64 on CDNA (wave64 LDS accesses)
    active = lane_mask(args.active, lanes)
    layout_flags = {k: getattr(args, k) for k in ("pad", "pitch", "swizzle", "swizzle_unit", "base")}
    if args.tile:
        if args.addr or args.offsets:
            raise LayoutsimError("give --tile (addresses generated from the tile) or --addr/--offsets, not both")
        check_swizzle_unit(args)
        first = " ".join(f"{k.replace('swizzle_unit', 'unit')}={v}" for k, v in layout_flags.items() if v is not None)
        layouts = ([first or "pad=0"] if first or not args.layout else []) + list(args.layout or [])
        picks = sum(bool(x) for x in (args.fragment, args.block, args.fill))
        if picks > 1:
            raise LayoutsimError("with --tile give one of --fragment (with --at), --block ROW,COL or --fill")
        for opt, owner in (("at", "fragment"), ("stored", "fragment"), ("index", "fill")):
            if getattr(args, opt) is not None and not getattr(args, owner):
                raise LayoutsimError(f"--{opt} goes with --{owner}")
        only(args, BANK_TILE_OPTIONS, "with --banks --tile", "--var is for --addr")
        at = args.block or args.at or "0,0"
        return tile_scene(args.op, args.tile, args.dtype or "f16", layouts, labels, arch=args.arch,
                          fragment=args.fragment, at=at, stored=args.stored or "row", block=bool(args.block),
                          fill=(args.index or 0) if args.fill else None, active=active)
    from .banks import TILE_OPTIONS, reject_tile_options
    reject_tile_options(args, TILE_OPTIONS + ("layout",))
    only(args, BANK_ADDR_OPTIONS, "with --banks --addr/--offsets")
    sources = [("addr", a) for a in (args.addr or [])] + [("offsets", o) for o in (args.offsets or [])]
    if not sources:
        raise LayoutsimError(f"--op {args.op}: give the addresses: --addr EXPR, --offsets LIST, "
                             f"or --tile ROWSxCOLS (with --fragment/--block/--fill)")
    if len(labels) > len(sources):
        raise LayoutsimError(f"{len(labels)} --label for {len(sources)} accesses")
    from ..address import lane_offsets
    from .banks import parse_offsets, variables_from_args     # the `layoutsim banks` spellings
    variables = variables_from_args(args, list(args.addr or []))
    accesses = []
    for i, (kind, text) in enumerate(sources):
        offs = ([int(v) for v in lane_offsets(text, lanes, **variables)] if kind == "addr"
                else parse_offsets(text))
        label = labels[i] if i < len(labels) else (f"offsets = {text}" if kind == "addr" else "offsets given")
        accesses.append(Access(label, args.op, offs, args.arch, active=active))
    return access_scene(accesses, title=f"{args.op}: bank map" + (" comparison" if len(accesses) > 1 else ""))
