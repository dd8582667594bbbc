"""layoutsim/sass.py, the one SASS module (issue 23): spellings, widths and the listing parsers.

ldmatrix/stmatrix of one matrix is LDSM.16.M88 / STSM.16.M88 (.MT88 with .trans), with no count
suffix: that is what the H200's listings hold (tests/data/banks/bank_corpus.json,
environment.sass: `bank_probe_ldmatrix_x1: LDSM.16.M88`; layoutsim/ptx/data/wmma_sm_90.json: the x1
loads of m32n8k16/m8n32k16 s8/u8). Before the SASS module the executor named ldmatrix.x1
"LDSM.16.M88.1" (ptx/ops_matrix.py), the bank model "LDSM.16.M88" (banks/ops.py), and wmma.py read
the count as the last field, so the x1 wmma loads raised ValueError ('M88')."""
import json
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as P
from gpu_check.bank_probe import corpus as bank_corpus
from layoutsim import sass as SASS
from layoutsim.banks.ops import parse as bank_op
from layoutsim.ptx import wmma as WM

DATA = Path(__file__).resolve().parent / "data"
H200_SASS = json.loads((DATA / "banks" / "bank_corpus.json").read_text())["environment"]["sass"]
LOWERING = json.loads((Path(SASS.__file__).parent / "ptx" / "data" / "lowering_sm90.json").read_text())
# every SASS opcode ptxas emitted for the kernel corpus ({file: {function: [{line, sass}]}})
CORPUS_SASS = {s for funcs in LOWERING["kernels"].values() for rows in funcs.values() for r in rows for s in r["sass"]}


def _op_of(kernel):
    """bank_probe_ldmatrix_x1_trans -> ldmatrix.x1.trans (the probe's kernel names, corpus.kernel_name)."""
    return kernel[len("bank_probe_"):].replace("_", ".")


SHARED_KERNELS = sorted(k for k in H200_SASS if "wmma" not in k)


def test_the_h200_listing_covers_every_shared_op_form():
    assert len(SHARED_KERNELS) == 22 and {"bank_probe_ldmatrix_x1", "bank_probe_stmatrix_x1_trans"} <= set(SHARED_KERNELS)
    assert all(bank_corpus.kernel_name(_op_of(k)) == k for k in SHARED_KERNELS)


@pytest.mark.parametrize("kernel", SHARED_KERNELS)
def test_spelling_is_what_the_h200_ran(kernel):
    (recorded,) = H200_SASS[kernel]
    spec = bank_op(_op_of(kernel))
    assert spec.sass == recorded
    assert SASS.shared_op(recorded) == (spec.direction, spec.width, spec.matrices, spec.trans)


def test_one_matrix_has_no_count():
    assert H200_SASS["bank_probe_ldmatrix_x1"] == ["LDSM.16.M88"]          # the evidence
    assert SASS.matrix("ld", 1, False) == "LDSM.16.M88"
    assert SASS.matrix("st", 1, True) == "STSM.16.MT88"
    assert SASS.matrix("ld", 4, True) == "LDSM.16.MT88.4"
    assert SASS.parse_matrix("LDSM.16.M88") == SASS.parse_matrix("LDSM.16.M88.1") == ("ld", 1, False)
    assert SASS.parse_matrix("LDSM.16.M88.3") is None and SASS.parse_matrix("LDS.64") is None


X1 = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out)
{{
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	.shared .align 16 .b8 sm[512];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, sm;
	shl.b32 %r4, %r1, 2;
	add.u32 %r5, %r2, %r4;
	mul.lo.u32 %r6, %r4, 0x01010101;
	add.u32 %r6, %r6, 0x03020100;
	st.shared.u32 [%r5], %r6;
	bar.sync 0;
	shl.b32 %r7, %r1, 4;
	add.u32 %r7, %r2, %r7;
	{load}
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd1, %rd1, %rd2;
	st.global.u32 [%rd1], %r3;
	ret;
}}
"""
SMEM = np.arange(128, dtype=np.uint8)          # byte i of shared memory holds i (the st.shared above)


def _line(run, text):
    return next(s for s in run.instructions if s.text.startswith(text))


def test_executor_names_ldmatrix_x1_as_the_h200_does():
    r = P.run(X1.format(load="ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r3}, [%r7];"), "k", 1, 32,
              [np.zeros(32, np.uint32)], arch="sm_90")
    st = _line(r, "ldmatrix")
    assert st.sass == "LDSM.16.M88" and st.wavefronts == 1
    # lanes 0-7 give the rows (16 bytes at 16*lane); lane L gets row L/4, halves 2(L%4), 2(L%4)+1
    lane = np.arange(32)
    want = (lane // 4) * 16 + (lane % 4) * 4
    assert (r.buffers[0] == SMEM[want] | SMEM[want + 1].astype(np.uint32) << 8
            | SMEM[want + 2].astype(np.uint32) << 16 | SMEM[want + 3].astype(np.uint32) << 24).all()


@pytest.mark.parametrize("op", ["wmma.load.b.sync.aligned.col.m32n8k16.shared.s8",
                                "wmma.load.a.sync.aligned.row.m8n32k16.shared.u8"])
def test_wmma_x1_load_runs(op):
    # was ValueError: invalid literal for int() with base 10: 'M88' (wmma.accesses)
    frag = WM.fragment(op.split(".")[2], op.split(".")[5], op.split(".")[6], op.split(".")[-1])
    (acc,) = WM.accesses(op, frag, 8)
    assert (acc.sass, acc.bank_op, acc.kind, acc.elems) == ("LDSM.16.M88", "ldmatrix.x1", "matrix", (0,))
    r = P.run(X1.format(load=f"{op} {{%r3}}, [%r2], 16;"), "k", 1, 32, [np.zeros(32, np.uint32)], arch="sm_90")
    st = _line(r, "wmma.load")
    assert st.sass == "LDSM.16.M88" and st.wavefronts == 1
    # each lane's 4 bytes are the fragment's elements of a 16-byte-stride matrix holding byte i at i
    use, layout, shape = op.split(".")[2], op.split(".")[5], op.split(".")[6]
    R, C = WM.operand_shape(use, shape)
    pos = WM.element_positions(frag)                          # [32, 4] (row, col)
    offs = (pos[..., 0] * 16 + pos[..., 1]) if layout == "row" else (pos[..., 1] * 16 + pos[..., 0])
    words = (SMEM[offs].astype(np.uint32) << (8 * np.arange(4))).sum(axis=1)
    assert (R, C) in ((16, 8), (8, 16)) and (r.buffers[0] == words).all()


def test_width_reads_every_committed_spelling_as_before():
    def before(sass):           # ptx/sass.py's width() until the SASS module
        for tok, w in ((".128", 16), (".64", 8), (".U16", 2), (".S16", 2), (".U8", 1), (".S8", 1)):
            if tok in sass:
                return w
        return 4
    wmma = {a["sass"] for e in json.loads(WM.DATA.read_text())["entries"] for a in e.get("accesses", ())}
    seen = {s for s in CORPUS_SASS | wmma | {x for v in H200_SASS.values() for x in v} if s.split(".")[0] in SASS.PLAIN}
    assert len(seen) >= 25
    assert {s: SASS.width(s) for s in seen} == {s: before(s) for s in seen}


def test_memory_pattern_is_the_lowering_rules_set():
    ops = {s.split(".")[0] for s in CORPUS_SASS if SASS.MEMORY.match(s)}
    assert {"LDS", "STS", "LDSM", "LDG", "STG", "LDGSTS", "UTMALDG"} <= ops <= set(SASS.OPCODES)
    assert not SASS.MEMORY.match("LDGDEPBAR") and not SASS.MEMORY.match("MUFU.EX2")


CUOBJDUMP = """
	code for sm_90
		Function : bank_probe_ldmatrix_x1
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                     /* 0x00000a00ff017b82 */
                                                                              /* 0x000fe40000000800 */
        /*0010*/              @!P0 LDSM.16.M88 R4, [R2+0x40] ;               /* 0x000000000204783b */
                                                                              /* 0x000e240000000000 */
		Function : other
        /*0000*/                   STS.128 [R3], R4 ;                         /* 0x0000000403007388 */
                                                                              /* 0x000fe20000000c00 */
"""


def test_cuobjdump_listing():
    assert SASS.cuobjdump_functions(CUOBJDUMP) == {
        "bank_probe_ldmatrix_x1": ["LDC R1, c[0x0][0x28]", "@!P0 LDSM.16.M88 R4, [R2+0x40]"],
        "other": ["STS.128 [R3], R4"]}
    words = SASS.cuobjdump_words(CUOBJDUMP)
    assert len(words["bank_probe_ldmatrix_x1"]) == 32 and words["other"][:8] == (0x0000000403007388).to_bytes(8, "little")
    line = SASS.cuobjdump_functions(CUOBJDUMP)["bank_probe_ldmatrix_x1"][1]
    m = SASS.ACCESS.search(line)
    assert m.group(1) == "LDSM.16.M88" and SASS.address_offset(m.group(2)) == 0x40


NVDISASM = """
	.text.k:
        //## File "kernel.ptx", line 17
        /*0000*/                   LDSM.16.M88.4 R4, [R2] ;
        /*0010*/               @!PT LDS RZ, [RZ] ;
        //## File "kernel.ptx", line 22
        /*0020*/                   STG.E desc[UR4][R2.64], R3 ;
"""


def test_nvdisasm_listing():
    assert SASS.nvdisasm_functions(NVDISASM, "kernel.ptx") == {
        "k": [(17, "LDSM.16.M88.4", "R4, [R2]"), (22, "STG.E", "desc[UR4][R2.64], R3")]}
