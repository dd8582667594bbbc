"""A Hopper GEMM step end to end on the simulator: TMA boxes fill shared memory (layoutsim.smem.tma,
measured: tests/data/descriptors/tma_sm_90.npz), wgmma reads them through descriptors in every
swizzle mode (layoutsim.smem.descriptor, measured: descriptors_sm_90.npz), A K-major and B
MN-major (imm-trans-b), and D is A.B exactly (small integers in f16, f32 accumulation). The two
layouts are written by different code (tma.box_addresses, descriptor.operand_addresses), so a
wrong stride, swizzle or base offset on either side shows up as a wrong product."""
import numpy as np
import pytest

import layoutsim
from layoutsim import smem
from layoutsim.sim import Warpgroup

INS = "wgmma.m64n64k16.f32.f16.f16"
A_AT, B_AT = 0x400, 0x4000


def _land(g, tmap, dst, box_values):
    """A TMA copy into the simulator's shared memory: box_values is [*box[::-1]] of f16."""
    addr = smem.box_addresses(tmap, dst)
    g.smem[addr[..., None] + np.arange(2)] = box_values.astype(np.float16).view(np.uint8).reshape(*addr.shape, 2)


@pytest.mark.parametrize("mode", ["none", "32B", "64B", "128B"])
def test_tma_filled_tiles_through_descriptors_give_the_product(mode):
    rng = np.random.default_rng(11)
    A = rng.integers(-3, 4, (64, 16)).astype(np.float16)           # [m, k]
    B = rng.integers(-3, 4, (16, 64)).astype(np.float16)           # [k, n]
    g = Warpgroup("sm_90")
    if mode == "none":
        # no swizzle: 8x16-byte core matrices, one 16-byte row per box row (a 3-D box: k // 8 outermost)
        a_box, b_box = smem.TensorMap((8, 64, 2), 2), smem.TensorMap((8, 16, 8), 2)
        da = smem.Descriptor(A_AT, lbo=64 * 16, sbo=128)            # K-major: LBO between k groups
        db = smem.Descriptor(B_AT, lbo=128, sbo=16 * 16)            # MN-major: LBO between k groups
        a_vals = A.reshape(64, 2, 8).transpose(1, 0, 2)             # [k // 8, m, k % 8]
        b_vals = B.T.reshape(8, 8, 16).transpose(0, 2, 1)           # [n // 8, k, n % 8]
    else:
        span = smem.mode(mode).span
        inner = span // 2                                           # f16 per span-wide row
        a_box = smem.TensorMap((16, 64), 2, mode)                   # one k16 slice: narrower than the span
        da = smem.Descriptor.dense(A_AT, 64, 16, 16, mode, "K")
        nb = 64 // inner
        b_box = smem.TensorMap((inner, 16) + ((nb,) if nb > 1 else ()), 2, mode)
        db = smem.Descriptor(B_AT, lbo=16 * span, sbo=8 * span, swizzle=mode)   # n groups of 16 k rows
        a_vals = A                                                  # [m, k]
        b_vals = B.reshape(16, nb, inner).transpose(1, 0, 2) if nb > 1 else B   # [n // inner, k, n % inner]
    assert smem.consistency(a_box, A_AT, INS, "A", da) == []
    assert smem.consistency(b_box, B_AT, INS, "B", db, trans=True) == []
    _land(g, a_box, A_AT, a_vals)
    _land(g, b_box, B_AT, b_vals)
    g.wgmma(INS, "d", da, db, scale_d=False, trans_b=True)
    D = g.fragment(layoutsim.get(INS), "D", "d")[0, 0].view(np.float32)
    assert np.array_equal(D, A.astype(np.float32) @ B.astype(np.float32))
    assert g.trace[-1].wavefronts == (64 * 16 + 16 * 64) * 2 // 128
