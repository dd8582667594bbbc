"""The numba kernel against the independent Fraction reference, on random raw bits and on
the generator's discriminating cases, for every float path (f16/bf16/tf32/fp8, fp32 and fp16
results, multi-block chains, the fp16 path of fp8 on sm_90, the native fp8 path)."""
import numpy as np
import pytest

import layoutsim
from layoutsim.formats import get_format, raw_dtype
from layoutsim.numerics import cases
from layoutsim.numerics.api import _fp8_to_f16, _tf32, resolve
from layoutsim.numerics.plan import make_plan

from numerics_reference import dot

FORMS = [
    ("mma.m16n8k16.f32.f16.f16.f32", "sm_90"),
    ("mma.m16n8k16.f16.f16.f16.f16", "sm_90"),
    ("mma.m16n8k8.f16.f16.f16.f16", "sm_90"),
    ("mma.m16n8k16.f32.bf16.bf16.f32", "sm_90"),
    ("mma.m16n8k8.f32.tf32.tf32.f32", "sm_90"),
    ("mma.m16n8k16.f32.f16.f16.f32", "sm_80"),      # two blocks of 8
    ("mma.m16n8k16.f16.f16.f16.f16", "sm_80"),
    ("mma.m16n8k8.f32.tf32.tf32.f32", "sm_80"),     # two blocks of 4
    ("mma.m16n8k32.f32.e4m3.e5m2.f32", "sm_90"),    # fp16 path, two blocks of 16
    ("mma.m16n8k32.f16.e5m2.e5m2.f16", "sm_90"),
    ("mma.m16n8k32.f32.e4m3.e4m3.f32", "sm_89"),    # native fp8, E8M13
    ("wgmma.m64n8k32.f16.e4m3.e4m3", "sm_90"),
]


def _arith(plan, fmt, arith, raw):
    if fmt != arith:
        return _fp8_to_f16(fmt, raw)
    if fmt == "tf32":
        return (_tf32(raw, plan.profile.tf32_inputs).astype(np.uint32) << np.uint32(13))
    return raw


def _check(name, arch, a, b, c, limit=None):
    inst, prof = resolve(name, arch)
    plan = make_plan(inst, prof)
    d = layoutsim.mma(inst, a, b, c, arch=arch, raw=True)
    A = _arith(plan, plan.a, plan.arith_a, a)
    B = _arith(plan, plan.b, plan.arith_b, b)
    M, N, K = plan.shape
    bad = []
    count = 0
    for n in range(len(a)):
        for i in range(M):
            for j in range(N):
                want = dot(A[n, i], B[n, :, j], int(c[n, i, j]), plan)
                if int(d[n, i, j]) != want:
                    bad.append((n, i, j, hex(int(d[n, i, j])), hex(want)))
                count += 1
                if limit and count >= limit:
                    break
    assert not bad, f"{name} {arch}: {len(bad)} differ, first {bad[:5]}"


def _raw(fmt, shape, rng):
    return rng.integers(0, 1 << get_format(fmt).bits, shape, dtype=np.uint64).astype(raw_dtype(fmt))


@pytest.mark.parametrize("name,arch", FORMS)
def test_random_raw_bits(name, arch):
    inst = layoutsim.get(name, arch=arch)
    M, N, K = inst.shape
    f = inst.formats
    rng = np.random.default_rng(7)
    n = 2 if M > 16 else 3
    a, b = _raw(f["a"], (n, M, K), rng), _raw(f["b"], (n, K, N), rng)
    c = _raw(f.get("c", f["d"]), (n, M, N), rng)
    # keep most inputs finite so the arithmetic, not the NaN rule, is what gets compared
    a[..., ::2] &= np.array(0x3FFF if a.itemsize == 2 else 0x3F if a.itemsize == 1 else 0x3FFFFFFF, a.dtype)
    _check(name, arch, a, b, c)


@pytest.mark.parametrize("name,arch", FORMS)
def test_discriminating_cases(name, arch):
    a, b, c = cases.generate(name, 40, seed=3, arch=arch)
    k = 6 if "wgmma" in name else 12
    _check(name, arch, a[:k], b[:k], c[:k])
