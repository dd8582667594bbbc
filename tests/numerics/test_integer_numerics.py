"""Integer mma: the exact sum wraps modulo 2**32; .satfinite clamps the final exact sum only."""
import numpy as np

import layoutsim

I32_MAX, I32_MIN = 2 ** 31 - 1, -2 ** 31


def one(name, a, b, c):
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    A = np.zeros((M, K), np.int64)
    B = np.zeros((K, N), np.int64)
    C = np.zeros((M, N), np.int64)
    A[0, :len(a)] = a
    B[:len(b), 0] = b
    C[0, 0] = c
    fa, fb = inst.formats["a"], inst.formats["b"]
    enc = layoutsim.formats.encode
    return int(layoutsim.mma(inst, enc(fa, A), enc(fb, B), enc("s32", C))[0, 0])


def test_wraps_modulo_2_32():
    # C = INT_MAX, +1 product -> INT_MIN (two's complement wrap)
    assert one("mma.m16n8k32.s32.s8.s8.s32", [1], [1], I32_MAX) == I32_MIN
    assert one("mma.m16n8k32.s32.s8.s8.s32", [-128], [127], I32_MIN) == I32_MIN - 128 * 127 + 2 ** 32


def test_satfinite_clamps():
    assert one("mma.m16n8k32.satfinite.s32.s8.s8.s32", [1], [1], I32_MAX) == I32_MAX
    assert one("mma.m16n8k32.satfinite.s32.s8.s8.s32", [-128], [127], I32_MIN) == I32_MIN


def test_satfinite_clamps_the_final_sum_only():
    # C = INT_MAX - 10, products +16129 (k=0) then -16129 (k=1): partial sums pass INT_MAX,
    # the exact final sum INT_MAX - 10 does not -> no clamp (issue 4; PTX ISA .satfinite)
    name = "mma.m16n8k32.satfinite.s32.s8.s8.s32"
    assert one(name, [127, -127], [127, 127], I32_MAX - 10) == I32_MAX - 10
    prof = layoutsim.numerics.profiles.PROFILES["sm_90"].with_(int_saturation="each_product")
    inst = layoutsim.get(name)
    A = np.zeros((16, 32), np.int8)
    B = np.zeros((32, 8), np.int8)
    A[0, :2] = [127, -127]
    B[:2, 0] = 127
    C = np.zeros((16, 8), np.int32)
    C[0, 0] = I32_MAX - 10
    assert layoutsim.mma(inst, A, B, C, profile=prof)[0, 0] == I32_MAX - 16129


def test_unsigned_and_4_bit_operands():
    assert one("mma.m16n8k32.s32.u8.s8.s32", [255], [-128], 0) == -255 * 128
    assert one("mma.m16n8k64.s32.s4.u4.s32", [-8, 7], [15, 15], 5) == -8 * 15 + 7 * 15 + 5
    assert one("mma.m8n8k16.s32.u8.u8.s32", [255] * 16, [255] * 16, 0) == 16 * 255 * 255


def test_integer_products_through_float64_are_numpys_integer_matmul():
    """api._int_matmul (BLAS in float64 where every partial sum is below 2**53) against numpy's
    integer matmul: random s8/u8/s4 operands, the extremes, and a bound that keeps integers."""
    from layoutsim.numerics.api import _int_matmul
    rng = np.random.default_rng(25)
    for lo, hi, k in ((-128, 128, 32), (0, 256, 64), (-8, 8, 16)):
        a = rng.integers(lo, hi, (3, 64, k)).astype(np.int64)
        b = rng.integers(lo, hi, (3, k, 24)).astype(np.int64)
        assert np.array_equal(_int_matmul(a, b), np.matmul(a, b))
    a, b = np.full((1, 64, 32), -128, np.int64), np.full((1, 32, 8), -128, np.int64)
    assert np.array_equal(_int_matmul(a, b), np.matmul(a, b))
    big = np.full((1, 2, 4), 1 << 40, np.int64)          # sums past 2**53: numpy's integer matmul
    assert np.array_equal(_int_matmul(big, np.full((1, 4, 2), 1 << 12, np.int64)),
                          np.matmul(big, np.full((1, 4, 2), 1 << 12, np.int64)))
