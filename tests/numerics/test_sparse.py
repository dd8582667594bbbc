"""AMD gfx12 SWMMAC: the 2:4 sparse A (layoutsim.numerics.sparse) and layoutsim.mma on it.

Expected values: the index encoding from AMD's matrix instruction calculator README ("if the
first two entries [of a row] hold A[0][2] and A[0][3] ... the first two entries of the
compression index would store 2 and 3"), exact integer sums (numpy int64), and, for floats,
the independent Fraction reference of the block FMA applied to the logical A. The AMD
arithmetic itself is an unverified assumption (no AMD GPU here); these tests check that
SWMMAC runs the dense arithmetic on the A its operands describe.
"""
import numpy as np
import pytest

import layoutsim
from layoutsim import LayoutsimError
from layoutsim.formats import raw_dtype
from layoutsim.numerics import sparse
from layoutsim.numerics.profiles import PROFILES

from numerics_reference import Rules, dot

pytestmark = pytest.mark.filterwarnings("ignore:.*UNVERIFIED ASSUMPTION")

SWMMAC = sorted({e.name.split(".")[0] for e in layoutsim.listing("gfx1201", "swmmac")})


def _pattern(rng, shape):
    """Random 2:4 masks (..., M, K): 0, 1 or 2 kept positions in every group of 4."""
    *lead, m, k = shape
    keep = np.zeros((*lead, m, k // 4, 4), bool)
    pos = rng.permuted(np.broadcast_to(np.arange(4), keep.shape), axis=-1)
    n = rng.integers(0, 3, keep.shape[:-1])
    np.put_along_axis(keep, pos, np.arange(4) < n[..., None], axis=-1)
    return keep.reshape(shape)


def test_calculator_example_positions_2_and_3():
    values = np.array([[7, 9]], np.uint16)             # one row, one group
    index = np.array([[2 | 3 << 2]])
    assert sparse.expand(values, index, 4).tolist() == [[0, 0, 7, 9]]
    v, i = sparse.compress(np.array([[0, 0, 7, 9]], np.uint16))
    assert v.tolist() == [[7, 9]] and i.tolist() == [[2 | 3 << 2]]


def test_compress_then_expand_is_the_identity():
    rng = np.random.default_rng(5)
    for shape in ((16, 32), (3, 16, 64), (2, 2, 16, 16)):
        dense = (rng.integers(1, 1 << 16, shape) * _pattern(rng, shape)).astype(np.uint16)
        dense[..., 0, :4] = [0x8000, 0, 0, 0]           # -0.0 bits count as a kept value
        v, i = sparse.compress(dense)
        assert v.shape == shape[:-1] + (shape[-1] // 2,) and i.shape == shape[:-1] + (shape[-1] // 4,)
        assert ((i & 3) < (i >> 2)).all()              # positions ascending, never equal
        assert (sparse.expand(v, i, shape[-1]) == dense).all()


@pytest.mark.parametrize("bad,match", [
    (lambda: sparse.compress(np.array([[1, 1, 1, 0]])), "not 2:4 sparse: row 0, k 0..3 holds 3"),
    (lambda: sparse.expand(np.ones((1, 2)), np.array([[1 | 1 << 2]]), 4), "both kept values name position 1"),
    (lambda: sparse.expand(np.ones((1, 2)), np.array([[16]]), 4), "not a 4-bit value"),
    (lambda: sparse.expand(np.ones((1, 2)), np.array([[1.5]]), 4), "integer 4-bit fields"),
    (lambda: sparse.expand(np.ones((1, 3)), np.array([[4]]), 4), r"shape \(\.\.\., M, 2\)"),
    (lambda: sparse.expand(np.ones((1, 2)), np.array([[4, 4]]), 4), r"shape \(\.\.\., 1, 1\)"),
    (lambda: sparse.compress(np.ones((2, 6))), "not a multiple of 4"),
])
def test_bad_sparse_operands_are_one_line_errors(bad, match):
    with pytest.raises(LayoutsimError, match=match) as e:
        bad()
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", [n for n in SWMMAC if "iu" in n])
def test_integer_swmmac_is_the_exact_sum_over_the_logical_a(name):
    ins = layoutsim.get(name, arch="gfx1201")
    M, N, K = ins.shape
    rng = np.random.default_rng(3)
    f = ins.formats
    hi = 16 if f["a"] == "u4" else 256
    dense = rng.integers(0, hi, (4, M, K)) * _pattern(rng, (4, M, K))
    b = rng.integers(0, hi, (4, K, N))
    c = rng.integers(-2**31, 2**31, (4, M, N))
    want = (dense @ b + c + 2**31) % 2**32 - 2**31
    raw = dense.astype(np.uint8)
    vals, idx = sparse.compress(raw)
    for a, index in ((raw, None), (vals, idx)):
        got = layoutsim.mma(ins, a, b.astype(np.uint8), c.astype(np.int32), arch="gfx1201",
                            index=index)
        assert (got == want).all()


# sm_90's block FMA (KM H100TC.m, MMA-Sim Hopper; tests/numerics/test_independent_reference.py):
# 16 16-bit products per block (fp8: 32, 13 bits kept), 25 bits kept below the largest exponent,
# exponent floor -133 (f32, bf16 out) / -21 (f16 out), f32 results truncated, 16-bit rounded RNE
# (bf16 out: 7 fraction bits, as the profile rounds a bf16 D).
def block_fma_rules(inst):
    f = inst.formats
    a, b, d = f["a"], f["b"], f["d"]
    c = f.get("c", d)
    floor = -21 if d == "f16" else -133
    rounding, keep = ("rz", 23) if d == "f32" else ("rne", {"f16": 10, "bf16": 7}[d])
    if a in ("e4m3", "e5m2"):
        return Rules(a, b, c, d, block=32, align=13, floor=floor, rounding=rounding,
                     keep=13 if d == "f32" else keep)
    return Rules(a, b, c, d, block=16, align=25, floor=floor, rounding=rounding, keep=keep)


@pytest.mark.parametrize("name", [n for n in SWMMAC if "iu" not in n])
def test_float_swmmac_matches_the_reference_on_the_logical_a(name):
    # the gfx12 profile's grouped floor steps are checked against AMD's captures
    # (test_amd_captures.py); here: the sparse/dense identity under the gfx12 profile, and the
    # Fraction reference under a plain block-FMA profile (sm_90's parameters, stated above)
    inst = layoutsim.get(name, arch="gfx1201")
    prof = PROFILES["sm_90"]
    rules = block_fma_rules(inst)
    M, N, K = inst.shape
    rng = np.random.default_rng(9)
    n = 2
    def finite(fmt, shape):
        """Random raw bits with both signs and the top exponent bit clear: finite, exponents
        spread over half the range (products far apart and close together)."""
        dt = np.dtype(raw_dtype(fmt))
        w = 8 * dt.itemsize
        x = rng.integers(0, 1 << w, shape, dtype=np.uint64) & ~np.uint64(1 << (w - 2))
        return x.astype(dt)

    dense = finite(rules.a, (n, M, K)) * _pattern(rng, (n, M, K)).astype(raw_dtype(rules.a))
    b, c = finite(rules.b, (n, K, N)), finite(rules.c, (n, M, N))
    vals, idx = sparse.compress(dense)
    assert (layoutsim.mma(inst, vals, b, c, arch="gfx1201", index=idx, raw=True)
            == layoutsim.mma(inst, dense, b, c, arch="gfx1201", raw=True)).all()
    got = layoutsim.mma(inst, vals, b, c, arch="gfx1201", index=idx, raw=True, profile=prof)
    assert (layoutsim.mma(inst, dense, b, c, arch="gfx1201", raw=True, profile=prof) == got).all()
    for s in range(n):
        for i in range(M):
            for j in range(N):
                want = dot(dense[s, i], b[s, :, j], int(c[s, i, j]), rules)
                assert int(got[s, i, j]) == want, (name, s, i, j)


def test_mma_errors_for_sparse_operands():
    ins = layoutsim.get("v_swmmac_f32_16x16x32_f16", arch="gfx1201")
    a = np.ones((16, 32), np.float16)                  # dense: not 2:4 sparse
    b, c = np.ones((32, 16), np.float16), np.zeros((16, 16), np.float32)
    with pytest.raises(LayoutsimError, match="not 2:4 sparse"):
        layoutsim.mma(ins, a, b, c, arch="gfx1201")
    with pytest.raises(LayoutsimError, match=r"\(\.\.\., 16, 32\).*or \(\.\.\., 16, 16\) with index="):
        layoutsim.mma(ins, np.ones((16, 8), np.float16), b, c, arch="gfx1201")
    with pytest.raises(LayoutsimError, match="dense wmma instruction"):
        layoutsim.mma("v_wmma_f32_16x16x16_f16", np.ones((16, 16), np.float16), np.ones((16, 16), np.float16),
                      c, arch="gfx1201", index=np.zeros((16, 4), np.uint8))
