"""The layouts Triton chose, as layoutsim lane maps.

Every distributed encoding of the ttgir (#blocked, #nvidia_mma v2 (mma.sync) / v3 (wgmma),
#dot_op, #slice, #linear) is turned into its linear layout by Triton itself
(`GluonOpBuilder.to_linear_layout`, the conversion Triton's code generation uses) for the shape
it is used with: register, lane and warp bases, each a coordinate; the element a thread's
register holds is the XOR of the bases of the set bits of (register, lane, warp). That table is a
FragmentMap (`lanes` = the CTA's threads, one element per register). An MMA encoding is related
to the catalog: its first instruction tile is compared, position by position, with the catalog
map of the instruction Triton emits for it (mma.m16n8kK, wgmma.m64nNk16). Shared encodings
(#nvmma_shared, #swizzled_shared) are listed with their parameters and the wgmma/TMA swizzle
mode they are; their bank costs under the ops that touch them are shared_costs.py's.
"""
import numpy as np

from ..fragment import FragmentMap
from .ttgir import encodings

DISTRIBUTED = ("blocked", "nvidia_mma", "dot_op", "slice", "linear")
MMA_ELEMENT = {"f16": ("mma.m16n8k16.f32.f16.f16.f32", 16), "bf16": ("mma.m16n8k16.f32.bf16.bf16.f32", 16),
               "f32": ("mma.m16n8k8.f32.tf32.tf32.f32", 32), "i8": ("mma.m16n8k32.s32.s8.s8.s32", 8)}


def _builder():
    from triton._C.libtriton import gluon_ir, ir
    ctx = ir.context()
    ir.load_dialects(ctx)
    return ctx, gluon_ir.GluonOpBuilder(ctx)


def _gluon(enc, table):
    """The gluon layout object of a distributed encoding (parents looked up in `table`)."""
    from triton.experimental.gluon import language as g
    p = enc.params
    if enc.kind == "blocked":
        return g.BlockedLayout(p["sizePerThread"], p["threadsPerWarp"], p["warpsPerCTA"], p["order"])
    if enc.kind == "nvidia_mma":
        return g.NVMMADistributedLayout(version=[p["versionMajor"], p["versionMinor"]],
                                        warps_per_cta=p["warpsPerCTA"], instr_shape=p["instrShape"])
    parent = _parent(enc, table)
    if parent is None or parent.kind not in DISTRIBUTED:
        return None
    pg = _gluon(parent, table)
    if pg is None:
        return None
    if enc.kind == "dot_op":
        return g.DotOperandLayout(operand_index=p["opIdx"], parent=pg, k_width=p.get("kWidth", 0))
    if enc.kind == "slice":
        return g.SliceLayout(dim=p["dim"], parent=pg)
    return None


def _parent(enc, table):
    from .ttgir import Encoding, parse_encoding
    ref = enc.params.get("parent")
    if not isinstance(ref, str):
        return None
    if ref in table:
        return table[ref]
    kind, params = parse_encoding(ref)
    return Encoding(ref, kind, params) if kind else None


def bases(enc, shape, table, builder=None):
    """{"register", "lane", "warp"} bases (coordinates, dim 0 first) of a distributed encoding."""
    if enc.kind == "linear":
        p = enc.params
        return {"register": p.get("register", []), "lane": p.get("lane", []), "warp": p.get("warp", [])}
    lay = _gluon(enc, table)
    if lay is None:
        return None
    _, b = builder or _builder()
    ll = b.to_linear_layout(lay._to_ir(b), list(shape))
    return {"register": ll.reg_bases, "lane": ll.lane_bases, "warp": ll.warp_bases}


def coordinates(bs, rank):
    """int array [threads, registers, rank]: the element each register of each thread holds."""
    def span(vecs):
        out = np.zeros((1 << len(vecs), rank), np.int64)
        for i, v in enumerate(vecs):
            bit = (np.arange(1 << len(vecs)) >> i) & 1
            out ^= bit[:, None] * np.asarray(v, np.int64)[None, :]
        return out
    reg, lane, warp = span(bs["register"]), span(bs["lane"]), span(bs["warp"])
    thread = (warp[:, None, :] ^ lane[None, :, :]).reshape(-1, rank)      # thread = warp * lanes + lane
    return thread[:, None, :] ^ reg[None, :, :]


def fragment_map(bs, shape):
    """The FragmentMap of a rank-1 or rank-2 layout: [thread, register, 0] -> (0, row, col)."""
    rank = len(shape)
    c = coordinates(bs, rank)
    if rank == 1:
        c = np.concatenate([np.zeros_like(c), c], axis=2)
        shape = (1, shape[0])
    t = np.concatenate([np.zeros(c.shape[:2] + (1,), np.int64), c], axis=2)[:, :, None, :].astype(np.int16)
    return FragmentMap(table=t, shape=(1,) + tuple(shape), elem_bits=32)


def relate(enc, bs, dtype, table):
    """How an MMA encoding's first instruction tile compares with the catalog's map, or None."""
    from .. import get
    p = enc.params
    if enc.kind == "nvidia_mma":
        if p["versionMajor"] == 2:
            name, op, threads = "mma.m16n8k16.f32.f16.f16.f32", "C", 32
        elif p["versionMajor"] == 3:
            name, op, threads = f"wgmma.m64n{p['instrShape'][1]}k16.f32.f16.f16", "D", 128
        else:
            return None
    elif enc.kind == "dot_op":
        parent = _parent(enc, table)
        if parent is None or parent.kind != "nvidia_mma" or parent.params["versionMajor"] != 2:
            return None
        base = dtype.split("<")[-1].strip(">")
        if base not in MMA_ELEMENT:
            return None
        name, threads = MMA_ELEMENT[base][0], 32
        op = "AB"[p["opIdx"]]
    else:
        return None
    cat = get(name).operands[op]
    want = cat.table.reshape(cat.table.shape[0], -1, 3)[..., 1:]       # [lanes, reg*slots, (row, col)]
    n = want.shape[1]
    warps = threads // 32
    sub = {"register": bs["register"][:max(0, n.bit_length() - 1)], "lane": bs["lane"],
           "warp": bs["warp"][:max(0, warps.bit_length() - 1)]}
    got = coordinates(sub, 2)
    if got.shape != want.shape:
        return {"catalog": f"{name} {op}", "matches": False,
                "detail": f"{got.shape[1]} registers x {got.shape[0]} threads vs the catalog's {n} x {want.shape[0]}"}
    same = bool((got == want).all())
    return {"catalog": f"{name} {op}", "matches": same, "positions": int(want.shape[0] * n),
            "detail": ("every (thread, element) of the first instruction tile holds the catalog's element"
                       if same else f"{int((got != want).any(axis=2).sum())} positions differ")}


def shared_note(enc):
    p = enc.params
    if enc.kind == "nvmma_shared":
        w = p.get("swizzlingByteWidth", 0)
        mode = {0: "none (interleave)", 32: "32B", 64: "64B", 128: "128B"}.get(w, str(w))
        return (f"wgmma/TMA swizzle mode {mode} (layoutsim.smem.swizzle), {p.get('elementBitWidth')}-bit elements, "
                f"{'transposed' if p.get('transposed') else 'not transposed'}")
    if enc.kind == "swizzled_shared":
        return (f"XOR swizzle: element (row, col) at col ^ (((row // {p.get('perPhase')}) % {p.get('maxPhase')}) * "
                f"{p.get('vec')}) in units of vec={p.get('vec')} (order {p.get('order')})")
    return None


def describe(compiled):
    """{"kernel", "arch", "encodings": [{"name", "kind", "params", "uses", "maps": [...], "shared"}]}."""
    table = encodings(compiled.ttgir)
    out = []
    builder = None
    for enc in table.values():
        rec = {"name": enc.name, "kind": enc.kind, "params": enc.params, "uses": enc.uses, "maps": []}
        if enc.kind in DISTRIBUTED:
            shapes = []
            for u in enc.uses:
                if not u["memory"] and u["shape"] not in shapes and len(u["shape"]) <= 2:
                    shapes.append(u["shape"])
            shapes.sort(key=lambda sh: -int(np.prod(sh)))
            for shape in shapes[:1]:                      # the largest tile it is used with
                builder = builder or _builder()
                bs = bases(enc, shape, table, builder)
                if bs is None:
                    continue
                m = fragment_map(bs, shape)
                dtype = next(u["dtype"] for u in enc.uses if u["shape"] == shape)
                rec["maps"].append({"shape": shape, "bases": bs, "threads": m.lanes, "registers": m.regs,
                                    "replication": m.replication, "table": m.table[:, :, 0, 1:].tolist(),
                                    "catalog": relate(enc, bs, dtype, table)})
        else:
            rec["shared"] = shared_note(enc)
        out.append(rec)
    return {"kernel": compiled.name, "arch": compiled.arch, "encodings": out}


def _site_line(a):
    where = f"line {a['line'][1]}" if a.get("line") else "line ?"
    src = f" from {a['registers']}" if a.get("registers") else ""
    head = f"  {where} {a['op']}{src} ({'x'.join(map(str, a['shape']))} {a['dtype']})"
    if a.get("unpredicted"):
        return f"{head}: not predicted: {a['unpredicted']}"
    if a["kind"] == "tma":
        return f"{head}: {a['instruction']}, {a['note']}"
    if a["kind"] == "gmma":
        count = f"{a['per_warpgroup']} per warpgroup x {a['warpgroups']} warpgroup(s)"
    else:
        count = f"{a['per_warp']} per warp x {a['warps']} warps"
        if a.get("active_warps", a["warps"]) < a["warps"]:
            count += f" ({a['active_warps']} with active lanes)"
    pi = a["per_instruction"]
    hist = ""
    if len(a["histogram"]) > 1:
        hist = " (" + ", ".join(f"{n} with {w}" for w, n in sorted(a["histogram"].items(), key=lambda x: int(x[0]))) + ")"
    return (f"{head}: {a['instruction']}, {count}: {pi['wavefronts']} wavefronts per instruction "
            f"(ideal {pi['ideal']}){hist}, {a['wavefronts']} per execution (ideal {a['ideal']})")


def format_text(doc, lanes=False):
    lines = [f"kernel {doc['kernel']} on {doc['arch']}: {len(doc['encodings'])} encodings"]
    for e in doc["encodings"]:
        params = ", ".join(f"{k}={v}" for k, v in e["params"].items())
        lines.append(f"{e['name']}  ({e['kind']}: {params})")
        used = sorted({(u['line'][1] if u['line'] else 0, u['op'], "x".join(map(str, u['shape'])))
                       for u in e["uses"]})
        for ln, op, shape in used[:12]:
            lines.append(f"  used at line {ln or '?'} by {op} on {shape}")
        if len(used) > 12:
            lines.append(f"  ... and {len(used) - 12} more uses")
        if e.get("shared"):
            lines.append(f"  {e['shared']}")
            touching = [a for a in doc.get("shared_accesses", []) if e["name"] in a["shared"]]
            if touching:
                lines.append("  bank cost of the accesses that touch it (layoutsim.banks):")
                lines.extend("  " + _site_line(a) for a in touching)
        for m in e["maps"]:
            shape = "x".join(map(str, m["shape"]))
            lines.append(f"  {shape}: {m['threads']} threads x {m['registers']} registers"
                         + (f", each element held by {m['replication']} threads/registers" if m["replication"] > 1 else ""))
            lines.append("    bases: " + "; ".join(f"{k} {v}" for k, v in m["bases"].items()))
            c = m["catalog"]
            if c:
                lines.append(f"    catalog: {c['catalog']}: {'matches' if c['matches'] else 'DIFFERS'} ({c['detail']})")
            show = m["table"] if lanes else m["table"][:4]
            for t, regs in enumerate(show):
                cells = " ".join(f"({r[0]},{r[1]})" if len(m["shape"]) == 2 else f"{r[1]}" for r in regs[:16])
                lines.append(f"    thread {t:3d}: {cells}" + (" ..." if len(regs) > 16 else ""))
            if not lanes and m["threads"] > 4:
                lines.append(f"    ... threads 4-{m['threads'] - 1} (--lanes lists them all)")
    if doc.get("scratch"):
        lines.append("shared-memory scratch Triton lays out in its lowering (not predicted here; `layoutsim triton "
                     "run` costs it): " + ", ".join(f"{o['op']} at line {o['line'][1] if o['line'] else '?'}"
                                                   for o in doc["scratch"]))
    return "\n".join(lines)
