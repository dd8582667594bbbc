"""AMD CDNA MFMA: a HIP kernel per catalog entry (gpu_check/mfma.py), compiled with clang-19 for
the newest CDNA target it has and disassembled: one v_mfma_* with the catalog's VGPR counts of
D, A, B, C. clang-19 has no gfx950: the gfx950-only forms are reported, not compiled. No AMD GPU:
nothing here runs a kernel."""
import subprocess

import pytest

import layoutsim
from gpu_check import mfma
from gpu_check.backends import hip as H

need_clang = pytest.mark.skipif(H.clang_path() is None or H.objdump_path() is None,
                                reason="clang-19 / llvm-objdump-19 not installed "
                                       "(apt-get install -y clang-19 lld-19 llvm-19)")


def test_every_mfma_has_a_kernel_or_a_reason():
    specs, skipped = mfma.specs(targets=("gfx942", "gfx90a"))
    names = {e.name for e in layoutsim.listing(family="mfma")}
    assert {s.entry for s in specs} | set(skipped) == names
    assert all(layoutsim.get(n).archs == ("gfx950",) for n in skipped) and len(skipped) == 10
    s = next(s for s in specs if s.entry == "v_mfma_f32_32x32x8_f16")
    src = s.source()
    assert s.offload_arch == "gfx942" and "__builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0)" in src
    old = next(s for s in specs if s.entry == "v_mfma_f32_32x32x2bf16")
    assert old.offload_arch == "gfx90a" and old.mnemonic == "v_mfma_f32_32x32x2bf16"


@need_clang
def test_mfma_kernels_compile_and_disassemble(tmp_path):
    r = subprocess.run([H.clang_path(), "-x", "hip", "--offload-arch=gfx950", "-nogpulib", "-nogpuinc",
                        "--cuda-device-only", "-c", "-o", str(tmp_path / "x.o"), "-"],
                       input="", capture_output=True, text=True)
    targets = ("gfx942", "gfx950", "gfx90a") if r.returncode == 0 else ("gfx942", "gfx90a")
    specs, skipped = mfma.specs(targets=targets)
    results, info = H.compile_and_check(specs=specs, outdir=tmp_path)
    bad = [x.diff_text() or x.note for x in results if x.status != "pass"]
    assert not bad, "\n".join(bad[:5])
    assert len(results) == len(specs) and {"gfx942_w64", "gfx90a_w64"} <= set(info["objects"])
    by = {x.entry: x for x in results}
    assert by["v_mfma_f32_32x32x1_2b_f32"].note.startswith("v_mfma_f32_32x32x1_2b_f32 [32, 1, 1, 32]")
    assert by["v_mfma_f64_16x16x4_f64"].note.startswith("v_mfma_f64_16x16x4_f64 [8, 2, 2, 8]")
