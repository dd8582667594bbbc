"""layoutsim.mma(..., scale_d=s): tcgen05.mma's scale-input-d, D = A*B + D * 2^-s (PTX ISA 9.7.16.10.9.1,
.kind::f16 / tf32, s in [0, 15]; layoutsim/numerics/scale_d.py says what is assumed).

MMA-Sim does not model scale-input-d. Under the module's assumption (the scaling is exact, the scaled
D enters the dense arithmetic as its C) the scaled MMA is MMA-Sim's plain MMA of the pre-scaled C,
wherever that C is exact in D's format: the expected bits below are MMA-Sim's (its dpa on A, B and
C * 2^-s, the scaling done here in float64 and encoded exactly), never layoutsim's own."""
import numpy as np
import pytest

import layoutsim
from layoutsim.formats import decode, encode

mmasim = pytest.importorskip("mmasim")
from mmasim_oracle import _random, mmasim_d  # noqa: E402

N = 8
LABELS = [("f16", "tcgen05.mma.cta_group::1.kind::f16.m128n8k16", "f32.f16.f16"),
          ("bf16", "tcgen05.mma.cta_group::1.kind::f16.m128n8k16", "f32.bf16.bf16"),
          ("f16->f16", "tcgen05.mma.cta_group::1.kind::f16.m128n8k16", "f16.f16.f16"),
          ("tf32", "tcgen05.mma.cta_group::1.kind::tf32.m128n8k8", "f32.tf32.tf32")]


def _c(rng, shape):
    """f16 C whose every element stays exact when scaled by 2^-15: exponent fields 16..30 (|C| >= 2)."""
    exp = rng.integers(16, 31, shape).astype(np.uint16)
    sign = rng.integers(0, 2, shape).astype(np.uint16)
    return (sign << 15) | (exp << 10) | rng.integers(0, 1 << 10, shape).astype(np.uint16)


@pytest.mark.parametrize("label,name,types", LABELS)
@pytest.mark.parametrize("s", [0, 1, 7, 15])
def test_scale_d_is_mma_sim_of_the_prescaled_c(label, name, types, s):
    d, fa, fb = types.split(".")
    inst = layoutsim.get(name)
    M, _, K = inst.shape
    rng = np.random.default_rng(100 * s + len(label))
    batch = 4
    A = _random(rng, fa, (batch, M, K), False)
    B = _random(rng, fb, (batch, K, N), False)
    C = _random(rng, d, (batch, M, N), False) if d == "f32" else _c(rng, (batch, M, N))
    scaled = encode(d, np.ldexp(decode(d, C), -s)).astype(C.dtype)
    assert np.array_equal(decode(d, scaled), np.ldexp(decode(d, C), -s))      # the case is one MMA-Sim can judge
    want = mmasim_d(label, A, B, scaled)
    got = layoutsim.mma(inst, A, B, C, arch="sm_100a", raw=True, types=types, scale_d=s)
    assert np.array_equal(got.view(want.dtype), want)
    if s:        # and it is not the unscaled MMA (the test could fail)
        plain = layoutsim.mma(inst, A, B, C, arch="sm_100a", raw=True, types=types)
        assert not np.array_equal(plain, got)


def test_specials_scale_to_themselves():
    inst = layoutsim.get("tcgen05.mma.cta_group::1.kind::f16.m128n8k16")
    A = np.zeros((128, 16), np.uint16)
    B = np.zeros((16, 8), np.uint16)
    C = np.zeros((128, 8), np.uint32)
    C[0, :4] = [0x7F800000, 0xFF800000, 0x80000000, 0x7FC00000]     # +Inf, -Inf, -0, NaN
    got = layoutsim.mma(inst, A, B, C, arch="sm_100a", raw=True, scale_d=15)
    plain = layoutsim.mma(inst, A, B, C, arch="sm_100a", raw=True)
    assert np.array_equal(got[0, :4], plain[0, :4])


@pytest.mark.parametrize("name,kw,match", [
    ("tcgen05.mma.cta_group::1.kind::f8f6f4.m128n8k32", dict(scale_d=1), r"\.kind::tf32 and \.kind::f16 only"),
    ("tcgen05.mma.cta_group::1.kind::i8.m128n16k32", dict(scale_d=1), r"\.kind::tf32 and \.kind::f16 only"),
    ("tcgen05.mma.cta_group::1.kind::f16.m128n8k16", dict(scale_d=16), r"integer in \[0, 15\]"),
    ("tcgen05.mma.cta_group::1.kind::f16.m128n8k16", dict(scale_d=-1), r"integer in \[0, 15\]"),
    ("mma.m16n8k16.row.col.f32.f16.f16.f32", dict(scale_d=1), "has no such operand"),
])
def test_scale_d_where_the_isa_has_none_is_refused(name, kw, match):
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    fa, fd = inst.formats["a"], inst.formats["d"]
    from layoutsim.formats import raw_dtype
    A = np.zeros((M, K), raw_dtype(fa))
    B = np.zeros((K, N), raw_dtype(inst.formats["b"]))
    C = np.zeros((M, N), raw_dtype(fd))
    with pytest.raises(layoutsim.LayoutsimError, match=match):
        layoutsim.mma(inst, A, B, C, arch="sm_100a" if "tcgen05" in name else "sm_90", raw=True, **kw)


def test_a_scaled_d_that_loses_bits_is_refused_not_guessed():
    inst = layoutsim.get("tcgen05.mma.cta_group::1.kind::f16.m128n8k16")
    C = np.zeros((128, 8), np.uint16)
    C[3, 5] = 0x0401                     # f16 2^-14 * (1 + 2^-10): 2^-1 of it is a subnormal that drops the last bit
    with pytest.raises(layoutsim.LayoutsimError, match=r"D\[3, 5\] = 0x0401 .* not exact in f16"):
        layoutsim.mma(inst, np.zeros((128, 16), np.uint16), np.zeros((16, 8), np.uint16), C, arch="sm_100a",
                      raw=True, types="f16.f16.f16", scale_d=1)
