"""wgmma in the executor (kernels from wgmma_cases.py): shared memory filled by plain stores in
each swizzle mode, K- and MN-major, A from shared memory or registers, every input format, N of
8, 64 and 256; scale-d, imm-scale-a/b and .satfinite.

The expected D is computed from the logical matrices the test generated (numpy slices of A and B
per k-block), through layoutsim.mma for the floating forms and numpy's exact integers for the
integer ones: nothing of the executor's own gather is reused. Registers (C, D, and A of the RS
cases) cross the kernel boundary as raw words packed through the catalog's fragment maps."""
import numpy as np
import pytest
from ptx_kernels import ptx

import layoutsim
import layoutsim.ptx as P
from layoutsim.packing import pack, unpack
import wgmma_cases as W

SRC = ptx("wgmma", "sm_90a")
CASES = {c[0]: c for c in W.CASES}
INT_MAX = 2 ** 31 - 1

# (case, swizzle of A, swizzle of B, scale-d): 0 none, 1 32B, 2 64B, 3 128B
RUNS = [("f16_n64", s, s, 1) for s in range(4)] + [
    ("f16_n64_t", 0, 0, 1), ("f16_n64_t", 1, 2, 1), ("f16_n64_t", 3, 3, 0), ("f16_n64_t", 2, 1, 1),
    ("f16_n256_t", 3, 3, 1), ("f16_n256_t", 0, 2, 1),
    ("f16acc_n8_rs", 0, 0, 1), ("f16acc_n8_rs", 0, 3, 1),
    ("bf16_n64_rs_t", 0, 1, 1), ("bf16_n64_rs_t", 0, 2, 0),
    ("bf16_n8_t", 2, 0, 1), ("bf16_n8_t", 1, 3, 1),
    ("tf32_n64", 0, 0, 1), ("tf32_n64", 1, 1, 1), ("tf32_n64", 3, 3, 1),
    ("tf32_n8_rs", 0, 2, 1),
    ("e4m3_n64", 0, 0, 1), ("e4m3_n64", 2, 2, 0), ("e4m3_n64", 3, 3, 1),
    ("e4m3_n8_rs", 0, 3, 1),
    ("s8_n64", 0, 0, 1), ("s8_n64", 3, 3, 1),
    ("s8_n8_rs_sat", 0, 1, 1), ("s8_n8_wrap", 2, 2, 1),
]


def raw_values(fmt, shape, rng):
    """Raw bits of finite values of `fmt`."""
    import ml_dtypes
    x = rng.standard_normal(shape)
    if fmt in ("s8", "u8"):
        return rng.integers(0, 256, shape).astype(np.uint8)
    dt = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32, "f32": np.float32,
          "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}[fmt]
    v = x.astype(dt)
    return v.view(f"u{v.dtype.itemsize}")


def kt_of(case, swa, swb):
    """The tile's K extent: a K-major swizzled operand spans one swizzled row (span bytes)."""
    name, instr, src, ta, tb = case[:5]
    n, k, d, a, b = W.parse(instr)
    rows = {(16 << sw) // W.BYTES[f] for used, sw, f, t in ((src == "ss", swa, a, ta), (True, swb, b, tb))
            if used and not t and sw}
    assert len(rows) <= 1, "K-major swizzled operands of different spans"
    return rows.pop() if rows else 2 * k


def expected(case, A, B, C, kt, scale_d):
    """D after the kernel's k-blocks, from the logical A (64 x kt) and B (kt x N)."""
    name, instr, src, ta, tb, sa, sb, sat = case
    n, k, d, a, b = W.parse(instr)
    ins = layoutsim.get("wgmma." + instr)
    neg = {f: np.uint64(1) << np.uint64(8 * W.BYTES[f] - 1) for f in W.BYTES}
    if a in ("s8", "u8"):
        av = A.view(np.int8).astype(np.int64) if a == "s8" else A.astype(np.int64)
        bv = B.view(np.int8).astype(np.int64) if b == "s8" else B.astype(np.int64)
        D = C.view(np.int32).astype(np.int64) * scale_d
        for kb in range(kt // k):
            D = D + av[:, kb * k:(kb + 1) * k] @ bv[kb * k:(kb + 1) * k]
            D = np.clip(D, -INT_MAX - 1, INT_MAX) if sat else (D + 2 ** 31) % 2 ** 32 - 2 ** 31
        return D.astype(np.int32).view(np.uint32)
    A = A ^ A.dtype.type(neg[a]) if sa == -1 else A
    B = B ^ B.dtype.type(neg[b]) if sb == -1 else B
    D = C if scale_d else np.zeros_like(C)
    for kb in range(kt // k):
        D = layoutsim.mma(ins, A[:, kb * k:(kb + 1) * k], B[kb * k:(kb + 1) * k], D, arch="sm_90", raw=True)
    return D


def launch(case, swa, swb, scale_d, seed=0):
    name, instr, src, ta, tb, sa, sb, sat = case
    n, k, d, a, b = W.parse(instr)
    rng = np.random.default_rng(seed)
    kt = kt_of(case, swa, swb)
    A, B = raw_values(a, (64, kt), rng), raw_values(b, (kt, n), rng)
    ins = layoutsim.get("wgmma." + instr)
    if d == "s32":
        near = INT_MAX - 2000 if "sat" in name or "wrap" in name else 0
        C = (rng.integers(-1000, 1000, (64, n)) + near).astype(np.int32).view(np.uint32)
    else:
        C = raw_values(d, (64, n), rng)
    fd = ins.operand("D").fragment
    cw = pack(fd, C[None, None]).reshape(-1)
    if src == "rs":
        fa = ins.operand("A").fragment
        a_arg = np.stack([pack(fa, A[None, None, :, kb * k:(kb + 1) * k]).reshape(128, -1)
                          for kb in range(kt // k)])
    else:
        a_arg = A
    r = P.run(SRC, f"wg_{name}", 1, 128, [a_arg, B, cw, np.zeros_like(cw), np.int32(swa), np.int32(swb),
                                          np.int32(kt), np.int32(scale_d)])
    got = unpack(fd, r.buffers[3].reshape(1, 128, -1))[0, 0]
    return r, got, expected(case, A, B, C, kt, scale_d), kt


@pytest.mark.parametrize("name,swa,swb,scale_d", RUNS, ids=[f"{c}-sw{a}{b}-d{s}" for c, a, b, s in RUNS])
def test_wgmma_matches_layoutsim_mma(name, swa, swb, scale_d):
    case = CASES[name]
    r, got, want, kt = launch(case, swa, swb, scale_d)
    bad = np.argwhere(got != want)
    assert bad.size == 0, f"{len(bad)} elements differ, first D{tuple(bad[0])}: {got[tuple(bad[0])]:#x} vs " \
                          f"{want[tuple(bad[0])]:#x}"
    # the GMMA unit's reads: one wavefront per 128 bytes of operands read from shared memory, per
    # warpgroup instruction; the plain stores stay the only shared-memory (LSU) traffic
    n, k, d, a, b = W.parse(case[1])
    per = (64 * k * W.BYTES[a] if case[2] == "ss" else 0) + k * n * W.BYTES[b]
    assert r.gmma_wavefronts == (kt // k) * (-(-per // 128))
    assert r.shared_wavefronts["ld"] == 0
    rows = [s for s in r.instructions if s.text.startswith("wgmma.mma_async")]
    assert rows and all(s.kind == "gmma" for s in rows if s.executions)
    assert sum(s.executions for s in rows) == 4 * (kt // k)          # 4 warps per warpgroup instruction


def test_satfinite_and_wrapping_differ():
    """The same integer sums: clamped with .satfinite, wrapped without (and both overflow here)."""
    _, sat, _, _ = launch(CASES["s8_n8_rs_sat"], 0, 1, 1, seed=3)
    _, wrap, _, _ = launch(CASES["s8_n8_wrap"], 2, 2, 1, seed=3)
    assert (sat.view(np.int32) == INT_MAX).any() and (wrap.view(np.int32) < 0).any()


# ---- warpgroup rendezvous and bad input ------------------------------------------------------------
SMALL = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry wg(.param .u64 out, .param .u64 desca, .param .u64 descb, .param .u32 spin)
{
  .reg .b32 %r<12>; .reg .f32 %f<8>; .reg .b64 %rd<8>; .reg .pred %p<4>;
  .shared .align 1024 .b8 tile[4096];
  ld.param.u64 %rd1, [desca]; ld.param.u64 %rd2, [descb]; ld.param.u32 %r1, [spin];
  mov.u32 %r2, %tid.x; shr.u32 %r3, %r2, 5;
  shl.b32 %r6, %r2, 5; mov.u32 %r7, tile; add.u32 %r7, %r7, %r6;
  mov.b32 %r8, 0x3C003C00;
  st.shared.v4.b32 [%r7], {%r8, %r8, %r8, %r8}; st.shared.v4.b32 [%r7+16], {%r8, %r8, %r8, %r8};
  fence.proxy.async.shared::cta;
  bar.sync 0;
  mul.lo.u32 %r5, %r3, %r1; mov.u32 %r4, 0;
LOOP:
  setp.lt.u32 %p1, %r4, %r5;
  @!%p1 bra DONE;
  add.u32 %r4, %r4, 1;
  bra LOOP;
DONE:
  mov.f32 %f0, 0f00000000; mov.f32 %f1, 0f00000000; mov.f32 %f2, 0f00000000; mov.f32 %f3, 0f00000000;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, 0, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  ld.param.u64 %rd3, [out]; cvta.to.global.u64 %rd4, %rd3;
  mul.wide.u32 %rd5, %r2, 16; add.s64 %rd6, %rd4, %rd5;
  st.global.v4.f32 [%rd6], {%f0, %f1, %f2, %f3};
  ret;
}
"""
# the kernel's shared array begins after the reserved KiB (archs.user_smem_base: ptxas puts it at 0x400)
S0 = layoutsim.archs.user_smem_base("sm_90")
DA = layoutsim.smem.Descriptor.dense(S0, 64, 16, 16).encode()
DB = layoutsim.smem.Descriptor.dense(S0 + 2048, 8, 16, 16).encode()


def test_warps_meet_at_the_wgmma():
    """Warps reach the wgmma after different numbers of loop trips (warp w spins 7 w times): it runs
    once, for the whole warpgroup, when the fourth arrives; ones(64x16) . ones(16x8) = 16."""
    out = np.zeros((128, 4), np.float32)
    r = P.run(SMALL, "wg", 1, 128, [out, np.uint64(DA), np.uint64(DB), np.uint32(7)])
    assert (r.buffers[0] == 16.0).all()
    row = next(s for s in r.instructions if s.text.startswith("wgmma.mma_async"))
    assert row.executions == 4 and row.wavefronts == (64 * 16 * 2 + 16 * 8 * 2) // 128 == r.gmma_wavefronts


def test_a_descriptor_outside_shared_memory_faults():
    far = layoutsim.smem.Descriptor.dense(0x3F000, 8, 16, 16).encode()
    with pytest.raises(P.PtxFault) as e:
        P.run(SMALL, "wg", 1, 128, [np.zeros((128, 4), np.float32), np.uint64(DA), np.uint64(far), np.uint32(0)])
    msg = str(e.value)
    assert "\n" not in msg and "outside shared memory" in msg and "B descriptor" in msg
    assert msg.startswith("line ") and "thread (0, 0, 0)" in msg and e.value.info["address"] >= 0x3F000


def test_a_wgmma_needs_four_whole_warps():
    with pytest.raises(P.PtxFault, match="a warpgroup is 4 whole warps"):
        P.run(SMALL, "wg", 1, 64, [np.zeros((64, 4), np.float32), np.uint64(DA), np.uint64(DB), np.uint32(0)])


def test_descriptors_must_agree_across_the_warpgroup():
    text = SMALL.replace("ld.param.u64 %rd2, [descb];", "ld.param.u64 %rd2, [descb]; cvt.u64.u32 %rd7, %tid.x; "
                                                        "shl.b64 %rd7, %rd7, 4; add.s64 %rd2, %rd2, %rd7;")
    with pytest.raises(P.PtxFault, match="different B descriptor values"):
        P.run(text, "wg", 1, 128, [np.zeros((128, 4), np.float32), np.uint64(DA), np.uint64(DB), np.uint32(0)])


def test_bad_wgmma_operands_are_one_line():
    bad = SMALL.replace("%rd1, %rd2, 0, 1, 1, 0, 0;", "%rd1, %rd2, 0, 1, 2, 0, 0;")
    with pytest.raises(layoutsim.LayoutsimError, match="imm-scale-b must be an immediate 1 or -1"):
        P.run(bad, "wg", 1, 128, [np.zeros((128, 4), np.float32), np.uint64(DA), np.uint64(DB), np.uint32(0)])
    with pytest.raises(layoutsim.LayoutsimError, match="wgmma exists on sm_90"):
        P.run(SMALL.replace(".target sm_90a", ".target sm_80"), "wg", 1, 128,
              [np.zeros((128, 4), np.float32), np.uint64(DA), np.uint64(DB), np.uint32(0)], arch="sm_80")
