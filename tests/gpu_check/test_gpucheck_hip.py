"""AMD: every gfx11/gfx12 WMMA/SWMMAC kernel is generated, compiled with clang-19 for gfx1100 /
gfx1201 and disassembled; the expected v_wmma_*/v_swmmac_* with the catalog's register counts
must be there. No AMD GPU: nothing here runs a kernel."""

import pytest

import layoutsim
from gpu_check import families as F
from gpu_check.backends import hip as H

need_clang = pytest.mark.skipif(H.clang_path() is None or H.objdump_path() is None,
                                reason="clang-19 / llvm-objdump-19 not installed "
                                       "(apt-get install -y clang-19 lld-19 llvm-19)")


def test_every_amd_entry_has_a_kernel():
    amd = [e for e in layoutsim.listing() if e.vendor == "amd"]
    specs = F.amd_specs()
    assert len(specs) == len(amd) and len(specs) > 0
    for s in specs:
        assert s.builtin.startswith("__builtin_amdgcn_")
        src = s.source()
        assert s.builtin in src and s.name in src


@need_clang
def test_hip_kernels_compile_and_disassemble(tmp_path):
    results, info = H.compile_and_check(outdir=tmp_path)
    bad = [r.diff_text() for r in results if r.status != "pass"]
    assert not bad, "\n".join(bad[:5])
    assert len(results) == len(F.amd_specs())
    assert set(info["objects"]) == {"gfx1100_w32", "gfx1100_w64", "gfx1201_w32", "gfx1201_w64"}
    by = {r.entry: r for r in results}
    r = by["v_wmma_f16_16x16x16_f16.opsel1.w32.gfx11"]
    assert "op_sel:[0,0,1]" in r.note
    assert by["v_wmma_f32_16x16x16_f16.w64.gfx12"].note.startswith("v_wmma_f32_16x16x16_f16 [4, 2, 2, 4]")


def test_disassembly_check_catches_a_wrong_instruction():
    spec = next(s for s in F.amd_specs() if s.entry == "v_wmma_f32_16x16x16_f16.w32.gfx12")
    ok = H.check_spec(spec, [("v_wmma_f32_16x16x16_f16", [8, 4, 4, 8], "")])
    assert ok.status == "pass"
    wrong = H.check_spec(spec, [("v_wmma_f32_16x16x16_bf16", [8, 4, 2, 8], "")])
    assert wrong.status == "fail" and wrong.mismatches == 2
    assert "B register count: expected 0x00000004 (4), got 0x00000002 (2)" in wrong.diff_text()
    missing = H.check_spec(spec, [])
    assert missing.status == "fail"


def test_matrix_instruction_parser():
    text = """
0000000000001600 <k_a>:
	v_wmma_i32_16x16x16_iu8 v[0:7], v8, v[9:10], v[0:7] neg_lo:[1,1,0]   // 0000: CC
0000000000001700 <k_b>:
	s_nop 0
"""
    found = H.matrix_instructions(text)
    assert found == {"k_a": [("v_wmma_i32_16x16x16_iu8", [8, 1, 2, 8], "neg_lo:[1,1,0]")], "k_b": []}
