"""The case generator: shapes, dtypes, determinism, and that it separates the candidates."""
import numpy as np
import pytest

from layoutsim.numerics import cases


@pytest.mark.parametrize("name,dtypes,shape", [
    ("mma.m16n8k16.f32.f16.f16.f32", ("uint16", "uint16", "uint32"), (16, 8, 16)),
    ("mma.m16n8k8.f32.tf32.tf32.f32", ("uint32", "uint32", "uint32"), (16, 8, 8)),
    ("mma.m16n8k32.f16.e4m3.e5m2.f16", ("uint8", "uint8", "uint16"), (16, 8, 32)),
    ("mma.m16n8k64.satfinite.s32.s4.u4.s32", ("uint8", "uint8", "uint32"), (16, 8, 64)),
    ("mma.m8n8k4.f64.f64.f64.f64", ("uint64", "uint64", "uint64"), (8, 8, 4)),
])
def test_shapes_dtypes_and_determinism(name, dtypes, shape):
    M, N, K = shape
    a, b, c = cases.generate(name, 50, seed=11)
    assert (a.shape, b.shape, c.shape) == ((50, M, K), (50, K, N), (50, M, N))
    assert (str(a.dtype), str(b.dtype), str(c.dtype)) == dtypes
    if "s4" in name:
        assert a.max() <= 15 and b.max() <= 15
    a2, b2, c2 = cases.generate(name, 50, seed=11)
    assert np.array_equal(a, a2) and np.array_equal(b, b2) and np.array_equal(c, c2)
    a3, _, _ = cases.generate(name, 50, seed=12)
    assert not np.array_equal(a, a3)


def test_labels_split_the_two_parts():
    a, b, c, lab = cases.generate("mma.m16n8k16.f32.bf16.bf16.f32", 200, 5, return_labels=True)
    assert len(lab) == 200
    assert [x["part"] for x in lab[:40]] == ["discriminating"] * 40
    assert {x["recipe"] for x in lab[40:]} == set(cases.RANDOM_FLOAT)


def test_bf16_candidates_are_separated():
    cov = cases.coverage("mma.m16n8k16.f32.bf16.bf16.f32", 600, 5)
    for label in ("block_16bit=8", "extra_bits=1", "extra_bits=3", "fp32_rounding=rne",
                  "emax_floor_f32=None", "emax_floor_f32=-126", "c_zero=emin",
                  "product_exponent=normalized", "subnormal_inputs=flush", "overflow=ieee",
                  "nan_f32=0x7fc00000"):
        assert cov[label] >= 3, (label, cov[label])


def test_fp8_on_hopper_candidates_are_separated():
    cov = cases.coverage("mma.m16n8k32.f32.e4m3.e4m3.f32", 120, 2)
    for label in ("fp8_mma_sync=native", "fp8_f16_split=halves", "fp8_f16_c=first", "block_16bit=32"):
        assert cov[label] >= 3, (label, cov[label])


def test_integer_saturation_candidate_is_separated():
    cov = cases.coverage("mma.m16n8k32.satfinite.s32.s8.s8.s32", 60, 1)
    assert cov["int_saturation=each_product"] >= 3
