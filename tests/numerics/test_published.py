"""Hand-derived cases from the behaviours the papers describe. Each expected value is worked
out in the comment beside it from the cited description; no tolerance anywhere.

FASI   Fasi, Higham, Mikaitis & Pranesh, PeerJ Comput. Sci. 7:e330 (2021) (V100/T4/A100).
KM     Khattak & Mikaitis, arXiv:2512.07004 (2025), models/*.m in MATLAB-tensor-core.
MMASIM Xie et al., arXiv:2511.10909 (2025), mmasim 2.1.1.
"""
import numpy as np
import pytest

import layoutsim
from layoutsim.formats import encode
from layoutsim.numerics.profiles import PROFILES

F16 = "mma.m16n8k16.f32.f16.f16.f32"


def one_dot(name, avec, bvec, c=0.0, arch="sm_90", profile=None, a_raw=None, b_raw=None,
            c_raw=None):
    """Raw D[0, 0] of one instruction whose row 0 of A, column 0 of B and C[0, 0] are given."""
    inst = layoutsim.get(name, arch=arch)
    M, N, K = inst.shape
    f = inst.formats
    fc = f.get("c", f["d"])
    av = np.zeros((M, K))
    bv = np.zeros((K, N))
    av[0, :len(avec)] = avec
    bv[:len(bvec), 0] = bvec
    cv = np.zeros((M, N))
    cv[0, 0] = c
    a, b, cc = encode(f["a"], av), encode(f["b"], bv), encode(fc, cv)
    for raw, arr in ((a_raw, a), (b_raw, b)):
        for k, bits in (raw or {}).items():
            if arr is a:
                arr[0, k] = bits
            else:
                arr[k, 0] = bits
    if c_raw is not None:
        cc[0, 0] = c_raw
    d = layoutsim.mma(inst, a, b, cc, arch=arch, profile=profile, raw=True)
    return int(d[0, 0])


def f32(x):
    return int(np.float32(x).view(np.uint32))


ONE = 0x3F800000
ONE_MINUS_ULP = 0x3F7FFFFF          # 1 - 2**-24


# ---------------------------------------------------------------- products are exact (FASI B)
def test_products_are_exact():
    # (1 + 2**-10)**2 = 1 + 2**-9 + 2**-20: needs 21 bits, an fp32 holds it exactly
    x = 1 + 2.0 ** -10
    assert one_dot(F16, [x], [x]) == f32(1 + 2.0 ** -9 + 2.0 ** -20)


# ---------------------------------------------------------------- alignment bits (FASI D1, KM)
@pytest.mark.parametrize("arch,expected", [
    ("sm_70", ONE),            # V100: no guard digits (FASI D1; KM V100TC.m neab=0): -2**-25 and
    ("sm_80", ONE),            # A100: 1 extra bit (KM A100TC.m neab=1): 2**-25 is below 24 bits
    ("sm_90", ONE_MINUS_ULP),  # H100: 2 extra bits (KM H100TC.m neab=2): 1 - 2**-25 kept, RZ
])
def test_extra_alignment_bits(arch, expected):
    # products +1 and -2**-25: the small one survives alignment only with 25 bits below the top
    prof = PROFILES[arch]
    got = one_dot(F16, [1.0, -2.0 ** -13], [1.0, 2.0 ** -12], arch="sm_90", profile=prof)
    assert got == expected


def test_no_guard_digit_on_v100():
    # FASI D1 with the smallest case: 1 - 2**-24 exactly representable, but V100 keeps only
    # 23 bits below the largest exponent, so -2**-24 is truncated to 0
    got = one_dot(F16, [1.0, -2.0 ** -12], [1.0, 2.0 ** -12], profile=PROFILES["sm_70"])
    assert got == ONE
    assert one_dot(F16, [1.0, -2.0 ** -12], [1.0, 2.0 ** -12]) == ONE_MINUS_ULP   # H100


# ---------------------------------------------------------------- rounding (FASI C, KM, MMASIM)
def test_fp32_result_rounds_toward_zero():
    # 1 + 2**-24 + 2**-25 is above the midpoint between 1 and 1 + 2**-23: RZ gives 1,
    # round-to-nearest would give 1 + 2**-23
    got = one_dot(F16, [1.0, 2.0 ** -12, 2.0 ** -13], [1.0, 2.0 ** -12, 2.0 ** -12])
    assert got == ONE
    # and for a negative sum toward zero too (FASI: round-up for negative values)
    got = one_dot(F16, [-1.0, -2.0 ** -12, -2.0 ** -13], [1.0, 2.0 ** -12, 2.0 ** -12])
    assert got == f32(-1.0)


def test_fp16_result_rounds_to_nearest_even():
    name = "mma.m16n8k16.f16.f16.f16.f16"
    # 1 + 2**-11 is the midpoint of 1 and 1 + 2**-10: ties to even -> 1.0 (0x3C00)
    assert one_dot(name, [1.0, 2.0 ** -11], [1.0, 1.0]) == 0x3C00
    # 1 + 2**-10 + 2**-11: midpoint, odd below -> rounds up to 1 + 2**-9 (0x3C02)
    assert one_dot(name, [1.0, 2.0 ** -10, 2.0 ** -11], [1.0, 1.0, 1.0]) == 0x3C02
    # 1 + 2**-11 + 2**-20: above the midpoint -> 1 + 2**-10 (0x3C01)
    assert one_dot(name, [1.0, 2.0 ** -11, 2.0 ** -10], [1.0, 1.0, 2.0 ** -10]) == 0x3C01


# ---------------------------------------------------------------- block size (FASI, KM, MMASIM)
@pytest.mark.parametrize("arch,expected", [
    ("sm_70", f32(2.0 ** -30)),   # blocks of 4: {+1, -1, 0, 0} -> 0, then the tiny term alone
    ("sm_80", f32(2.0 ** -30)),   # blocks of 8: the same split
    ("sm_90", 0),                 # one block of 16: the tiny term is aligned to 1 and truncated
])
def test_products_per_block(arch, expected):
    a = [1.0, -1.0] + [0.0] * 6 + [2.0 ** -15]
    b = [1.0, 1.0] + [0.0] * 6 + [2.0 ** -15]
    assert one_dot(F16, a, b, profile=PROFILES[arch]) == expected


def test_tf32_block_of_8_on_hopper():
    name = "mma.m16n8k8.f32.tf32.tf32.f32"
    a = [1.0, -1.0, 0, 0, 2.0 ** -30]
    b = [1.0, 1.0, 0, 0, 1.0]
    assert one_dot(name, a, b) == 0                              # KM H100TC.m fma=8 for tf32
    assert one_dot(name, a, b, profile=PROFILES["sm_80"]) == f32(2.0 ** -30)   # A100: 4


def test_c_is_the_next_blocks_accumulator():
    # A100, f16 -> f16, K = 16: block 1 rounds 1 + 2**-11 to 1.0 (tie, even); block 2 adds
    # 2**-11 to that 1.0 -> tie again -> 1.0. One exact sum would give 1 + 2**-10.
    name = "mma.m16n8k16.f16.f16.f16.f16"
    a = [1.0, 2.0 ** -11] + [0.0] * 6 + [2.0 ** -11]
    b = [1.0, 1.0] + [0.0] * 6 + [1.0]
    assert one_dot(name, a, b, arch="sm_80") == 0x3C00
    assert one_dot(name, a, b, arch="sm_90") == 0x3C01      # one block of 16 on Hopper


# ---------------------------------------------------------------- exponent floor (KM, MMASIM)
def test_largest_exponent_clamped_at_minus_133():
    # bf16, C = 0: products 2**-140 and -2**-159. Floor -133 (KM H100TC.m min_exp_limit,
    # MMASIM e_zero): grid 2**-158, the -2**-159 term is truncated -> exactly 2**-140
    # (fp32 subnormal 0x200). Without the floor: 2**-140 - 2**-159, RZ to the subnormal grid
    # 2**-149 -> 2**-140 - 2**-149 (0x1FF). This is where the corpus decides (issue 4: MMA-Sim
    # is reported wrong for tiny bf16 products with C = 0).
    name = "mma.m16n8k16.f32.bf16.bf16.f32"
    a, b = [2.0 ** -70, -2.0 ** -80], [2.0 ** -70, 2.0 ** -79]
    assert one_dot(name, a, b) == 0x200
    assert one_dot(name, a, b, profile=PROFILES["sm_90"].with_(emax_floor_f32=None)) == 0x1FF


def test_c_takes_part_only_when_nonzero():
    # same products with C = +0 and C = -0: identical (C = 0 takes no part); the candidate
    # "C = 0 sits at emin = -126" would truncate at 2**-151 instead and keep -2**-159 out too
    name = "mma.m16n8k16.f32.bf16.bf16.f32"
    a, b = [2.0 ** -70, -2.0 ** -80], [2.0 ** -70, 2.0 ** -79]
    assert one_dot(name, a, b, c=0.0) == one_dot(name, a, b, c=-0.0) == 0x200
    # a nonzero C aligns: C = 2**-126 (smallest normal) puts the grid at 2**-151
    got = one_dot(name, [2.0 ** -70, -2.0 ** -75], [2.0 ** -70, 2.0 ** -77], c=2.0 ** -126)
    assert got == f32(2.0 ** -126 + 2.0 ** -140)          # -2**-152 truncated away


def test_fp16_result_floor_minus_21():
    # MMASIM e_zero Hopper fp16 = -21: f16 products 1.25 * 2**-23 (a tie between the f16
    # subnormals 2 and 3 * 2**-24) and +2**-47, C = 0. Floor -21 -> grid 2**-46 drops 2**-47
    # -> tie -> even -> 0x0002. No floor -> just above the tie -> 0x0003.
    name = "mma.m16n8k16.f16.f16.f16.f16"
    a, b = [1.25 * 2.0 ** -12, 2.0 ** -24], [2.0 ** -11, 2.0 ** -23]
    assert one_dot(name, a, b) == 0x0002
    assert one_dot(name, a, b, profile=PROFILES["sm_90"].with_(emax_floor_f16=None)) == 0x0003


# ---------------------------------------------------------------- tf32 inputs (MMASIM, KM)
def test_tf32_inputs_drop_low_13_bits():
    name = "mma.m16n8k8.f32.tf32.tf32.f32"
    x = f32(1 + 2.0 ** -11 + 2.0 ** -12)   # fp32 bits below tf32's 10 fraction bits
    assert one_dot(name, [0.0], [1.0], a_raw={0: x}) == ONE
    rne = PROFILES["sm_90"].with_(tf32_inputs="round")
    assert one_dot(name, [0.0], [1.0], a_raw={0: x}, profile=rne) == f32(1 + 2.0 ** -10)


# ---------------------------------------------------------------- fp8 paths
def test_fp8_mma_sync_on_sm90_runs_the_fp16_path():
    # CUTLASS #1986: e4m3 mma.sync on sm_90 is converted to f16 and run on HMMA (25 bits
    # below the top). 1 + 2**-14 survives; the native fp8 path (E8M13, MMASIM wgmma) drops it.
    name = "mma.m16n8k32.f32.e4m3.e4m3.f32"
    a, b = [1.0, 2.0 ** -7], [1.0, 2.0 ** -7]
    assert one_dot(name, a, b) == f32(1 + 2.0 ** -14)
    assert one_dot(name, a, b, arch="sm_89") == ONE          # Ada: native, 13 bits
    assert one_dot("wgmma.m64n8k32.f32.e4m3.e4m3", a, b) == ONE


def test_fp8_fp16_path_pairs_and_late_c():
    # sm_90 (fitted to the H200 report, test_h200_reported.py): the first HMMA takes k%4 in
    # {0,1}, the second k%4 in {2,3}; C is added last, rounded to nearest.
    name = "mma.m16n8k32.f32.e4m3.e4m3.f32"
    a = [256.0, -256.0] + [0.0] * 14 + [2.0 ** -9]
    b = [256.0, 256.0] + [0.0] * 14 + [2.0 ** -9]
    # k = 0, 1 and 16 share the first HMMA: aligned to 2**16 with 25 bits, 2**-18 is below the
    # grid (2**-9) and truncated -> 0
    assert one_dot(name, a, b) == 0
    # the "halves" candidate: {0..15} cancels, {16..31} holds 2**-18 alone -> exact
    halves = PROFILES["sm_90"].with_(fp8_f16_split="halves")
    assert one_dot(name, a, b, profile=halves) == f32(2.0 ** -18)
    # late C: products 64 + 2**-18 (RZ in the HMMA: 64, the 2**-18 is half an ulp), then
    # + C = 2**-18 with RNE: a tie -> even -> 64. With C in the HMMA: 64 + 2**-17, exact.
    a = [8.0, 2.0 ** -9] + [0.0] * 14
    b = [8.0, 2.0 ** -9] + [0.0] * 14
    assert one_dot(name, a, b, c=2.0 ** -18) == f32(64.0)
    first = PROFILES["sm_90"].with_(fp8_f16_c="first")
    assert one_dot(name, a, b, c=2.0 ** -18, profile=first) == f32(64 + 2.0 ** -17)


# ---------------------------------------------------------------- specials
@pytest.mark.parametrize("name,nan", [(F16, 0x7FFFFFFF), ("mma.m16n8k16.f16.f16.f16.f16", 0x7FFF)])
def test_nan_in_gives_canonical_nan(name, nan):
    assert one_dot(name, [1.0, np.nan], [1.0, 1.0]) == nan
    assert one_dot(name, [1.0], [1.0], a_raw={3: 0xFC01}) == nan        # negative signalling NaN
    assert one_dot(name, [1.0], [1.0], c=np.nan) == nan


def test_infinities():
    assert one_dot(F16, [np.inf, -np.inf], [1.0, 1.0]) == 0x7FFFFFFF     # +Inf meets -Inf
    assert one_dot(F16, [np.inf], [0.0]) == 0x7FFFFFFF                   # Inf * 0
    assert one_dot(F16, [np.inf, 1.0], [1.0, 1.0], c=5.0) == 0x7F800000
    assert one_dot(F16, [-np.inf], [2.0]) == 0xFF800000
    assert one_dot(F16, [np.inf], [1.0], c=-np.inf) == 0x7FFFFFFF


def test_zero_result_is_positive():
    assert one_dot(F16, [1.0, -1.0], [1.0, 1.0], c=-0.0) == 0
    assert one_dot(F16, [-0.0], [1.0], c=-0.0) == 0
    assert one_dot("mma.m16n8k16.f16.f16.f16.f16", [-0.0, 2.0], [1.0, -0.0], c=-0.0) == 0


def test_overflow_gives_inf_even_rounding_toward_zero():
    # KM model_validation/ExceptionalCasesTest.m test 1: C = 2**127, a*b = 2**127 -> +Inf
    name = "mma.m16n8k16.f32.bf16.bf16.f32"
    assert one_dot(name, [2.0 ** 127], [1.0], c=2.0 ** 127) == 0x7F800000
    assert one_dot(name, [-2.0 ** 127], [1.0], c=-2.0 ** 127) == 0xFF800000
    ieee = PROFILES["sm_90"].with_(overflow="ieee")
    assert one_dot(name, [2.0 ** 127], [1.0], c=2.0 ** 127, profile=ieee) == 0x7F7FFFFF


def test_fp16_result_overflow():
    name = "mma.m16n8k16.f16.f16.f16.f16"
    assert one_dot(name, [65504.0, 16.0], [1.0, 1.0]) == 0x7C00           # 65520 rounds up: Inf
    assert one_dot(name, [65504.0, 15.0], [1.0, 1.0]) == 0x7BFF           # 65519 rounds down


def test_subnormal_inputs_are_kept():
    # FASI A: f16 subnormal inputs enter the products unchanged: 2**-24 * 2**10 = 2**-14
    assert one_dot(F16, [2.0 ** -24], [2.0 ** 10]) == f32(2.0 ** -14)
    assert one_dot(F16, [2.0 ** -24], [2.0 ** -24]) == f32(2.0 ** -48)


# ---------------------------------------------------------------- f64 (MMASIM fma.py)
def test_f64_is_an_fma_chain_in_k_order():
    # fma(1,1,0)=1; fma(2**-53,1,1) = 1 + 2**-53 -> tie -> 1; again 1; fma(-1,1,1) = 0.
    # The reversed chain gives 2**-52 and one exact sum gives 2**-52.
    name = "mma.m8n8k4.f64.f64.f64.f64"
    a = np.zeros((8, 4))
    b = np.zeros((4, 8))
    a[0] = [1.0, 2.0 ** -53, 2.0 ** -53, -1.0]
    b[:, 0] = 1.0
    d = layoutsim.mma(name, a, b, np.zeros((8, 8)))
    assert d[0, 0] == 0.0
    rev = PROFILES["sm_90"].with_(f64="fma_chain_reversed")
    assert layoutsim.mma(name, a, b, np.zeros((8, 8)), profile=rev)[0, 0] == 2.0 ** -52
    # fused: fma(3, 1/3-ish, -1) keeps the product exactly
    x = 1.0 + 2.0 ** -30
    a[0] = [x, 0, 0, 0]
    b[:, 0] = [x, 0, 0, 0]
    c = np.zeros((8, 8))
    c[0, 0] = -1.0
    assert layoutsim.mma(name, a, b, c)[0, 0] == 2.0 ** -29 + 2.0 ** -60


def test_f64_nan_rule_measured_on_the_h200():
    # Inf * 0 -> 0xFFF8000000000000; a NaN input comes back with its payload and sign, quieted
    name = "mma.m8n8k4.f64.f64.f64.f64"
    a = np.zeros((8, 4))
    a[0, 0] = np.inf
    a[1, 0] = np.uint64(0xFFF35C65B8572B31).view(np.float64)        # sNaN from the H200 run
    c = np.zeros((8, 8))
    c[2, 0] = np.uint64(0x7FFD91131456B491).view(np.float64)        # NaN C from the H200 run
    b = np.zeros((4, 8))                                            # Inf * 0 in row 0
    d = layoutsim.mma(name, a, b, c, raw=True)
    assert int(d[0, 0]) == 0xFFF8000000000000
    assert int(d[1, 0]) == 0xFFFB5C65B8572B31
    assert int(d[2, 0]) == 0x7FFD91131456B491
