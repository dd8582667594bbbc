"""The block scale factors of a block-scaled tcgen05.mma, read from tensor memory at its
[scale-A-tmem] / [scale-B-tmem] addresses (ops_tcgen05._one_mma; PTX ISA 9.x 9.7.16.10.7 'Block scaling').

cta_group::1: the catalog's SFA / SFB maps of the entry (isa/ptx_tcgen05.sf_fragment: CUTLASS 4.2's
UMMA::tmem_sf_frg, ScaleFactorDuplicated4by1, assumed there), one byte per scale from the byte the
instruction descriptor's scale-factor id names; the four 32-lane copies must agree (which one the tensor
core reads is not documented: a fault otherwise).

cta_group::2, M = 256 (A's rows 0..127 and D's rows 0..127 in the even CTA of the pair, 128..255 in the
odd one: ops_tcgen05._one_mma): each CTA supplies, from its own TMEM at the same two addresses, the scale
factors where the cta_group::1 M = 128 MMA of the same kind and N has them (the pair entry's SFA / SFB
maps): SFA the scales of its own 128 rows of A, SFB the scales of all N columns of B. Assumed: the PTX ISA's
scale-factor figures were not read here; two implementations place them so:
  - CUTLASS 4.2 cute/atom/mma_traits_sm100.hpp, MMA_Traits<SM100_MMA_MXF8F6F4_2x1SM_SS>, <..._MXF4_2x1SM_SS>,
    <..._MXF4NVF4_2x1SM_SS>: MMA_ScaleFactor is the one-SM MMA of M/2 x round_up(N, 128), FrgTypeSFA/SFB
    tmem_sf_frg<.., 2, .., ScaleFactorDuplicated4by1> for M = 256 (the one-SM 4x1 atom);
    cutlass/gemm/collective/sm100_blockscaled_mma_warpspecialized.hpp loads SFA through the pair's TiledMma
    (each CTA its M/2 rows) and SFB through TiledMMA_SF (that one-SM atom: every CTA slice 0, all N) and
    copies both into each CTA's TMEM with SM100_UTCCP_4x32dp128bit_2cta;
  - Triton's Gluon example python/examples/gluon/04-2cta-block-scale-matmul.py: A's scales in
    TensorMemoryScalesLayout(cga_layout=[[1, 0]]) (split along M over the two CTAs), B's in
    cga_layout=[[0, 0]] (the same in both CTAs), and 128 rows of A per CTA.
Both CTAs' SFB must agree bit for bit (which CTA's copy scales which D rows is not documented here: a
fault otherwise).

cta_group::2, M = 128 (64 rows of A and D per CTA, D in Layout B; every block-scaled kind): each CTA's SFA
holds its own 64 rows in the 4x1 layout above (row r of CTA c: lane r % 32 of every slab, column r // 32),
and SFB all N columns split in two halves: column j of half h = j // (N/2) in lanes 64h + j % 32 and
64h + 32 + j % 32 (the two slabs of the lane half whose D columns it scales: Layout B folds D's column
halves onto lanes 0-63 / 64-127), column (j % (N/2)) // 32. Assumed (no PTX ISA figure read here); the
sources: JAX's Mosaic GPU (jax/experimental/mosaic/gpu/tcgen05.py; commit 1e7b972e56 "Add support for
block-scaled 2CTA MMAs with M=128 (64 per block)": A's scales in scales_layout() padded to 128 rows, B's
staged as rows h*32 + j%32 of (N/2)/32 columns each and copied by tcgen05.cp.64x128b.warpx2::01_23, which
puts rows 0-31 in lanes 0-63 and rows 32-63 in lanes 64-127 as CUTLASS's SM100_UTCCP_2x64dp128bitlw0123
comment and TVM TIRx's B200-verified table state it), run on a B200 by its test
test_mma_block_scaled_collective_m128 (e5m2 with ue8m0 scales, N = 64, 128, 192, 256); CUTLASS 4.2/4.7's
ScaleFactorDuplicated2by2 (mma_traits_sm100_frag.hpp tmem_sf_frg, SFB of the 2x1SM traits for M == 128)
is the same layout for N = 128 and 256 (its halves split round_up(N, 128) instead of N: for other N the
two differ, and the model follows JAX's, which its B200 test covers).
"""
import numpy as np

from ..warpcore import tcgen05 as core
from . import tmem as TM
from .state import Fault

# what the fidelity line says of a block-scaled cta_group::2 MMA (ops_tcgen05.ASSUMED)
PAIR_ASSUMED = ("; block-scaled cta_group::2: each CTA's scale factors (SFA its own rows, SFB all N columns, both "
                "CTAs' SFB equal) as CUTLASS 4.2 and Triton place them for M=256 and JAX's Mosaic GPU for M=128, assumed")


def read(bt, ins, t, ctas, inst, info):
    """{"scale_a": raw [M, K/block], "scale_b": raw [K/block, N]} of one issued block-scaled MMA whose
    [scale-A-tmem] / [scale-B-tmem] addresses are info["sfa"] / info["sfb"] (ctas: the batch CTA(s) of
    the MMA, the pair's even CTA first): the entry's SFA / SFB maps (isa/ptx_tcgen05.sf_fragment)."""
    M, N, K = inst.shape
    nsf = K // inst.options["block"]
    tm = TM.of(bt)
    ids = info["a_sf_id"], info["b_sf_id"]
    sa = _read(bt, ins, t, tm, ctas, inst, "SFA", info["sfa"], ids[0], (M, nsf))
    sb = [_read(bt, ins, t, tm, ctas, inst, "SFB", info["sfb"], ids[1], (nsf, N), k) for k in range(len(ctas))]
    if len(sb) == 2 and not np.array_equal(sb[0], sb[1]):
        j, n = np.argwhere(sb[0] != sb[1])[0]
        raise Fault(t, 0, f"{ins.name}: the CTA pair's SFB scale factors differ (scale {j} of column "
                                    f"{n}: {sb[0][j, n]:#04x} in the even CTA, {sb[1][j, n]:#04x} in the odd); each "
                                    f"CTA holds all N columns' scales and which copy the tensor core reads is not "
                                    f"documented here", "invalid_operand")
    return {"scale_a": sa, "scale_b": sb[0]}


def _read(bt, ins, t, tm, ctas, inst, which, taddr, sf_id, shape, cta=None):
    """The scale factors of SFA / SFB of entry `inst` in the TMEM of the CTAs `ctas` at taddr (the catalog's
    map, from byte sf_id; cta: SFB's copy in that CTA of the pair); the copies in the 32-lane slabs must
    agree. (Faults give address 0: the fault report reads an address as global memory; the TMEM address
    is in the message.)"""
    on, lanes, col, byte, _, _ = core.scale_cells(inst, which, sf_id)
    on = on if cta is None else np.full_like(on, cta)
    L, Cc = (taddr >> 16) + lanes, (taddr & 0xFFFF) + np.broadcast_to(col[:, None], lanes.shape)
    for k in np.unique(on):
        tm.check(np.array([ctas[k]]), L[on == k][None], Cc[on == k][None], np.array([t]), f"{ins.name} ({which})")
    if (byte > 3).any():
        raise Fault(t, 0, f"{ins.name}: scale-factor id {sf_id} puts {which}'s scales past byte 3 of their "
                          f"TMEM column", "invalid_operand")
    cells = tm.cells[np.array(ctas), (taddr >> 16):, (taddr & 0xFFFF):]
    raw, agree = core.scales(inst, which, cells, sf_id, shape, cta)
    if not agree:
        raise Fault(t, 0, f"{ins.name}: the 32-lane copies of {which}'s scale factors at TMEM address "
                          f"{taddr:#x} differ; which copy the tensor core reads is not documented here (CUTLASS "
                          f"and JAX write all)", "invalid_operand")
    return raw
