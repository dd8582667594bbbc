"""cvt.f32.f16 / cvt.f32.bf16's widening (ops_cvt._widen_f16/_widen_bf16, the plain forms' path)
against the general conversion (decode to float64, round to f32 with canonical NaNs), on every
16-bit pattern, and through a PTX run."""
import numpy as np
from ptx_kernels import in_out

from layoutsim.ptx import ops_cvt as C
from layoutsim.ptx import types as T


def test_every_pattern_as_the_general_conversion():
    x = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    for name, widen in (("f16", C._widen_f16), ("bf16", C._widen_bf16)):
        want = C._to_float(C._decode(x, T.get(name)), "f32", "rn", False, False, False, False)
        got = widen(x)
        assert got.dtype == np.float32 and got.view(np.uint32).tobytes() == want.view(np.uint32).tobytes(), name
        assert widen(np.uint16(0x3C00)).view(np.uint32) == (0x3F800000 if name == "f16" else 0x3C000000)


def test_a_launch_widens_as_before():
    import layoutsim.ptx as ptx
    src = in_out(".reg .b16 %h<3>; .reg .f32 %f<3>; .reg .b32 %r<3>; .reg .b64 %rd<6>;", """
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 2; add.s64 %rd4, %rd1, %rd3;
  ld.global.b16 %h1, [%rd4];
  cvt.f32.f16 %f1, %h1; cvt.f32.bf16 %f2, %h1;
  mul.wide.u32 %rd3, %r1, 8; add.s64 %rd5, %rd2, %rd3;
  st.global.v2.f32 [%rd5], {%f1, %f2};""")
    x = np.array([0x3C00, 0x7E01, 0xFC00, 0x0001, 0x8000, 0x7F80, 0xFFFF, 0x1234] * 4, np.uint16)
    r = ptx.run(src, "k", 1, 32, [x, np.zeros(64, np.float32)])
    out = r.buffers[1].view(np.uint32).reshape(32, 2)
    assert out[:, 0].tobytes() == C._widen_f16(x).view(np.uint32).tobytes()
    assert out[:, 1].tobytes() == C._widen_bf16(x).view(np.uint32).tobytes()
    assert out[1, 0] == 0x7FFFFFFF and out[0, 0] == 0x3F800000       # a NaN: the canonical one


def test_f32_to_bf16_rn_as_the_general_rounding():
    """cvt.rn.bf16x2.f32's path (ops_cvt._bf16_rn) against _to_float's rounding of the same f32
    values: every upper half with the lower halves that decide a rounding (0, 1, just below,
    at and just above the tie, all ones) and random ones: ties, carries into the exponent,
    overflow to infinity, subnormals, NaNs."""
    hi = np.arange(1 << 16, dtype=np.uint32) << np.uint32(16)
    lows = np.array([0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    rng = np.random.default_rng(25)
    bits = np.concatenate([(hi[:, None] | lows[None, :]).reshape(-1),
                           rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32)])
    v = bits.view(np.float32)
    with np.errstate(invalid="ignore"):            # the reference's encode of the NaNs
        want = C._to_float(v.astype(np.float64), "bf16", "rn", False, False, False, False)
    assert np.array_equal(C._bf16_rn(v), np.asarray(want).astype(np.uint32))
    assert C._bf16_rn(np.float32(1.0)) == 0x3F80


def test_a_launch_packs_two_f32_into_bf16x2():
    import layoutsim.ptx as ptx
    src = in_out(".reg .f32 %f<3>; .reg .b32 %r<3>; .reg .b64 %rd<6>;", """
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd3, %r1, 8; add.s64 %rd4, %rd1, %rd3;
  ld.global.v2.f32 {%f1, %f2}, [%rd4];
  cvt.rn.bf16x2.f32 %r2, %f1, %f2;
  mul.wide.u32 %rd3, %r1, 4; add.s64 %rd5, %rd2, %rd3;
  st.global.b32 [%rd5], %r2;""")
    rng = np.random.default_rng(26)
    x = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    x[:4] = [0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x7FC00001]          # ties to even, overflow, a NaN
    r = ptx.run(src, "k", 1, 32, [x.view(np.float32), np.zeros(32, np.uint32)])
    with np.errstate(invalid="ignore"):
        ref = np.asarray(C._to_float(x.view(np.float32).astype(np.float64), "bf16", "rn", False, False, False,
                                     False)).astype(np.uint32)
    assert r.buffers[1].tobytes() == ((ref[0::2] << 16) | ref[1::2]).astype(np.uint32).tobytes()
