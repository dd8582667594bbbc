"""What each shared-memory access of a Triton kernel costs, predicted from the layouts of its ttgir.

For every op that moves data between registers and a shared encoding (ttgir.memory_ops:
local_store, local_alloc of a value, local_load, async_copy_global_to_local; wgmma's operand
reads), the register side is the op's distributed encoding, tabulated by Triton itself
(layouts.bases: its linear layout), and the shared side is where the shared encoding puts each
element (`element_offsets`: #swizzled_shared's XOR of column groups by row phase, as Triton's
SwizzledSharedEncodingAttr defines it; #nvmma_shared's rows of the swizzle span with the
wgmma/TMA swizzle mode of layoutsim.smem). Composing the two gives the element offset each
thread's register touches. The lowering is the one Triton's shared-memory lowering performs:
registers that hold the same element are moved once, a store by one of the threads that hold an
element (lanes and warps whose linear-layout basis is zero are masked off), a load by every
thread; a local_load/local_store whose registers are not a #blocked layout moves by ldmatrix
(sm_75+) / stmatrix (sm_90+) where the composed layout is 8x8 matrices of 16-byte rows
(`matrix_rows`); otherwise consecutive registers at consecutive, aligned offsets are one vector
access of up to 16 bytes (cp.async: no more than the `contiguity` Triton proved for the global
side). Each warp's
access is costed by the project's bank model (`layoutsim.banks`, the same function and rules the
executor's costs use), its op spelt by `layoutsim.access.op_name`; wgmma operands by
`layoutsim.sim.costing.wgmma_cost`, the GMMA unit's rule the executor charges. TMA copies cost
no LSU wavefront (the TMA unit writes them).

What this does not predict: the scratch Triton allocates in its LLVM lowering for
convert_layout, reductions, scans and tensormap_create (no shared encoding in the ttgir names it:
ttgir.scratch_ops lists those ops), nor where ptxas merges or splits an access in SASS. `compare`
sets the prediction against an executed Run line by line (op by op where a line has several);
docs/triton.md says where they differ.
"""
from fractions import Fraction
import re

import numpy as np

from .. import banks
from ..access import op_name
from ..sim.costing import wgmma_cost
from ..smem.swizzle import mode
from .compile import capability
from .layouts import bases, coordinates, describe as describe_layouts
from .ttgir import Encoding, encodings, memory_ops, parse_encoding, scratch_ops

MAX_VECTOR_BYTES = 16          # the widest per-lane shared access (ld/st.shared.v4.b32, cp.async 16)
CP_ASYNC_BYTES = (4, 8, 16)    # cp.async's copy sizes (PTX ISA 9.7.9.25.3.1, cp.async)
# the first arch with ldmatrix (sm_75) and stmatrix (sm_90): PTX ISA 9.7.14.5.15 / 9.7.14.5.16
MATRIX_SM = {"ld": 75, "st": 90}
WARP = 32


def element_bits(dtype):
    """Bits of a ttgir element type: f16 16, bf16 16, f8E4M3FN 8, i1 8 (stored as a byte), f32 32."""
    m = re.match(r"[a-z]+(\d+)", dtype)
    if not m:
        return None
    return max(8, int(m.group(1)))


def element_offsets(enc, shape, elem_bits):
    """int64 array of `shape`: the element offset inside the buffer where each element lies, or
    (None, why) for an encoding this does not lay out."""
    p, rank = enc.params, len(shape)
    idx = [a.astype(np.int64) for a in np.indices(shape)]
    if enc.kind == "swizzled_shared":
        order = list(p.get("order") or range(rank - 1, -1, -1))
        if sorted(order) != list(range(rank)):
            return None, f"order {order} for a rank-{rank} buffer"
        vec, per, maxp = int(p.get("vec", 1)), int(p.get("perPhase", 1)), int(p.get("maxPhase", 1))
        inner = order[0]
        col = idx[inner]
        if rank >= 2:
            row = idx[order[1]]
            col = ((col // vec) ^ ((row // per) % maxp)) * vec + col % vec
        off, stride = col, shape[inner]
        for d in order[1:]:
            off = off + idx[d] * stride
            stride *= shape[d]
        return off, None
    if enc.kind == "nvmma_shared":
        if rank < 2:
            return None, "a rank-1 buffer"
        width = int(p.get("swizzlingByteWidth", 0))
        eb = int(p.get("elementBitWidth", elem_bits)) // 8
        inner, outer = (rank - 2, rank - 1) if p.get("transposed") else (rank - 1, rank - 2)
        per_row = max(16, width) // eb                 # elements in one row of the swizzle span
        rows, cols = shape[outer], shape[inner]
        col, row = idx[inner], idx[outer]
        # each span-wide column block of the tile holds its rows contiguously (a TMA box / the
        # wgmma canonical K-major layout: 8 rows of the span repeat the swizzle pattern)
        lin = (col // per_row) * rows * per_row + row * per_row + col % per_row
        lin = mode(f"{width}B" if width else "none").apply(lin * eb) // eb
        tile = rows * cols
        lead = np.zeros(shape, np.int64)
        stride = tile
        for d in range(rank - 3, -1, -1):
            lead = lead + idx[d] * stride
            stride *= shape[d]
        return lead + lin, None
    return None, f"#{enc.kind} is not laid out here"


def _zero_mask(vectors):
    """The bits of an index whose basis vector is zero (copies of another index's element)."""
    return sum(1 << i for i, v in enumerate(vectors) if not any(v))


def register_offsets(bs, shape, offsets):
    """([threads, unique registers] element offsets, unique register indices, active [threads]
    for a store): the composition of a distributed layout with a buffer's offsets."""
    c = coordinates(bs, len(shape))                              # [threads, registers, rank]
    off = offsets[tuple(c[..., d] for d in range(len(shape)))]
    regs = np.arange(off.shape[1])
    keep = regs[(regs & _zero_mask(bs["register"])) == 0]
    t = np.arange(off.shape[0])
    lane_free, warp_free = _zero_mask(bs["lane"]), _zero_mask(bs["warp"])
    owner = ((t % WARP) & lane_free) == 0
    owner &= ((t // WARP) & warp_free) == 0
    return off[:, keep], keep, owner


def vector_width(off, limit):
    """The most consecutive registers (a power of two <= limit) at consecutive offsets aligned to
    their number, for every thread: Triton's vectorisation of a shared access."""
    v = 1
    while v * 2 <= min(limit, off.shape[1]) and off.shape[1] % (v * 2) == 0:
        w = v * 2
        g = off.reshape(off.shape[0], -1, w)
        if not ((g - g[:, :, :1] == np.arange(w)).all() and (g[:, :, 0] % w == 0).all()):
            break
        v = w
    return v


def matrix_rows(off, bits, trans):
    """ldmatrix/stmatrix of a composed layout: (matrices per instruction, [warps, instructions,
    32] byte offsets of the row each lane gives) or None when the layout does not move as 8x8
    matrices of 16-byte rows. A matrix is 8 rows of 16 bytes: row r's word q (elements
    q*e..q*e+e-1, e = 32/bits) is in lane 4r+q's register word; .trans (16-bit only) moves the
    stored matrix transposed: lane 4c+q's two elements are rows 2q, 2q+1 of stored column c.
    Each 32-bit register word is `e` consecutive registers (PTX ISA 9.7.14.5.15, ldmatrix)."""
    e = 32 // bits
    threads, regs = off.shape
    if bits > 32 or (trans and bits != 16) or regs % e or threads % WARP:
        return None
    words = regs // e
    eb = bits // 8
    o = off.reshape(threads // WARP, 8, 4, words, e)                    # [warp, r, q, word, e]
    if trans:       # stored row 2q+e of matrix (word), column r (the lane's group): contiguous in r
        start = o[:, :1]                                                 # column 0
        if not (o - start == np.arange(8)[None, :, None, None, None]).all():
            return None
        rows = start[:, 0].transpose(0, 2, 1, 3).reshape(threads // WARP, words, 8)   # row 2q+e
    else:           # row r of matrix (word): lanes 4r..4r+3, e elements each, contiguous
        start = o[:, :, :1, :, :1]
        if not (o - start == (np.arange(4)[:, None, None] * e + np.arange(e))[None, None]).all():
            return None
        rows = start[:, :, 0, :, 0].transpose(0, 2, 1)                    # [warp, word, r]
    if (rows * eb % 16).any():
        return None
    for n in (4, 2, 1):
        if words % n == 0:
            r = rows.reshape(rows.shape[0], words // n, n * 8) * eb
            full = np.zeros(r.shape[:2] + (WARP,), np.int64)
            full[:, :, :n * 8] = r
            return n, full
    return None


def _site_cost(op, registers, shared, enc_of, arch):
    """The predicted access of one register<->shared op: a dict, or {"unpredicted": why}."""
    (rshape, rdtype, renc_text), (sshape, sdtype, senc_name) = registers, shared
    senc, renc = enc_of(senc_name), enc_of(renc_text)
    bits = element_bits(sdtype)
    if senc is None or renc is None or bits is None:
        return {"unpredicted": "an encoding or element type the ttgir does not declare"}
    if list(rshape) != list(sshape):
        return {"unpredicted": f"registers {rshape} and buffer {sshape} differ in shape"}
    offsets, why = element_offsets(senc, sshape, bits)
    if offsets is None:
        return {"unpredicted": why}
    bs = bases(renc, rshape, enc_of.table)
    if bs is None:
        return {"unpredicted": f"the register layout {renc_text} has no linear layout here"}
    off, _, owner = register_offsets(bs, rshape, offsets)
    eb = bits // 8
    limit = MAX_VECTOR_BYTES // eb
    if op["kind"] == "cp.async":
        limit = min(limit, max(1, op["attrs"].get("contiguity", 1)))
    direction = "ld" if op["kind"] == "ld" else "st"
    matrix = None
    if op["kind"] in ("ld", "st") and renc.kind != "blocked" and capability(arch) >= MATRIX_SM[direction]:
        matrix = next(((got, trans) for trans in (False, True)
                       for got in [matrix_rows(off, bits, trans)] if got is not None), None)
    if matrix is not None:
        (n, rows), trans = matrix
        name = f"{'ldmatrix' if direction == 'ld' else 'stmatrix'}.x{n}{'.trans' if trans else ''}"
        lanes = np.zeros(rows.shape, bool)
        lanes[:, :, :n * 8] = True
        if direction == "st":
            lanes &= owner.reshape(-1, WARP)[:, None, :]
        return _costed(name, name, direction, n * 32 // bits, rows, lanes, arch)
    v = vector_width(off, limit)
    width = v * eb
    if op["kind"] == "cp.async" and width not in CP_ASYNC_BYTES:
        return {"unpredicted": f"a {width}-byte cp.async (cp.async copies 4, 8 or 16 bytes)"}
    active = owner if direction == "st" else np.ones_like(owner)
    warps = off.shape[0] // WARP
    first = off[:, ::v] * eb                                      # [threads, instructions] byte offsets
    rows = first.reshape(warps, WARP, -1).transpose(0, 2, 1)     # [warps, instructions, lanes]
    lanes = np.broadcast_to(active.reshape(warps, 1, WARP), rows.shape)
    name = op_name(direction, "shared", width)
    return _costed(f"cp.async {width} B" if op["kind"] == "cp.async" else name, name,
                   "ldgsts" if op["kind"] == "cp.async" else direction, v, rows, lanes, arch)


def _costed(instruction, banks_op, kind, vector, rows, lanes, arch):
    """The bank model's wavefronts of [warps, instructions, 32] offsets and active lanes. Every
    warp executes every instruction of the op (the executor counts a warp that reaches a guarded
    instruction, ptx/scheduler.py): an instruction whose lanes are all masked off (a warp that
    owns no element of a store or cp.async) counts with 0 wavefronts."""
    warps = rows.shape[0]
    used = lanes.any(axis=2).reshape(-1)
    O, M = rows.reshape(-1, WARP)[used], lanes.reshape(-1, WARP)[used]
    wf = np.concatenate([banks.wavefronts_batch(banks_op, O, arch, active=M), np.zeros(int((~used).sum()), np.int64)])
    ideal = banks.ideal_batch(banks_op, O, arch, active=M)
    return {"instruction": instruction, "banks_op": banks_op, "kind": kind, "vector": vector,
            "per_warp": int(rows.shape[1]), "warps": int(warps),
            "active_warps": int(used.reshape(warps, -1).any(axis=1).sum()),
            "instructions": int(used.size), "wavefronts": int(wf.sum()), "ideal": int(ideal.sum()),
            "histogram": {str(k): int(n) for k, n in zip(*np.unique(wf, return_counts=True))}}


def _gmma_cost(op, enc_of, num_warps):
    """wgmma's operand reads of one warp_group_dot: per wgmma instruction, its A (when in shared
    memory) and B tiles of k = 256 bits, costed by the GMMA unit's rule (wgmma_cost)."""
    res = op.get("result")
    if res is None or len(op["shared"]) == 0:
        return {"unpredicted": "no accumulator type"}
    mma = enc_of(res[2])
    if mma is None or mma.kind != "nvidia_mma" or mma.params.get("versionMajor") != 3:
        return {"unpredicted": "not a wgmma (#nvidia_mma v3) accumulator"}
    m, n = res[0][-2], res[0][-1]
    _, inst_n, inst_k = mma.params["instrShape"]
    a_shared = len(op["shared"]) == 2
    b_shape, b_dtype, _ = op["shared"][-1]
    k = b_shape[-2]
    bits = element_bits(b_dtype)
    wm, wn = (list(mma.params["warpsPerCTA"]) + [1])[:2]
    groups = max(1, num_warps // 4)
    # each warpgroup: 4 warps of 16 rows each along M, wn along N, every k step of the tile
    per_group = max(1, m // (16 * wm)) * max(1, n // (inst_n * wn)) * max(1, k // inst_k)
    nbytes = (64 * inst_k * bits // 8 if a_shared else 0) + inst_n * inst_k * bits // 8
    w = wgmma_cost(nbytes)[0]
    return {"instruction": f"wgmma m64n{inst_n}k{inst_k} ({'A and B' if a_shared else 'B'} from shared memory)",
            "kind": "gmma", "per_warpgroup": per_group, "warpgroups": groups, "instructions": per_group * groups,
            "wavefronts": w * per_group * groups, "ideal": w * per_group * groups,
            "histogram": {str(w): per_group * groups}}


class _Encodings:
    """Encoding lookup by alias or inline text (the aliases of ttgir.encodings)."""

    def __init__(self, table):
        self.table = table

    def __call__(self, text):
        if text in self.table:
            return self.table[text]
        kind, params = parse_encoding(text)
        return Encoding(text, kind, params) if kind else None


def predict(compiled, table):
    """[site]: each distinct shared-memory access op of the kernel with its predicted costs per
    execution of the op (all warps of a CTA): {"op", "line", "shared" (the encoding),
    "registers", "shape", "dtype", "ops" (ttgir ops alike), "order" (their places among the
    kernel's memory ops, in program order), "instruction", "kind", "vector",
    "per_warp", "warps", "instructions", "wavefronts", "ideal", "per_instruction": {"wavefronts",
    "ideal"} ("a/b" when not whole), "histogram"} or "unpredicted": why."""
    enc_of = _Encodings(table)
    sites = {}
    for n, op in enumerate(memory_ops(compiled.ttgir)):
        key = (op["op"], tuple(op["line"] or ()), str(op["shared"]), str(op["registers"]))
        if key in sites:
            sites[key]["ops"] += 1
            sites[key]["order"].append(n)
            continue
        rec = {"op": op["op"], "line": op["line"], "shared": [s[2] for s in op["shared"]],
               "registers": op["registers"][0][2] if op["registers"] else None,
               "shape": op["shared"][0][0], "dtype": op["shared"][0][1], "ops": 1, "order": [n]}
        if op["kind"] == "tma":
            rec.update(instruction="TMA copy", kind="tma", wavefronts=0, ideal=0,
                       note="the TMA unit moves it: no LSU wavefront")
        elif op["kind"] == "gmma":
            rec.update(_gmma_cost(op, enc_of, compiled.num_warps))
        elif not op["registers"]:
            rec["unpredicted"] = "no register tensor"
        else:
            try:
                rec.update(_site_cost(op, op["registers"][0], op["shared"][0], enc_of, compiled.arch))
            except (IndexError, KeyError, TypeError, ValueError) as e:     # a layout this does not read
                rec["unpredicted"] = f"the layouts could not be composed ({type(e).__name__}: {e})"[:200]
        if rec.get("instructions"):
            rec["per_instruction"] = {k: ratio(rec[k], rec["instructions"]) for k in ("wavefronts", "ideal")}
        sites[key] = rec
    return list(sites.values())


def describe(compiled):
    """layouts.describe's document with "shared_accesses" (predict) and "scratch" (the ops whose
    shared memory Triton lays out in its lowering: ttgir.scratch_ops): `layoutsim triton layouts`."""
    doc = describe_layouts(compiled)
    doc["shared_accesses"] = predict(compiled, encodings(compiled.ttgir))
    doc["scratch"] = scratch_ops(compiled.ttgir)
    return doc


def ratio(a, b):
    f = Fraction(int(a), int(b))
    return int(f) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


# ---- the prediction against an executed launch ---------------------------------------------------
GMMA_WARPS = 4         # the executor counts a wgmma once per warp of its warpgroup


def line_zero(ptx):
    """The PTX lines (1-based) of the instructions under a `.loc F 0 C`: code LLVM gives no source
    line (DWARF line 0: merged or hoisted out of where it was written). The executor charges it to
    the last line it had (ptx/module.py), which no ttgir op of that line explains."""
    out, zero = set(), False
    for n, text in enumerate(ptx.splitlines(), 1):
        m = re.match(r"\s*\.loc\s+\d+\s+(\d+)\s", text)
        if m:
            zero = m.group(1) == "0"
        elif zero:
            out.add(n)
    return out


def _per_instruction(g):
    return {"wavefronts": ratio(g[0], g[2]), "ideal": ratio(g[1], g[2])} if g[2] else None


def _agrees(site, g):
    """The executed [wavefronts, ideal, instructions] are whole executions of the site's op at
    its predicted cost per instruction."""
    n = site["instructions"]
    return bool(g[2] and g[2] % n == 0 and Fraction(g[0], g[2]) == Fraction(site["wavefronts"], n)
                and Fraction(g[1], g[2]) == Fraction(site["ideal"], n))


def _split(group, executed):
    """Several ops at one line: each op instance (program order, `order`) owns the next per_warp
    executed PTX instructions (each warp runs every instruction of the op's lowering, in the
    order the ttgir lists the ops). None where the counts do not add up (an op not executed, a
    wgmma), so no instruction is assigned by guess."""
    if any(s["kind"] == "gmma" for s in group):
        return None
    seq = sorted((n, k) for k, s in enumerate(group) for n in s["order"])
    if sum(group[k]["per_warp"] for _, k in seq) != len(executed):
        return None
    per, i = [[0, 0, 0] for _ in group], 0
    for _, k in seq:
        for x in executed[i:i + group[k]["per_warp"]]:
            per[k] = [per[k][0] + x[0], per[k][1] + x[1], per[k][2] + x[2]]
        i += group[k]["per_warp"]
    return [{"op": s["op"], "instruction": s["instruction"], "predicted": s["per_instruction"],
             "executed": _per_instruction(g), "instructions": g[2],
             "op_executions": ratio(g[2], s["instructions"]) if g[2] else 0, "agrees": _agrees(s, g)}
            for s, g in zip(group, per)]


def compare(sites, run, ptx=None):
    """Per (Python line, kind): the predicted wavefronts and ideal per instruction against the
    executed Run's (its instructions whose source line is that line, summed): [{"line", "kind",
    "predicted": [{"wavefronts", "ideal"}], "executed": {...} or None, "instructions" (executed),
    "op_executions" (executed instructions / the op's instructions per execution, where the line
    has one op size), "per_op" (several ops at the line: each op's own executed instructions,
    `_split`), "line_zero", "agrees" (same per-instruction costs, whole op executions; per op
    where the line has several)}]; an executed shared line no site predicts has "predicted":
    None. Instructions LLVM gave line 0 (`line_zero`, read from `ptx`, by default the run's
    Triton PTX) are a row of their own with "line_zero": True and no prediction."""
    if ptx is None and getattr(run, "triton", None) is not None:
        ptx = run.triton.ptx
    zero = line_zero(ptx) if ptx else set()
    want = {}
    for s in sites:
        if not s.get("per_instruction") or not s.get("line"):
            continue
        want.setdefault((s["line"][0].rsplit("/", 1)[-1], int(s["line"][1]), s["kind"], False), []).append(s)
    got = {}
    for i in run.instructions:
        if i.wavefronts is None or i.kind is None or not i.cuda or not i.executions:
            continue
        key = (str(i.cuda[0]).rsplit("/", 1)[-1], int(i.cuda[1]), i.kind, i.line in zero)
        got.setdefault(key, []).append((i.wavefronts, i.ideal or 0,
                                        i.executions // GMMA_WARPS if i.kind == "gmma" else i.executions))
    out = []
    for key in sorted(set(want) | set(got)):
        group, executed = want.get(key), got.get(key, [])
        g = [sum(x[j] for x in executed) for j in range(3)]
        costs = sorted({(Fraction(s["wavefronts"], s["instructions"]), Fraction(s["ideal"], s["instructions"]))
                        for s in group}) if group else None
        pred = [{"wavefronts": ratio(a.numerator, a.denominator), "ideal": ratio(b.numerator, b.denominator)}
                for a, b in costs] if group else None
        per_op, runs, agrees = None, None, False
        if group and len(group) > 1 and executed:
            per_op = _split(group, executed)
        if per_op is not None:
            agrees = all(p["agrees"] for p in per_op)
        elif group and g[2]:
            sizes = {s["instructions"] for s in group}
            # one op size at the line: the executed instructions are whole executions of the op
            runs = ratio(g[2], next(iter(sizes))) if len(sizes) == 1 else None
            agrees = (len(costs) == 1 and costs[0] == (Fraction(g[0], g[2]), Fraction(g[1], g[2]))
                      and (len(sizes) > 1 or g[2] % next(iter(sizes)) == 0))
        out.append({"file": key[0], "line": key[1], "kind": key[2], "predicted": pred,
                    "executed": _per_instruction(g), "instructions": g[2], "op_executions": runs,
                    "per_op": per_op, "line_zero": key[3], "agrees": bool(agrees)})
    return out
