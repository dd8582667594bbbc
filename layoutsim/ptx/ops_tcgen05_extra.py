"""tcgen05 forms beside ops_tcgen05.py's: tcgen05.shift, the weight-stationary tcgen05.mma.ws, and
tcgen05.cp in every shape and both .cta_group (PTX ISA 9.x (v9.2) 9.7.16).

  tcgen05.shift.cta_group::{1,2}.down [taddr]  (9.7.16.9.3): the 32-byte element (8 columns from
      taddr's column) of each of the warp-slab rows taddr.lane .. +30 moves one row down, to
      lanes +1 .. +31 (the implicit .31x256b shape of 9.7.16.2.3 'Data Movement Shape'): the last
      row's element is overwritten; the first row keeps its own (assumed: the ISA does not say what
      it holds, and CuTe's .4x256b copy refreshes that lane, see cp). taddr's lane is a multiple of
      32. Issued by one thread; ::2 shifts both TMEMs of the CTA pair at taddr (9.7.16.5 Table 46).
  tcgen05.mma.ws.cta_group::1.kind::{f16,tf32,f8f6f4,i8}{.collector::bN::op} [d], a-desc or [a-tmem],
      b-desc, idesc, enable-input-d {, zero-column-mask-desc}  (9.7.16.10.9.3): D = A*B (+ D) with
      M = 32, 64, 128 and N = 64, 128, 256 (9.7.16.2.1 Table 39), D in TMEM by the catalog's
      data-path layout (9.7.16.10.5: Layout G for M=32, E for 64, D for 128), the arithmetic
      layoutsim.mma's; B's collector buffers b0..b3 by collector.py. A zero-column mask whose
      Non-Zero Mask bit (39) is 0 and Column Shift (56-61) 0 uses every column of B (9.7.16.4.3,
      Example 1) and is accepted; a generated mask or a shift is refused (the table's field
      descriptions and its examples disagree on which span is which). A from TMEM: M=128 only.
  tcgen05.mma.ws.sp.cta_group::1.kind::{f16,tf32,f8f6f4,i8} [d], a-desc or [a-tmem], b-desc,
      [sp-meta-tmem], idesc, enable-input-d {, zero-column-mask-desc}  (9.7.16.10.9.4): as .ws, with
      the logical A of ops_tcgen05_sparse (Table 39's .ws sparse shapes: N = 64, 128); the metadata
      of M = 64 / 32 lies as M = 128's, again every M lanes (CUTLASS 4.2's UMMA::tmem_e_frg_ws, assumed:
      the ISA's figures cover M = 64 and 128 and were not read here), every copy the same (a fault
      otherwise: which copy serves which columns of D is not documented).
  tcgen05.cp.cta_group::{1,2}.<shape> [taddr], s-desc  (9.7.16.9.2): the rows of a shared-memory
      matrix (its sm_100 descriptor, 8-bit elements, K-major) into TMEM lanes by the catalog entry's
      map (isa/ptx_tcgen05.cp_fragment: .128x256b, .128x128b, .4x256b, .32x128b.warpx4, .64x128b.warpx2);
      ::2 copies "into the Tensor Memory of both the current and the peer CTAs": each CTA's rows
      from its own shared memory at the descriptor's address, as tcgen05.mma.cta_group::2 reads its
      operands (assumed; CuTe's SM100_UTCCP_*_2cta atoms give both CTAs the same source layout).
Each runs when issued (tcgen05.commit then tracks work already done). Refused, one line each:
A from TMEM with M=32/64, the idesc's .ws B-reuse shift (bits 30-31),
tcgen05.cp's decompression (.b8x16 with .b6x16_p32 / .b4x16_p64: the catalog maps where each element
lands, but where its bits lie in the byte is in the ISA's Figures 195-198, not read here).
"""
import numpy as np

from ..errors import LayoutsimError
from ..formats import bits
from ..isa import ptx_tcgen05_idesc as IDESC
from ..isa.registry import get
from ..warpcore import tcgen05 as core
from . import collector as COL
from . import tmem as TM
from . import types as T
from .builders import need, unsupported
from . import ops_tcgen05 as DENSE
from . import ops_tcgen05_sparse as SPARSE
from .events import Mma
from .ops_tcgen05 import check_arch, in_shared, operand, pair_of, peers, step, tmem_a
from .state import Fault

SHIFT_ROWS, SHIFT_COLS = 31, 8          # .31x256b: 31 rows of 256 bits (8 32-bit columns)


def _ctas(bt, ins, t, pair):
    """The batch CTAs an issue by thread t reaches: its own, or its CTA pair."""
    return [int(bt.cta_index[t])] if pair == 1 else list(peers(bt, t, ins))


def _issuers(operands):
    """fn(bt, g) -> (threads, [per-thread values of each reader]) of the issuing threads, or None."""
    def at(bt, g):
        thr = np.flatnonzero(g)
        if not len(thr):
            return None
        bt.events.sync("async")
        return thr, [np.broadcast_to(np.asarray(r(bt)), (bt.T,))[thr] for r in operands]
    return at


# ---- tcgen05.shift -------------------------------------------------------------------------------
def shift(ins, b, prog):
    check_arch(ins, prog)
    pair = pair_of(ins)
    taddr, _ = b.address(ins.operands[0], ins)
    prog.notes.add(f"{ins.name}: the first row of the shifted matrix keeps its element (assumed: PTX ISA "
                   f"9.7.16.9.3 does not say what it holds after the shift)")
    issue = _issuers([taddr])

    def fn(bt, g, full):
        on = issue(bt, g)
        if on is None:
            return
        thr, (ta,) = on
        tm = TM.of(bt)
        for t, a in zip(thr.tolist(), ta.tolist()):
            lane, col = int(a) >> 16, int(a) & 0xFFFF
            if lane % 32:
                raise TM.fault(t, int(a), f"{ins.name}: taddr's lane {lane} is not a multiple of 32 (PTX ISA 9.7.16.9.3)",
                            "tensor_memory")
            L = lane + np.arange(SHIFT_ROWS + 1)[:, None]
            C = col + np.arange(SHIFT_COLS)[None, :]
            for cta in _ctas(bt, ins, t, pair):
                tm.check(np.array([cta]), L[None], C[None], np.array([t]), ins.name)
                tm.cells[cta, L[1:], C] = tm.cells[cta, L[:-1], C].copy()
    return step(fn)


# ---- tcgen05.mma.ws ------------------------------------------------------------------------------
def mma_ws(ins, b, prog):
    check_arch(ins, prog)
    sparse = "sp" in ins.mods
    kind = next((m.split("::")[1] for m in ins.mods if m.startswith("kind::")), None)
    if kind not in IDESC.AB_FORMAT:
        raise unsupported(ins, f".kind::{kind}: tcgen05.mma.ws takes .kind::{{{', '.join(IDESC.AB_FORMAT)}}} "
                               f"(PTX ISA 9.7.16.10.9.3)")
    buf, op = COL.usage(ins, ws=True)
    o = list(ins.operands)
    meta = None
    if sparse:                                   # [d], a, b, [sp-meta-tmem], idesc, ... (9.7.16.10.9.4)
        if len(o) < 6 or o[3].kind != "addr":
            raise unsupported(ins, "tcgen05.mma.ws.sp takes [d-tmem], a-desc or [a-tmem], b-desc, [sp-meta-tmem], "
                                   "idesc, enable-input-d{, zero-column-mask-desc}")
        meta = b.address(o.pop(3), ins)[0]
    a_tmem = o[1].kind == "addr"
    d_at, _ = b.address(o[0], ins)
    adesc = b.address(o[1], ins)[0] if a_tmem else b.read(o[1], T.get("b64"), ins)
    readers = [d_at, adesc, b.read(o[2], T.get("b64"), ins), b.read(o[3], T.get("b32"), ins),
               b.read(o[4], T.get("pred"), ins)]
    if len(o) == 6:
        readers.append(b.read(o[5], T.get("b64"), ins))
    if meta is not None:
        readers.append(meta)
    issue = _issuers(readers)

    def fn(bt, g, full):
        on = issue(bt, g)
        if on is None:
            return
        thr, vals = on
        for j, t in enumerate(thr.tolist()):
            da, av, bv, iv, en = (int(v[j]) for v in vals[:5])
            zmask = int(vals[5][j]) if len(o) == 6 else 0
            sp = int(vals[-1][j]) if sparse else None
            _one_ws(bt, ins, kind, t, da, av, bv, iv, bool(en), zmask, a_tmem, buf, op, sp)
    return step(fn, ("sp", "sp_ws") + ("sp_a_tmem",) * a_tmem if sparse else ())


def _decode_ws(ins, t, idesc, kind):
    """The catalog entry and idesc fields of a .ws MMA (PTX ISA 9.7.16.4.2; the .ws shapes of Table 39)."""
    try:
        info = IDESC.decode(idesc, kind)
    except LayoutsimError as e:
        raise Fault(t, 0, f"{ins.name}: {e}", "invalid_operand") from None
    name = info["name"].replace("tcgen05.mma.", "tcgen05.mma.ws.")
    try:
        inst = get(name)
    except LayoutsimError:
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x} gives M={info['m']} N={info['n']}: "
                          f"{name} is not a legal .ws shape (PTX ISA 9.7.16.2.1 Table 39: M 32/64/128, "
                          f"N 64/128/256)", "invalid_operand") from None
    fa, fb = info["types"].split(".")[1:3]
    why = ("FP6/FP4 operands" if bits(fa) < 8 or bits(fb) < 8 else
           "a negated integer operand" if (info["neg_a"] or info["neg_b"]) and kind == "i8" else
           "the .ws B-reuse shift (bits 30-31)" if info["max_shift"] else
           "sparsity or saturation" if info["sparse"] or info["saturate"] else None)
    if why:
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x} asks for {why}: not modelled "
                          f"for tcgen05.mma.ws", "invalid_operand")
    return info, inst, 0


def _one_ws(bt, ins, kind, t, taddr, adesc, bdesc, idesc, enable, zmask, a_tmem, buf, op, meta=None):
    """One .ws MMA; meta: .ws.sp's [sp-meta-tmem] address (the logical A from ops_tcgen05_sparse, whose
    metadata layout CUTLASS's tmem_e_frg_ws gives M = 64 / 32 as 128 // M copies, every M lanes)."""
    info, inst, selector = (_decode_ws(ins, t, idesc, kind) if meta is None else
                            SPARSE.decode(ins, t, idesc, kind, 1, ws=True))
    if zmask >> 39 & 1 or zmask >> 56 & 0x3F:
        raise Fault(t, 0, f"{ins.name}: zero-column mask descriptor {zmask:#018x} generates a mask or shifts B's "
                          f"columns: not modelled (PTX ISA 9.7.16.4.3; a descriptor with bit 39 and bits 56-61 "
                          f"clear uses every column)", "invalid_operand")
    d, fa, fb = info["types"].split(".")[:3]
    M, N, K = inst.shape
    cta = int(bt.cta_index[t])
    tm = TM.of(bt)
    if meta is not None:
        A = SPARSE.logical_a(bt, ins, DENSE, t, [cta], kind, inst, info, selector, adesc, meta, a_tmem, 128 // M)
    elif a_tmem:
        A = tmem_a(bt, ins, t, [cta], adesc, inst, info, bits(fa))
    else:
        A = operand(bt, ins, t, cta, adesc, M, K, bits(fa), info["a_mn_major"], "A")
    B = operand(bt, ins, t, cta, bdesc, N, K, bits(fb), info["b_mn_major"], "B").T
    B = COL.apply(tm, ins, t, cta, buf, op, B)
    _, lane, col = core.d_cells(inst)
    lanes, cols = lane + (taddr >> 16), col + (taddr & 0xFFFF)
    tm.check(np.array([cta]), lanes[None], cols[None], np.array([t]), ins.name)
    old = tm.cells[cta, lanes, cols]
    low = np.uint32(0xFFFF) if d == "f16" else np.uint32(0xFFFFFFFF)
    C = (old & low) if enable else np.zeros_like(old)
    C = C.astype(np.uint16) if d == "f16" else C
    D = core.mma(inst, info["types"], A, B, C, info["neg_a"], info["neg_b"])
    if bt.events.mma_observed:                  # a test checking each MMA (events.Mma)
        bt.events.mma(Mma(ins.extra["site"], t, (int(bt.ctas[cta]),), taddr, inst.name, info["types"], A, B, C, D,
                          info["neg_a"], info["neg_b"]))
    tm.cells[cta, lanes, cols] = D


# ---- tcgen05.cp ----------------------------------------------------------------------------------
DECOMPRESS = ("b8x16", "b6x16_p32", "b4x16_p64")


def cp(ins, b, prog):
    check_arch(ins, prog)
    if any(m in ins.mods for m in DECOMPRESS):
        raise unsupported(ins, "tcgen05.cp's decompression (.b8x16 with .b6x16_p32 / .b4x16_p64) is not modelled: "
                               "where an element's bits lie in its byte is the ISA's Figures 195-198, not read here")
    shape = ".".join(m for m in ins.mods[1:] if not m.startswith("cta_group"))
    try:
        inst = get(f"tcgen05.cp.{shape}")
    except LayoutsimError:
        raise unsupported(ins, f"tcgen05.cp.{shape} is not a shape (128x256b, 128x128b, 4x256b, 32x128b.warpx4, "
                               f"64x128b.warpx2::02_13 / ::01_23; PTX ISA 9.7.16.9.2)") from None
    need(ins, 2)
    pair = pair_of(ins)
    taddr, _ = b.address(ins.operands[0], ins)
    issue = _issuers([taddr, b.read(ins.operands[1], T.get("b64"), ins)])

    def fn(bt, g, full):
        on = issue(bt, g)
        if on is None:
            return
        thr, (tas, ds) = on
        tm = TM.of(bt)
        for t, ta, d in zip(thr.tolist(), tas.tolist(), ds.tolist()):
            try:
                addr, lanes, cols = core.cp_cells(inst, int(d))
            except LayoutsimError as e:
                raise Fault(t, 0, f"{ins.name}: source descriptor: {e}", "invalid_operand") from None
            in_shared(bt, ins, t, addr, 1, int(d), "source")
            L = np.broadcast_to((int(ta) >> 16) + lanes[:, :, None], lanes.shape + cols.shape)
            C = np.broadcast_to((int(ta) & 0xFFFF) + cols, L.shape)
            for cta in _ctas(bt, ins, t, pair):
                words = core.cp_words(bt.smem, cta * bt.S + addr)          # [rows, cols]
                tm.check(np.array([cta]), L[None], C[None], np.array([t]), ins.name)
                tm.cells[cta, L, C] = words[:, None, :]
    return step(fn)
