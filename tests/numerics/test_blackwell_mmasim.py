"""layoutsim.mma on Blackwell (tcgen05.mma every float kind, block scale factors, FP6/FP4) bit
for bit against MMA-Sim (PyPI mmasim; arXiv:2511.10909, validated by its authors bitwise on B200)
over random and special-value inputs. Skipped without mmasim. The 10**6-case run per kind:
`PYTHONPATH=.:tests/numerics python -m mmasim_oracle --cases 1000000`."""
import numpy as np
import pytest

import layoutsim
from layoutsim.errors import LayoutsimError
from layoutsim.formats import decode

import mmasim_oracle    # beside this file (pytest puts tests/numerics on sys.path)

pytest.importorskip("mmasim", reason="MMA-Sim (pip install mmasim) is the oracle")


@pytest.mark.parametrize("label", [k[0] for k in mmasim_oracle.KINDS])
@pytest.mark.parametrize("special", [False, True])
def test_tcgen05_matches_mmasim(label, special):
    n, differ, first = mmasim_oracle.compare(label, 1024, seed=7, special=special)
    assert n >= 1024 and differ == 0, first


def test_i8_is_exact():
    # .kind::i8: s32 accumulation of s8/u8 products is exact (no rounding); MMA-Sim has no i8.
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 128, (128, 32)).astype(np.int8)
    b = rng.integers(0, 256, (32, 16)).astype(np.uint8)
    c = rng.integers(-2**20, 2**20, (128, 16)).astype(np.int32)
    d = layoutsim.mma("tcgen05.mma.cta_group::1.kind::i8.m128n16k32", a, b, c, arch="sm_100a",
                      types="s32.s8.u8")
    assert np.array_equal(d, a.astype(np.int64) @ b.astype(np.int64) + c)


def test_scales_are_required_and_checked():
    name = "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X.m128n8k64"
    a = np.zeros((128, 64), np.uint8)
    b = np.zeros((64, 8), np.uint8)
    c = np.zeros((128, 8), np.float32)
    with pytest.raises(LayoutsimError, match="block-scaled: give scale_a"):
        layoutsim.mma(name, a, b, c, arch="sm_100a")
    with pytest.raises(LayoutsimError, match=r"scale_a .* must have shape"):
        layoutsim.mma(name, a, b, c, arch="sm_100a", scale_a=np.zeros((128, 4), np.uint8),
                      scale_b=np.zeros((2, 8), np.uint8))
    with pytest.raises(LayoutsimError, match="takes none"):
        layoutsim.mma("tcgen05.mma.cta_group::1.kind::f16.m128n8k16", np.zeros((128, 16), np.float16),
                      np.zeros((16, 8), np.float16), c, arch="sm_100a", scale_a=a)
    with pytest.raises(LayoutsimError, match="not legal"):
        layoutsim.mma(name, a, b, c, arch="sm_100a", types="f32.e4m3.e4m3")


def test_scales_multiply_exactly():
    # OCP MX v1.0 6.3: a block's dot product is scaled by 2**(sa-127) * 2**(sb-127)
    rng = np.random.default_rng(5)
    a = rng.integers(0, 16, (128, 64)).astype(np.uint8)
    b = rng.integers(0, 16, (64, 8)).astype(np.uint8)
    sa = np.full((128, 2), 129, np.uint8)
    sb = np.full((2, 8), 126, np.uint8)
    d = layoutsim.mma("tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X.m128n8k64", a, b,
                      np.zeros((128, 8), np.float32), arch="sm_100a", scale_a=sa, scale_b=sb)
    assert np.array_equal(d, decode("e2m1", a) @ decode("e2m1", b) * 2.0)
