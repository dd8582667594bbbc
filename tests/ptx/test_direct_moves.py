"""The executor's direct register moves against the general path they stand in for
(LAYOUTSIM_PTX_REFERENCE=1, core_ldmatrix.load and packing through the per-lane words):
ptx/mma_regs.py puts ldmatrix's rows straight into the registers, and ptx/mma_runs.py computes a
run of independent mma.sync steps as one batch. Every ldmatrix form of the catalog, rows at random
16-byte aligned offsets (a lane's address is any row of the tile, repeats allowed), run by both
warps of the block and by one warp of two (the other keeps its registers), gives the same
registers; a step limit inside a run of mma.sync stops where the steps one by one stop. The
expected values are the general path's own (itself checked against the PTX ISA's fragment figures
in tests/ptx/test_ptx_matrix.py)."""
import numpy as np
import pytest

import layoutsim.ptx as P
from gpu_check.kernel_corpus import launches as L
from layoutsim.ptx import runner
from layoutsim.ptx.watch import RunLimit

FORMS = [(x, trans) for x in (1, 2, 4) for trans in (False, True)]

KERNEL = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pin, .param .u64 prow, .param .u64 pout, .param .u32 warps)
{{
  .reg .b32 %r<24>; .reg .b64 %rd<16>; .reg .pred %p<4>;
  .shared .align 16 .b8 tile[2048];
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [pin]; ld.param.u64 %rd2, [prow]; ld.param.u64 %rd3, [pout];
  ld.param.u32 %r2, [warps];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3;
  mul.wide.u32 %rd4, %r1, 32; add.s64 %rd5, %rd1, %rd4;
  ld.global.v4.b32 {{%r4, %r5, %r6, %r7}}, [%rd5];
  ld.global.v4.b32 {{%r8, %r9, %r10, %r11}}, [%rd5+16];
  mov.u32 %r3, tile; mul.lo.u32 %r12, %r1, 32; add.u32 %r13, %r3, %r12;
  st.shared.v4.b32 [%r13], {{%r4, %r5, %r6, %r7}};
  st.shared.v4.b32 [%r13+16], {{%r8, %r9, %r10, %r11}};
  bar.sync 0;
  mul.wide.u32 %rd6, %r1, 4; add.s64 %rd7, %rd2, %rd6;
  ld.global.u32 %r14, [%rd7]; add.u32 %r15, %r3, %r14;
  mov.u32 %r16, 0; mov.u32 %r17, 0; mov.u32 %r18, 0; mov.u32 %r19, 0;
  shr.u32 %r20, %r1, 5; setp.lt.u32 %p1, %r20, %r2;
  @!%p1 bra DONE;
  ldmatrix.sync.aligned.m8n8.x{x}{trans}.shared.b16 {{{regs}}}, [%r15];
DONE:
  mul.wide.u32 %rd8, %r1, 16; add.s64 %rd9, %rd3, %rd8;
  st.global.v4.b32 [%rd9], {{%r16, %r17, %r18, %r19}};
  ret;
}}
"""


@pytest.mark.parametrize("x,trans", FORMS, ids=[f"x{x}{'.trans' if t else ''}" for x, t in FORMS])
@pytest.mark.parametrize("warps", [2, 1], ids=["both warps", "one warp of two"])
def test_ldmatrix_direct_is_the_general_path(monkeypatch, x, trans, warps):
    ptx = KERNEL.format(x=x, trans=".trans" if trans else "", regs=", ".join(f"%r{16 + i}" for i in range(x)))
    rng = np.random.default_rng(x * 10 + trans + 100 * warps)
    data = rng.integers(0, 1 << 32, 64 * 8, dtype=np.uint64).astype(np.uint32)     # 2048 bytes of tile
    rows = (rng.integers(0, 128, 64) * 16).astype(np.uint32)                         # any 16-byte row
    outs = []
    for reference in ("", "1"):
        monkeypatch.setenv("LAYOUTSIM_PTX_REFERENCE", reference)
        r = P.run(ptx, "k", (1, 1, 1), (64, 1, 1), [data, rows, np.zeros(256, np.uint32), np.uint32(warps)])
        outs.append(r.buffers[2].copy())
    assert np.array_equal(outs[0], outs[1])
    assert outs[0][:32 * 4].any()                              # the first warp loaded something
    if warps == 1:
        assert not outs[0][32 * 4:].any()                      # the second kept its zeros


def _limit(s, max_steps):
    """The RunLimit message of a launch stopped at max_steps, or None if it ends first."""
    try:
        P.run(s.ptx, s.kernel, s.grid, s.block, s.args, max_steps=max_steps, **s.options)
    except RunLimit as e:
        return str(e)
    return None


def test_mma_runs_stop_where_their_steps_stop(monkeypatch):
    """CuTe's sm80 GEMM runs 32 mma.sync in a row (mma_runs.py joins them): a step limit that
    falls inside such a run stops the run at the same step, with the same lines, as the steps one
    by one; the whole run gives the same buffers and report (test_fast_path.py)."""
    s = L.setup("cute", "cute_hgemm_sm80_tn")
    prog = runner.program(s.ptx, s.kernel, s.options.get("arch", "sm_90"))
    assert [k for k, _ in filter(None, prog.fused)] == [32] * 4
    got = {}
    for reference in ("", "1"):
        monkeypatch.setenv("LAYOUTSIM_PTX_REFERENCE", reference)
        got[reference] = [_limit(s, n) for n in range(590, 1800, 41)]
    assert got[""] == got["1"] and all(got[""])
