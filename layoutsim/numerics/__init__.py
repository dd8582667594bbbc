"""Bit-exact tensor-core arithmetic: `mma`, arch profiles, test cases and measured corpora.

    import layoutsim
    d = layoutsim.mma("mma.m16n8k16.f32.f16.f16.f32", a, b, c, arch="sm_90")

Modules: profiles (arch parameters with sources), plan (instruction + profile -> kernel
parameters), kernel (numba block-FMA; imported on first use; general, cfg, lanes, bitcast, f64_kernel), api
(`mma`), budget (the memory one call may take), sparse (SWMMAC's 2:4 sparse A), cases (test-case
generator for the GPU run), corpus (measured results: format, load, save, replay), sfu (the
approximate-math instructions, ex2/rcp/rsqrt/sqrt/lg2/sin/cos/tanh.approx, as the H200 computes
them; its tables in data/sfu_sm90, codec sfu_tables).
Importing this package imports neither numpy nor numba.
"""


def mma(instr, a, b, c, arch="sm_90", *, profile=None, raw=False, index=None, max_bytes=None,
        scale_a=None, scale_b=None, types=None, scale_d=None):
    """D = A*B + C for one instruction, bit for bit as `arch`'s tensor core computes it,
    batched over leading dimensions.

    instr: a catalog name (any spelling `layoutsim.get` takes) or an Instruction (mma.sync,
    wgmma, AMD WMMA). a (..., M, K), b (..., K, N), c (..., M, N): raw bits in the element's
    unsigned dtype (uint16 f16/bf16, uint32 tf32/f32/s32, uint8 e4m3/e5m2/s8/u8, uint8 low
    nibble s4/u4, uint64 f64) or values (float16, ml_dtypes bfloat16/float8_e4m3fn/
    float8_e5m2, float32, float64, int8/uint8, int32); leading dimensions broadcast. For
    wgmma, c is the accumulator before the operation. arch: whose arithmetic (profiles in
    layoutsim.numerics.profiles; gfx11/gfx12 are an unverified assumption and warn).
    profile: a Profile to use instead (e.g. a candidate behaviour). raw=True returns D's raw
    bits. AMD gfx12 sparse SWMMAC: a is the logical 2:4 sparse A (..., M, K), or its
    compressed values (..., M, K/2) with index= the 4-bit IDX fields (..., M, K/4) (module
    sparse). Returns D (..., M, N) in D's value dtype (float32, float16, bfloat16, float64,
    int32). Bad shapes, dtypes, names or an arch without the instruction raise LayoutsimError.
    max_bytes: the memory the call may take (default $LAYOUTSIM_MMA_BYTES, else 4 GiB): a
    larger batch is refused before anything is allocated, naming the chunk size that fits.
    Blackwell: tcgen05.mma names spell the shape (tcgen05.mma.cta_group::1.kind::f16.m128n256k16);
    types="d.a.b" picks its descriptor's element types; block-scaled kinds take scale_a
    (..., M, K/block) and scale_b (..., K/block, N), raw ue8m0/ue4m3 bytes (module scaled);
    scale_d=s (.kind::f16/tf32, 0..15) is scale-input-d, D = A*B + C * 2^-s (module scale_d).
    """
    from .api import mma as _mma
    return _mma(instr, a, b, c, arch, profile=profile, raw=raw, index=index, max_bytes=max_bytes,
                scale_a=scale_a, scale_b=scale_b, types=types, scale_d=scale_d)


__all__ = ["mma"]
