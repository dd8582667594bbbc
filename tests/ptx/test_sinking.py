"""layoutsim.ptx.sinking: which ld.shared ptxas moves behind the early exit of the lanes that do not
use it, and what the costs then count. The rule's evidence is GPU data (the Triton corpus's ncu
counts, tests/triton_frontend/test_triton_corpus_replay.py: flaggems_sum_1/_2, fla_l2norm_fwd,
flaggems_layer_norm_bwd_wb); these tests pin the decision on small kernels of the same shape."""
import numpy as np

from layoutsim import ptx as P
from layoutsim.ptx import runner

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<8>; .reg .b64 %rd<4>; .reg .pred %p<4>;
 .shared .align 4 .b32 s[256];
 ld.param.u64 %rd1, [p];
 mov.u32 %r1, %tid.x;
 shl.b32 %r2, %r1, 2;
 mov.u32 %r3, s;
 add.s32 %r4, %r3, %r2;
 add.s32 %r7, %r1, 7;
 st.shared.b32 [%r4], %r7;
 bar.sync 0;
"""


def _kernel(body):
    return HEAD + body + "}\n"


def _line(text, start):
    return next(i for i, t in enumerate(text.splitlines(), 1) if t.strip().startswith(start))


def _sunk(text):
    prog = runner.program(text, "k", "sm_90")
    return {prog.sites[a].line: prog.sites[b].line for a, b in prog.sunk.items()}


END_STORE = """ ld.shared.b32 %r5, [s];
 setp.lt.u32 %p1, %r1, 32;
 cvt.u64.u32 %rd2, %r2;
 add.s64 %rd3, %rd1, %rd2;
 @%p1 st.global.b32 [%rd3], %r5;
 ret;
"""


def test_a_load_read_only_by_the_predicated_store_before_ret_is_sunk():
    text = _kernel(END_STORE)
    assert _sunk(text) == {_line(text, "ld.shared"): _line(text, "@%p1 st.global")}


def test_code_after_the_reader_keeps_the_load_in_place():
    text = _kernel(END_STORE.replace(" ret;\n", " add.s32 %r6, %r1, 1;\n st.global.b32 [%rd3+4096], %r6;\n ret;\n"))
    assert _sunk(text) == {}


def test_a_second_reader_or_an_unpredicated_reader_keeps_it():
    two = END_STORE.replace(" ret;\n", "").replace("@%p1 st.global.b32 [%rd3], %r5;",
                                                     "@%p1 st.global.b32 [%rd3], %r5;\n add.s32 %r6, %r5, 1;\n ret;")
    assert _sunk(_kernel(two)) == {}
    assert _sunk(_kernel(END_STORE.replace("@%p1 st.global", "st.global"))) == {}
    barrier = END_STORE.replace(" setp.lt.u32", " bar.sync 0;\n setp.lt.u32")
    assert _sunk(_kernel(barrier)) == {}


def test_the_sunk_load_costs_only_the_lanes_of_its_reader():
    text = _kernel(END_STORE)
    out = np.zeros(1024 + 4096, np.uint8)
    r = P.run(text, "k", (1, 1, 1), (256, 1, 1), [out])
    line = _line(text, "ld.shared")
    row = next(s for s in r.instructions if s.line == line)
    # 8 warps execute the PTX load, one (lanes 0-31) runs its reader: one broadcast wavefront
    assert row.executions == 8 and row.wavefronts == 1 and "sinks this load" in row.note
    got = np.asarray(r.buffers[0]).view(np.uint32)
    assert got[:64].tolist() == [7] * 32 + [0] * 32    # s[0], by lanes 0-31



# ptxas sinks a global load past a conditional branch when every reader of its value lies on the
# path the branch falls through to (SASS of Triton's grouped GEMM, tutorial 08, for sm_90a: the LDG of
# a group's K issued after the `@P BRA`; ncu on the GPU counts it for the lanes that fall through,
# tests/triton_frontend/test_triton_corpus_replay.py: tut_grouped_gemm and tut_grouped_gemm_tma)
PAST_BRANCH = """ cvt.u64.u32 %rd2, %r2;
 add.s64 %rd3, %rd1, %rd2;
 ld.global.b32 %r5, [%rd3];
 setp.ge.u32 %p1, %r1, 64;
 @%p1 bra DONE;
 add.s32 %r6, %r5, 1;
 st.global.b32 [%rd3+4096], %r6;
DONE:
 ret;
"""


def test_a_global_load_read_only_past_a_branch_is_sunk_to_the_fall_through_access():
    text = _kernel(PAST_BRANCH)
    assert _sunk(text) == {_line(text, "ld.global"): _line(text, "st.global")}
    # a reader before the branch, or one on the branch's target, keeps it in place
    before = PAST_BRANCH.replace(" setp.ge.u32 %p1, %r1, 64;", " setp.ge.u32 %p1, %r5, 64;")
    assert _sunk(_kernel(before)) == {}
    after = PAST_BRANCH.replace(" ret;\n", " st.global.b32 [%rd3+8192], %r5;\n ret;\n")
    assert _sunk(_kernel(after)) == {}
    # ld.shared is left in place (CUB's select_if: ncu counts it for every lane)
    shared = PAST_BRANCH.replace(" ld.global.b32 %r5, [%rd3];", " ld.shared.b32 %r5, [s];")
    assert _sunk(_kernel(shared)) == {}


def test_the_load_sunk_past_a_branch_costs_only_the_lanes_that_fall_through():
    text = _kernel(PAST_BRANCH)
    buf = np.arange((1024 + 4096) // 4, dtype=np.uint32)
    r = P.run(text, "k", (1, 1, 1), (256, 1, 1), [buf])
    row = next(s for s in r.instructions if s.line == _line(text, "ld.global"))
    # 8 warps execute the PTX load; lanes 0-63 (two warps, 128 contiguous bytes each) fall through
    assert row.executions == 8 and row.sectors == 8 and "sinks this load" in row.note
    got = np.asarray(r.buffers[0])
    assert np.array_equal(got[1024:1024 + 64], np.arange(64) + 1)
