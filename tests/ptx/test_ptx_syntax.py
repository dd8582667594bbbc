"""The PTX front end: statements, operands, register scopes, debug lines, and the one-line errors
for what it cannot read or run (each names the line)."""
import numpy as np
import pytest
from ptx_kernels import ptx

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError
from layoutsim.ptx.module import load
from layoutsim.ptx.syntax import parse_instruction, statements

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def test_statements_split_and_keep_lines():
    text = HEAD + "// comment\n.visible .entry k(\n .param .u64 k_p0\n)\n.maxntid 64, 1, 1\n{\n" \
                  "\t.reg .b32 %r<3>; /* block\ncomment */\n$L1:\n\tadd.s32 %r1, %r2, 4;\n}\n"
    items = statements(text)
    kinds = [(s.kind, s.line) for s in items]
    assert ("header", 5) in kinds and ("open", 9) in kinds and ("label", 12) in kinds
    add = next(s for s in items if s.text.startswith("add"))
    assert add.line == 13


def test_operands():
    ins = parse_instruction("@!%p1 ld.global.v4.f32 {%f1, %f2, _, %f4}, [%rd3+-16];", 7)
    assert ins.guard == ("%p1", True) and ins.opcode == "ld" and ins.mods == ("global", "v4", "f32")
    vec, addr = ins.operands
    assert [str(o) for o in vec.value] == ["%f1", "%f2", "_", "%f4"]
    assert str(addr.base) == "%rd3" and addr.offset == -16
    s = parse_instruction("shfl.sync.bfly.b32 %r10|%p3, %r6, 0x10, 31, -1;", 1)
    assert s.operands[0].kind == "pair" and s.operands[2].value == 16 and s.operands[4].value == -1
    f = parse_instruction("mov.f32 %f1, 0fBF800000;", 1)
    assert f.operands[1].value[:2] == (0xBF800000, 32)


def test_scoped_registers_and_cuda_lines():
    m = load(ptx("wmma"))
    fn = m.functions["gemm_tf32"]
    # cvt.rna.tf32.f32 in the wmma header declares its own temporary in an inline-asm block
    scoped = [k for k in fn.regs if "#" in k]
    assert scoped
    lines = {m.cuda_line(i, fn) for i in fn.body if hasattr(i, "opcode")}
    assert {path.rsplit("/", 1)[-1] for path, _ in lines if path} == {"wmma.cu"}


INLINED = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<4>;
	.loc	1 22 16                         // kernels.py:22:16
	mov.u32 %r1, 1;
	.loc	2 191 40                        // standard.py:191:40 @[ kernels.py:23:19 ]
	mov.u32 %r2, 2;
	.loc	2 170 27                        // standard.py:170:27 @[ standard.py:191:40 @[ kernels.py:23:19 ] ]
	mov.u32 %r3, 3;
	.loc	2 60 1                          // standard.py:60:1
	ret;
}
	.file	1 "/home/u/kernels.py"
	.file	2 "/usr/lib/python3/site-packages/triton/language/standard.py"
"""


def test_a_loc_without_inlined_at_takes_the_call_site_llvm_writes_in_its_comment():
    # Triton's PTX gives an inlined tl.max only a comment: `.loc 2 191 40 // standard.py:191:40
    # @[ kernels.py:23:19 ]` (no inlined_at attribute); its cost belongs to line 23, not to the
    # kernel line before it (22). Without a call site the previous kernel line stands.
    m = load(INLINED)
    fn = m.functions["k"]
    got = [m.cuda_line(i, fn) for i in fn.body if hasattr(i, "opcode")]
    assert [line for _, line in got] == [22, 23, 23, 23]
    assert {path for path, _ in got} == {"/home/u/kernels.py"}


def test_unknown_kernel_lists_entries():
    with pytest.raises(LayoutsimError, match=r"kernel 'gemm' is not in the PTX .did you mean: .*; its entries: "
                                             r"gemm_f16, gemm_bf16"):
        P.run(ptx("wmma"), "gemm", 1, 32, [])


def test_unsupported_instruction_names_itself_and_its_line():
    text = HEAD + ".visible .entry k(.param .u64 p)\n{\n.reg .b64 %rd<2>;\n.reg .f32 %f<2>;\n" \
                  "ld.param.u64 %rd1, [p];\nsured.b.add.1d.b32.trap [%rd1, {%f1}], %f1;\nret;\n}\n"
    with pytest.raises(P.UnsupportedPtx, match=r"^line 9: unsupported instruction sured.b.add.1d.b32.trap"):
        P.run(text, "k", 1, 32, [np.zeros(4)])


def test_unsupported_directive_names_its_line():
    text = HEAD + ".visible .entry k()\n{\n.reg .b32 %r<2>;\n.loop_unroll 4;\nret;\n}\n"
    with pytest.raises(P.UnsupportedPtx, match=r"^line 7: unsupported directive .loop_unroll"):
        load(text)


def test_unreadable_operand_names_its_line():
    text = HEAD + ".visible .entry k()\n{\n.reg .b32 %r<3>;\nadd.s32 %r1, %r2, ?;\nret;\n}\n"
    with pytest.raises(LayoutsimError, match=r"^line 7: cannot read operand '\?'"):
        P.run(text, "k", 1, 32, [])


def test_unbounded_recursion_overflows_the_call_stack():
    # recursion runs on a per-thread call stack (docs/ptx.md 'Recursion'): more than 1024 nested
    # activations is a fault of kind stack_overflow
    text = HEAD + (".func f(.param .b32 a)\n{\n.reg .b32 %r<2>;\nld.param.b32 %r1, [a];\n"
                   "{ .param .b32 q; st.param.b32 [q], %r1; call.uni f, (q); }\nret;\n}\n"
                   ".visible .entry k()\n{\n{ .param .b32 q; st.param.b32 [q], 1; call.uni f, (q); }\nret;\n}\n")
    with pytest.raises(P.PtxFault) as e:
        P.run(text, "k", 1, 32, [])
    assert e.value.fault["kind"] == "stack_overflow" and "more than 1024 nested activations of f" in str(e.value)


def test_kernel_from_inline_ptx_text():
    """A hand-written kernel: d[i] = (a[i] << 2) | 1 for i < n, with a guarded branch."""
    text = HEAD + """
.visible .entry k(.param .u64 pa, .param .u64 pd, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<6>;
    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pd];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    mul.wide.u32 %rd3, %r2, 4;
    add.s64 %rd4, %rd1, %rd3;
    ld.global.u32 %r3, [%rd4];
    shl.b32 %r4, %r3, 2;
    or.b32 %r5, %r4, 1;
    add.s64 %rd5, %rd2, %rd3;
    st.global.u32 [%rd5], %r5;
DONE:
    ret;
}
"""
    a = np.arange(40, dtype=np.uint32) * 7
    d = np.zeros(40, np.uint32)
    r = P.run(text, "k", 1, 64, [a, d, 33])
    want = d.copy()
    want[:33] = (a[:33] << 2) | 1
    assert np.array_equal(r.buffers[1], want)
    assert r.buffers[2] is None
    ex = {s.text.split()[0]: s.executions for s in r.instructions}
    assert ex["ld.global.u32"] == 2 and ex["ret"] == 2    # two warps; the second only partly active
