"""layoutsim.mma against the independent reference (numerics_reference.py: exact rationals, its
own decoders, nothing imported from layoutsim), with every parameter stated here with its source.
The reference is itself checked against what the H200 returned (the committed corpora), and it
catches planted mutations of the plan (fp8 k-pair order, block size, alignment, late C).

Sources:
  FASI   Fasi, Higham, Mikaitis & Pranesh, PeerJ Comput. Sci. 7:e330 (2021): fp32 results round
         toward zero (sec. C), fp16 results to nearest; no guard digits on V100 (sec. D1)
  KM     Khattak & Mikaitis, arXiv:2512.07004 (2025), MATLAB-tensor-core models: A100TC.m
         (fma=8, tf32 fma=4, neab=1), AdaTC.m (fp8 fma=16, neab=-10), H100TC.m (fma=16, tf32
         fma=8, neab=2, min_exp_limit=-133), Generic_BFMA_TC.m (fp8 via HMMA: C added at the
         end with RNE)
  MMASIM Xie et al., arXiv:2511.10909 (2025), mmasim 2.1.1 sim.py: L_max bytes per block, F
         bits, e_zero floors (Ampere -132/-20, Hopper -133/-21), Hopper wgmma fp8 F=13 with
         rho = RZ-E8M13, Ada fp8 F=13 RZ-E8M13
  CUTLASS NVIDIA/cutlass #1986 (maintainer, 2025-03-04): e4m3 mma.sync is not native on sm_90;
         the data is converted and the fp16 tensor core used
  H200   measured here: SASS F2FP.F16.E4M3.UNPACK_B + HMMA.16816.F32 for fp8 mma.sync, and the k
         split by pairs (k % 4 in {0, 1} to the first HMMA) with C added last, fitted to
         docs/validation/h200.json and confirmed by the corpora in tests/data/numerics/sm_90
"""
import re
from dataclasses import replace

import numpy as np
import pytest

import layoutsim
from layoutsim.numerics import cases

from numerics_reference import Rules, dot

# (arch) -> the published parameters
ARCH = {
    # KM A100TC.m fma=8, neab=1 (24 bits); tf32 fma=4; MMASIM Ampere e_zero -132 / -20
    "sm_80": dict(block16=8, block_tf32=4, align=24, floor32=-132, floor16=-20),
    # KM AdaTC.m as A100 for f16; fp8 fma=16, neab=-10 (13 bits), MMASIM Ada RZ-E8M13
    "sm_89": dict(block16=8, block_tf32=4, align=24, floor32=-132, floor16=-20,
                  fp8="native", block_fp8=16, align_fp8=13, keep_fp8_f32=13),
    # KM H100TC.m fma=16, tf32 fma=8, neab=2 (25 bits), min_exp_limit=-133; MMASIM Hopper
    # e_zero -133 / -21; wgmma fp8: MMASIM 32 bytes per block, F=13, RZ-E8M13; mma.sync fp8:
    # CUTLASS #1986 + H200 (the fp16 path, pairs, C last)
    "sm_90": dict(block16=16, block_tf32=8, align=25, floor32=-133, floor16=-21,
                  fp8="f16", block_fp8=32, align_fp8=13, keep_fp8_f32=13),
}
FP8 = ("e4m3", "e5m2")
PAIRS = tuple([k for k in range(32) if k % 4 < 2] + [k for k in range(32) if k % 4 >= 2])


def parse(name):
    """(family, M, N, K, a, b, c, d) from a PTX name (short spelling)."""
    family = name.split(".")[0]
    M, N, K = (int(x) for x in re.search(r"\.m(\d+)n(\d+)k(\d+)\.", name).groups())
    types = name.split(".")[-4:] if family == "mma" else name.split(".")[-3:]
    if family == "mma":
        d, a, b, c = types
    else:
        (d, a, b), c = types, types[0]
    return family, M, N, K, a, b, c, d


def rules_for(name, arch):
    """The reference's parameters for an instruction on an arch, from ARCH (sources above)."""
    family, M, N, K, a, b, c, d = parse(name)
    p = ARCH[arch]
    floor = p["floor32"] if d == "f32" else p["floor16"]
    rounding = "rz" if d == "f32" else "rne"           # FASI sec. C; KM; MMASIM
    keep = 23 if d == "f32" else 10
    if a in FP8 and family == "mma" and p["fp8"] == "f16":
        # converted to f16 exactly, the fp16 path: two HMMA k16 steps, k split by pairs, C last
        return Rules(a, b, c, d, block=p["block16"], align=p["align"], floor=floor,
                     rounding=rounding, keep=keep, via_f16=True, k_order=PAIRS, late_c=True)
    if a in FP8:
        return Rules(a, b, c, d, block=min(K, p["block_fp8"]), align=p["align_fp8"], floor=floor,
                     rounding=rounding, keep=p["keep_fp8_f32"] if d == "f32" else keep)
    block = p["block_tf32"] if a == "tf32" else p["block16"]
    return Rules(a, b, c, d, block=min(block, K), align=p["align"], floor=floor, rounding=rounding,
                 keep=keep)


FORMS = [
    ("mma.m16n8k16.f32.f16.f16.f32", "sm_90"),
    ("mma.m16n8k16.f16.f16.f16.f16", "sm_90"),
    ("mma.m16n8k8.f32.bf16.bf16.f32", "sm_90"),
    ("mma.m16n8k16.f32.bf16.bf16.f32", "sm_90"),
    ("mma.m16n8k8.f32.tf32.tf32.f32", "sm_90"),
    ("mma.m16n8k16.f32.f16.f16.f32", "sm_80"),       # two blocks of 8
    ("mma.m16n8k8.f32.tf32.tf32.f32", "sm_80"),      # two blocks of 4
    ("mma.m16n8k32.f32.e4m3.e4m3.f32", "sm_90"),     # fp16 path, pairs, C last
    ("mma.m16n8k32.f16.e5m2.e4m3.f16", "sm_90"),
    ("mma.m16n8k32.f32.e4m3.e5m2.f32", "sm_89"),     # native fp8, E8M13
    ("wgmma.m64n8k32.f32.e4m3.e4m3", "sm_90"),       # native fp8, one block of 32
    ("wgmma.m64n8k32.f16.e5m2.e5m2", "sm_90"),
    ("wgmma.m64n8k16.f32.bf16.bf16", "sm_90"),
]
RAW = {"f16": np.uint16, "bf16": np.uint16, "tf32": np.uint32, "f32": np.uint32, "e4m3": np.uint8,
       "e5m2": np.uint8}


def compare(name, arch, a, b, c, d, rules=None, outputs=None):
    """[(case, i, j, got, want)] where D (raw) differs from the reference, over `outputs`
    (default: every output of every case)."""
    rules = rules or rules_for(name, arch)
    n, M, N = d.shape
    todo = outputs if outputs is not None else [(s, i, j) for s in range(n) for i in range(M) for j in range(N)]
    bad = []
    for s, i, j in todo:
        want = dot(a[s, i], b[s, :, j], int(c[s, i, j]), rules)
        if int(d[s, i, j]) != want:
            bad.append((s, i, j, hex(int(d[s, i, j])), hex(want)))
    return bad


def operands(name, arch, rng, n):
    """Random raw bits, most of them finite (the top exponent bit of every other A clear), and
    the case generator's discriminating cases (inputs only: expected values are the reference's)."""
    _, M, N, K, fa, fb, fc, _ = parse(name)
    draw = lambda f, shape: rng.integers(0, np.iinfo(RAW[f]).max + 1, shape, dtype=np.uint64).astype(RAW[f])  # noqa: E731
    a, b, c = draw(fa, (n, M, K)), draw(fb, (n, K, N)), draw(fc, (n, M, N))
    a[..., ::2] &= np.array({1: 0x3F, 2: 0x3FFF, 4: 0x3FFFFFFF}[a.itemsize], a.dtype)
    ga, gb, gc = cases.generate(name, 12, seed=3, arch=arch)
    return np.concatenate([a, ga[:n]]), np.concatenate([b, gb[:n]]), np.concatenate([c, gc[:n]])


def sample(n, M, N, rng, per_case):
    return [(s, int(i), int(j)) for s in range(n)
            for i, j in zip(rng.integers(0, M, per_case), rng.integers(0, N, per_case))]


@pytest.mark.parametrize("name,arch", FORMS)
def test_model_equals_the_independent_reference(name, arch):
    rng = np.random.default_rng(11)
    a, b, c = operands(name, arch, rng, 3)
    d = layoutsim.mma(name, a, b, c, arch=arch, raw=True)
    _, M, N, *_ = parse(name)
    outputs = None if M == 16 else sample(len(a), M, N, rng, 96)
    bad = compare(name, arch, a, b, c, d, outputs=outputs)
    assert not bad, f"{name} {arch}: {len(bad)} differ (case, i, j, model, reference): {bad[:5]}"


# The reference against the hardware: a sample of every committed float corpus of these forms.
MEASURED = sorted({n for n, arch in FORMS if arch == "sm_90"} | {
    "mma.m16n8k32.f16.e4m3.e4m3.f16", "mma.m16n8k8.f16.f16.f16.f16", "wgmma.m64n8k16.f16.f16.f16",
    "wgmma.m64n8k8.f32.tf32.tf32"})


@pytest.mark.parametrize("name", MEASURED)
def test_the_reference_reproduces_the_h200(name):
    from layoutsim.numerics import corpus
    from pathlib import Path
    path = corpus.path_for(name, "sm_90", root=Path(__file__).resolve().parents[1] / "data" / "numerics")
    assert path.exists(), f"{path} is missing: the H200 corpus this test replays"
    z = corpus.load(path)
    rng = np.random.default_rng(5)
    _, M, N, *_ = parse(name)
    cases_ = sorted(rng.choice(z.n, 12, replace=False))
    outputs = [(int(s), int(i), int(j)) for s in cases_
               for i, j in zip(rng.integers(0, M, 24), rng.integers(0, N, 24))]
    bad = compare(name, "sm_90", z.a, z.b, z.c, z.d, outputs=outputs)
    assert not bad, f"{name}: the reference differs from the H200 on {len(bad)}: {bad[:5]}"


# Planted mutations of the plan the model runs: each must make the model differ from the
# reference (the old reference read the plan from layoutsim and "confirmed" a changed order).
def _mutated(monkeypatch, **change):
    from layoutsim.numerics import api
    real = api.make_plan
    monkeypatch.setattr(api, "make_plan", lambda inst, prof: replace(real(inst, prof), **change))


HALVES = tuple(range(32))
MUTATIONS = [
    ("mma.m16n8k32.f32.e4m3.e4m3.f32", "sm_90", dict(k_order=HALVES)),       # k 0-15, then 16-31
    ("mma.m16n8k32.f32.e4m3.e4m3.f32", "sm_90",
     dict(k_order=tuple([k for k in range(32) if k % 4 in (0, 2)] + [k for k in range(32) if k % 4 in (1, 3)]))),
    ("mma.m16n8k32.f32.e4m3.e4m3.f32", "sm_90", dict(late_c=False)),         # C in the first HMMA
    ("mma.m16n8k16.f32.f16.f16.f32", "sm_90", dict(block=8)),                # blocks of 8
    ("mma.m16n8k16.f32.f16.f16.f32", "sm_90", dict(align_bits=24)),          # one bit fewer
    ("mma.m16n8k16.f32.bf16.bf16.f32", "sm_90", dict(floor=-132)),
    ("mma.m16n8k8.f32.tf32.tf32.f32", "sm_90", dict(block=4)),
    ("wgmma.m64n8k32.f32.e4m3.e4m3", "sm_90", dict(block=16)),
    ("wgmma.m64n8k32.f32.e4m3.e4m3", "sm_90", dict(keep_bits=23)),           # E8M23, not E8M13
]


@pytest.mark.parametrize("name,arch,change", MUTATIONS, ids=lambda x: str(x)[:40])
def test_a_planted_plan_mutation_is_caught(monkeypatch, name, arch, change):
    rng = np.random.default_rng(11)
    a, b, c = operands(name, arch, rng, 3)
    _, M, N, *_ = parse(name)
    outputs = sample(len(a), M, N, rng, 64)
    if "floor" in change:
        # The floor matters only for tiny sums: 2^-70 * 2^-70 - 2^-79 * 2^-79 = 2^-140 - 2^-158.
        # With emax floored at -133 the grid is 2^-158 and the second product survives (RZ:
        # 2^-140 - 2^-149); floored at -132 it is truncated away (2^-140).
        a[0, 0, :] = 0
        b[0, :, 0] = 0
        c[0, 0, 0] = 0
        a[0, 0, 0], a[0, 0, 1] = 0x1C80, 0x9800         # bf16 2^-70 (exponent 57), -2^-79 (48)
        b[0, 0, 0], b[0, 1, 0] = 0x1C80, 0x1800
        outputs = [(0, 0, 0)] + outputs
    assert not compare(name, arch, a, b, c, layoutsim.mma(name, a, b, c, arch=arch, raw=True),
                       outputs=outputs)
    _mutated(monkeypatch, **change)
    assert compare(name, arch, a, b, c, layoutsim.mma(name, a, b, c, arch=arch, raw=True),
                   outputs=outputs), f"{change} went unnoticed"
