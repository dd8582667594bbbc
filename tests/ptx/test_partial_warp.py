"""Warp collectives run by a partial warp (issue 22): .aligned instructions (mma.sync, ldmatrix,
wmma, wgmma) are refused as the PTX ISA words it ("all threads in the warp must execute the same
..."), naming the instruction, the PTX and CUDA line, the CTA and warp, the active mask and the
cause; membermask instructions (shfl/vote/bar.warp.sync) run for the lanes there are and refuse
a thread outside its own membermask. Full warps still run, bit for bit."""
import subprocess
import sys

import numpy as np
import pytest
from ptx_kernels import KERNELS, ptx
from test_ptx_wgmma import SMALL

import layoutsim
import layoutsim.ptx as P
from layoutsim.packing import pack, unpack
from layoutsim.ptx.faults import Deadlock

F16 = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"

# a: 4 words per thread, b: 2 words, out: 4 words; n: threads >= n leave (PRE) or are guarded off
MMA = """
.version 8.0
.target sm_90
.address_size 64
	.file	1 "/src/partial.cu"
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pout, .param .u32 n)
{
  .reg .b32 %r<40>; .reg .f32 %f<16>; .reg .b64 %rd<12>; .reg .pred %p<4>;
  .shared .align 16 .b8 tile[512];
	.loc	1 5 3
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  setp.ge.u32 %p1, %r1, %r2;
  ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [pout];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3;
  mul.wide.u32 %rd4, %r1, 16; add.s64 %rd5, %rd1, %rd4; add.s64 %rd8, %rd3, %rd4;
  ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd5];
  mul.wide.u32 %rd6, %r1, 8; add.s64 %rd7, %rd2, %rd6;
  ld.global.v2.b32 {%r14, %r15}, [%rd7];
  mov.f32 %f0, 0f00000000; mov.f32 %f1, 0f00000000; mov.f32 %f2, 0f00000000; mov.f32 %f3, 0f00000000;
  PRE
	.loc	1 9 5
  BODY
DONE:
  ret;
}
"""
MMA_BODY = """GUARD mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f4, %f5, %f6, %f7}, {%r10, %r11, %r12, %r13}, {%r14, %r15}, {%f0, %f1, %f2, %f3};
  st.global.v4.f32 [%rd8], {%f4, %f5, %f6, %f7};"""
LDMATRIX_BODY = """mov.u32 %r20, tile; shl.b32 %r21, %r1, 4; add.u32 %r22, %r20, %r21;
  st.shared.v4.b32 [%r22], {%r10, %r11, %r12, %r13};
  bar.warp.sync -1;
  GUARD ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r10, %r11, %r12, %r13}, [%r22];
  st.global.v4.b32 [%rd8], {%r10, %r11, %r12, %r13};"""


def kernel(body, pre="", guard=""):
    return MMA.replace("BODY", body).replace("PRE", pre).replace("GUARD", guard)


def args(threads=32, n=32, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(threads * 8).astype(np.float16).view(np.uint32)
    b = rng.standard_normal(threads * 4).astype(np.float16).view(np.uint32)
    return [a, b, np.zeros(threads * 4, np.uint32), np.uint32(n)]


def refusal(text, block, n=32, grid=1):
    with pytest.raises(P.PtxFault) as e:
        P.run(text, "k", grid, block, args(max(block, 32) * grid, n))
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def test_full_warp_mma_still_runs_bit_for_bit():
    a, b, out, n = args()
    r = P.run(kernel(MMA_BODY), "k", 1, 32, [a, b, out, n])
    ins = layoutsim.get(F16)
    A = unpack(ins.operand("A").fragment, a.reshape(1, 32, 4))[0, 0]
    B = unpack(ins.operand("B").fragment, b.reshape(1, 32, 2))[0, 0]
    d = layoutsim.mma(ins, A, B, np.zeros((16, 8), np.float32), arch="sm_90", raw=True)
    want = pack(ins.operand("D").fragment, np.asarray(d)[None, None]).reshape(-1)
    assert np.array_equal(r.buffers[2], want) and want.any()


def test_mma_by_a_block_of_16_threads():
    msg = refusal(kernel(MMA_BODY), 16)
    assert msg.startswith("line ") and "(partial.cu:9)" in msg and "mma.sync.aligned.m16n8k16" in msg
    assert "CTA (0, 0, 0)" in msg and "(warp 0, lane 0)" in msg
    assert "mma run by a partial warp (active mask 0x0000ffff: lanes 0-15)" in msg
    assert "a block of 16 threads runs a partial warp; mma needs all 32 lanes" in msg
    assert "PTX ISA: .aligned: all threads in the warp must execute the same mma" in msg


def test_mma_under_a_guard_false_for_some_lanes():
    msg = refusal(kernel(MMA_BODY, guard="@!%p1"), 32, n=20)
    assert "active mask 0x000fffff: lanes 0-19" in msg and "lanes 20-31 do not execute it" in msg


def test_mma_after_some_lanes_exited_is_refused_not_a_deadlock():
    msg = refusal(kernel(MMA_BODY, pre="@%p1 bra DONE;"), 32, n=8)
    assert "lanes 8-31 have exited" in msg and "deadlock" not in msg


def test_the_partial_warp_is_named_by_cta_and_warp():
    # 48 threads: warp 0 whole, warp 1 of 16 lanes
    msg = refusal(kernel(MMA_BODY), 48, n=64)
    assert "(warp 1, lane 0)" in msg and "a block of 48 threads runs a partial warp" in msg
    # only the second CTA's warp 0 loses lanes 16-31
    text = kernel(MMA_BODY, pre="mov.u32 %r30, %ctaid.x; setp.ne.u32 %p2, %r30, 1; @%p2 bra GO; @%p1 bra DONE;\nGO:")
    msg = refusal(text, 32, n=16, grid=2)
    assert "CTA (1, 0, 0)" in msg and "lanes 16-31 have exited" in msg


def test_ldmatrix_full_warp_and_partial_warp():
    a, b, out, n = args()
    r = P.run(kernel(LDMATRIX_BODY), "k", 1, 32, [a, b, out, n])
    L = np.arange(32)
    want = np.stack([a[(8 * j + L // 4) * 4 + L % 4] for j in range(4)], axis=1).reshape(-1)
    assert np.array_equal(r.buffers[2], want)
    msg = refusal(kernel(LDMATRIX_BODY), 16)
    assert "ldmatrix run by a partial warp" in msg and "ldmatrix needs all 32 lanes" in msg
    assert "same ldmatrix" in msg and msg.startswith("line ") and "(partial.cu:9)" in msg


WMMA_ARGS = [np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float16), np.zeros((16, 16), np.float32),
             np.int32(16), np.int32(16)]


def test_wmma_by_a_block_of_16_threads():
    with pytest.raises(P.PtxFault) as e:
        P.run(ptx("wmma"), "gemm_f16", 1, 16, WMMA_ARGS)
    msg = str(e.value)
    assert "(wmma.cu:" in msg and "wmma.load run by a partial warp (active mask 0x0000ffff" in msg
    assert "a block of 16 threads runs a partial warp; wmma needs all 32 lanes" in msg
    assert "different addresses" not in msg          # not the misleading zero-filled lanes' addresses
    r = P.run(ptx("wmma"), "gemm_f16", 1, 32, WMMA_ARGS)
    assert not r.buffers[2].any()


def test_wmma_block_16_on_the_cli():
    cmd = [sys.executable, "-m", "layoutsim.cli", "ptx", "run", str(KERNELS / "wmma.sm_90.ptx"), "--kernel",
           "gemm_f16", "--grid", "1", "--block", "16", "--arg", "zeros:f16:16x16", "--arg", "zeros:f16:16x16",
           "--arg", "zeros:f32:16x16", "--arg", "i32:16", "--arg", "i32:16", "--quiet"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1
    assert "a block of 16 threads runs a partial warp; wmma needs all 32 lanes" in p.stderr


# the warpgroup kernel of test_ptx_wgmma.py (warp w spins n*w loop trips first); threads >= n leave
WGMMA = SMALL.replace("bar.sync 0;", "bar.sync 0; setp.ge.u32 %p3, %r2, %r1; @%p3 ret;")


def test_wgmma_needs_the_whole_warpgroup():
    s0 = layoutsim.archs.user_smem_base("sm_90")      # the shared array's address: after the reserved KiB
    da = layoutsim.smem.Descriptor.dense(s0, 64, 16, 16).encode()
    db = layoutsim.smem.Descriptor.dense(s0 + 2048, 8, 16, 16).encode()
    out = np.zeros((128, 4), np.float32)
    r = P.run(WGMMA, "wg", 1, 128, [out, np.uint64(da), np.uint64(db), np.uint32(128)])
    assert (r.buffers[0] == 16.0).all()                       # ones(64x16) . ones(16x8)
    with pytest.raises(P.PtxFault) as e:                      # warp 3 left: warps 0-2 run the fence
        P.run(WGMMA, "wg", 1, 128, [out, np.uint64(da), np.uint64(db), np.uint32(96)])
    msg = str(e.value)
    assert "wgmma.mma_async run by a partial warpgroup" in msg and "threads 96-127 have exited" in msg
    assert "0xffffffff 0xffffffff 0xffffffff 0x00000000" in msg
    assert "all threads in the warpgroup must execute the same wgmma.mma_async" in msg
    with pytest.raises(P.PtxFault, match="wgmma.fence run by a partial warp .*lanes 16-31 have exited"):
        P.run(WGMMA, "wg", 1, 128, [out, np.uint64(da), np.uint64(db), np.uint32(112)])


# ---- membermask collectives: partial warps are legal; a thread outside its membermask is not ----------
SHFL = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry s(.param .u64 pout, .param .u32 mask, .param .u32 n)
{
  .reg .b32 %r<12>; .reg .b64 %rd<6>; .reg .pred %p<3>;
  mov.u32 %r1, %tid.x; ld.param.u32 %r2, [mask]; ld.param.u32 %r3, [n];
  setp.ge.u32 %p1, %r1, %r3;
  @%p1 bra DONE;
  mul.lo.u32 %r4, %r1, 10;
  OP
  ld.param.u64 %rd1, [pout]; cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
DONE:
  ret;
}
"""
SHFL_OP = "shfl.sync.idx.b32 %r5, %r4, 3, 0x1f, %r2;"
VOTE_OP = "setp.lt.u32 %p2, %r1, 4; vote.sync.ballot.b32 %r5, %p2, %r2;"
BAR_OP = "bar.warp.sync %r2; mov.u32 %r5, %r4;"


@pytest.mark.parametrize("block,n", [(16, 32), (32, 16)])
def test_shfl_and_vote_run_for_a_partial_warp(block, n):
    """A block of 16 threads, or half the warp gone (not a deadlock): membermask 0xffffffff waits
    for the non-exited threads only."""
    out = np.zeros(32, np.uint32)
    r = P.run(SHFL.replace("OP", SHFL_OP), "s", 1, block, [out, np.uint32(0xFFFFFFFF), np.uint32(n)])
    assert list(r.buffers[0][:16]) == [30] * 16
    r = P.run(SHFL.replace("OP", VOTE_OP), "s", 1, block, [out, np.uint32(0xFFFFFFFF), np.uint32(n)])
    assert list(r.buffers[0][:16]) == [0xF] * 16


@pytest.mark.parametrize("op,name", [(SHFL_OP, "shfl.sync.idx.b32"), (VOTE_OP, "vote.sync.ballot.b32"),
                                     (BAR_OP, "bar.warp.sync")])
def test_a_thread_outside_its_membermask_is_refused(op, name):
    out = np.zeros(32, np.uint32)
    r = P.run(SHFL.replace("OP", op), "s", 1, 32, [out, np.uint32(0x0000FFFF), np.uint32(16)])
    assert r.buffers[0][:16].any()                          # lanes 0-15, all in the mask: fine
    with pytest.raises(P.PtxFault) as e:
        P.run(SHFL.replace("OP", op), "s", 1, 32, [out, np.uint32(0x0000FFFF), np.uint32(32)])
    msg = str(e.value)
    assert f"{name} with membermask 0x0000ffff: lane 16 executes it but is not in the membermask" in msg
    assert "undefined if the executing thread is not in the membermask" in msg and "(warp 0, lane 16)" in msg


def test_a_warp_split_over_two_mma_instructions_deadlocks_naming_the_rule():
    """if/else with an mma in each branch: the lanes wait at different .aligned instructions, and
    the deadlock line says why none can run."""
    body = MMA_BODY.replace("GUARD ", "")
    text = kernel(body + "\n  bra DONE;\nOTHER:\n  " + body, pre="@%p1 bra OTHER;")
    with pytest.raises(Deadlock) as e:
        P.run(text, "k", 1, 32, args(32, 16))
    msg = str(e.value)
    assert msg.startswith("deadlock: 16 thread(s) wait at the warp-synchronous instruction on line ")
    assert msg.count(".aligned: every lane of the warp must execute this same instruction") == 2
    assert "(warp 0, lane 16)" in msg
