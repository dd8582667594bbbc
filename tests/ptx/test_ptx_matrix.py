"""Tensor-core instructions: ldmatrix/stmatrix/mma.sync through inline PTX and nvcuda::wmma GEMMs
(f16, bf16, s8, tf32; from global memory and from padded shared tiles), with their bank costs.

Results: integer GEMMs exactly against numpy; floating ones bit for bit against layoutsim.mma
applied to the logical matrices (the arithmetic the H200 corpora confirm), so what is tested here
is that every register and every shared-memory row lands where the catalog says."""
import numpy as np
import pytest
from ptx_kernels import ptx

import layoutsim
import layoutsim.ptx as P
from layoutsim import banks

MAT = ptx("matrix")
WMMA = ptx("wmma")
F16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"


@pytest.mark.parametrize("pitch", [16, 24])
def test_ldmatrix_trans_and_mma(pitch):
    rng = np.random.default_rng(pitch)
    A = rng.standard_normal((16, 16)).astype(np.float16)
    B = rng.standard_normal((16, 8)).astype(np.float16)
    C = rng.standard_normal((16, 8)).astype(np.float32)
    r = P.run(MAT, "mma_f16", 1, 32, [A, B, C, np.zeros((16, 8), np.float32), np.int32(pitch)],
              shared_bytes=2 * 16 * pitch * 2)
    want = layoutsim.mma(F16, A, B, C, arch="sm_90")
    assert np.array_equal(r.buffers[3].view(np.uint32), want.view(np.uint32))
    ld = {s.text.split()[0]: s for s in r.instructions if s.text.startswith("ldmatrix")}
    a_rows = np.array([(i % 16) * pitch * 2 + (i // 16) * 16 for i in range(32)])
    b_rows = np.array([(i % 16) * pitch * 2 for i in range(32)])
    assert ld["ldmatrix.sync.aligned.m8n8.x4.shared.b16"].wavefronts == banks.wavefronts("ldmatrix.x4", a_rows)
    assert ld["ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"].wavefronts == \
        banks.wavefronts("ldmatrix.x2.trans", b_rows)
    assert (ld["ldmatrix.sync.aligned.m8n8.x4.shared.b16"].wavefronts == 8) == (pitch == 16)


def test_stmatrix_tile():
    rng = np.random.default_rng(2)
    regs = rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
    r = P.run(MAT, "stmatrix_tile", 1, 32, [regs, np.zeros(256, np.uint16), np.int32(24)], shared_bytes=16 * 24 * 2)
    # stmatrix.x4: register j of lane L holds row L/4, columns 2(L%4), 2(L%4)+1 of matrix j (PTX ISA
    # 9.7.14.5.16); lanes 8j..8j+7 give matrix j's rows: here rows (lane % 16), column block lane / 16
    tile = np.zeros((16, 16), np.uint16)
    for j in range(4):
        for lane in range(32):
            w = int(regs[32 * j + lane])
            row = 8 * (j % 2) + lane // 4
            col = 8 * (j // 2) + 2 * (lane % 4)
            tile[row, col], tile[row, col + 1] = w & 0xFFFF, w >> 16
    assert np.array_equal(r.buffers[1].reshape(16, 16), tile)


def test_mma_int8_tf32_f64():
    rng = np.random.default_rng(4)
    a8 = rng.integers(0, 1 << 32, 128, dtype=np.uint64).astype(np.uint32)
    b8 = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    c8 = rng.integers(-1000, 1000, 128).astype(np.int32)
    at = rng.standard_normal(128).astype(np.float32)
    bt = rng.standard_normal(64).astype(np.float32)
    ct = rng.standard_normal(128).astype(np.float32)
    a64, b64, c64 = rng.standard_normal(32), rng.standard_normal(32), rng.standard_normal(64)
    args = [a8, b8, c8, np.zeros(128, np.int32), at, bt, ct, np.zeros(128, np.float32),
            a64, b64, c64, np.zeros(64)]
    r = P.run(MAT, "mma_mixed", 1, 32, args)
    from layoutsim.packing import pack, unpack
    for name, (ra, rb, rc), out in (
            ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", (a8, b8, c8), 3),
            ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", (at, bt, ct), 7),
            ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", (a64, b64, c64), 11)):
        ins = layoutsim.get(name)
        mats = {}
        for op, regs in (("A", ra), ("B", rb), ("C", rc)):
            words = np.ascontiguousarray(regs).view(np.uint32).reshape(1, 32, -1)
            mats[op] = unpack(ins.operand(op).fragment, words)[0, 0]
        d = layoutsim.mma(ins, mats["A"], mats["B"], mats["C"], arch="sm_90", raw=True)
        want = pack(ins.operand("D").fragment, np.asarray(d)[None, None]).reshape(-1)
        got = np.ascontiguousarray(r.buffers[out]).view(np.uint32)
        assert np.array_equal(got, want), name
    a = unpack(layoutsim.get("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32").operand("A").fragment,
               a8.reshape(1, 32, 4))[0, 0].view(np.int8).astype(np.int64)
    assert a.shape == (16, 32)       # the integer result is also the plain product:
    b = unpack(layoutsim.get("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32").operand("B").fragment,
               b8.reshape(1, 32, 2))[0, 0].view(np.int8).astype(np.int64)
    c = unpack(layoutsim.get("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32").operand("C").fragment,
               c8.view(np.uint32).reshape(1, 32, 4))[0, 0].view(np.int32)
    d = unpack(layoutsim.get("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32").operand("D").fragment,
               r.buffers[3].view(np.uint32).reshape(1, 32, 4))[0, 0].view(np.int32)
    assert np.array_equal(d, (a @ b + c).astype(np.int32))


def _gemm(kind, M=32, N=48, K=64, rng=None):
    import ml_dtypes
    rng = rng or np.random.default_rng(9)
    if kind == "s8":
        A = rng.integers(-128, 128, (M, K)).astype(np.int8)
        B = rng.integers(-128, 128, (N, K)).astype(np.int8)
        return A, B, np.zeros((M, N), np.int32)
    dt = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32}[kind]
    A = rng.standard_normal((M, K)).astype(dt)
    B = rng.standard_normal((N, K)).astype(dt)
    return A, B, np.zeros((M, N), np.float32)


def _reference(kind, A, B):
    """C = A B^T tile by tile, k-step by k-step, through layoutsim.mma (the wmma m16n16k16 is two
    m16n8k16 per step; tf32 m16n16k8 is two m16n8k4 k-steps: what ptxas emits on sm_90)."""
    if kind == "s8":
        return A.astype(np.int64) @ B.astype(np.int64).T
    M, K = A.shape
    N = B.shape[0]
    if kind == "tf32":
        to = lambda x: (np.ascontiguousarray(x).view(np.uint32) + np.uint32(0x1000)) & np.uint32(0xFFFFE000)
        A, B = to(A), to(B)                      # __float_to_tf32: round to nearest, ties away
        name, kt = "mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 4
    else:
        name = f"mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32"
        kt = 16
    C = np.zeros((M, N), np.float32)
    for k in range(0, K, kt):
        for i in range(0, M, 16):
            for j in range(0, N, 8):
                C[i:i + 16, j:j + 8] = layoutsim.mma(name, A[i:i + 16, k:k + kt], B[j:j + 8, k:k + kt].T,
                                                     C[i:i + 16, j:j + 8], arch="sm_90")
    return C


@pytest.mark.parametrize("kind", ["f16", "bf16", "s8", "tf32"])
def test_wmma_gemm_from_global(kind):
    A, B, C = _gemm(kind)
    M, N = C.shape
    r = P.run(WMMA, f"gemm_{kind}", (N // 16, M // 16), 32, [A, B, C, np.int32(N), np.int32(A.shape[1])])
    want = _reference(kind, A, B)
    got = r.buffers[2]
    assert np.array_equal(got.view(np.uint32) if kind != "s8" else got,
                          want.astype(got.dtype).view(np.uint32) if kind != "s8" else want.astype(np.int32))
    assert not any("not measured" in n for n in r.notes)       # every wmma map was measured on the H200


@pytest.mark.parametrize("pitch,wavefronts", [(16, 8), (24, 4)])
def test_wmma_from_padded_shared(pitch, wavefronts):
    A, B, C = _gemm("f16", 16, 16, 32)
    r = P.run(WMMA, "gemm_f16_shared", 1, 32, [A, B, C, np.int32(16), np.int32(32), np.int32(pitch)],
              shared_bytes=32 * pitch * 2 + 1024)
    assert np.array_equal(r.buffers[2].view(np.uint32), _reference("f16", A, B).view(np.uint32))
    loads = [s for s in r.instructions if s.text.startswith("wmma.load.")]
    # sm_90 lowers each to LDSM.16.M88.4: 8 rows of 16 bytes per matrix, 2 * pitch bytes apart
    assert len(loads) == 2 and all(s.sass == "LDSM.16.M88.4" for s in loads)
    assert all(s.wavefronts == wavefronts * s.executions and s.ideal == 4 * s.executions for s in loads)
    store = next(s for s in r.instructions if s.text.startswith("wmma.store.d"))
    # 4 x STS.64 of the accumulator layout, 64-byte rows: lanes 0-15 cover rows 0-3 (2 wavefronts)
    rows = np.array([(L // 4) * 64 + (L % 4) * 8 for L in range(32)])
    per = sum(banks.wavefronts("st.shared.b64", rows + off) for off in (0, 512, 32, 544))
    assert store.sass == "STS.64" and store.wavefronts == per

