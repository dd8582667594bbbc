"""`layoutsim desc decode|encode|check`: wgmma matrix descriptors (layoutsim.smem).

    layoutsim desc decode 0x4000004000010040 [--instr wgmma.m64n128k16.f32.f16.f16 --operand A]
    layoutsim desc decode 0x4000404000010040 --arch sm_100      (a tcgen05.mma descriptor: smem/umma.py)
    layoutsim desc encode --start 0x400 --swizzle 128B --instr wgmma.m64n128k16.f32.f16.f16 --operand A
    layoutsim desc check 0x4000004000010040 --instr wgmma.m64n128k16.f32.f16.f16 --operand A \\
        [--tma-box 64x64 --tma-swizzle 128B --tma-dst 0x400 --tma-coords 0,128] [--other 0x...]

--json: decode/encode print {"value", "fields": {start, lbo, sbo: {raw, bytes}, base_offset,
swizzle: {raw, name}, reserved}, "swizzle": {"name", "span", "repeat", "cute"}, "reading",
"notes", "confirmed" (the GPU corpus behind the reading, or null), "operand": {"instruction", "operand", "major", "shape", "addresses"} (with --instr)};
check prints the same plus "problems": [{"kind", "field", "message"}], "sound" and, with
--tma-box, "tma": {"box", "elem_bytes", "swizzle", "dst", "coords", "reading", "confirmed"}.
Exit codes: 0 (decode/encode; check: the tile is sound), 1 (check: a problem found, one
"PROBLEM [kind] field: rule" line each), 2 (bad input: one line naming the value).
"""
from . import print_json
from ._options import refuse
from ..errors import LayoutsimError
from ..inputs import parse_int

U64 = (1 << 64) - 1
MAX_ROWS = 1 << 12                 # no operand has more rows than a wgmma B's 256
SMEM_MAX = 1 << 32                 # the shared window is 32-bit


def _num(text, what, lo=0, hi=U64):
    return parse_int(text, what, lo, hi)


def _operand_args(p, required=False):
    p.add_argument("--instr", required=required, help="the wgmma, e.g. wgmma.m64n128k16.f32.f16.f16")
    p.add_argument("--operand", default=None, help="A or B (default A)")
    p.add_argument("--trans", action="store_true", help="imm-trans: the operand is MN-major (f16/bf16 only)")


def register(sub):
    p = sub.add_parser("desc", help="decode, encode and check wgmma shared-memory matrix descriptors",
                       description="wgmma matrix descriptors: the 64-bit value, its fields in bytes, the "
                                   "shared-memory byte each operand element is read from, and what goes "
                                   "wrong in practice.")
    s = p.add_subparsers(dest="desc_command", metavar="ACTION", parser_class=type(p))
    s.required = True
    d = s.add_parser("decode", help="fields of a descriptor value and where each element is read")
    d.add_argument("value", help="the 64-bit descriptor, e.g. 0x4000004000010040")
    _operand_args(d)
    d.add_argument("--rows", default="16", help="rows of the address table shown (default 16)")
    d.add_argument("--arch", default=None, help="sm_100: read the value as a tcgen05.mma (sm_100) descriptor "
                                                "(default: a wgmma, sm_90, one)")
    d.add_argument("--json", action="store_true", help="machine-readable output")
    d.set_defaults(run=run_decode)
    e = s.add_parser("encode", help="the 64-bit value of descriptor fields (LBO/SBO default to the dense "
                                    "tile of --instr)")
    e.add_argument("--start", required=True, help="shared-window byte address (multiple of 16)")
    e.add_argument("--lbo", help="leading dimension byte offset, in bytes")
    e.add_argument("--sbo", help="stride dimension byte offset, in bytes")
    e.add_argument("--swizzle", default="none", help="none, 32B, 64B or 128B (default none)")
    e.add_argument("--base-offset", default="0", help="matrix base offset, 0-7 (default 0)")
    _operand_args(e)
    e.add_argument("--rows", default="16", help="rows of the address table shown (default 16)")
    e.add_argument("--json", action="store_true", help="machine-readable output")
    e.set_defaults(run=run_encode)
    c = s.add_parser("check", help="what goes wrong with a descriptor (exit 1 when anything does)")
    c.add_argument("value", help="the 64-bit descriptor")
    _operand_args(c, required=True)
    c.add_argument("--smem-bytes", help="shared memory of the block (default: the sm_90 maximum)")
    c.add_argument("--tma-box", metavar="INNERxOUTER[xDEPTH]", help="the TMA box that fills the tile, innermost "
                   "first as cuTensorMapEncodeTiled's boxDim, e.g. 64x128")
    c.add_argument("--tma-swizzle", default="none", help="the tensor map's swizzle (default none)")
    c.add_argument("--tma-dst", default="-1", help="shared address the box is copied to (default: the start)")
    c.add_argument("--tma-at", default="0,0", metavar="INNER,OUTER", help="box position of the operand's (0,0)")
    c.add_argument("--tma-coords", metavar="C0,C1[,C2]", help="global coordinates the box starts at, innermost "
                   "first as in cp.async.bulk.tensor (checks that the innermost one starts on 16 bytes)")
    c.add_argument("--other", help="the other operand's descriptor (for overlaps)")
    c.add_argument("--other-trans", action="store_true", help="the other operand is MN-major")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(run=run_check)


def _describe(desc, args):
    """(text lines, JSON dict) of a descriptor, with the operand table when --instr is given."""
    from .. import smem
    if not args.instr:
        refuse(args, ("operand", "trans", "rows"), "without --instr", "they describe the operand table --instr adds")
    elif args.json:
        refuse(args, ("rows",), "with --json", "the JSON lists every element's address")
    rows = parse_int(args.rows, "--rows", 1, MAX_ROWS)
    m = desc.mode
    f = desc.fields()
    js = {"value": f"{desc.encode():#018x}", "fields": f,
          "swizzle": {"name": m.name, "span": m.span, "repeat": m.repeat if m.bits else None,
                      "cute": str(m.cute)},
          "reading": smem.DOCUMENTED.to_json(), "notes": [], "confirmed": smem.CONFIRMED or None}
    lines = [f"descriptor {desc.encode():#018x}",
             f"  start        {f['start']['raw']:#06x} x 16 = {desc.start:#x} ({desc.start})   bits 0-13",
             f"  LBO          {f['lbo']['raw']:#06x} x 16 = {desc.lbo} bytes   bits 16-29",
             f"  SBO          {f['sbo']['raw']:#06x} x 16 = {desc.sbo} bytes   bits 32-45",
             f"  base offset  {desc.base_offset}   bits 49-51",
             f"  swizzle      {m.desc_code} = {m.name}" + (f" ({m.cute} on byte addresses, repeats every {m.repeat} "
                                                          f"bytes)" if m.bits else "") + "   bits 62-63"]
    if desc.reserved:
        lines.append(f"  unused bits  {desc.reserved:#x}")
    if args.instr:
        ins, op, mn, k, w, major = smem.operand_geometry(args.instr, args.operand or "A", args.trans)
        js["notes"] += smem.unused_fields(desc, ins, op, args.trans)
        addr = smem.operand_addresses(ins, op, desc, args.trans)
        js["operand"] = {"instruction": ins.name, "operand": op, "major": major, "format": ins.formats[op.lower()],
                         "shape": list(addr.shape), "addresses": addr.tolist()}
        lines += _table(ins, op, major, w, addr, rows)
    lines += [f"note: {n}" for n in js["notes"]]
    lines.append("rule: " + smem.status())
    return lines, js


def _table(ins, op, major, w, addr, rows):
    """The 16-byte chunks each row of the operand is read from (a chunk holds 16/e contiguous elements)."""
    per = 128 // w
    grid = addr if op == "A" else addr.T                   # [mn, k]
    if major == "MN":
        grid = grid.T                                      # rows = k, chunks along M/N
    lead, along = ("k", "m" if op == "A" else "n") if major == "MN" else ("m" if op == "A" else "n", "k")
    n_rows, n_cols = grid.shape
    head = [f"{op} of {ins.name}: {major}-major {ins.formats[op.lower()]}, {addr.shape[0]}x{addr.shape[1]}; "
            f"the 16-byte chunk each {lead} reads ({per} contiguous elements along {along}):",
            f"  {lead:>4}  " + "  ".join(f"{along} {c}-{c + per - 1}".ljust(9) for c in range(0, n_cols, per))]
    body = [f"  {r:>4}  " + "  ".join(f"{int(grid[r, c]):#07x}".ljust(9) for c in range(0, n_cols, per))
            for r in range(min(rows, n_rows))]
    if n_rows > rows:
        body.append(f"  ... {n_rows - rows} more rows (--rows, or --json for every element)")
    return head + body


def run_decode(args):
    from ..smem import Descriptor
    if args.arch is not None:
        return _decode_sm100(args)
    return _emit(Descriptor.decode(_num(args.value, "descriptor")), args)


def _decode_sm100(args):
    """desc decode --arch sm_100: the fields of a tcgen05.mma shared-memory descriptor (smem/umma.py)."""
    from ..archs import tmem
    from ..errors import choose
    from ..smem import umma
    choose("--arch (desc decode)", args.arch, ("sm_100",))
    tmem(args.arch)
    refuse(args, ("instr", "operand", "trans", "rows"), "with --arch sm_100",
           "the operand table reads wgmma entries; layoutsim.smem.umma.element_addresses gives tcgen05's")
    v = _num(args.value, "descriptor")
    why = umma.problem(v)
    d = umma.UmmaDescriptor.decode(v) if why is None else None
    code = (v >> 61) & 7
    fields = {"start": {"raw": v & 0x3FFF, "bytes": (v & 0x3FFF) << 4},
              "lbo": {"raw": (v >> 16) & 0x3FFF, "bytes": ((v >> 16) & 0x3FFF) << 4},
              "sbo": {"raw": (v >> 32) & 0x3FFF, "bytes": ((v >> 32) & 0x3FFF) << 4},
              "version": {"raw": (v >> 46) & 7}, "base_offset": {"raw": (v >> 49) & 7},
              "lbo_mode": {"raw": (v >> 52) & 1},
              "swizzle": {"raw": code, "name": umma.SWIZZLE.get(code, "128B with 32B atomicity" if code == 1
                                                                 else "reserved")}}
    js = {"value": f"{v:#018x}", "arch": "sm_100", "fields": fields, "problem": why, "source": umma.SOURCE,
          "sm90_equivalent": f"{d.sm90().encode():#018x}" if d is not None else None}
    if args.json:
        print_json(js)
        return 0
    f = fields
    print("\n".join([f"sm_100 (tcgen05) descriptor {v:#018x}",
                     f"  start        {f['start']['raw']:#06x} x 16 = {f['start']['bytes']:#x}   bits 0-13",
                     f"  LBO          {f['lbo']['raw']:#06x} x 16 = {f['lbo']['bytes']} bytes   bits 16-29",
                     f"  SBO          {f['sbo']['raw']:#06x} x 16 = {f['sbo']['bytes']} bytes   bits 32-45",
                     f"  version      {f['version']['raw']:#05b} (fixed 0b001)   bits 46-48",
                     f"  base offset  {f['base_offset']['raw']}   bits 49-51",
                     f"  LBO mode     {f['lbo_mode']['raw']} ({'absolute' if f['lbo_mode']['raw'] else 'relative'})"
                     f"   bit 52",
                     f"  swizzle      {code} = {f['swizzle']['name']}   bits 61-63"]
                    + ([f"  as sm_90     {js['sm90_equivalent']} (the same element addresses)"] if d is not None
                       and why is None else [])
                    + ([f"problem: {why}"] if why else []) + [f"source: {umma.SOURCE}"]))
    return 0


def _emit(desc, args):
    lines, js = _describe(desc, args)
    if args.json:
        print_json(js)
    else:
        print("\n".join(lines))
    return 0


def run_encode(args):
    from .. import smem
    from ..smem.descriptor import BYTES_MAX                # the 14-bit fields, in bytes
    start = _num(args.start, "--start", 0, BYTES_MAX)
    swz = smem.mode(args.swizzle).name
    lbo = None if args.lbo is None else _num(args.lbo, "--lbo", 0, BYTES_MAX)
    sbo = None if args.sbo is None else _num(args.sbo, "--sbo", 0, BYTES_MAX)
    if lbo is None or sbo is None:
        if not args.instr:
            raise LayoutsimError("give --lbo and --sbo, or --instr (and --operand) for the dense tile's values")
        _, _, mn, k, w, major = smem.operand_geometry(args.instr, args.operand or "A", args.trans)
        dense = smem.Descriptor.dense(start, mn, k, w, swz, major)
        lbo = dense.lbo if lbo is None else lbo
        sbo = dense.sbo if sbo is None else sbo
    return _emit(smem.Descriptor(start, lbo, sbo, swz, _num(args.base_offset, "--base-offset", 0, 7)), args)


def _box(text):
    parts = str(text).lower().replace(" ", "").split("x")
    if len(parts) not in (2, 3):
        raise LayoutsimError(f"--tma-box wants INNERxOUTER[xDEPTH] (2 or 3 dimensions), e.g. 64x128, not {text!r}")
    from ..smem.tma import BOX_MAX
    return tuple(parse_int(v, "--tma-box dimension", 1, BOX_MAX) for v in parts)


def _coords(text, rank):
    parts = str(text).replace(" ", "").split(",")
    if len(parts) != rank:
        raise LayoutsimError(f"--tma-coords wants {rank} integers (innermost first, one per box dimension), "
                             f"not {text!r}")
    return tuple(parse_int(v, "--tma-coords", -(1 << 31), (1 << 31) - 1) for v in parts)


def run_check(args):
    from .. import smem
    from ..inputs import pair
    from ..smem.tma import BOX_MAX
    desc = smem.Descriptor.decode(_num(args.value, "descriptor"))
    op = args.operand or "A"
    _, _, _, _, w, _ = smem.operand_geometry(args.instr, op, args.trans)
    tma, dst, at, coords = None, 0, (0, 0), None
    refuse(args, () if args.tma_box else ("tma_swizzle", "tma_dst", "tma_at"), "without --tma-box",
           "they describe the TMA box that fills the tile")
    refuse(args, () if args.other else ("other_trans",), "without --other", "it describes the other operand")
    if args.tma_box:
        tma = smem.TensorMap(_box(args.tma_box), w // 8, args.tma_swizzle)
        dst = _num(args.tma_dst, "--tma-dst", -1, SMEM_MAX - 1)
        dst = desc.start - desc.start % 128 if dst < 0 else dst
        at = pair(args.tma_at, "--tma-at", 0, BOX_MAX)
        coords = _coords(args.tma_coords, len(tma.box)) if args.tma_coords else None
    elif args.tma_coords:
        raise LayoutsimError("--tma-coords needs --tma-box (the box the coordinates place)")
    other = _num(args.other, "--other") if args.other else None
    smem_bytes = _num(args.smem_bytes, "--smem-bytes", 1, SMEM_MAX) if args.smem_bytes else None
    found = smem.problems(args.instr, op, desc, args.trans, smem_bytes, tma, dst, at, other, args.other_trans,
                          coords)
    lines, js = _describe(desc, argparse_namespace(args, rows=4))
    if tma is not None:
        lines.append("TMA rule: " + smem.tma.status())
        js["tma"] = {"box": list(tma.box), "elem_bytes": tma.elem_bytes, "swizzle": tma.swizzle, "dst": dst,
                     "coords": list(coords) if coords else None, "reading": smem.tma.MEASURED.to_json(),
                     "confirmed": smem.tma.CONFIRMED}
    js["problems"] = [p.to_json() for p in found]
    js["sound"] = not found
    if args.json:
        print_json(js)
    else:
        print("\n".join(lines))
        if found:
            for p in found:
                print(f"PROBLEM [{p.kind}] {p.field}: {p.message}")
        else:
            print("sound: no problem found")
    return 1 if found else 0


def argparse_namespace(args, **over):
    import argparse
    d = dict(vars(args))
    d.update(over)
    return argparse.Namespace(**d)
