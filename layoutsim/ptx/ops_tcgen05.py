"""tcgen05 (sm_100a, Blackwell's fifth-generation tensor core) in the executor: tensor memory
allocation, tcgen05.ld / st / wait, tcgen05.mma with commit to an mbarrier, and the fences.
PTX ISA 9.x (v9.2) 9.7.16 'TensorCore 5th Generation Family Instructions'.

  tcgen05.alloc.cta_group::{1,2}.sync.aligned.shared::cta.b32 [dst], nCols   one allocation per warp;
      the TMEM address (lane 0 << 16 | column) is written to shared memory at dst (ptx/tmem.py)
  tcgen05.dealloc.cta_group::{1,2}.sync.aligned.b32 taddr, nCols; tcgen05.relinquish_alloc_permit...
  tcgen05.ld / st .sync.aligned.<shape>.x<N>[.pack::16b|.unpack::16b].b32: every shape and .num of
      the catalog (isa/ptx_tcgen05.py: the register map of each); 16x32bx2 takes immHalfSplitoff
  tcgen05.wait::ld / wait::st: the ld/st completed when issued, nothing left to wait for
  tcgen05.mma.cta_group::{1,2}.kind::{f16,tf32,f8f6f4,i8} [d], a-desc, b-desc, idesc
      {, {disable-output-lane}}, enable-input-d {, scale-input-d}: issued by each thread that
      executes it (scale-input-d, .kind::f16/tf32: D = A*B + D * 2^-s, numerics.scale_d); A and B
      from shared memory through sm_100 matrix descriptors (layoutsim.smem.umma) or A from TMEM
      ([a-tmem]: _tmem_a), the shape and
      types from the instruction descriptor (isa/ptx_tcgen05_idesc.py), D in TMEM in the entry's
      data-path layout, the arithmetic layoutsim.mma's (warpcore/tcgen05.py)
  tcgen05.mma.cta_group::1.kind::{mxf8f6f4 .scale_vec::1X, mxf4 .scale_vec::2X, mxf4nvf4
      .scale_vec::2X/4X}.block_scale (.block32/.block16 too) [d], a-desc, b-desc, idesc, [sfa], [sfb],
      enable-input-d: the scales (ue8m0; ue4m3 for mxf4nvf4 4X: idesc bit 23) from TMEM by the
      catalog's SFA/SFB maps (CUTLASS's tmem_sf_frg, assumed there), one byte per scale from the byte
      the idesc's scale-factor ids name; the four 32-lane copies must agree (which one the tensor
      core reads is not documented: a fault otherwise); .cta_group::2 with M=256 and M=128 too, each CTA's
      TMEM giving the scales of its own rows of A and of all N columns of B (assumed: tcgen05_scales.py)
  FP6/FP4 A and B (K-major only: an MN-major one is a fault) through the descriptor's 8-bit slots:
      .kind::f8f6f4/mxf8f6f4 16 elements packed at the start of each 16-byte unit (TMA's
      16U6/16U4_ALIGN16B, CUDA 13.0 cuda.h), .kind::mxf4/mxf4nvf4 two e2m1 per byte with no gaps
      (16U4_ALIGN8B); warpcore sub_byte_cells says where, with its sources
  tcgen05.commit.cta_group::{1,2}.mbarrier::arrive::one[.shared::cluster][.multicast::cluster].b64
      [mbar]{, ctaMask}: one arrival (multicast: on each CTA of the mask, at mbar's CTA offset)
      (no state space: the operand's low 32 bits, as ptxas compiles it; Triton's zero-extended form)
  .collector::a::{fill,use,lastuse,discard}: A's collector buffer, checked by collector.py (a use
      whose memory no longer holds the filled A is a fault: reuse is the hardware's choice)
  tcgen05.shift, tcgen05.mma.ws, tcgen05.cp (every shape, cta_group::1/::2): ops_tcgen05_extra.py
  tcgen05.fence::before_thread_sync / after_thread_sync: ordering only
.cta_group::2 (the CTA pair: the two CTAs of a cluster whose %cluster_ctarank differ in bit 0; PTX
ISA 9.7.16.5 Table 46): alloc/dealloc/relinquish by one warp in each CTA of the pair, the pair's
allocation at the same columns of both TMEMs (ptx/tmem.py); tcgen05.mma issued by one thread of the
pair reads A's and B's halves from both CTAs' shared memory and writes D's rows into both TMEMs
(_one_mma; = CuTe's SM100_MMA_*_2x1SM atoms); its disable-output-lane vector has 8 words; commit
tracks the pair's MMAs; tcgen05.ld/st are unchanged (each warp, its own CTA's TMEM). TMA's
.cta_group::2 mbarrier routing is ops_async.py's.
The MMA runs when it is issued and D is written at once: the commit's arrival then tracks work
already done (a valid schedule of the asynchronous hardware's). tcgen05.mma.sp: ops_tcgen05_sparse.py
(M=128 and the pair's M=256, .kind::f16/tf32/f8f6f4/i8). A from TMEM ([a-tmem], _tmem_a): 128 rows per CTA
(cta_group::1 M=128, the pair's M=256), K-major, dense, block-scaled or .sp, 8-bit and wider or the packed e2m1
of .kind::mxf4/mxf4nvf4; .ashift shifts that A after the MMA (_shift_a). Refused, one line each: a
block-scaled form the PTX ISA lacks (e.g. .kind::mxf4 .scale_vec::4X; mxf4nvf4 without .scale_vec), .ashift
without an A in TMEM or with a block-scaled kind or .collector::a::fill/use (ptxas 13.0 rejects them too),
scale-input-d of a kind other than f16/tf32 or outside [0, 15] (the ISA's own limits); ops_tcgen05_extra.py
names its own (tcgen05.cp's decompression, the .ws B-reuse shift). Faults: the K=96 bit of .kind::mxf4 /
mxf4nvf4 (idesc bit 31), a scale format the .scale_vec does not take, a scale-input-d whose D * 2^-s is not
exact, an A from TMEM of another data-path layout (M=128 pair, M=64), transposed, or FP6/FP4 of
.kind::f8f6f4/mxf8f6f4.
Fidelity: from documents, not measured. There is no Blackwell GPU here: every rule above is the
PTX ISA's, cross-checked against CUTLASS 4.2's CuTe SM100 atoms (cute/arch/*sm100*,
cute/atom/*sm100*) and the CuTe Blackwell tutorial kernels run in tests/ptx/test_tcgen05_cute.py;
the FP6/FP4 and FP4 block-scaled MMAs against MMA-Sim (tests/ptx/test_tcgen05_fp4.py) and Triton
3.6's tl.dot_scaled for sm_100a (tests/triton_frontend/test_triton_sm100_scaled.py).
"""
import sys

import numpy as np

from ..archs import target_of_device
from ..errors import LayoutsimError
from ..formats import bits
from ..isa import ptx_tcgen05_idesc as IDESC
from ..isa.ptx_tcgen05_mma import SCALE_VEC
from ..isa.registry import get
from ..warpcore import registers as core_regs
from ..warpcore import tcgen05 as core
from . import cluster as CL
from . import collector as COL
from . import ops_tcgen05_sparse
from . import tcgen05_scales as SF
from . import tmem as TM
from . import types as T
from .access import locate, space_of
from .builders import need, unsupported
from .collective import check_warps, whole_warps
from .events import Access, Mma
from .mbarrier_operand import barrier_address, batch_mbarriers
from .ops_matrix import catalog, read_words, write_words
from .state import Fault
from . import lines

ARCHS = ("sm_100",)
# what the fidelity line says of every tcgen05 step (fidelity.py "documented")
DOCUMENTED = "tcgen05 per PTX ISA 9.7.16 + CuTe SM100; no Blackwell GPU"
SHAPES = ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")


# forms whose arithmetic or operand layout no source read here settles (docs/blackwell.md): the
# fidelity line names the assumption beside the documents
ASSUMED = {"sp": "; .sp: the dense arithmetic on the logical A and CUTLASS 4.2's TMEM metadata layout, assumed",
           "scale_d": "; scale-input-d: the scaling of D assumed exact",
           "scaled_pair": SF.PAIR_ASSUMED,
           "sp_pair": "; .sp cta_group::2: each CTA's metadata of its own 128 rows in the M=128 layout, assumed",
           "sp_ws": "; .ws.sp: CUTLASS 4.2's tmem_e_frg_ws metadata (M=64/32: a copy every M lanes), assumed",
           "sp_a_tmem": "; .sp A from tensor memory: its K/2 kept values in the dense A's TMEM layout (JAX Mosaic "
                        "GPU's, B200-tested with cta_group::1; the pair's each CTA its 128 rows), assumed",
           "ashift": "; .ashift: after the MMA, row r of A in TMEM takes row r+1 within each 32-lane sub-partition "
                     "(row 31 kept), as CUTLASS 4.7's CuTe DSL documents it, assumed"}


def _step(fn, assumed=()):
    return {"fn": fn, "info": {"documented": DOCUMENTED + "".join(ASSUMED[a] for a in assumed)}}


def _arch(ins, prog):
    if prog.arch not in ARCHS:
        raise unsupported(ins, f"tcgen05 exists on {', '.join(ARCHS)} only (compiled for "
                               f"{', '.join(map(target_of_device, ARCHS))}); this run's arch is {prog.arch}")


def _pair(ins):
    return 2 if "cta_group::2" in ins.mods else 1


def _peers(bt, t, ins):
    """(even CTA, odd CTA) of thread t's CTA pair (batch CTA indices): the CTAs of the cluster whose
    %cluster_ctarank differ in bit 0 (PTX ISA 9.7.16.2.1 'CTA pair')."""
    if bt.cluster_size % 2:
        raise Fault(t, 0, f"{ins.name}: .cta_group::2 needs a CTA pair, and this launch's clusters have "
                          f"{bt.cluster_size} CTA(s)", "invalid_operand")
    even = int(bt.cta_index[t]) & ~1             # a cluster's CTAs are consecutive, from an even index
    return even, even + 1


def _per_warp(read, bt, thr, ins, what):
    """One value per warp [nW] of a warp-uniform operand (PTX: the same in every lane)."""
    v = np.broadcast_to(np.asarray(read(bt)), (bt.T,))[thr].astype(np.int64)
    bad = v != v[:, :1]
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise Fault(thr[i, j], 0, f"{ins.name}: the lanes of the warp give different {what} values "
                                  f"({int(v[i, 0]):#x} and {int(v[i, j]):#x}): undefined behaviour", "not_uniform")
    return v[:, 0]


def _warps(bt, g, ins, read, what):
    """(threads [nW, 32], each warp's first thread [nW], the batch's TensorMemory, the warp-uniform
    operand `read` per warp) of the warps executing an .aligned tcgen05 instruction (whole warps:
    collective.py), or None."""
    w, thr = whole_warps(bt, g, ins)
    return (thr, thr[:, 0], TM.of(bt), _per_warp(read, bt, thr, ins, what)) if len(w) else None


# ---- allocation ----------------------------------------------------------------------------------
def alloc(ins, b, prog):
    _arch(ins, prog)
    pair = _pair(ins)
    need(ins, 2)
    space = space_of(ins.mods)
    addr, _ = b.address(ins.operands[0], ins)
    ncols = b.read(ins.operands[1], T.get("u32"), ins)

    def fn(bt, g, full):
        on = _warps(bt, g, ins, addr, "destination address")
        if on is None:
            return
        thr, lead, tm, dst = on
        n = _per_warp(ncols, bt, thr, ins, "nCols")
        cols = np.array([_take(bt, tm, int(t), int(k), ins, pair) for t, k in zip(lead, n)], np.uint32)
        parts = locate(bt, "shared" if space == "generic" else space, dst, lead, 4, ins.name)
        for sp, views, flat, who, rel in parts:
            views[4][flat // 4] = cols[np.searchsorted(lead, who)]
            bt.events.access(Access("st", sp, ins.extra["site"], 4, who, rel, flat, "write"))
    return _step(fn)


def _take(bt, tm, t, ncols, ins, pair):
    """The first column of thread t's warp's allocation (cta_group::2: the pair's, ptx/tmem.py)."""
    cta = int(bt.cta_index[t])
    if pair == 1:
        return tm.alloc(cta, ncols, t)
    even, odd = _peers(bt, t, ins)
    return tm.alloc_pair(cta, even + odd - cta, ncols, t)


def dealloc(ins, b, prog):
    """tcgen05.dealloc (cta_group::2: each CTA's warp releases the pair's columns in its own CTA)."""
    _arch(ins, prog)
    need(ins, 2)
    taddr = b.read(ins.operands[0], T.get("u32"), ins)
    ncols = b.read(ins.operands[1], T.get("u32"), ins)

    def fn(bt, g, full):
        w, thr = whole_warps(bt, g, ins)
        ta, n = _per_warp(taddr, bt, thr, ins, "taddr"), _per_warp(ncols, bt, thr, ins, "nCols")
        for t, a, k in zip(thr[:, 0], ta, n):
            TM.of(bt).dealloc(int(bt.cta_index[t]), int(a), int(k), int(t))
    return _step(fn)


def relinquish(ins, b, prog):
    _arch(ins, prog)

    def fn(bt, g, full):
        w, thr = whole_warps(bt, g, ins)
        for t in thr[:, 0]:
            TM.of(bt).relinquish(int(bt.cta_index[t]))
    return _step(fn)


def sync_only(ins, b, prog):
    """tcgen05.wait::ld / wait::st (.sync.aligned: the whole warp) and the fences: the ld/st/mma
    they order completed when issued."""
    _arch(ins, prog)
    if ins.mods[0].startswith("wait"):
        return _step(check_warps(ins))
    return _step(lambda bt, g, full: None)


# ---- tcgen05.ld / tcgen05.st ---------------------------------------------------------------------
def ldst(ins, b, prog):
    _arch(ins, prog)
    op = ins.mods[0]
    shape = next((m for m in ins.mods if m in SHAPES), None)
    num = next((m for m in ins.mods if m[:1] == "x" and m[1:].isdigit()), None)
    if shape is None or num is None:
        raise unsupported(ins, f"tcgen05.{op} names a shape ({', '.join(SHAPES)}) and a .num (.x1 ...)")
    packed = ("pack::16b" if op == "ld" else "unpack::16b") in ins.mods
    pk = (".pack::16b" if op == "ld" else ".unpack::16b") if packed else ""
    cat = catalog(ins, f"tcgen05.{op}.sync.aligned.{shape}.{num}{pk}.b32")
    frag = cat.operand("R").fragment
    o = ins.operands
    split = shape == "16x32bx2"
    need(ins, 3 if split else 2)
    regs = b.elems(o[0] if op == "ld" else o[-1], ins)
    if len(regs) != core_regs.n_words(frag):
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name} moves {core_regs.n_words(frag)} 32-bit registers per "
                             f"thread; {len(regs)} given")
    addr, _ = b.address(o[1] if op == "ld" else o[0], ins)
    half = 0
    if split:
        imm = o[2] if op == "ld" else o[1]
        if imm.kind != "imm":
            raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: immHalfSplitoff must be an immediate, not {imm}")
        half = imm.value
    rw = write_words(b, regs, ins) if op == "ld" else read_words(b, regs, ins)

    def fn(bt, g, full):
        on = _warps(bt, g, ins, addr, "taddr")
        if on is None:
            return
        thr, lead, tm, ta = on
        cta = bt.cta_index[lead]
        lanes, cols = core.ldst_cells(frag, ta >> 16, ta & 0xFFFF, half)
        tm.warp_slab(bt.local_tid[lead] // 32, lanes, lead, ins.name)
        tm.check(cta, lanes, cols, lead, ins.name)
        if op == "ld":
            words = core.load(frag, tm.cells, cta, lanes, cols, packed)
            rw(bt, words.reshape(thr.size, -1), thr.reshape(-1), g)
        else:
            core.store(frag, tm.cells, cta, lanes, cols, rw(bt)[thr], packed)
    return _step(fn)


# ---- tcgen05.mma and its commit ------------------------------------------------------------------
def mma(ins, b, prog):
    _arch(ins, prog)
    pair = _pair(ins)
    kind = next((m.split("::")[1] for m in ins.mods if m.startswith("kind::")), None)
    if "sp" in ins.mods:                           # tcgen05.mma.sp: ops_tcgen05_sparse.py
        return ops_tcgen05_sparse.mma_sp(ins, b, prog, sys.modules[__name__])
    if "ws" in ins.mods:
        raise unsupported(ins, ".ws (weight-stationary) is not modelled here")
    ashift = "ashift" in ins.mods
    COL.usage(ins, ws=False)                       # its .collector::a::<op>, if named, is legal
    scaled = "block_scale" in ins.mods
    vec = _scale_vec(ins, kind) if scaled else None
    if not scaled and kind not in IDESC.AB_FORMAT:
        raise unsupported(ins, f".kind::{kind} is not modelled (kinds: {', '.join(IDESC.AB_FORMAT)}, "
                               f"mxf8f6f4.block_scale)")
    o = ins.operands
    if len(o) < 5:
        raise unsupported(ins, "tcgen05.mma takes [d-tmem], a-desc or [a-tmem], b-desc, idesc"
                               "{, {disable-output-lane}}, enable-input-d")
    a_tmem = o[1].kind == "addr"
    if ashift and (not a_tmem or scaled or COL.usage(ins, ws=False)[1] in ("fill", "use")):
        raise unsupported(ins, ".ashift shifts an A in tensor memory ([a-tmem]) of a .kind::f16/tf32/f8f6f4/i8 MMA "
                               "and takes no .collector::a::fill/use (PTX ISA 9.7.16.10.9.1; ptxas 13.0)")
    rest = list(o[4:])
    sf = [b.address(rest.pop(0), ins)[0] for _ in range(2)] if scaled and len(rest) >= 2 else None
    mask = None
    if rest and rest[0].kind == "vec":
        mask = read_words(b, b.elems(rest.pop(0), ins, 4 * pair), ins)
    scale_d = _scale_input_d(ins, kind, rest) if len(rest) == 2 and not scaled else None
    if len(rest) != 1 or (scaled and sf is None):
        raise unsupported(ins, f"{len(o)} operands")
    d_at, _ = b.address(o[0], ins)
    adesc = b.address(o[1], ins)[0] if a_tmem else b.read(o[1], T.get("b64"), ins)
    bdesc = b.read(o[2], T.get("b64"), ins)
    idesc = b.read(o[3], T.get("b32"), ins)
    enable = b.read(rest[0], T.get("pred"), ins)

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if not len(thr):
            return
        bt.events.sync("async")
        at = lambda r: np.broadcast_to(np.asarray(r(bt)), (bt.T,))[thr]    # noqa: E731
        da, av, bv, iv, en = at(d_at), at(adesc), at(bdesc), at(idesc), at(enable)
        sfs = [at(x) for x in sf] if sf else None
        masks = mask(bt)[thr] if mask is not None else np.zeros((len(thr), 4 * pair), np.uint32)
        for j, t in enumerate(thr):
            _one_mma(bt, ins, kind, pair, int(t), int(da[j]), int(av[j]), int(bv[j]), int(iv[j]), bool(en[j]), masks[j],
                     None if sfs is None else (int(sfs[0][j]), int(sfs[1][j])), a_tmem, vec, scale_d, ashift)
    return _step(fn, ("scale_d",) * (scale_d is not None) + ("scaled_pair",) * (scaled and pair == 2)
                 + ("ashift",) * ashift)


def _scale_input_d(ins, kind, rest):
    """The immediate scale-input-d (PTX ISA 9.7.16.10.9.1: D = A*B + D * 2^-scale-input-d, in [0, 15],
    .kind::tf32 and .kind::f16 only), popped from the trailing operands; one line where it is not legal.
    Its arithmetic (the scaling assumed exact) is layoutsim.numerics.scale_d's."""
    op = rest.pop()
    if op.kind != "imm":
        raise unsupported(ins, f"scale-input-d must be an immediate, not {op}")
    if kind not in ("f16", "tf32") or not 0 <= op.value <= 15:
        raise unsupported(ins, f"scale-input-d {op.value}: the PTX ISA takes an immediate in [0, 15] for "
                               f".kind::tf32 and .kind::f16 only (9.7.16.10.9.1)")
    return int(op.value)


def _scale_vec(ins, kind):
    """The .scale_vec of a block-scaled tcgen05.mma (PTX ISA 9.7.16.10.7 'Block scaling': .block32 is
    1X for .kind::mxf8f6f4 and 2X for .kind::mxf4/mxf4nvf4, .block16 4X; with neither, 1X for
    mxf8f6f4 and 2X for mxf4, and mxf4nvf4 must name one, as the ISA says of mma.sync's
    .scale_vec_size in 9.7.14); one line where the form is not legal."""
    named = [m for m in ins.mods if m.startswith("scale_vec::") or m in ("block16", "block32")]
    dflt = {"mxf8f6f4": "1X", "mxf4": "2X"}.get(kind)
    vec = named[0].split("::")[-1] if named else dflt
    vec = {"block32": dflt or "2X", "block16": "4X"}.get(vec, vec)
    if kind not in SCALE_VEC or vec not in SCALE_VEC[kind]:
        raise unsupported(ins, f"block-scaled .kind::{kind}{' .' + named[0] if named else ''} is not a form of the "
                               f"PTX ISA ({IDESC.FORMS})")
    return vec


def _decode(ins, t, idesc, kind, scaled, pair, vec=None):
    try:
        info = IDESC.decode_scaled(idesc, kind, vec, pair) if scaled else IDESC.decode(idesc, kind, pair)
    except LayoutsimError as e:
        raise Fault(t, 0, f"{ins.name}: {e}", "invalid_operand") from None
    try:
        inst = get(info["name"])
    except LayoutsimError:
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x} gives M={info['m']} N={info['n']}: "
                          f"{info['name']} is not a legal shape (`layoutsim list --arch {target_of_device(ARCHS[0])} "
                          f"--family tcgen05.mma`)", "invalid_operand") from None
    fa, fb = info["types"].split(".")[1:3]
    for f, mn, which in ((fa, info["a_mn_major"], "A"), (fb, info["b_mn_major"], "B")):
        if bits(f) < 8 and mn:
            raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x} makes the .{f} operand {which} "
                              f"MN-major; FP6/FP4 operands are K-major only (CUTLASS 4.2 "
                              f"UMMA::InstrDescriptor's a_major/b_major)", "invalid_operand")
    if (info["neg_a"] or info["neg_b"]) and kind in ("mxf4", "mxf4nvf4"):
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x} negates an operand of .kind::{kind} "
                          f"(negation is for the f16/tf32 and f8f6f4 formats only: CUTLASS 4.2 "
                          f"UMMA::InstrDescriptorBlockScaled)", "invalid_operand")
    if (info["neg_a"] or info["neg_b"]) and kind == "i8":
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x} negates an integer operand "
                          f"(negation is for the floating-point kinds only; PTX ISA 9.7.16.4.2)", "invalid_operand")
    if info["sparse"] or info["max_shift"] or info["saturate"]:
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {idesc:#010x} asks for sparsity, a .ws shift or "
                          f"saturation; none is modelled for this dense tcgen05.mma", "invalid_operand")
    return info, inst


def _one_mma(bt, ins, kind, pair, t, taddr, adesc, bdesc, idesc, enable, mask, sf=None, a_tmem=False, vec=None,
             scale_d=None, ashift=False):
    """One tcgen05.mma. cta_group::2 (PTX ISA 9.7.16.5 Table 46: issued by one thread of the CTA pair;
    = CuTe's SM100_MMA_*_2x1SM atoms, cute/atom/mma_traits_sm100.hpp: ThrID 2, ALayout / BLayout /
    CLayout split M/2, N/2, M/2 over the peer index): the even CTA's shared memory holds A's rows
    0..M/2-1 and B's columns 0..N/2-1, the odd CTA's the rest, at the same descriptor addresses;
    D's rows lie in the TMEM of the CTA its data-path layout names (d_cells), at the same taddr;
    a block-scaled MMA's scale factors come from each CTA's TMEM (tcgen05_scales.read); an A from TMEM from
    each CTA's TMEM (_tmem_a), shifted after the MMA with .ashift (_shift_a)."""
    info, inst = _decode(ins, t, idesc, kind, sf is not None, pair, vec)
    fa, fb = info["types"].split(".")[1:3]
    M, N, K = inst.shape
    ctas = np.array([int(bt.cta_index[t])]) if pair == 1 else np.array(_peers(bt, t, ins))
    packed = kind in ("mxf4", "mxf4nvf4")
    if a_tmem:
        A = _tmem_a(bt, ins, t, ctas, adesc, inst, info, bits(fa))
    else:
        A = np.concatenate([_operand(bt, ins, t, c, adesc, M // pair, K, bits(fa), info["a_mn_major"], "A", packed)
                            for c in ctas])
    B = np.concatenate([_operand(bt, ins, t, c, bdesc, N // pair, K, bits(fb), info["b_mn_major"], "B", packed)
                        for c in ctas]).T
    tm = TM.of(bt)
    A = COL.apply(tm, ins, t, int(ctas[0]), *COL.usage(ins, ws=False), A)      # .collector::a (collector.py)
    scales = {} if sf is None else SF.read(bt, ins, t, [int(c) for c in ctas], inst,
                                           {**info, "sfa": sf[0], "sfb": sf[1], "idesc": idesc})
    _finish(bt, ins, t, inst, info, ctas, taddr, A, B, enable, mask, scale_d, scales)
    if ashift:
        _shift_a(bt, ctas, adesc, K * bits(fa) // 32)


def _finish(bt, ins, t, inst, info, ctas, taddr, A, B, enable, mask, scale_d=None, scales=None):
    """D = A*B (+ D) of one issued MMA into the TMEM cells of D's data-path layout (the CTA pair's:
    ctas), disable-output-lane's lanes kept, the Mma event emitted (A, B raw bits, logical)."""
    scales = scales or {}
    d = info["types"].split(".")[0]
    tm = TM.of(bt)
    which, lane, col = core.d_cells(inst)
    cta = ctas[which]
    lanes, cols = lane + (taddr >> 16), col + (taddr & 0xFFFF)
    tm.check(cta.reshape(-1), lanes.reshape(-1, 1), cols.reshape(-1, 1), np.full(lanes.size, t), ins.name)
    old = tm.cells[cta, lanes, cols]
    low = np.uint32(0xFFFF) if d == "f16" else np.uint32(0xFFFFFFFF)
    C = (old & low) if enable else np.zeros_like(old)
    C = C.astype(np.uint16) if d == "f16" else C
    try:
        D = core.mma(inst, info["types"], A, B, C, info["neg_a"], info["neg_b"], scale_d=scale_d, **scales)
    except LayoutsimError as e:                 # scale-input-d of a D that would lose bits (numerics.scale_d)
        if scale_d is None:
            raise
        raise TM.fault(t, taddr, f"{ins.name}: {e}", "invalid_operand") from None
    if bt.events.mma_observed:                  # a test checking each MMA (events.Mma)
        bt.events.mma(Mma(ins.extra["site"], t, tuple(int(bt.ctas[c]) for c in ctas), taddr, inst.name,
                          info["types"], A, B, C, D, info["neg_a"], info["neg_b"], scale_d=scale_d or 0, **scales))
    pl = lanes + 128 * which                    # the lane of the pair (PTX ISA: disable-output-lane's bit)
    keep = ((mask[pl // 32] >> (pl % 32).astype(np.uint32)) & 1).astype(bool)     # disable-output-lane
    tm.cells[cta, lanes, cols] = np.where(keep, old, D)


def _tmem_a(bt, ins, t, ctas, taddr, inst, info, width, K=None):
    """A [M, K] from the TMEM of the CTAs `ctas` (the pair's: each its M/2 rows) at taddr, in the
    data-path layout of D (PTX ISA 9.7.16.10 'Data path layout organization'; TVM TIRx's
    tmem_mma_operand_layout resolves A-in-TMEM from the same layouts): 128 rows per CTA (M = 128's
    Layout D, the pair's M = 256 Layout A), row i in lane i, its K elements packed along the columns
    (warpcore a_from_tmem): cta_group::1 as Triton 3.6 and JAX's Mosaic GPU write it (their B200 tests
    test_mma_lhs_tmem_*, test_mma_sparse_lhs_tmem); the pair as CUTLASS's SM100_MMA_*_2x1SM_TS atoms (FrgTypeA
    tmem_frg_2sm, 128 rows per SM) and JAX's test_mma_collective_lhs_tmem (f16, M = 256) split it; FP4
    (.kind::mxf4 / mxf4nvf4) eight e2m1 to a column, as JAX's test_mma_block_scaled_basic /
    test_mma_block_scaled_collective copy it (tcgen05.cp of its two-per-byte shared tile). The other
    data-path layouts, a transposed A and FP6/FP4 of .kind::f8f6f4 / mxf8f6f4 are refused. K: the entry's
    K, or (tcgen05.mma.sp) the K/2 kept values of each row."""
    M, _, K0 = inst.shape
    K = K0 if K is None else K
    if width < 8 and inst.options["kind"] not in ("mxf4", "mxf4nvf4"):
        raise TM.fault(t, taddr, f"{ins.name}: an FP6/FP4 A of .kind::{inst.options['kind']} from tensor memory is not "
                                 f"modelled (no source read here packs it in TMEM)", "invalid_operand")
    if inst.options["layout"] not in "DA" or info["a_mn_major"]:
        raise TM.fault(t, taddr, f"{ins.name}: A from tensor memory with M={M} (layout {inst.options['layout']})"
                              f"{' transposed' if info['a_mn_major'] else ''} is not modelled (128 rows per CTA, "
                                 f"K-major is)", "invalid_operand")
    words = K * width // 32
    tm = TM.of(bt)
    lanes = (taddr >> 16) + np.arange(128)[:, None]
    cols = (taddr & 0xFFFF) + np.arange(words)[None, :]
    out = []
    for c in ctas:
        tm.check(np.array([int(c)]), lanes[None], cols[None], np.array([t]), f"{ins.name} (A)")
        out.append(core.a_from_tmem(tm.cells[int(c), lanes, cols], K, width))
    return np.concatenate(out)


def _shift_a(bt, ctas, taddr, words):
    """.ashift (PTX ISA 9.7.16.10.9.1: "shifts the rows of the A matrix down by one row, except for the last
    row in the Tensor Memory", M = 128 / 256): after the MMA, in each CTA's A at taddr (its `words` columns),
    row r takes row r + 1's words within each 32-lane sub-partition and row 31 of each keeps its own, as
    CUTLASS 4.7's CuTe DSL documents it (python/CuTeDSL/cutlass/experimental/primitives/nvvm_wrapper.py,
    tcgen05_mma's a_shift: "a post-MMA operation ... per-SP, not global": shifted[r] = A[r + 1] when
    r % 32 != 31, else A[r]); assumed (one source)."""
    tm = TM.of(bt)
    lanes, cols = (taddr >> 16) + np.arange(128), (taddr & 0xFFFF) + np.arange(words)
    src = np.where(lanes % 32 == 31, lanes, lanes + 1)
    for c in ctas:
        tm.cells[int(c), lanes[:, None], cols] = tm.cells[int(c), src[:, None], cols]


def _in_shared(bt, ins, t, addr, nbytes, desc, which):
    bad = (addr < 0) | (addr + nbytes > bt.smem_size)
    if bad.any():
        a = int(addr[tuple(np.argwhere(bad)[0])])
        raise Fault(t, a, f"{ins.name}: the {which} descriptor {desc:#018x} reads shared address {a:#x}, outside "
                          f"the CTA's shared memory ({bt.smem_size} bytes)", "out_of_bounds", "shared")


def _operand(bt, ins, t, cta, desc, mn, k, width, mn_major, which, packed=False):
    """The mn x k operand (raw bits) read through `desc` from the shared memory of batch CTA `cta`;
    FP6/FP4: packed two per byte (packed) or sixteen per 16-byte unit (warpcore sub_byte_cells)."""
    try:
        if width < 8:
            addr, shift = core.sub_byte_cells(desc, mn, k, width, packed)
        else:
            addr = core.addresses(desc, mn, k, width, mn_major)
    except LayoutsimError as e:
        raise Fault(t, 0, f"{ins.name}: {which} descriptor: {e}", "invalid_operand") from None
    if width >= 8:
        _in_shared(bt, ins, t, addr, width // 8, desc, which)
        return core.gather(bt.smem, int(cta) * bt.S + addr, width)
    _in_shared(bt, ins, t, addr, 1 + (shift + width > 8), desc, which)
    return core.gather_bits(bt.smem, int(cta) * bt.S + addr, shift, width)


def commit(ins, b, prog):
    """tcgen05.commit ... [mbar]{, ctaMask}: one arrival on the mbarrier; .multicast::cluster: on the
    mbarrier at the same CTA-relative offset in each CTA of the cluster the 16-bit ctaMask names.
    .cta_group::2 tracks the pair's tcgen05 operations (PTX ISA 9.7.16.8.2; CuTe's
    umma_arrive_multicast_2x1SM, cutlass/arch/barrier.h): the same arrivals, as every tracked
    operation completed when issued."""
    _arch(ins, prog)
    if "mbarrier::arrive::one" not in ins.mods:
        raise unsupported(ins, "tcgen05.commit names .mbarrier::arrive::one")
    multicast = "multicast::cluster" in ins.mods
    need(ins, 2 if multicast else 1)
    # no state space (Triton 3.6 writes the shared address zero-extended to 64 bits): ptxas 13.0
    # compiles the operand to UTCBAR [URn] of its low 32 bits, the register the .shared::cluster
    # form takes (cuobjdump -sass for sm_100a: the same for cvta.shared's generic address)
    at = barrier_address(b, ins, ins.operands[0], low32=True)
    mask = b.read(ins.operands[1], T.get("u16"), ins) if multicast else None

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if not len(thr):
            return
        flat, rel = at(bt, thr)
        if multicast:
            mk = np.broadcast_to(np.asarray(mask(bt)), (bt.T,))[thr]
            hits = [(j, c) for j, t in enumerate(thr) for c in CL.mask_targets(bt, t, mk[j], ins.name)]
            j = np.array([h[0] for h in hits])
            flat, rel, thr = np.array([h[1] for h in hits], np.int64) * bt.S + rel[j], rel[j], thr[j]
        mb = batch_mbarriers(bt)
        mb.arrive(mb.slots(flat, rel, thr, ins.name), np.ones(len(thr), np.int64), thr, rel)
    return _step(fn)


# ---- the helpers ops_tcgen05_extra.py (tcgen05.shift, .ws, cp) shares, under public names ----------
check_arch, step, pair_of, peers, in_shared, operand, tmem_a = _arch, _step, _pair, _peers, _in_shared, _operand, _tmem_a
finish, scale_input_d = _finish, _scale_input_d          # and ops_tcgen05_sparse.py's
