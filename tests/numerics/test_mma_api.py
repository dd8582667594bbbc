"""layoutsim.mma: inputs as raw bits or values, batching, result dtypes, bad input."""
import ml_dtypes
import numpy as np
import pytest

import layoutsim
from layoutsim import LayoutsimError
from layoutsim.formats import encode

F16 = "mma.m16n8k16.f32.f16.f16.f32"


def _rand(rng, shape, lo=-4, hi=4):
    return rng.standard_normal(shape) * np.exp2(rng.integers(lo, hi, shape))


@pytest.mark.parametrize("name,vdt", [
    ("mma.m16n8k16.f32.f16.f16.f32", (np.float16, np.float16, np.float32)),
    ("mma.m16n8k16.f16.f16.f16.f16", (np.float16, np.float16, np.float16)),
    ("mma.m16n8k16.f32.bf16.bf16.f32", (ml_dtypes.bfloat16, ml_dtypes.bfloat16, np.float32)),
    ("mma.m16n8k8.f32.tf32.tf32.f32", (np.float32, np.float32, np.float32)),
    ("mma.m16n8k32.f32.e4m3.e5m2.f32", (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, np.float32)),
    ("mma.m16n8k32.s32.s8.u8.s32", (np.int8, np.uint8, np.int32)),
    ("mma.m16n8k64.s32.s4.s4.s32", (np.int8, np.int8, np.int32)),
    ("mma.m8n8k4.f64.f64.f64.f64", (np.float64, np.float64, np.float64)),
])
def test_raw_bits_and_values_agree(name, vdt):
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    rng = np.random.default_rng(1)
    f = inst.formats
    if f["a"] in ("s8", "u8", "s4", "u4"):
        lo = {"s8": -128, "u8": 0, "s4": -8, "u4": 0}
        hi = {"s8": 127, "u8": 255, "s4": 7, "u4": 15}
        vals = [rng.integers(lo[f["a"]], hi[f["a"]] + 1, (3, M, K)),
                rng.integers(lo[f["b"]], hi[f["b"]] + 1, (3, K, N)),
                rng.integers(-2 ** 31, 2 ** 31, (3, M, N))]
    else:
        vals = [_rand(rng, (3, M, K)), _rand(rng, (3, K, N)), _rand(rng, (3, M, N))]
    raws = [encode(f[r], v) for r, v in zip("abc", vals)]
    values = [layoutsim.formats.from_raw(f[r], x) for r, x in zip("abc", raws)]
    assert [v.dtype for v in values] == [np.dtype(t) for t in vdt]
    d1 = layoutsim.mma(name, *raws)
    d2 = layoutsim.mma(name, *values)
    assert d1.dtype == d2.dtype == layoutsim.formats.value_dtype(f["d"])
    assert np.array_equal(d1.view(np.uint8), d2.view(np.uint8))
    r = layoutsim.mma(name, *raws, raw=True)
    assert r.dtype == layoutsim.formats.raw_dtype(f["d"])
    assert np.array_equal(r.view(np.uint8), d1.view(np.uint8))


def test_batches_broadcast_and_match_single_calls():
    rng = np.random.default_rng(2)
    a = _rand(rng, (2, 3, 16, 16)).astype(np.float16)
    b = _rand(rng, (16, 8)).astype(np.float16)
    c = _rand(rng, (3, 16, 8)).astype(np.float32)
    d = layoutsim.mma(F16, a, b, c)
    assert d.shape == (2, 3, 16, 8) and d.dtype == np.float32
    for i in range(2):
        for j in range(3):
            one = layoutsim.mma(F16, a[i, j], b, c[j])
            assert one.shape == (16, 8)
            assert np.array_equal(one.view(np.uint32), d[i, j].view(np.uint32))
    assert layoutsim.mma(F16, a[:0, 0], b, c[0]).shape == (0, 16, 8)


def test_accepts_an_instruction_object_and_wgmma():
    inst = layoutsim.get("wgmma.m64n16k16.f32.bf16.bf16")
    rng = np.random.default_rng(3)
    a = _rand(rng, (64, 16)).astype(ml_dtypes.bfloat16)
    b = _rand(rng, (16, 16)).astype(ml_dtypes.bfloat16)
    d = layoutsim.mma(inst, a, b, np.zeros((64, 16), np.float32))
    ref = a.astype(np.float64) @ b.astype(np.float64)
    bound = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)) * 2.0 ** -21
    assert d.shape == (64, 16) and np.all(np.abs(d - ref) <= bound)


def test_integer_results_are_exact():
    rng = np.random.default_rng(4)
    a = rng.integers(-128, 128, (5, 16, 32)).astype(np.int8)
    b = rng.integers(0, 256, (5, 32, 8)).astype(np.uint8)
    c = rng.integers(-1000, 1000, (5, 16, 8)).astype(np.int32)
    d = layoutsim.mma("mma.m16n8k32.s32.s8.u8.s32", a, b, c)
    assert np.array_equal(d, (a.astype(np.int64) @ b.astype(np.int64) + c).astype(np.int32))


@pytest.mark.parametrize("call,message", [
    (lambda z: layoutsim.mma(F16, z[0].astype(np.float64), z[1], z[2]),
     r"A of mma\.sync.* \(f16\) has dtype float64; give uint16 raw bits or float16 values"),
    (lambda z: layoutsim.mma(F16, z[0][:, :8], z[1], z[2]),
     r"A of mma\.sync.* must have shape \(\.\.\., 16, 16\) \(f16\); got \(16, 8\)"),
    (lambda z: layoutsim.mma(F16, z[0], z[1], z[2].astype(np.float16)),
     r"C of .* \(f32\) has dtype float16"),
    (lambda z: layoutsim.mma(F16, z[0][None].repeat(2, 0), z[1][None].repeat(3, 0), z[2]),
     r"batch dimensions .* do not broadcast"),
    (lambda z: layoutsim.mma("mma.m16n8k32.f32.e4m3.e4m3.f32", np.zeros((16, 32), np.uint8),
                             np.zeros((32, 8), np.uint8), z[2], arch="sm_80"),
     r"not available on sm_80: it was introduced with sm_89"),
    (lambda z: layoutsim.mma("wgmma.m64n8k16.f32.f16.f16", np.zeros((64, 16), np.float16),
                             np.zeros((16, 8), np.float16), np.zeros((64, 8), np.float32),
                             arch="sm_80"), r"not available on sm_80"),
    (lambda z: layoutsim.mma("ldmatrix.x4", *z), r"ldmatrix instruction, not a matrix multiply"),
    (lambda z: layoutsim.mma("mma.m16n8k16.f32.f16.f16.f33", *z), r"unknown instruction"),
    (lambda z: layoutsim.mma(F16, *z, arch="sm_91"), r"unknown arch 'sm_91'"),
    (lambda z: layoutsim.mma(F16, *z, arch=None), r"give the arch"),
])
def test_bad_input_is_one_clear_error(call, message):
    z = (np.zeros((16, 16), np.float16), np.zeros((16, 8), np.float16), np.zeros((16, 8), np.float32))
    with pytest.raises(LayoutsimError, match=message):
        call(z)


def test_import_stays_numba_free():
    import subprocess
    import sys
    code = "import layoutsim, sys; print('numba' in sys.modules, 'numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "False"


def test_amd_wmma_warns_where_no_capture_covers_the_arithmetic():
    # gfx12 f16/bf16/integer WMMA: AMD's gfx1201 captures cover them (test_amd_captures.py),
    # no warning; gfx11 16-bit results and gfx12 fp8 stay assumptions and warn
    import warnings
    from dataclasses import replace
    from layoutsim.numerics.api import UnverifiedProfileWarning
    inst = layoutsim.get("v_wmma_f32_16x16x16_f16", arch="gfx1201")
    a = np.ones((16, 16), np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnverifiedProfileWarning)
        d = layoutsim.mma(inst, a, a, np.zeros((16, 16), np.float32), arch="gfx1201")
        assert d.dtype == np.float32 and np.all(d == 16)
        # bf16 result, and the iu8 NEG bits that make an operand signed
        bf = layoutsim.get("v_wmma_bf16_16x16x16_bf16", arch="gfx1201")
        one = encode("bf16", np.ones((16, 16)))
        assert layoutsim.mma(bf, one, one, encode("bf16", np.zeros((16, 16))), arch="gfx1201")[0, 0] == 16
        iu8 = layoutsim.get("v_wmma_i32_16x16x16_iu8", arch="gfx1201")
        signed = replace(iu8, options={**iu8.options, "signed_a": True})
        a8 = np.full((16, 16), 0xFF, np.uint8)          # 255 unsigned, -1 signed
        b8 = np.ones((16, 16), np.uint8)
        c = np.zeros((16, 16), np.int32)
        assert layoutsim.mma(iu8, a8, b8, c, arch="gfx1201")[0, 0] == 16 * 255
        assert layoutsim.mma(signed, a8, b8, c, arch="gfx1201")[0, 0] == -16
    with pytest.warns(UnverifiedProfileWarning, match="UNVERIFIED ASSUMPTION for f16 results"):
        layoutsim.mma(layoutsim.get("v_wmma_f16_16x16x16_f16", arch="gfx1100"), a, a,
                      np.zeros((16, 16), np.float16), arch="gfx1100")
    fp8 = layoutsim.get("v_wmma_f32_16x16x16_fp8_fp8", arch="gfx1201")
    with pytest.warns(UnverifiedProfileWarning, match="UNVERIFIED ASSUMPTION for e4m3"):
        layoutsim.mma(fp8, np.zeros((16, 16), np.uint8), np.zeros((16, 16), np.uint8),
                      np.zeros((16, 16), np.float32), arch="gfx1201")
