"""layoutsim.mma of tcgen05.mma.sp entries (layoutsim/numerics/sparse_tcgen05.py): the metadata of PTX ISA
9.7.16.10.8.1-2 maps the kept values to their K positions, and the arithmetic is the kind's dense one on
that logical A (assumed; MMA-Sim does not model .sp). Expected bits: MMA-Sim's two chained dense MMAs
of the two K halves of the logical A (mmasim_oracle.mmasim_d, D of the first half as C of the second),
the logical A built from the ISA's index table (tests/sparse_reference.py)."""
import numpy as np
import pytest

import layoutsim

pytest.importorskip("mmasim")
from mmasim_oracle import _random, mmasim_d  # noqa: E402
from sparse_reference import PAIRS, SINGLES, logical  # noqa: E402

CASES = [("f16", "tcgen05.mma.sp.cta_group::1.kind::f16.m128n8k32", "f32.f16.f16", 4),
         ("bf16", "tcgen05.mma.sp.cta_group::1.kind::f16.m128n8k32", "f32.bf16.bf16", 4),
         ("f16->f16", "tcgen05.mma.sp.cta_group::1.kind::f16.m128n8k32", "f16.f16.f16", 4),
         ("tf32", "tcgen05.mma.sp.cta_group::1.kind::tf32.m128n8k16", "f32.tf32.tf32", 2),
         ("f8f6f4 e4m3.e5m2", "tcgen05.mma.sp.cta_group::1.kind::f8f6f4.m128n8k64", "f32.e4m3.e5m2", 4)]




@pytest.mark.parametrize("label,name,types,size", CASES)
def test_sparse_is_mma_sim_of_the_logical_a(label, name, types, size):
    d, fa, fb = types.split(".")
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    rng = np.random.default_rng(K + len(label))
    values = _random(rng, fa, (M, K // 2), False)
    table = list(SINGLES if size == 2 else PAIRS)
    index = np.array(table, np.uint8)[rng.integers(0, len(table), (M, K // size))]
    B = _random(rng, fb, (K, N), False)
    C = _random(rng, d, (M, N), False)
    A = logical(values, index, size)
    h = K // 2
    half = mmasim_d(label, A[None, :, :h], B[None, :h], C[None])            # the dense K/2-long MMAs
    want = mmasim_d(label, A[None, :, h:], B[None, h:], half)[0]
    got = layoutsim.mma(inst, values, B, C, arch="sm_100a", raw=True, types=types, index=index)
    assert np.array_equal(got.view(want.dtype), want)
    assert np.array_equal(layoutsim.mma(inst, A, B, C, arch="sm_100a", raw=True, types=types), got)


@pytest.mark.parametrize("name,index,match", [
    ("tcgen05.mma.sp.cta_group::1.kind::f16.m128n8k32", 0b0001, r"0b0001 .* not a meaningful index"),
    ("tcgen05.mma.sp.cta_group::1.kind::f16.m128n8k32", 0b0101, r"0b0101 .* not a meaningful index"),
    ("tcgen05.mma.sp.cta_group::1.kind::tf32.m128n8k16", 0b1000, r"0b1000 .* not a meaningful index"),
])
def test_metadata_the_isa_leaves_undefined_is_refused(name, index, match):
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    size = 2 if "tf32" in name else 4
    idx = np.full((M, K // size), 0b0100 if size == 4 else 0b1110, np.uint8)
    idx[5, 1] = index
    dt = np.uint32 if "tf32" in name else np.uint16
    with pytest.raises(layoutsim.LayoutsimError, match=match):
        layoutsim.mma(inst, np.zeros((M, K // 2), dt), np.zeros((K, N), dt), np.zeros((M, N), np.uint32),
                      arch="sm_100a", raw=True, index=idx)


def test_a_logical_a_that_is_not_2_to_4_sparse_is_refused():
    inst = layoutsim.get("tcgen05.mma.sp.cta_group::1.kind::f16.m128n8k32")
    A = np.zeros((128, 32), np.uint16)
    A[7, 4:7] = 0x3C00
    with pytest.raises(layoutsim.LayoutsimError, match=r"not 2:4 sparse: row 7, k 4..7 holds 3"):
        layoutsim.mma(inst, A, np.zeros((32, 8), np.uint16), np.zeros((128, 8), np.uint32), arch="sm_100a", raw=True)
