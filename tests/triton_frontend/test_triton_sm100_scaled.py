"""Triton's tl.dot_scaled compiled for sm_100a runs in the executor: layoutsim.triton.launch(...,
arch="sm_100a"). Triton 3.6.0 lowers a 128x128 dot_scaled of e2m1 x e2m1 (a K=256 loop of two
k-tiles) to tcgen05.mma.cta_group::1.kind::mxf4.block_scale.scale_vec::2X (K=64, e2m1 packed two per
byte in shared memory) and a mixed e4m3/e5m2 x e2m1 one to .kind::mxf8f6f4.block_scale.scale_vec::1X
(K=32, the e2m1 operand in 16-element 128-bit units, the four k-steps' scales picked by the instruction
descriptor's scale-factor ids 0..3 from one TMEM column), the ue8m0 scales stored to TMEM by
tcgen05.st.32x32b: compiled here at test time, no PTX committed. No Blackwell GPU exists here
(from documents, not measured); the expected values are
  - bit for bit layoutsim's own tcgen05.mma model (layoutsim.mma), one MMA per K-step in order from
    a zero accumulator (K per MMA: PTX ISA 9.x 9.7.16.2.1 Table 39 and CUTLASS 4.2's static_asserts);
  - where pip `mmasim` is installed, every MMA the kernel executed bit for bit MMA-Sim's D from the
    same A, B, C and scales (tests/blackwell_oracle.py), the output the last MMA's D;
  - the float64 product within a loose bound (2**-16 relative to |A| @ |B| with the scales: the
    MMAs' truncated fused accumulation and f32 roundings are far below it), a sanity check only.
Triton's own shared-memory layout for the e2m1 operand of .kind::mxf8f6f4 (written by its
compiler, which runs on B200s) agrees with the executor's reading of it (ops_tcgen05, warpcore
sub_byte_cells) bit for bit here: an independent cross-check of the 16U4_ALIGN16B format.
"""
import re

import numpy as np
import pytest

from blackwell_oracle import assert_agrees, chains, final, needs_mmasim, summary
from triton_needs import needs_triton

pytestmark = needs_triton
triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")


@triton.jit
def dot_scaled_tile(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, K, PA: tl.constexpr, PB: tl.constexpr, A_FMT: tl.constexpr,
                    B_FMT: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C[BM, BN] = sum over k-tiles of dot_scaled(A, B); PA / PB: elements per byte of A / B (e2m1: 2)."""
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rs = tl.arange(0, BK // 32)
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * (K // PA) + (k0 // PA + tl.arange(0, BK // PA))[None, :])
        b = tl.load(b_ptr + (k0 // PB + tl.arange(0, BK // PB))[:, None] * BN + rn[None, :])
        sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + (k0 // 32 + rs)[None, :])
        sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + (k0 // 32 + rs)[None, :])
        acc = tl.dot_scaled(a, sa, A_FMT, b, sb, B_FMT, acc)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


def _raw(rng, fmt, shape):
    if fmt == "e2m1":
        return rng.integers(0, 16, shape).astype(np.uint8)
    x = rng.integers(0, 256, shape).astype(np.uint8)
    nan = (x & 0x7F) == 0x7F if fmt == "e4m3" else (x & 0x7C) == 0x7C          # keep NaN/Inf out
    return np.where(nan, 0, x).astype(np.uint8)


CASES = [   # A's and B's formats, the kind and .scale_vec Triton picks, K per MMA, K of the launch
    ("e2m1", "e2m1", "mxf4", "2X", 64, 256),            # two 128-wide k-tiles (cp.async pipelined)
    ("e4m3", "e2m1", "mxf8f6f4", "1X", 32, 128),
    ("e2m1", "e5m2", "mxf8f6f4", "1X", 32, 128),
]
BM = BN = BK = 128


def _launch(fa, fb, K, record_mmas=False, arch="sm_100a", BM=BM, BN=BN, seed=27):
    """(A, B raw [BM, K], [K, BN], scales sa [BM, K/32], sb [BN, K/32], Run) of dot_scaled_tile for `arch`
    (tests/triton_frontend/test_triton_sm120_scaled.py: sm_120a, 64 x 64)."""
    import layoutsim.triton as lt
    rng = np.random.default_rng(seed)
    A, B = _raw(rng, fa, (BM, K)), _raw(rng, fb, (K, BN))
    Ag = A[:, 0::2] | (A[:, 1::2] << 4) if fa == "e2m1" else A          # Triton: e2m1 packed along K,
    Bg = B[0::2] | (B[1::2] << 4) if fb == "e2m1" else B                # the even element in the low nibble
    sa = rng.integers(120, 135, (BM, K // 32)).astype(np.uint8)         # ue8m0: 2**(s - 127)
    sb = rng.integers(120, 135, (BN, K // 32)).astype(np.uint8)
    C = np.zeros((BM, BN), np.float32)
    r = lt.launch(dot_scaled_tile, (1, 1), np.ascontiguousarray(Ag), np.ascontiguousarray(Bg), sa, sb, C, K,
                  PA=2 if fa == "e2m1" else 1, PB=2 if fb == "e2m1" else 1, A_FMT=fa, B_FMT=fb, BM=BM, BN=BN, BK=BK,
                  arch=arch, num_warps=4, options={"record_mmas": record_mmas})
    return A, B, sa, sb, r


def _within_bound(got, fa, fb, A, B, sa, sb):
    """The float64 product of the scaled values within 2**-16 relative to |A| @ |B| (a sanity bound)."""
    from layoutsim.formats import decode
    va = decode(fa, A).astype(np.float64) * np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
    vb = decode(fb, B).astype(np.float64) * np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=1).T
    return np.all(np.abs(got.view(np.float32) - va @ vb) <= 2.0 ** -16 * (np.abs(va) @ np.abs(vb)))


@pytest.mark.parametrize("fa,fb,kind,vec,k_step,K", CASES)
def test_triton_dot_scaled_on_sm100a_is_the_tcgen05_model_bit_for_bit(fa, fb, kind, vec, k_step, K):
    import layoutsim
    A, B, sa, sb, r = _launch(fa, fb, K)
    forms = set(re.findall(r"tcgen05\.mma\.[\w:.]+", r.triton.ptx))
    assert forms == {f"tcgen05.mma.cta_group::1.kind::{kind}.block_scale.scale_vec::{vec}"}
    got = r.buffers[4].view(np.uint32)
    acc = np.zeros((BM, BN), np.uint32)
    n_sf = k_step // 32
    for k in range(0, K, k_step):
        s = slice(k // 32, k // 32 + n_sf)
        acc = layoutsim.mma(f"tcgen05.mma.cta_group::1.kind::{kind}.block_scale.scale_vec::{vec}.m128n{BN}k{k_step}",
                            A[:, k:k + k_step], B[k:k + k_step], acc, arch="sm_100a", raw=True,
                            types=f"f32.{fa}.{fb}.ue8m0", scale_a=sa[:, s], scale_b=np.ascontiguousarray(sb[:, s].T))
    assert np.array_equal(got, acc)
    assert r.fidelity["documented"] > 0                 # the fidelity line says: from documents, not measured
    assert _within_bound(got, fa, fb, A, B, sa, sb)


# ---- every MMA against MMA-Sim (tests/blackwell_oracle.py) --------------------------------------------
def per_mma(fa, fb):
    """dot_scaled of fa x fb with its MMAs recorded (K / K-per-MMA of them, each with the raw scales it
    read from TMEM): the output is the one accumulation's last D and within the sanity bound of the
    float64 product; the per-MMA summary (MMA-Sim models .kind::mxf4 and mxf8f6f4: its
    TCGen05MMABlockScale, GST-FDPA for K=64, ST-FDPA for K=32)."""
    _, _, kind, _, k_step, K = next(c for c in CASES if c[:2] == (fa, fb))
    A, B, sa, sb, r = _launch(fa, fb, K, record_mmas=True)
    s = summary(f"Triton dot_scaled {kind} {fa} x {fb}", r, K // k_step)
    (acc,) = chains(r.mmas)
    for i, rec in zip(range(0, K, k_step), r.mmas):      # the scales each MMA read: its K-step's blocks
        assert np.array_equal(rec.scale_a, sa[:, i // 32:(i + k_step) // 32])
        assert np.array_equal(rec.scale_b, sb[:, i // 32:(i + k_step) // 32].T)
    got = r.buffers[4].view(np.uint32)
    assert np.array_equal(got, final(r.mmas, acc)) and _within_bound(got, fa, fb, A, B, sa, sb)
    return s


ORACLE_KERNELS = {f"Triton dot_scaled {c[0]} x {c[1]}": (lambda c=c: per_mma(c[0], c[1])) for c in CASES}


@needs_mmasim
@pytest.mark.parametrize("name", ORACLE_KERNELS)
def test_every_mma_of_dot_scaled_is_mmasim_bit_for_bit(name):
    assert_agrees(ORACLE_KERNELS[name]())
