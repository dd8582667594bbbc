"""tcgen05.mma.sp (sparse A, its metadata in tensor memory) in the executor: PTX ISA 9.x 9.7.16.10.9.2
'tcgen05.mma.sp' and 9.7.16.10.8 'Sparse Matrices'.

  tcgen05.mma.sp.cta_group::{1,2}.kind::{f16,tf32,f8f6f4,i8} [d], a-desc or [a-tmem], b-desc, [sp-meta],
      idesc {, {disable-output-lane}}, enable-input-d {, scale-input-d}
A's M x K/2 kept values are read through the descriptor as a dense M x K/2 operand, K-major, 8-bit or
wider elements, or from TMEM ([a-tmem]: the dense MMA's A-from-TMEM layout, ops_tcgen05.tmem_a, of K/2
elements: JAX's Mosaic GPU writes the kept values so for cta_group::1, tested on a B200 by
tests/mosaic/gpu_test.py test_mma_sparse_lhs_tmem; the pair's M = 256, each CTA its 128 rows as the dense
pair's, assumed); the metadata (4 bits per chunk: numerics/sparse_tcgen05.py)
from TMEM at sp-meta; B, D, the mask, enable-input-d and scale-input-d as the dense MMA's
(ops_tcgen05.finish); cta_group::2 (M = 256, Layout A) splits A, B and D over the CTA pair as the dense
pair MMA does (ops_tcgen05._one_mma).

Where the metadata lies (9.7.16.10.8.4, whose figures were not read here; CUTLASS 4.2's
UMMA::tmem_e_frg, cute/atom/mma_traits_sm100.hpp, for M = 128 read through its layouts, assumed):
  f16 / tf32 (32 metadata bits per row): one 32-bit column per MMA, row m's chunk c (of 8) in TMEM
      lane m%8 + 8*(c//4) + 16*(m//16), bits 16*((m//8)%2) + 4*(c%4);
  f8f6f4 / i8 (64 bits per row): two columns, row m in lane m, chunk c (of 16) in column c//8,
      bits 4*(c%8).
The ISA gives M = 128 and M = 256 one figure per kind (9.7.16.10.8.4.2, .4.4, .4.6, titled "for M = 128 /
M = 256"), and CUTLASS's pair atoms (SM100_MMA_*_2x1SM_SS_SPARSE) split A and its metadata over the pair
(ALayout: M/2 rows per CTA) and lay each CTA's 128 rows out with the same tmem_e_frg: so with
cta_group::2 each CTA's TMEM holds, at the same sp-meta address, the metadata of its own 128 rows of A in
the M = 128 layout above (assumed, as that layout is).
The sparsity selector (idesc bits 0-1) "selects the sub-columns ... to form the metadata matrix": it
must be 0 for f8f6f4 and i8 (the ISA's words); for f16 / tf32 CuTe moves bit 0 of the metadata
column into the selector (`id2 = tmem_e & 1`, the address then even), so selector s reads column
sp-meta + s (assumed); an odd sp-meta column or a selector of 2 or 3 is a fault (not documented here).
.kind::i8 (2:4, 9.7.16.10.8.2; the integer sum exact) takes the legal M/N of the dense .kind::i8, as
CUTLASS's SM100_MMA_S8_SS_SPARSE / _2x1SM_SS_SPARSE static_asserts state them (assumed: the catalog).
tcgen05.mma.ws.sp (ops_tcgen05_extra) takes its logical A from logical_a, with the metadata copies of
CUTLASS's tmem_e_frg_ws (meta_cells).
Refused in one line: block-scaled .sp kinds (CUTLASS 4.2 and JAX's Mosaic GPU give them one scale per K/2
kept values, as many as the dense kind's, so whether a scale block runs over the logical K, as this module's
arithmetic does, or over the kept values decides the rounding, and no source read here says which; MMA-Sim
has no .sp), .sp with .ashift (ptxas 13.0 takes it; CUTLASS 4.7 documents .ashift for the dense MMA only). Faults: M = 64 and cta_group::2 with
M = 128 (the metadata of 64 rows per CTA: the ISA's Figures 262/264/266 were not read, and CUTLASS's
tmem_e_frg implements 128 rows only), a metadata index the ISA leaves undefined, the idesc's sparsity
bit clear, an MN-major or FP6/FP4 A. (CUTLASS 4.7, 2026-08, still static_asserts M_MMA == 128 in tmem_e_frg.)
"""
import numpy as np

from ..errors import LayoutsimError
from ..formats import bits
from ..isa import ptx_tcgen05_idesc as IDESC
from ..isa.registry import get
from ..numerics import sparse_tcgen05 as SP
from . import tmem as TM
from . import types as T
from .builders import unsupported
from .ops_matrix import read_words
from .state import Fault

KINDS = ("f16", "tf32", "f8f6f4", "i8")


def meta_cells(kind, M, K, copies=1):
    """(TMEM lane, column offset, bit) int64 [copies, M, K/chunk] of each metadata field (see the module
    docstring; CUTLASS's tmem_e_frg for M = 128, assumed). copies: .ws with M = 64 / 32 (CUTLASS's
    tmem_e_frg_ws) holds the M rows' fields again every M lanes, copy q at lane + M*q."""
    kept, size = SP.chunk(kind)
    m, c = np.meshgrid(np.arange(M), np.arange(K // size), indexing="ij")
    if kind in ("f16", "tf32"):
        lane, col, bit = m % 8 + 8 * (c // 4) + 16 * (m // 16), np.zeros_like(c), 16 * ((m // 8) % 2) + 4 * (c % 4)
    else:
        lane, col, bit = m, c // 8, 4 * (c % 8)
    q = M * np.arange(copies)[:, None, None]
    return lane + q, np.broadcast_to(col, q.shape[:1] + col.shape), np.broadcast_to(bit, q.shape[:1] + bit.shape)


def mma_sp(ins, b, prog, dense):
    """The handler (ops_tcgen05.mma hands .sp here; `dense` is that module, for its shared steps)."""
    kind = next((m.split("::")[1] for m in ins.mods if m.startswith("kind::")), None)
    pair = dense.pair_of(ins)
    if "block_scale" in ins.mods:
        raise unsupported(ins, "block-scaled tcgen05.mma.sp is not modelled (whether a scale block runs over the "
                               "logical K or the kept values decides the rounding; docs/blackwell.md)")
    if "ashift" in ins.mods:
        raise unsupported(ins, ".ashift with .sp is not modelled (CUTLASS 4.7 documents the shift for the dense "
                               "MMA's A; what it does to a sparse A's kept values and metadata no source says)")
    if kind not in KINDS:
        raise unsupported(ins, f".kind::{kind}: tcgen05.mma.sp is modelled for .kind::{{{', '.join(KINDS)}}}")
    o = ins.operands
    if len(o) < 6 or o[3].kind != "addr":
        raise unsupported(ins, "tcgen05.mma.sp takes [d-tmem], a-desc or [a-tmem], b-desc, [sp-meta-tmem], idesc"
                               "{, {disable-output-lane}}, enable-input-d{, scale-input-d}")
    a_tmem = o[1].kind == "addr"
    dense.COL.usage(ins, ws=False)
    rest = list(o[5:])
    mask = read_words(b, b.elems(rest.pop(0), ins, 4 * pair), ins) if rest and rest[0].kind == "vec" else None
    scale_d = dense.scale_input_d(ins, kind, rest) if len(rest) == 2 else None
    if len(rest) != 1:
        raise unsupported(ins, f"{len(o)} operands")
    readers = [b.address(o[0], ins)[0], b.address(o[1], ins)[0] if a_tmem else b.read(o[1], T.get("b64"), ins),
               b.read(o[2], T.get("b64"), ins), b.address(o[3], ins)[0], b.read(o[4], T.get("b32"), ins),
               b.read(rest[0], T.get("pred"), ins)]

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if not len(thr):
            return
        bt.events.sync("async")
        vals = [np.broadcast_to(np.asarray(r(bt)), (bt.T,))[thr] for r in readers]
        masks = mask(bt)[thr] if mask is not None else np.zeros((len(thr), 4 * pair), np.uint32)
        for j, t in enumerate(thr.tolist()):
            da, av, bv, ma, iv, en = (int(v[j]) for v in vals)
            _one(bt, ins, dense, kind, pair, t, da, av, bv, ma, iv, bool(en), masks[j], scale_d, a_tmem)
    assumed = ("sp",) + ("sp_pair",) * (pair == 2) + ("sp_a_tmem",) * a_tmem + ("scale_d",) * (scale_d is not None)
    return dense.step(fn, assumed)


def _decode(ins, t, idesc, kind, pair, ws=False):
    try:
        info = IDESC.decode(idesc, kind, pair)
    except LayoutsimError as e:
        raise Fault(t, 0, f"{ins.name}: {e}", "invalid_operand") from None
    name = (info["name"].replace("tcgen05.mma.", "tcgen05.mma.sp.ws." if ws else "tcgen05.mma.sp.")
            .replace(f"k{info['k']}", f"k{2 * info['k']}"))
    why = ("its sparsity bit (2) is 0: a dense descriptor for tcgen05.mma.sp" if not info["sparse"] else
           f"M={info['m']}: the metadata layout of {info['m'] // pair} rows per CTA is not modelled (CUTLASS 4.7's "
           f"UMMA::tmem_e_frg implements 128 rows only, JAX's Mosaic GPU refuses sparse M=64; the PTX ISA's M=64 "
           f"figures, images, were not read here)"
           if info["m"] != 128 * pair and not ws else
           "an MN-major A: the compressed A is modelled K-major only" if info["a_mn_major"] else
           "FP6/FP4 operands with .sp are not modelled" if bits(info["types"].split(".")[1]) < 8
           or bits(info["types"].split(".")[2]) < 8 else
           "a negated integer operand (PTX ISA 9.7.16.4.2)" if kind == "i8" and (info["neg_a"] or info["neg_b"]) else
           "saturation or a .ws shift" if info["saturate"] or info["max_shift"] else None)
    if why:
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x}: {why}", "invalid_operand")
    try:
        inst = get(name)
    except LayoutsimError:
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x} gives {name}, not a legal shape",
                    "invalid_operand") from None
    return info, inst, idesc & 3


def _metadata(bt, ins, t, cta, taddr, kind, M, K, selector, copies=1):
    """The 4-bit metadata fields [M, K/chunk] of the MMA from TMEM at taddr (module docstring); with
    copies (.ws M = 64 / 32) every copy must hold the same fields (which copy the tensor core reads
    for which columns of D is not documented here: a fault otherwise)."""
    lane0, col0 = taddr >> 16, taddr & 0xFFFF
    if kind in ("f8f6f4", "i8") and selector:
        raise TM.fault(t, taddr, f"{ins.name}: sparsity selector {selector}: must be 0 for .kind::{kind} (PTX ISA "
                              f"9.7.16.10.8.4)", "invalid_operand")
    if kind in ("f16", "tf32") and (selector > 1 or col0 % 2):
        raise TM.fault(t, taddr, f"{ins.name}: sparsity selector {selector} with metadata column {col0}: modelled are "
                              f"selector 0/1 reading column sp-meta + selector from an even column (CUTLASS 4.2's "
                              f"id2 = tmem_e & 1, assumed); the rest is not documented here", "invalid_operand")
    if lane0:
        raise TM.fault(t, taddr, f"{ins.name}: metadata address lane {lane0}: a metadata matrix starts at lane 0",
                    "invalid_operand")
    lanes, cols, bit = meta_cells(kind, M, K, copies)
    cols = cols + col0 + (selector if kind in ("f16", "tf32") else 0)
    tm = TM.of(bt)
    tm.check(np.array([cta]), lanes.reshape(1, -1), cols.reshape(1, -1), np.array([t]), f"{ins.name} (metadata)")
    fields = (tm.cells[cta, lanes, cols] >> bit.astype(np.uint32)) & np.uint32(0xF)
    if (fields != fields[:1]).any():
        q, m, c = np.argwhere(fields != fields[:1])[0]
        raise TM.fault(t, taddr, f"{ins.name}: the {copies} copies of the metadata differ (row {m}, chunk {c}: "
                              f"{int(fields[0, m, c]):#06b} at lane {int(lanes[0, m, c])}, {int(fields[q, m, c]):#06b} "
                              f"at lane {int(lanes[q, m, c])}); which copy the tensor core reads is not documented "
                              f"here (CUTLASS writes all)", "invalid_operand")
    return fields[0]


def logical_a(bt, ins, dense, t, ctas, kind, inst, info, selector, adesc, meta, a_tmem, copies=1):
    """The logical A [M, K] raw bits of one issued .sp MMA: the kept values (through the descriptor from
    each CTA of `ctas`, its M/len(ctas) rows, or from TMEM) expanded by each CTA's metadata at meta."""
    M, _, K = inst.shape
    fa = info["types"].split(".")[1]
    rows = M // len(ctas)
    if a_tmem:
        values = dense.tmem_a(bt, ins, t, ctas, adesc, inst, info, bits(fa), K // 2)
    else:
        values = np.concatenate([dense.operand(bt, ins, t, c, adesc, rows, K // 2, bits(fa), False, "A")
                                 for c in ctas])
    index = np.concatenate([_metadata(bt, ins, t, c, meta, kind, rows, K, selector, copies) for c in ctas])
    try:
        return SP.expand(kind, values, index)
    except LayoutsimError as e:
        raise Fault(t, meta, f"{ins.name}: {e}", "invalid_operand") from None


def _one(bt, ins, dense, kind, pair, t, taddr, adesc, bdesc, meta, idesc, enable, mask, scale_d, a_tmem):
    info, inst, selector = _decode(ins, t, idesc, kind, pair)
    M, N, K = inst.shape
    ctas = [int(bt.cta_index[t])] if pair == 1 else list(dense.peers(bt, t, ins))
    A = logical_a(bt, ins, dense, t, ctas, kind, inst, info, selector, adesc, meta, a_tmem)
    A = dense.COL.apply(TM.of(bt), ins, t, ctas[0], *dense.COL.usage(ins, ws=False), A)
    B = np.concatenate([dense.operand(bt, ins, t, c, bdesc, N // pair, K, bits(info["types"].split(".")[2]),
                                      info["b_mn_major"], "B") for c in ctas]).T
    dense.finish(bt, ins, t, inst, info, np.array(ctas), taddr, A, B, enable, mask, scale_d)


decode = _decode          # ops_tcgen05_extra's .ws.sp
