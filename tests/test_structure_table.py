"""The executor's instruction table (layoutsim/ptx/table.py, issue 23): one row per form, a row
for every opcode the committed kernels use, the table's refusals in the ISA's wording, the sync
class it gives the steps, no import inside a function among ptx/ modules and no handler reaching
into another module's private names; and bmsk, the worked example of
docs/dev/adding-an-instruction.md, against the ISA's pseudo-code."""
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as ptx
from layoutsim.errors import LayoutsimError
from layoutsim.ptx import table
from layoutsim.ptx.ops_int import bmsk_formula
from layoutsim.ptx.runner import program

ROOT = Path(__file__).resolve().parents[1]
PTX_DIR = ROOT / "layoutsim" / "ptx"
OPTIONAL = ("numba", "matplotlib")
# The imports a ptx/ module makes inside a function, each of something only some runs need, which
# `import layoutsim.ptx` (and so every `ptx run`, issue 26: a first answer in 0.3 s) would pay for:
# - parallel.run_parallel's multiprocessing: only jobs > 1 (~14 ms);
# - ops_float's fma_kernel, which imports numba at its top (~0.5 s): only once some other part of
#   the run has numba up (ops_float._compiled), so a kernel without MMAs never pays for it;
# - the pictures and layoutsim.sim: render (Run.render_access, samples.py) and sim.costing (a
#   wgmma's operand-read cost, costs.py) (~20 ms);
# - costs_wmma, with layoutsim.warpcore and the numerics behind it, for a wmma (~8 ms); layoutsim.smem
#   for a tensor map (~10 ms); the demangler for a kernel name the PTX does not spell (~4 ms);
#   nvcc.py for a .cu; subprocess and concurrent.futures for a PTX whose lowering no cache holds
#   (~9 ms: lowering.py runs ptxas, sass.py in a thread);
# - the op families: table.py names each row's handler as (family, function) and imports the family
#   (importlib.import_module) when an instruction first binds it (all of them: ~15 ms);
# - mma_runs (with mma_regs, packing and collective), for a program with an mma.sync step.
LAZY = {("parallel.py", "multiprocessing"), ("ops_float.py", ".fma_kernel"), ("costs.py", "..sim.costing"),
        ("program.py", ".mma_runs"),
        ("samples.py", "..render.banks"), ("samples.py", "..render.sectors"), ("samples.py", "..render"),
        ("costs.py", ".costs_wmma"), ("tensormap.py", "..smem"), ("kernel_names.py", "..demangle"),
        ("__init__.py", ".nvcc"), ("lowering.py", "subprocess"), ("lowering.py", "concurrent.futures"),
        ("sass.py", "concurrent.futures"), ("table.py", "importlib.import_module")}
HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def _kernel(body, params=""):
    return (f"{HEAD}.visible .entry k({params})\n{{\n    .reg .b32 %r<8>;\n    .reg .b64 %rd<8>;\n"
            f"    .reg .f32 %f<8>;\n    .reg .pred %p<4>;\n    {body}\n    ret;\n}}\n")


def _committed_ptx():
    return sorted((ROOT / "tests" / "ptx" / "kernels").glob("*.ptx")) + sorted((ROOT / "tests" / "data").rglob("*.ptx"))


def _opcodes(text):
    """The opcodes of a PTX text's instructions (a statement that starts with a lowercase word
    followed by a dot or space, less directives, labels and declarations)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    found = set()
    for stmt in re.split(r"[;{}]", text):
        s = re.sub(r"^\s*(?:[$\w]+:\s*)*", "", stmt).strip()
        s = re.sub(r"^@!?%?[\w$]+\s+", "", s)
        m = re.match(r"([a-z][a-z0-9_]*)(?=[.\s]|$)", s)
        if m and not s.startswith("."):
            found.add(m.group(1))
    return found


# ---------------------------------------------------------------- the table's shape
def test_no_form_in_two_rows():
    keys = [r.key for r in table.ROWS]
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    with pytest.raises(AssertionError, match="add int .* has two rows"):
        table._index(table.ROWS + [table.ROWS[0]])


def test_every_row_names_a_handler_class_and_sync():
    for r in table.ROWS:
        assert callable(r.handler), r
        assert r.types in table.CLASSES and r.sync in table.SYNC, r
        assert r.handler.__module__.startswith("layoutsim.ptx.ops_"), r
    # a type-split opcode has a row for each family that serves it
    assert {r.types for r in table.BY_OPCODE["add"]} == {"int", "float", "half"}


def test_every_opcode_of_the_committed_kernels_has_a_row():
    paths = _committed_ptx()
    assert len(paths) > 20
    used = set().union(*(_opcodes(p.read_text()) for p in paths))
    assert {"ld", "st", "mma", "ldmatrix", "wgmma", "bra", "setp", "cp"} <= used     # the reader reads
    missing = sorted(used - set(table.BY_OPCODE))
    assert not missing, f"opcodes without a row: {missing}"


def test_every_committed_kernel_binds_through_its_rows():
    """Every instruction of the committed kernels finds its row (its modifiers legal) and the
    step the handler builds has the row's synchronisation class."""
    from layoutsim.ptx import UnsupportedPtx
    for path in _committed_ptx():
        text = path.read_text()
        for entry in re.findall(r"\.entry\s+([\w$]+)", text):
            prog = program(text, entry, "sm_90")
            for st in prog.steps:
                if st.ins is None or st.kind in ("exit", "trap"):
                    continue
                row = table.row_for(st.ins)
                want = {"aligned": "all", "warpgroup": "warpgroup"}.get(row.sync)
                if want:
                    assert st.sync == want, (path.name, st.ins.text)
                elif row.sync == "membermask":
                    assert callable(st.sync), (path.name, st.ins.text)
                elif row.sync == "cta":
                    assert st.kind == "bar", (path.name, st.ins.text)
                else:
                    assert st.sync is None, (path.name, st.ins.text)


def test_add_f32_goes_straight_to_the_float_family():
    from layoutsim.ptx.syntax import parse_instruction
    for text, family in (("add.f32 %f1, %f2, %f3;", "ops_float"), ("add.s32 %r1, %r2, %r3;", "ops_int"),
                         ("add.rn.f16x2 %r1, %r2, %r3;", "ops_half"), ("mul.wide.u32 %rd1, %r1, %r2;", "ops_int"),
                         ("cp.async.bulk.commit_group;", "ops_async"), ("cp.async.commit_group;", "ops_mem")):
        row = table.row_for(parse_instruction(text, 1))
        assert row.handler.__module__ == f"layoutsim.ptx.{family}", text


# ---------------------------------------------------------------- refusals in the ISA's wording
@pytest.mark.parametrize("body, words", [
    ("add.cc.f32 %f1, %f2, %f3;", ["line 10: add.f32 does not take .cc", "PTX ISA 9.7.3.3"]),
    ("add.sat.u32 %r1, %r2, %r3;", ["add.u32 does not take .sat", "add.sat applies to .s32 only"]),
    ("add.cc.u16 %r1, %r2, %r3;", ["add.u16 does not take .cc", "applies to .u32/.s32/.u64/.s64 only"]),
    ("mul.lo.rn.s32 %r1, %r2, %r3;", ["mul.s32 does not take .rn", "PTX ISA 9.7.1.3"]),
    ("bmsk.b32 %r1, %r2, %r3;", ["bmsk takes one mode"]),
    ("bmsk.clamp.wrap.b32 %r1, %r2, %r3;", ["bmsk takes one mode"]),
    ("bmsk.up.b32 %r1, %r2, %r3;", ["bmsk.b32 does not take .up", ".clamp, .wrap"]),
    ("st.const.u32 [%rd1], %r1;", ["st does not take the state space .const", "PTX ISA 9.7.9.10"]),
    ("fma.rn.s32 %r1, %r2, %r3, %r4;", ["type .s32: fma takes float, half types"]),
    ("add.rn.e4m3x2 %r1, %r2, %r3;", ["type .e4m3x2: add takes int, float, half types"]),
    ("frobnicate.b32 %r1, %r2;", ["unsupported instruction frobnicate.b32"]),
    ("add.ftz.f64 %rd1, %rd2, %rd3;", ["add.f64 does not take .ftz", "add.ftz applies to .f32 only"]),
    ("min.relu.u32 %r1, %r2, %r3;", ["min.u32 does not take .relu", "applies to .s32/.s16x2 only"]),
    ("popc.b32 %r1, %r2, %r3;", ["line 10: popc.b32 takes 2 operands, not 3"]),
    ("bmsk.wrap.b32 %r1, %r2;", ["bmsk.wrap.b32 takes 3 operands, not 2"]),
    ("sin.approx.rn.f32 %f1, %f2;", ["sin.f32 does not take .rn"]),
    ("ld.global.v3.f32 {%f1, %f2, %f3}, [%rd1];", ["ld does not take .v3", "the vectors .v2, .v4, .v8"]),
    # every row has its modifier set (PTX ISA 9.0 syntax blocks of the sections each message cites)
    ("ld.global.ca.cg.u32 %r1, [%rd1];", ["names both .ca and .cg", "PTX ISA 9.7.9.8: ld takes at most one of .ca"]),
    ("ld.global.L1::evict_last.L1::no_allocate.u32 %r1, [%rd1];", ["both .L1::evict_last and .L1::no_allocate"]),
    ("ld.global.ca.L1::evict_last.u32 %r1, [%rd1];", ["names both .ca and .L1::evict_last"]),
    ("ld.relaxed.global.u32 %r1, [%rd1];", [".relaxed needs one of .cta, .cluster, .gpu, .sys (PTX ISA 9.7.9.8)"]),
    ("ld.global.gpu.u32 %r1, [%rd1];", [".gpu needs one of .relaxed, .acquire"]),
    ("ld.shared.nc.u32 %r1, [%rd1];", [".nc needs .global (PTX ISA 9.7.9.8)"]),
    ("ld.mmio.global.u32 %r1, [%rd1];", [".mmio needs .relaxed"]),
    ("ld.global.L2::512B.u32 %r1, [%rd1];", ["ld.u32 does not take .L2::512B"]),
    ("st.global.ca.u32 [%rd1], %r1;", ["st.u32 does not take .ca", "PTX ISA 9.7.9.10"]),
    ("st.acquire.gpu.global.u32 [%rd1], %r1;", ["st.u32 does not take .acquire"]),
    ("atom.global.add.exch.u32 %r1, [%rd1], %r2;", ["names both .add and .exch", "PTX ISA 9.7.13.5"]),
    ("red.global.cas.b32 [%rd1], %r2;", ["red.b32 does not take .cas", "PTX ISA 9.7.13.6"]),
    ("cvt.rn.rz.f32.f16 %f1, %r1;", ["names both .rn and .rz", "PTX ISA 9.7.9.21"]),
    ("mov.sat.u32 %r1, %r2;", ["mov.u32 does not take .sat", "mov takes no modifier beside its type"]),
    ("setp.lt.gt.s32 %p1, %r1, %r2;", ["names both .lt and .gt", "PTX ISA 9.7.6.2"]),
    ("shfl.sync.up.down.b32 %r1, %r2, 1, 0, -1;", ["names both .up and .down", "PTX ISA 9.7.9.6"]),
    ("ldmatrix.sync.aligned.m8n8.x3.shared.b16 {%r1}, [%rd1];", ["ldmatrix.b16 does not take .x3"]),
    ("bar.sync.arrive 0;", ["names both .sync and .arrive", "PTX ISA 9.7.13.1"]),
    ("membar.gpu;", ["membar does not take .gpu", "PTX ISA 9.7.13.4"]),
    ("cp.async.ca.cg.shared.global [%rd1], [%rd2], 4;", ["names both .ca and .cg", "PTX ISA 9.7.9.25"]),
])
def test_the_table_refuses_an_illegal_form_in_one_line(body, words):
    with pytest.raises(LayoutsimError) as e:
        ptx.run(_kernel(body), "k", 1, 32, [])
    msg = str(e.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg


def test_legal_forms_pass_the_table():
    body = ("add.sat.s32 %r1, %r2, %r3;\n    add.cc.u32 %r1, %r2, %r3;\n    addc.u32 %r4, %r2, %r3;\n"
            "    add.rz.ftz.sat.f32 %f1, %f2, %f3;\n    mad.hi.sat.s32 %r1, %r2, %r3, %r4;\n"
            "    mul.wide.s32 %rd1, %r1, %r2;\n    div.full.ftz.f32 %f1, %f2, %f3;\n")
    ptx.run(_kernel(body), "k", 1, 32, [])


# spellings nvcc 13.0 emits (CUDA samples, llm.c and CUTLASS 4.2 compiled for sm_80/sm_90/sm_90a)
# and the ISA's other legal forms of the rows that now list their modifiers (PTX ISA 9.0)
LEGAL = """ld.global.nc.L1::no_allocate.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];
ld.global.L1::evict_last.L2::cache_hint.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1], %rd2;
ld.global.nc.L2::128B.f32 %f1, [%rd1];
ld.global.L1::evict_first.L2::evict_last.L2::256B.u32 %r1, [%rd1];
ld.relaxed.gpu.v2.u64 {%rd1, %rd2}, [%rd3];
ld.acquire.sys.global.u8 %rs1, [%rd1];
ld.volatile.shared.f32 %f1, [%rd1];
ld.mmio.relaxed.sys.global.u32 %r1, [%rd1];
ld.weak.shared::cta.b32 %r1, [%rd1];
ld.ca.u32 %r1, [%rd1];
st.global.L1::no_allocate.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
st.release.sys.global.u8 [%rd1], %rs1;
st.global.wt.L2::cache_hint.u32 [%rd1], %r1, %rd2;
atom.global.sys.cas.b32 %r1, [%rd1], %r2, %r3;
atom.or.acq_rel.cta.b32 %r1, [%rd1], %r2;
atom.global.add.noftz.f16x2 %r1, [%rd1], %r2;
red.and.release.cta.b32 [%rd1], %r1;
red.relaxed.gpu.global.add.L2::cache_hint.u32 [%rd1], %r1, %rd2;
cp.async.cg.shared.global.L2::128B [%r1], [%rd1], 16, %r2;
cp.async.ca.shared.global.L2::cache_hint [%r1], [%rd1], 4, %rd2;
cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];
cp.async.bulk.wait_group.read 0;
cvt.rna.tf32.f32 %r1, %f1;
cvt.rn.relu.satfinite.bf16x2.f32 %r1, %f1, %f2;
cvt.rn.satfinite.e4m3x2.f32 %rs1, %f1, %f2;
cvt.rzi.ftz.sat.s32.f32 %r1, %f1;
fence.proxy.async.shared::cta;
fence.mbarrier_init.release.cluster;
fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;
fence.sc.gpu;
mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 %p1, [%r1], %r2, %r3;
mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %rd1, [%r1], %r2;
ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];
stmatrix.sync.aligned.m8n8.x2.shared::cta.b16 [%r1], {%r2, %r3};
mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r11, %r12, %r13, %r14};
wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {%f1}, %rd1, %rd2, %p1, 1, 1;
wgmma.wait_group.sync.aligned 0;
barrier.sync.aligned 1, 128;
bar.red.popc.u32 %r1, 0, %p1;
setmaxnreg.inc.sync.aligned.u32 240;
setp.ltu.and.ftz.f32 %p1, %f1, %f2, %p2;
prefetch.global.L2::evict_last [%rd1];
createpolicy.fractional.L2::evict_first.b64 %rd1, 1.0;"""


def test_legal_spellings_pass_the_table():
    from layoutsim.ptx.syntax import parse_instruction
    for text in LEGAL.splitlines():
        table.row_for(parse_instruction(text, 1))


# ---------------------------------------------------------------- imports
def _function_imports(path):
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import):
                    out += [(sub.lineno, a.name) for a in sub.names]
                elif isinstance(sub, ast.ImportFrom) and sub.module is None:     # from .. import smem
                    out += [(sub.lineno, "." * sub.level + a.name) for a in sub.names]
                elif isinstance(sub, ast.ImportFrom):
                    out.append((sub.lineno, "." * sub.level + sub.module))
                elif isinstance(sub, ast.Call) and ast.unparse(sub.func) in ("importlib.import_module", "import_module"):
                    out.append((sub.lineno, "importlib.import_module"))
    return sorted(out)


def test_no_import_inside_a_function_among_ptx_modules():
    bad = [f"{p.name}:{line} imports {name}" for p in sorted(PTX_DIR.glob("*.py"))
           for line, name in _function_imports(p)
           if name.split(".")[0] not in OPTIONAL and (p.name, name) not in LAZY]
    assert not bad, "\n".join(bad)


LAZY_MODULES = ("multiprocessing", "numpy.random", "layoutsim.ptx.ops_tcgen05", "layoutsim.ptx.ops_wgmma",
                "layoutsim.ptx.ops_matrix", "layoutsim.ptx.ops_video", "layoutsim.ptx.ops_texture",
                "layoutsim.ptx.costs_wmma", "layoutsim.warpcore", "layoutsim.smem", "layoutsim.demangle",
                "layoutsim.ptx.nvcc")


def test_the_lazy_import_stays_lazy():
    """import layoutsim.ptx loads no multiprocessing and no op family the kernel has not used
    (LAZY); a fresh process, as a user's."""
    code = f"import sys, layoutsim.ptx; print(sorted(m for m in {LAZY_MODULES} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert out.strip() == "[]"
    # and binding an instruction loads its family
    code = ("import sys, layoutsim.ptx.table as t, layoutsim.ptx.syntax as s; "
            "t.row_for(s.parse_instruction('vadd2.u32.u32.u32 %r1, %r2, %r3, %r4;', 1)).handler; "
            "print('layoutsim.ptx.ops_video' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout
    assert out.strip() == "True"


def test_no_ptx_module_imports_another_ptx_modules_private_names():
    bad = []
    for p in sorted(PTX_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                bad += [f"{p.name}:{node.lineno} {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_")]
    assert not bad, "\n".join(bad)


def test_the_reader_sees_a_function_level_import(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("import os\ndef f():\n    from .ops_half import half_arith\n    import numba\n"
                    "    importlib.import_module('x')\n    from .. import smem\n")
    assert _function_imports(path) == [(3, ".ops_half"), (4, "numba"), (5, "importlib.import_module"),
                                       (6, "..smem")]


# ---------------------------------------------------------------- bmsk against the ISA
def _bmsk_isa(a, b, clamp):
    """PTX ISA 9.7.1.22 bmsk's pseudo-code, line by line, over Python integers."""
    a1 = a & 0x1F
    mask0 = (~0 << a1) & 0xFFFFFFFF
    b1 = b & 0x1F
    total = a1 + b1
    mask1 = (~0 << total) & 0xFFFFFFFF
    sum_overflow = total >= 32
    position_overflow = width_overflow = False
    if clamp:
        if a >= 32:
            position_overflow, mask0 = True, 0
        if b >= 32:
            width_overflow = True
    if sum_overflow or position_overflow or width_overflow:
        mask1 = 0
    elif b1 == 0:
        mask1 = 0xFFFFFFFF
    return mask0 & ~mask1 & 0xFFFFFFFF


def test_bmsk_formula_is_the_isa_on_every_small_input():
    # a and b over 0..69 cover the wrap (32..63), the clamp (>= 32) and sums past bit 31
    a, b = (x.reshape(-1).astype(np.uint32) for x in np.meshgrid(np.arange(70), np.arange(70)))
    for clamp in (False, True):
        got = bmsk_formula(a, b, clamp)
        want = [_bmsk_isa(int(x), int(y), clamp) for x, y in zip(a, b)]
        assert got.tolist() == want, clamp
    assert _bmsk_isa(1, 2, False) == 0x6                 # the ISA's example: bmsk.wrap.b32 rd, 1, 2
    assert _bmsk_isa(4, 0, True) == 0                    # a field of width 0
    assert _bmsk_isa(4, 40, True) == 0xFFFFFFF0          # .clamp, b >= 32: every bit from a upward
    assert _bmsk_isa(4, 40, False) == 0xFF0              # .wrap: b = 40 is 8 bits, bits 4..11


def test_bmsk_runs_in_a_kernel_on_random_words():
    rng = np.random.default_rng(20261204)
    n = 256
    a = np.concatenate([rng.integers(0, 1 << 32, n // 2, dtype=np.uint64),
                        rng.integers(0, 80, n // 2)]).astype(np.uint32)
    b = np.concatenate([rng.integers(0, 80, n // 2),
                        rng.integers(0, 1 << 32, n // 2, dtype=np.uint64)]).astype(np.uint32)
    body = """mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    ld.param.u64 %rd1, [k_a];
    ld.param.u64 %rd2, [k_b];
    ld.param.u64 %rd3, [k_d];
    add.s64 %rd5, %rd1, %rd4;
    ld.global.u32 %r2, [%rd5];
    add.s64 %rd5, %rd2, %rd4;
    ld.global.u32 %r3, [%rd5];
    bmsk.clamp.b32 %r4, %r2, %r3;
    bmsk.wrap.b32 %r5, %r2, %r3;
    add.s64 %rd5, %rd3, %rd4;
    st.global.u32 [%rd5], %r4;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd6, %rd3, 1024;
    add.s64 %rd5, %rd6, %rd4;
    st.global.u32 [%rd5], %r5;"""
    out = np.zeros(2 * n, np.uint32)
    r = ptx.run(_kernel(body, ".param .u64 k_a, .param .u64 k_b, .param .u64 k_d"), "k", 1, n, [a, b, out])
    got = r.buffers[2]
    assert got[:n].tolist() == [_bmsk_isa(int(x), int(y), True) for x, y in zip(a, b)]
    assert got[n:].tolist() == [_bmsk_isa(int(x), int(y), False) for x, y in zip(a, b)]
