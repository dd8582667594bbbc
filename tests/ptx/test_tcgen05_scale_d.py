"""tcgen05.mma's scale-input-d in the executor: D = A*B + D * (2 ^ -scale-input-d), an immediate in [0, 15]
for .kind::tf32 and .kind::f16 only (PTX ISA 9.x 9.7.16.10.9.1 'tcgen05.mma'). Hand-written PTX (each
kernel assembles with `ptxas -arch=sm_100a`, test_the_kernels_assemble_for_sm_100a): two MMAs on the
same TMEM accumulator, the first with enable-input-d false, the second true with scale-input-d s.

Expected values: the first MMA is layoutsim.mma's D1 (as test_ptx_tcgen05.py checks it); the second is
MMA-Sim's dense MMA of A, B and C = D1 * 2^-s (the scaling done here in float64, exact for these
values), which is what the assumption of layoutsim/numerics/scale_d.py (the scaling is exact) makes of
it: MMA-Sim itself has no scale-input-d. A scaled D that would lose bits is refused (a fault), and a
scale-input-d the ISA does not allow is refused in one line naming the PTX line."""
import shutil

import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.formats import decode, encode
from layoutsim.isa.ptx_tcgen05_idesc import encode as idesc_of
from layoutsim.ptx.state import PtxFault
from layoutsim.smem.umma import UmmaDescriptor

from blackwell_oracle import HAVE_MMASIM, oracle as mmasim_oracle
from test_ptx_tcgen05 import k_major, mma_kernel, operand, ptxas_sm100a, rules_kernel, SM

SECOND = " %p2;\n"               # the end of mma_kernel's second MMA (enable-input-d true)



def scaled_kernel(kind, N, s, mask=None):
    src = mma_kernel(N, 16384, extra_mma=True, mask=mask).replace("KIND", kind)
    assert src.count(SECOND) == 1
    return src.replace(SECOND, f" %p2, {s};\n")


def image(A, B):
    """The shared image: A (M x K) at 0, B (N x K) at 8192, both K-major no-swizzle; the descriptors."""
    img = np.zeros(16384, np.uint8)
    descs = []
    for x, base in ((A, 0), (B, 8192)):
        e = x.dtype.itemsize
        mn, K = x.shape
        lbo, sbo = 128, 128 * (K * e // 16)
        off = k_major(mn, K, e, lbo, sbo)
        img[(base + off)[..., None] + np.arange(e)] = x.view(np.uint8).reshape(mn, K, e)
        descs.append(UmmaDescriptor(SM + base, lbo, sbo).encode())
    return img, descs


def run(kind, types, M, N, s, A, B, mask=None):
    img, (da, db) = image(A, B)
    out = np.zeros((128, N), np.uint32)
    return ptx.run(scaled_kernel(kind, N, s, mask), "k", 1, 128,
                   [img, out, np.uint64(da), np.uint64(db), np.uint32(idesc_of(kind, M, N, types))],
                   arch="sm_100", shared_bytes=0, record_mmas=True)


CASES = [  # kind, types, M, N, scale-input-d, MMA-Sim label (tests/numerics/mmasim_oracle.KINDS)
    ("f16", "f32.f16.f16", 128, 32, 1, "f16"),
    ("f16", "f32.bf16.bf16", 128, 16, 15, "bf16"),
    ("f16", "f16.f16.f16", 128, 16, 4, "f16->f16"),
    ("tf32", "f32.tf32.tf32", 128, 16, 9, "tf32"),
    ("f16", "f32.f16.f16", 64, 16, 0, "f16"),
]


@pytest.mark.parametrize("kind,types,M,N,s,label", CASES)
def test_the_second_mma_adds_d_times_2_to_the_minus_s(kind, types, M, N, s, label):
    d, fa, fb = types.split(".")
    K = {"f16": 16, "tf32": 8}[kind]
    inst = layoutsim.get(f"tcgen05.mma.cta_group::1.kind::{kind}.m{M}n{N}k{K}")
    rng = np.random.default_rng(17 * M + N + s)
    A, B = operand(rng, fa, (M, K)), operand(rng, fb, (N, K))
    e = A.dtype.itemsize
    a, b = A.view(f"u{e}"), np.ascontiguousarray(B.view(f"u{e}").T)
    r = run(kind, types, M, N, s, a, np.ascontiguousarray(b.T))
    first, second = r.mmas
    assert (first.scale_d, second.scale_d) == (0, s)
    sources = {d["source"] for d in r.fidelity["documented_instructions"] if d["instruction"].startswith("tcgen05.mma")}
    assert any("scale-input-d" in x and "assumed" in x for x in sources)     # the second MMA's assumption named
    assert any("scale-input-d" not in x for x in sources)                    # the first has none
    zero = np.zeros((M, N), np.uint16 if d == "f16" else np.uint32)
    D1 = layoutsim.mma(inst, a, b, zero, arch="sm_100a", raw=True, types=types)
    assert np.array_equal(first.d, D1.astype(np.uint32)) and np.array_equal(second.c, D1)
    lanes = np.arange(M) if M == 128 else 32 * (np.arange(M) // 16) + np.arange(M) % 16     # Layout D / F
    got = r.buffers[1][lanes] & (0xFFFF if d == "f16" else 0xFFFFFFFF)
    assert np.array_equal(got, second.d)
    C = encode(d, np.ldexp(decode(d, D1), -s)).astype(D1.dtype)             # D1 * 2^-s ...
    assert np.array_equal(decode(d, C), np.ldexp(decode(d, D1), -s))        # ... exact for these values
    assert np.array_equal(got, layoutsim.mma(inst, a, b, C, arch="sm_100a", raw=True, types=types))
    if s:                                   # the scale changed the bits (so the test could fail)
        assert not np.array_equal(got, layoutsim.mma(inst, a, b, D1, arch="sm_100a", raw=True, types=types))
    oracle = mmasim_oracle() if HAVE_MMASIM else None
    if oracle is not None:                  # MMA-Sim's dense MMA of the pre-scaled C, bit for bit
        ref = oracle.mmasim_d(label, a[None], b[None], C[None])[0]
        assert np.array_equal(got.astype(ref.dtype), ref)
        assert all(v["differ"] == 0 for v in oracle.compare_records(r.mmas).values())


def test_a_scaled_d_that_would_lose_bits_is_a_fault():
    # f16 D: the first MMA leaves D1[0][0] = 2^-7 (1 + 2^-10) * 2^-7 = 0x0401, whose half is a
    # subnormal one bit short: how the tensor core rounds it is not documented
    A = np.zeros((128, 16), np.uint16)
    B = np.zeros((16, 16), np.uint16)
    A[0, 0], B[0, 0] = encode("f16", 2.0 ** -7 * (1 + 2.0 ** -10)), encode("f16", 2.0 ** -7)
    with pytest.raises(PtxFault, match=r"scale-input-d 1: D\[0, 0\] = 0x0401 .* not exact in f16") as e:
        run("f16", "f16.f16.f16", 128, 16, 1, A, np.ascontiguousarray(B.T))
    assert e.value.fault["kind"] == "invalid_operand"


@pytest.mark.parametrize("line,match", [
    ("tcgen05.mma.cta_group::1.kind::f8f6f4 [%r1], %rd1, %rd1, %r1, %p1, 2;", r"\.kind::tf32 and \.kind::f16 only"),
    ("tcgen05.mma.cta_group::1.kind::i8 [%r1], %rd1, %rd1, %r1, %p1, 2;", r"\.kind::tf32 and \.kind::f16 only"),
    ("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd1, %r1, %p1, 16;", r"immediate in \[0, 15\]"),
    ("tcgen05.mma.cta_group::1.kind::f16 [%r1], %rd1, %rd1, %r1, %p1, %r1;", "must be an immediate"),
])
def test_a_scale_input_d_the_isa_does_not_allow_is_refused_in_one_line(line, match):
    src = rules_kernel(f"  .reg .b64 %rd<2>;\n  {line}")
    with pytest.raises(layoutsim.LayoutsimError, match=match) as e:
        ptx.run(src, "k", 1, 32, [], arch="sm_100")
    assert "\n" not in str(e.value) and "line" in str(e.value)


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA 13) not installed")
def test_the_kernels_assemble_for_sm_100a(tmp_path):
    kernels = [scaled_kernel("f16", 32, 1), scaled_kernel("tf32", 16, 15, mask=(0, 0, 0, 0))]
    for n, src in enumerate(kernels):
        res = ptxas_sm100a(src, tmp_path, f"k{n}")
        assert res.returncode == 0, res.stderr
    bad = scaled_kernel("f8f6f4", 32, 1)            # ptxas refuses what the executor refuses
    assert ptxas_sm100a(bad, tmp_path, "bad").returncode != 0
