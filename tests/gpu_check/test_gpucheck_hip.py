"""AMD: every gfx11/gfx12 WMMA/SWMMAC kernel is generated, compiled with clang-19 for gfx1100 /
gfx1201 and disassembled; the expected v_wmma_*/v_swmmac_* with the catalog's register counts
must be there. No AMD GPU: nothing here runs a kernel."""

import pytest

import layoutsim
from gpu_check import families as F
from gpu_check.backends import hip as H
from gpucheck_helpers import need_clang


def test_every_amd_entry_has_a_kernel():
    amd = [e for e in layoutsim.listing() if e.vendor == "amd"]
    specs = F.amd_specs()
    # one kernel per entry, plus one per other operand-format form (the fp8/bf8 MFMAs' gfx950 OCP form)
    extra = [s for s in specs if s.entry.startswith("v_mfma") and s.offload_arch == "gfx950" and "8_" in s.entry
             and "f8f6f4" not in s.entry]
    assert {s.entry for s in specs} == {e.name for e in amd} and len(specs) == len(amd) + len(extra) == len(amd) + 8
    assert {s.instr.formats["a"] for s in extra} == {"e4m3", "e5m2"}
    for s in specs:
        assert s.builtin.startswith("__builtin_amdgcn_")
        src = s.source()
        assert s.builtin in src and s.name in src


@need_clang
def test_hip_kernels_compile_and_disassemble(tmp_path):
    wmma = [s for s in F.amd_specs() if s.kind == "amd"]          # MFMA: test_gpucheck_mfma.py
    results, info = H.compile_and_check(specs=wmma, outdir=tmp_path)
    bad = [r.diff_text() for r in results if r.status != "pass"]
    assert not bad, "\n".join(bad[:5])
    assert len(results) == len(wmma)
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


@need_clang
@pytest.mark.parametrize("swap", [False, True])
def test_swmmac_numerics_on_a_gfx1201_stand_in(swap):
    """SWMMAC cases in the numerics group: dense cases made 2:4 sparse by a random IDX, the
    compressed A and IDX packed, D compared with layoutsim.mma. A stand-in that reads the IDX
    fields' two positions the wrong way round fails."""
    import numpy as np
    from fakegpu import FakeBackend
    from gpu_check.run import Session
    from layoutsim.numerics import sparse

    class Rdna4(FakeBackend):
        vendor, arch, target = "amd", "gfx1201", "gfx1201"

        def launch(self, module, spec, inp, ncases):
            inp = np.asarray(inp, np.uint32).reshape(ncases, -1)
            a, b, c = spec.unpack_inputs(inp)
            idx = spec.unpack_extra(inp)["IDX"].astype(np.int64)
            if swap:
                idx = (idx >> 2) | ((idx & 3) << 2)
            logical = sparse.expand(a, idx, spec.instr.shape[2])
            return spec.pack_d(layoutsim.mma(spec.instr, logical, b, c, arch=self.arch, raw=True)).reshape(-1)

    only = "v_swmmac_f32_16x16x32_f16.w32.gfx12"
    s = Session(Rdna4(), log=lambda x: None, groups=("numerics",), only=only, cases=64)
    s.run()
    [r] = [r for r in s.results if r.group == "numerics"]
    assert r.entry == only and r.compared == r.cases * 16 * 16
    assert r.status == ("fail" if swap else "pass"), r.diff_text()
