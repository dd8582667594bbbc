"""CDNA MFMA float arithmetic: MMA-Sim's models (layoutsim/numerics/cdna.py; arXiv:2511.10909 and
pip mmasim 2.1.1, not measured here). The worked cases below follow MMA-Sim's algorithms by hand
(each says how) and separate the models from each other; the random cases compare the numba
kernel with a second, exact-rational implementation written from the same description
(cdna_reference.py), output by output."""
import struct

import cdna_reference as R
import numpy as np
import pytest

import layoutsim
from layoutsim.errors import LayoutsimError
from layoutsim.formats import decode, encode, get_format
from layoutsim.numerics import cdna
from layoutsim.numerics.api import resolve
from layoutsim.numerics.plan import make_plan


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def d00(name, arch, a, b, c=0.0):
    """D[0][0] bits with A[0][k] = a[k], B[k][0] = b[k], C[0][0] = c and every other element 0."""
    inst = layoutsim.get(name)
    M, N, K = inst.shape
    A = np.zeros((M, K))
    B = np.zeros((K, N))
    C = np.zeros((M, N))
    A[0, :len(a)], B[:len(b), 0], C[0, 0] = a, b, c
    fa, fb = inst.formats["a"], inst.formats["b"]
    raw = layoutsim.mma(inst, encode(fa, A), encode(fb, B), encode("f32", C).view(np.float32),
                        arch=arch, raw=True)
    return int(raw[0, 0])


F16 = "v_mfma_f32_32x32x8_f16"            # gfx908, gfx90a, gfx942


def test_cdna3_truncates_products_that_cdna1_and_cdna2_round():
    # products 1 and 1.5 * 2**-24 (f16 1.5 * 2**-12 times 2**-12). gfx908 (exact sum, RNE) and
    # gfx90a (f32 add, RNE): 1 + 0.75 ulp rounds up to 1 + 2**-23. gfx942: the second product
    # truncated to 24 bits below 2**0 is 2**-24, so the sum is 1 + 2**-24, a tie: 1.0.
    a, b = [1.0, 1.5 * 2 ** -12], [1.0, 2 ** -12]
    assert d00(F16, "gfx908", a, b) == 0x3F800001
    assert d00(F16, "gfx90a", a, b) == 0x3F800001
    assert d00(F16, "gfx942", a, b) == 0x3F800000


def test_cdna2_rounds_pair_sums_where_cdna1_sums_exactly():
    # products 1, 2**-24, 2**-24. gfx908: exact 1 + 2**-23. gfx90a: (1 + 2**-24) ties to 1,
    # (2**-24 + 0) = 2**-24, 1 + 2**-24 ties to 1. gfx942: both small products survive the
    # 24-bit truncation exactly: 1 + 2**-23.
    a, b = [1.0, 2 ** -12, 2 ** -12], [1.0, 2 ** -12, 2 ** -12]
    assert d00(F16, "gfx908", a, b) == 0x3F800001
    assert d00(F16, "gfx90a", a, b) == 0x3F800000
    assert d00(F16, "gfx942", a, b) == 0x3F800001


def test_cdna2_flushes_subnormal_inputs():
    # 2**-24 is an f16 subnormal: gfx90a flushes it to +0; gfx908 and gfx942 keep 2**-24 * 2**10
    a, b = [2 ** -24], [2 ** 10]
    assert d00(F16, "gfx90a", a, b) == 0
    assert d00(F16, "gfx908", a, b) == d00(F16, "gfx942", a, b) == f32(2 ** -14)


def test_cdna3_fp8_drops_a_c_far_below_the_products():
    # product 128 * 128 = 2**14 (e_max 14). C = -2**-12 has exponent -12 < 14 - 25: it counts 0,
    # D = 2**14. C = -2**-11 (exponent -11) stays: floored to 2**-10 below 2**14 it is -2**-10,
    # and 2**14 - 2**-10 is an f32.
    name = "v_mfma_f32_16x16x32_fp8_fp8"
    assert d00(name, "gfx942", [128.0], [128.0], -2.0 ** -12) == f32(2.0 ** 14)
    assert d00(name, "gfx942", [128.0], [128.0], -2.0 ** -11) == f32(2.0 ** 14 - 2.0 ** -10)


def test_cdna3_fp8_sums_even_and_odd_k_apart():
    # bf8 (e5m2fnuz) 2**-17 is its least subnormal. Products 1 (k = 0) and -2**-34: at k = 1
    # (odd) the odd group keeps it exactly and flooring it to 24 bits below 2**0 gives -2**-24:
    # D = 1 - 2**-24. At k = 2 (even, with the 1) it is truncated toward zero in the group: D = 1.
    name = "v_mfma_f32_16x16x32_bf8_bf8"
    tiny = 2.0 ** -17
    assert d00(name, "gfx942", [1.0, -tiny], [1.0, tiny]) == f32(1 - 2.0 ** -24)
    assert d00(name, "gfx942", [1.0, 0.0, -tiny], [1.0, 0.0, tiny]) == 0x3F800000


def test_xf32_cuts_inputs_to_tf32_and_f32_is_an_fma_chain():
    one_ulp = 1 + 2.0 ** -23
    assert d00("v_mfma_f32_16x16x8_xf32", "gfx942", [one_ulp], [1.0]) == 0x3F800000
    assert d00("v_mfma_f32_16x16x4_f32", "gfx942", [one_ulp], [1.0]) == 0x3F800001
    # fma: (1 + 2**-23)(1 - 2**-24) - 1 = 2**-24 - 2**-47 exactly (an f32); a rounded product
    # then an add would give 0
    for arch in ("gfx908", "gfx90a", "gfx942"):
        assert d00("v_mfma_f32_16x16x4_f32", arch, [one_ulp], [1 - 2.0 ** -24], -1.0) == \
            f32(2.0 ** -24 - 2.0 ** -47)


def test_exact_and_two_stage_rounding_details():
    # gfx908 bf16 (exact sum of 2 products): C = 1, products 2**-24 and +-2**-100 (bf16 2**-50
    # squared): 1 + 2**-24 is a tie, the far smaller third term decides: up, or down to 1
    name = "v_mfma_f32_32x32x4bf16"
    assert d00(name, "gfx908", [2.0 ** -12, 2.0 ** -50], [2.0 ** -12, 2.0 ** -50], 1.0) == 0x3F800001
    assert d00(name, "gfx908", [2.0 ** -12, -2.0 ** -50], [2.0 ** -12, 2.0 ** -50], 1.0) == 0x3F800000
    # gfx942 bf16: products 2**-150 and 2**-158, C = 0 (exponent -126): the sum is normalised
    # no lower than -126 and floored to 31 fraction bits there (2**-157), which drops 2**-158;
    # 2**-150 is then a tie between 0 and the least subnormal: +0
    assert d00("v_mfma_f32_32x32x8_bf16", "gfx942", [2.0 ** -75, 2.0 ** -79],
               [2.0 ** -75, 2.0 ** -79]) == 0


def test_special_values():
    big = 2.0 ** 100
    # gfx908 (exact sum of each 2 bf16 products): 2**200 - 2**200 + 1 = 1; gfx942 (a product at
    # or above 2**128 is an Inf): +Inf with -Inf is NaN; gfx90a: the f32 products overflow to
    # +Inf and -Inf, their sum is NaN
    a, b = [big, -big], [big, big]
    assert d00("v_mfma_f32_32x32x4bf16", "gfx908", a, b, 1.0) == 0x3F800000
    assert d00("v_mfma_f32_32x32x8_bf16", "gfx942", a, b, 1.0) == cdna.NAN_BITS
    assert d00("v_mfma_f32_32x32x8_bf16", "gfx90a", a, b, 1.0) == cdna.NAN_BITS
    assert d00("v_mfma_f32_32x32x8_bf16", "gfx942", [big], [big]) == 0x7F800000
    for arch in ("gfx908", "gfx90a", "gfx942"):
        assert d00(F16, arch, [np.nan], [1.0]) == cdna.NAN_BITS
        assert d00(F16, arch, [np.inf], [0.0]) == cdna.NAN_BITS
        assert d00(F16, arch, [np.inf], [-1.0], 5.0) == 0xFF800000


def test_zero_results():
    # every product -0 and C = -0: -0 (an IEEE sum of -0s); one +0 product (0 * 0 in the row's
    # zero-filled rest), C = +0 or a cancelling sum: +0
    # gfx90a flushes inputs and C below the normal range to +0, -0 included: always +0 here
    K = 8
    for arch in ("gfx908", "gfx90a", "gfx942"):
        assert d00(F16, arch, [-0.0] * K, [1.0] * K, -0.0) == (0 if arch == "gfx90a" else 0x80000000)
        assert d00(F16, arch, [-0.0], [1.0], -0.0) == 0
        assert d00(F16, arch, [-0.0] * K, [1.0] * K, 0.0) == 0
        assert d00(F16, arch, [1.0, -1.0], [1.0, 1.0], -0.0) == 0


def test_gfx950_float_is_refused_integer_runs():
    with pytest.raises(LayoutsimError, match="no arithmetic model for f16 MFMA on gfx950"):
        layoutsim.mma("v_mfma_f32_16x16x32_f16", np.zeros((16, 32), np.float16),
                      np.zeros((32, 16), np.float16), np.zeros((16, 16), np.float32), arch="gfx950")
    d = layoutsim.mma("v_mfma_i32_16x16x64_i8", np.ones((16, 64), np.int8), np.ones((64, 16), np.int8),
                      np.zeros((16, 16), np.int32), arch="gfx950")
    assert (d == 64).all()


def test_fp8_formats_follow_the_arch():
    """The same fp8/bf8 MFMA mnemonic reads FNUZ formats on gfx942 (CDNA3) and OCP E4M3FN/E5M2 on
    gfx950 (CDNA4): AMD's CDNA3/CDNA4 matrix core blog, LLVM AMDGPUToROCDL.cpp (formats.AMD_FP8)."""
    name = "v_mfma_f32_16x16x32_fp8_bf8"
    on942, on950 = (layoutsim.get(name, arch=a) for a in ("gfx942", "gfx950"))
    assert (on942.formats["a"], on942.formats["b"], on942.archs) == ("e4m3fnuz", "e5m2fnuz", ("gfx942",))
    assert (on950.formats["a"], on950.formats["b"], on950.archs) == ("e4m3", "e5m2", ("gfx950",))
    assert layoutsim.get(name).formats == on942.formats                # no arch: the first one
    assert on942.operand("A").fragment.table.tolist() == on950.operand("A").fragment.table.tolist()
    assert layoutsim.get(f"{name} blgp:0", arch="gfx950").formats["b"] == "e5m2"
    # 0x80 is FNUZ's NaN and OCP's -0; 0x7F is OCP E4M3FN's NaN and FNUZ's 240
    from layoutsim.formats import decode
    assert np.isnan(decode("e4m3fnuz", np.uint8(0x80))) and decode("e4m3", np.uint8(0x80)) == 0
    assert decode("e4m3fnuz", np.uint8(0x7F)) == 240 and np.isnan(decode("e4m3", np.uint8(0x7F)))
    # gfx942 keeps MMA-Sim's fp8 model; gfx950 refuses float MFMAs, fp8 included, in one line
    z = np.zeros((16, 32), np.uint8), np.zeros((32, 16), np.uint8), np.zeros((16, 16), np.float32)
    assert (layoutsim.mma(name, *z, arch="gfx942", raw=True) == 0).all()
    with pytest.raises(LayoutsimError, match="no arithmetic model for fp8 MFMA on gfx950"):
        layoutsim.mma(name, *z, arch="gfx950", raw=True)
    with pytest.raises(LayoutsimError, match="on gfx950 the same mnemonic reads A e4m3, B e5m2"):
        layoutsim.mma(on942, *z, arch="gfx950", raw=True)       # gfx942's form is not gfx950's
    assert "gfx942 e4m3fnuz/e5m2fnuz, gfx950 e4m3/e5m2" in layoutsim.lookup(name).summary


def test_every_modelled_form_has_a_plan_that_says_where_it_comes_from():
    seen = set()
    for e in layoutsim.listing(family="mfma"):
        for arch in e.archs:
            inst = e.instruction(arch)                # fp8/bf8: FNUZ on gfx942, OCP on gfx950
            inst_, prof = resolve(inst, arch)
            if inst.formats["a"] in ("s8", "f64"):
                continue
            if arch == "gfx950" or inst.formats["a"] in ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1"):
                with pytest.raises(LayoutsimError):
                    make_plan(inst, prof)
                continue
            plan = make_plan(inst, prof)
            assert plan.kind == "cdna" and "MMA-Sim" in plan.describe() and "MMA-Sim" in prof.label()
            seen.add((arch, cdna.input_kind(inst), plan.model))
    want = {(arch, kind, model) for arch, rows in cdna.MODELS.items() for kind, model, _ in rows}
    assert seen == want


# ---- the kernel against the exact-rational reference ------------------------------------------
FORMS = [(arch, name) for arch, name in (
    ("gfx908", "v_mfma_f32_16x16x16_f16"), ("gfx908", "v_mfma_f32_16x16x8bf16"),
    ("gfx908", "v_mfma_f32_16x16x4_f32"), ("gfx90a", "v_mfma_f32_16x16x16_f16"),
    ("gfx90a", "v_mfma_f32_16x16x16_bf16"), ("gfx90a", "v_mfma_f32_16x16x8bf16"),
    ("gfx942", "v_mfma_f32_16x16x16_f16"), ("gfx942", "v_mfma_f32_16x16x16_bf16"),
    ("gfx942", "v_mfma_f32_16x16x8_xf32"), ("gfx942", "v_mfma_f32_16x16x32_fp8_bf8"),
    ("gfx942", "v_mfma_f32_4x4x4_16b_f16"), ("gfx942", "v_mfma_f32_32x32x1_2b_f32"))]


def _values(rng, fmt, shape, lo, hi):
    """Finite values of fmt: random signs, exponents lo..hi (subnormals below emin), zeros."""
    f = get_format(fmt)
    e = rng.integers(lo, hi + 1, shape)
    v = np.ldexp(1 + rng.integers(0, 1 << f.mbits, shape) / (1 << f.mbits), e)
    v = np.where(rng.random(shape) < 0.5, -v, v) * (rng.random(shape) > 0.08)
    raw = encode(fmt, v)
    return decode(fmt, raw), raw


def test_the_kernel_matches_the_reference_models():
    """Random rows with subnormals, wide exponent spreads and cancelling products (B's column
    repeats in pairs, A's row cancels them), C of every size, on one form per arch and input
    kind: every checked output equal bit for bit."""
    rng = np.random.default_rng(13)
    checked = 0
    for arch, name in FORMS:
        inst, prof = resolve(name, arch)
        plan = make_plan(inst, prof)
        M, N, K = inst.shape
        fa, fb = inst.formats["a"], inst.formats["b"]
        lo_a = get_format(fa).emin - get_format(fa).mbits
        top = min(get_format(fa).emax, 60)          # products stay below 2**120: no overflow
        A, Araw = _values(rng, fa, (3, M, K), lo_a, top)
        B, Braw = _values(rng, fb, (3, K, N), get_format(fb).emin - get_format(fb).mbits,
                          min(get_format(fb).emax, 60))
        # cancellation: in batch 1, B's rows pair up and A's row negates every other element
        if K > 1 and fa == fb:
            B[1, 1::2] = B[1, 0::2]
            A[1, :, 1::2] = -A[1, :, 0::2]
            Braw[1], Araw[1] = encode(fb, B[1]), encode(fa, A[1])
        C = np.ldexp(rng.random((3, M, N)) - 0.5, rng.integers(-140, 40, (3, M, N)))
        Craw = encode("f32", C).astype(np.uint32)
        if name.endswith("_xf32"):
            A, B = (decode("f32", X.astype(np.uint32) & np.uint32(0xFFFFE000)) for X in (Araw, Braw))
        D = layoutsim.mma(inst, Araw, Braw, Craw.view(np.float32), arch=arch, raw=True)
        esa, esb = get_format(fa).emin, get_format(fb).emin
        for i, m, n in zip(rng.integers(0, 3, 20), rng.integers(0, M, 20), rng.integers(0, N, 20)):
            want = R.dot(plan.model, plan.block, list(A[i, m]), list(B[i, :, n]), int(Craw[i, m, n]),
                         esa, esb)
            assert int(D[i, m, n]) == want, (arch, name, i, m, n, hex(int(D[i, m, n])), hex(want))
            checked += 1
    assert checked == 20 * len(FORMS)
