"""Issue 22, "Tracebacks that must be one-line errors": the malformed PTX of the fuzzing campaign
(31 inputs over 14 causes, reconstructed) and the `.align` bounds. Each is a LayoutsimError of
one line that names the PTX line and the problem, from `ptx.run` and from `layoutsim ptx run`
(exit 2, nothing on stdout, no traceback); none is the safety net's PtxInternalError.
"""
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest

import layoutsim.ptx as ptx
from layoutsim.cli import main
from layoutsim.errors import LayoutsimError
from layoutsim.ptx.table import BY_OPCODE, Row
from layoutsim.ptx.internal import PtxInternalError, guarded, ptx_line
from layoutsim.ptx.launch import MAX_GLOBAL_BYTES

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
REGS = "    .reg .b32 %r<8>;\n    .reg .b64 %rd<8>;\n    .reg .f32 %f<8>;\n"
MMA = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"


def kernel(body="ret;", head="", params="", attrs="", regs=REGS):
    """A module whose entry k is at line 5 (HEAD is lines 1-3, head line 4) and body at line 10."""
    return f"{HEAD}{head}\n.visible .entry k({params}){attrs}\n{{\n{regs}    {body}\n}}\n"


BODY = 10           # the line of `body` in kernel()
ENTRY = 5           # the line of the entry header
# (id, PTX, the line the error names, words the message must hold)
CASES = [
    # 1. a body that is not there (the empty body itself runs: test_empty_body_runs)
    ("entry without body", f"{HEAD}.visible .entry k()\n", 4, ["no terminating ';'"]),
    ("body not closed", f"{HEAD}.visible .entry k()\n{{\n    ret;\n", 4, ["not closed"]),
    # 2. ValueError: integers that are not integers
    (".maxntid abc", kernel(attrs="\n.maxntid abc"), ENTRY, ["'abc' is not an integer", ".maxntid"]),
    (".maxntid 1.5", kernel(attrs="\n.maxntid 128, x"), ENTRY, ["'x' is not an integer"]),
    (".reqntid 08", kernel(attrs="\n.reqntid 08"), ENTRY, ["'08' is not an integer"]),
    (".align zz global", kernel(head=".global .align zz .b8 g[4];"), 4, [".align 'zz'", ".global g"]),
    (".align zz shared", kernel(".shared .align zz .b8 s[4];"), BODY, [".align 'zz'", ".shared s"]),
    ("address offset abc", kernel("ld.global.u32 %r1, [%rd1+abc];"), BODY, ["'abc' is not an integer"]),
    # 3. directives without their value
    (".version", kernel().replace(".version 8.0", ".version"), 1, [".version without a value"]),
    (".version x", kernel().replace(".version 8.0", ".version x"), 1, ["MAJOR.MINOR"]),
    (".target", kernel().replace(".target sm_90", ".target"), 2, [".target without a value"]),
    (".address_size abc", kernel().replace(".address_size 64", ".address_size abc"), 3, ["32 or 64"]),
    (".address_size", kernel().replace(".address_size 64", ".address_size"), 3, ["without a value"]),
    # 4. AttributeError: parameters that are not .param
    (".reg parameter", kernel(params=".reg .b32 x"), ENTRY, [".reg parameter", ".param"]),
    ("second .reg parameter", kernel(params=".param .b32 a, .reg .u64 y"), ENTRY, [".reg .u64 y"]),
    ("bare parameter", kernel(params="x"), ENTRY, ["cannot read declaration 'x'"]),
    # 5. RecursionError: 2,000-deep initializers and operands
    ("deep .const initializer", kernel(head=".const .b32 c[1] = " + "{" * 2000 + "1" + "}" * 2000 + ";"), 4,
     ["nested more than"]),
    ("deep vector operand", kernel("mov.b64 " + "{" * 2000 + "%r1" + "}" * 2000 + ", %rd1;"), BODY,
     ["nested more than"]),
    # 6. TypeError / IndexError: operand counts
    ("add.s32 %r1", kernel("add.s32 %r1;"), BODY, ["add.s32 takes 3 operands, not 1"]),
    ("add.s32 with 4 operands", kernel("add.s32 %r1, %r2, %r3, %r4;"), BODY, ["takes 3 operands, not 4"]),
    ("cp.async.wait_group", kernel("cp.async.wait_group;"), BODY, ["needs more operands than the 0"]),
    ("atom without operands", kernel("atom.global.add.u32;"), BODY, ["takes 3 to 5 operands, not 0"]),
    # 7. OverflowError: literals past 64 bits
    ("10^23 immediate", kernel("add.s32 %r1, %r2, 100000000000000000000000;"), BODY,
     ["integer 100000000000000000000000 is out of range"]),
    ("10^23 address offset", kernel("ld.global.u32 %r1, [%rd1+100000000000000000000000];"), BODY,
     ["out of range"]),
    ("0f with 12 digits", kernel("mov.f32 %f1, 0fFFFFFFFFFFFF;"), BODY, ["exactly 8 hex digits"]),
    # 8. ZeroDivisionError: vector movs of no or odd registers
    ("mov.b64 {}", kernel("mov.b64 {}, %rd1;"), BODY, ["2 or 4 registers, not 0"]),
    ("mov.b64 {a,b,c}", kernel("mov.b64 {%r1, %r2, %r3}, %rd1;"), BODY, ["2 or 4 registers, not 3"]),
    # 9. .b128: 16 opaque bytes between .b128 registers only (ops_clc.py's responses), and no wider register
    ("mov.b128", kernel("mov.b128 %rd1, %rd2;"), BODY, ["moves .b128 only between .b128 registers"]),
    (".reg .b128 stored as .b64", kernel("st.global.b64 [%rd1], %q;", regs=REGS + "    .reg .b128 %q;\n"), BODY + 1,
     ["moves .b128 only between .b128 registers"]),
    # 10. mma with the wrong register count
    ("mma with 2 D registers", kernel(f"{MMA} {{%f1,%f2}}, {{%r1,%r2,%r3,%r4}}, {{%r5,%r6}}, {{%f1,%f2,%f3,%f4}};"),
     BODY, ["operand d takes 4 32-bit register words per lane, not 2"]),
    ("mma with scalars", kernel(f"{MMA} %f1, %r1, %r2, %f3;"), BODY, ["operand d takes 4", "not 1"]),
    # 11. lone surrogates
    ("surrogate in an operand", kernel("mov.b32 %r1, \udcff;"), BODY, ["the byte 0xff, which is not UTF-8 text"]),
    ("surrogate in a comment", kernel("// \ud800\n    ret;"), BODY, ["lone surrogate"]),
]
assert len(CASES) >= 31


def _error(text):
    with pytest.raises(LayoutsimError) as e:
        ptx.run(text, "k", grid=1, block=32, args=[], max_steps=1000)
    return e.value


@pytest.mark.parametrize("text,line,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_ptx_is_one_line_naming_its_line(text, line, words):
    err = _error(text)
    msg = str(err)
    assert not isinstance(err, PtxInternalError), msg
    assert "\n" not in msg and msg.startswith(f"line {line}: "), msg
    for w in words:
        assert w in msg, (w, msg)


@pytest.mark.parametrize("text,line", [c[1:3] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_ptx_through_the_cli(tmp_path, capsys, text, line):
    """layoutsim ptx run (the function `python -m layoutsim.cli` calls): exit 2, one line on
    stderr naming the PTX line, nothing on stdout. The file holds the text as UTF-8 (a surrogate
    as Python writes it with surrogatepass: bytes that are not UTF-8, which the CLI reads as lone
    surrogates and the loader refuses with their line)."""
    f = tmp_path / "k.ptx"
    f.write_bytes(text.encode("utf-8", "surrogatepass"))
    rc = main(["ptx", "run", str(f), "--kernel", "k", "--grid", "1", "--block", "32", "--quiet"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "", (rc, out, err)
    assert err.startswith(f"layoutsim: error: line {line}: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "internal error" not in err, err


@pytest.mark.parametrize("name", ["add.s32 %r1", ".reg parameter", "mov.b64 {}"])
def test_malformed_ptx_through_python_m(tmp_path, name):
    """Three of the cases through a real `python -m layoutsim.cli` process."""
    text = next(c[1] for c in CASES if c[0] == name)
    f = tmp_path / "k.ptx"
    f.write_text(text)
    p = subprocess.run([sys.executable, "-m", "layoutsim.cli", "ptx", "run", str(f), "--kernel", "k",
                        "--grid", "1", "--block", "32", "--quiet"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_empty_body_runs():
    """An empty entry body (an IndexError in the scheduler before) is valid PTX: it does nothing."""
    r = ptx.run(f"{HEAD}.visible .entry k()\n{{\n}}\n", "k", grid=1, block=32, args=[])
    assert r.instructions == [] and r.warp_instructions == 0


def test_falling_off_the_end_counts_no_line():
    """A body without ret exits at its end; the last instruction's count is its own (the implicit
    exit used to add to it)."""
    r = ptx.run(kernel("add.s32 %r1, %r2, 1;", regs=REGS), "k", grid=1, block=32, args=[])
    assert [i.executions for i in r.instructions] == [1]


def test_labels_are_scoped_by_block():
    """Two inline asm blocks with the same label (as nvcc's `WAIT:` in every mbarrier wait) each
    branch to their own, forward too; the second used to capture both branches (r = 10)."""
    block = ("{{\n    .reg .pred p;\n    setp.eq.u32 p, %r1, {v};\n    @p bra SKIP;\n    add.u32 %r1, %r1, 100;\n"
             "SKIP:\n    add.u32 %r1, %r1, {add};\n    }}")
    body = ("ld.param.u64 %rd1, [out];\n    cvta.to.global.u64 %rd2, %rd1;\n    mov.u32 %r1, 0;\n    "
            + block.format(v=0, add=1) + "\n    " + block.format(v=1, add=10) + "\n    st.global.u32 [%rd2], %r1;\n    ret;")
    r = ptx.run(kernel(body, params=".param .u64 out"), "k", grid=1, block=1, args=[np.zeros(1, np.uint32)])
    assert r.buffers[0][0] == 11


def test_duplicate_label_is_refused():
    err = _error(kernel("L1:\n    add.s32 %r1, %r1, 1;\nL1:\n    ret;"))
    assert str(err).startswith(f"line {BODY + 2}: label L1 defined twice in one block of k (first at line {BODY})")


# ---- .align: a power of two, and the aligned extent bounded before anything is allocated ----------
@pytest.mark.parametrize("align", ["0", "3", "-16", "6", "0x30"])
def test_align_must_be_a_power_of_two(align):
    msg = str(_error(kernel(head=f".global .align {align} .b8 g[4];")))
    assert msg == (f"line 4: .align {align} of .global g: the alignment must be a power of two "
                   f"(1, 2, 4, ...; PTX ISA 5.4.5)")


@pytest.mark.parametrize("decl", [".shared .align 3 .b8 s[4];", ".local .align 0 .b8 l[4];"])
def test_align_in_a_body_must_be_a_power_of_two(decl):
    msg = str(_error(kernel(decl)))
    assert msg.startswith(f"line {BODY}: .align ") and "power of two" in msg


def test_align_of_a_parameter_must_be_a_power_of_two():
    msg = str(_error(kernel(params=".param .align 12 .b8 p[16]")))
    assert msg.startswith(f"line {ENTRY}: .align 12 of .param p: ")


def test_align_of_one_tebibyte_is_refused():
    msg = str(_error(kernel(head=".global .align 1099511627776 .b8 g[4];")))
    assert msg.startswith("line 4: .align 1099511627776 of .global g: the model places variables at most")


def test_eight_512_mib_alignments_are_refused_before_allocating():
    """8 variables at .align 2**29 each passed the 512 MiB bound (sizes only: 8 bytes) and
    allocated 4.3 GB; the aligned extent is bounded as each is placed, naming the variable."""
    head = "\n".join(f".global .align 536870912 .b8 g{i}[1];" for i in range(8))
    msg = str(_error(kernel(head=head)))
    assert msg.startswith("line 4: .global g0 (.align 536870912, 1 bytes) ends at byte ")
    assert f"may take at most {MAX_GLOBAL_BYTES} bytes" in msg


def test_aligned_variables_within_the_bound_run():
    head = "\n".join(f".global .align {1 << 20} .b8 g{i}[16];" for i in range(4))
    r = ptx.run(kernel(head=head), "k", grid=1, block=32, args=[])
    assert r.fault is None


# ---- the safety net -------------------------------------------------------------------------
def test_the_net_names_an_internal_error_and_its_line():
    """An unforeseen exception inside the executor is one line that says it is an internal error,
    names the PTX line a frame of the executor was at, and asks for a report."""
    from layoutsim.ptx import syntax

    @guarded("reading the PTX")
    def broken(text):
        return [syntax.parse_operand(o, 7) for o in text] and 1 / 0

    with pytest.raises(PtxInternalError) as e:
        broken(["%r1"])
    msg = str(e.value)
    assert msg.startswith("internal error of the PTX executor while reading the PTX: ZeroDivisionError: ")
    assert "please report it" in msg and "\n" not in msg
    assert isinstance(e.value, LayoutsimError)          # the CLI prints it on one line, exit 2


@pytest.mark.parametrize("when", ["compiling", "running"])
def test_the_net_names_the_ptx_line(when):
    """A handler that fails while it compiles (or its step while it runs) is caught at ptx.run
    with the line of the instruction: the frame of compile_step (`ins`) or of the scheduler
    (`step`) says where."""
    def fails(*args):
        raise KeyError("a bug")

    def handler(ins, b, prog):
        if when == "compiling":
            fails()
        return {"fn": fails}
    with mock.patch.dict(BY_OPCODE, {"popc": [Row("popc", "any", handler)]}):
        with pytest.raises(PtxInternalError) as e:
            ptx.run(kernel("add.s32 %r1, %r2, 1;\n    popc.b32 %r3, %r1;\n    ret;"), "k", 1, 32, [])
    msg = str(e.value)
    assert msg.startswith(f"internal error of the PTX executor while running the kernel at PTX line {BODY + 1}: "
                          f"KeyError: 'a bug'; "), msg


def test_ptx_line_is_none_outside_the_executor():
    try:
        {}["x"]
    except KeyError as e:
        assert ptx_line(e.__traceback__) is None


def test_the_net_lets_keyboard_interrupt_through():
    @guarded("running the kernel")
    def stop():
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        stop()
