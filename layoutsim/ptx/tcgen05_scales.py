"""The block scale factors of a block-scaled tcgen05.mma, read from tensor memory at its
[scale-A-tmem] / [scale-B-tmem] addresses (ops_tcgen05._one_mma; PTX ISA 9.x 9.7.16.10.7 'Block scaling').

cta_group::1: the catalog's SFA / SFB maps of the entry (isa/ptx_tcgen05.sf_fragment: CUTLASS 4.2's
UMMA::tmem_sf_frg, ScaleFactorDuplicated4by1, assumed there), one byte per scale from the byte the
instruction descriptor's scale-factor id names; the four 32-lane copies must agree (which one the tensor
core reads is not documented: a fault otherwise).

cta_group::2, M = 256 (A's rows 0..127 and D's rows 0..127 in the even CTA of the pair, 128..255 in the
odd one: ops_tcgen05._one_mma): each CTA supplies, from its own TMEM at the same two addresses, the scale
factors of the cta_group::1 M = 128 MMA of the same kind and N, laid out by that entry's SFA / SFB maps:
SFA the scales of its own 128 rows of A, SFB the scales of all N columns of B. Assumed: the PTX ISA's
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
fault otherwise). M = 128 with cta_group::2 (.kind::mxf4 / mxf4nvf4, D in Layout B: 64 rows per CTA) is a
fault, not modelled: CUTLASS gives it another layout (ScaleFactorDuplicated2by2, B's columns split over
the lane halves) that its own block-scaled collective does not build and no second source shows; Triton
requires 128 rows of A per CTA.
"""
import numpy as np

from ..isa.registry import get
from ..warpcore import tcgen05 as core
from . import tmem as TM
from .state import Fault

# what the fidelity line says of a block-scaled cta_group::2 MMA (ops_tcgen05.ASSUMED)
PAIR_ASSUMED = ("; block-scaled cta_group::2: each CTA's scale factors as CUTLASS 4.2 and Triton place them "
                "(SFA its own 128 rows, SFB all N columns, both CTAs' SFB equal), assumed")


def read(bt, ins, t, ctas, inst, info):
    """{"scale_a": raw [M, K/block], "scale_b": raw [K/block, N]} of one issued block-scaled MMA whose
    [scale-A-tmem] / [scale-B-tmem] addresses are info["sfa"] / info["sfb"] (ctas: the batch CTA(s) of
    the MMA, the pair's even CTA first)."""
    M, N, K = inst.shape
    nsf = K // inst.options["block"]
    tm = TM.of(bt)
    ids = info["a_sf_id"], info["b_sf_id"]
    if len(ctas) == 1:
        return {"scale_a": _read(bt, ins, t, tm, ctas[0], inst, "SFA", info["sfa"], ids[0], (M, nsf)),
                "scale_b": _read(bt, ins, t, tm, ctas[0], inst, "SFB", info["sfb"], ids[1], (nsf, N))}
    if M != 256:
        raise Fault(t, 0, f"{ins.name}: instruction descriptor {info['idesc']:#010x} gives M={M}: the "
                                    f"scale factors of a block-scaled cta_group::2 MMA with M=128 are not modelled "
                                    f"(CUTLASS 4.2's ScaleFactorDuplicated2by2 layout only; M=256 is)",
                    "invalid_operand")
    one = get(inst.name.replace("cta_group::2", "cta_group::1").replace(f".m{M}n", ".m128n"))   # each CTA's map
    sa = [_read(bt, ins, t, tm, c, one, "SFA", info["sfa"], ids[0], (M // 2, nsf)) for c in ctas]
    sb = [_read(bt, ins, t, tm, c, one, "SFB", info["sfb"], ids[1], (nsf, N)) for c in ctas]
    if not np.array_equal(sb[0], sb[1]):
        j, n = np.argwhere(sb[0] != sb[1])[0]
        raise Fault(t, 0, f"{ins.name}: the CTA pair's SFB scale factors differ (scale {j} of column "
                                    f"{n}: {sb[0][j, n]:#04x} in the even CTA, {sb[1][j, n]:#04x} in the odd); each "
                                    f"CTA holds all N columns' scales and which copy the tensor core reads is not "
                                    f"documented here", "invalid_operand")
    return {"scale_a": np.concatenate(sa), "scale_b": sb[0]}


def _read(bt, ins, t, tm, cta, inst, which, taddr, sf_id, shape):
    """The scale factors of SFA / SFB of entry `inst` in CTA `cta`'s TMEM at taddr (the catalog's map,
    from byte sf_id); the copies in the four 32-lane slabs must agree. (Faults give address 0: the
    fault report reads an address as global memory; the TMEM address is in the message.)"""
    lanes, col, byte, _, _ = core.scale_cells(inst, which, sf_id)
    L, Cc = (taddr >> 16) + lanes, (taddr & 0xFFFF) + np.broadcast_to(col[:, None], lanes.shape)
    tm.check(np.array([cta]), L[None], Cc[None], np.array([t]), f"{ins.name} ({which})")
    if (byte > 3).any():
        raise Fault(t, 0, f"{ins.name}: scale-factor id {sf_id} puts {which}'s scales past byte 3 of their "
                          f"TMEM column", "invalid_operand")
    raw, agree = core.scales(inst, which, tm.cells[cta, (taddr >> 16):, (taddr & 0xFFFF):], sf_id, shape)
    if not agree:
        raise Fault(t, 0, f"{ins.name}: the four 32-lane copies of {which}'s scale factors at TMEM address "
                          f"{taddr:#x} differ; which copy the tensor core reads is not documented here (CUTLASS "
                          f"writes all four)", "invalid_operand")
    return raw
