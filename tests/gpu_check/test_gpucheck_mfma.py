"""AMD CDNA MFMA: a HIP kernel per catalog entry (gpu_check/families/amd_mfma.py), compiled for its
check target (layoutsim.archs.check_target: gfx942, else gfx950, else gfx90a) and disassembled:
one v_mfma_* with the catalog's VGPR counts of D, A, B, C. gfx950 needs clang 20 or newer (clang-19:
"invalid target ID 'gfx950'"); where no installed clang has it, its kernels are reported as
skipped, and this test says so. No AMD GPU: nothing here runs a kernel; the probes are checked on
a CPU stand-in that computes through the catalog's maps."""
import numpy as np
import pytest

import layoutsim
from gpu_check import families as F
from gpu_check.backends import hip as H
from gpu_check.families.amd_mfma import AmdMfmaSpec
from layoutsim.packing import pack, unpack

need_clang = pytest.mark.skipif(not H.toolchains(), reason=f"no clang / llvm-objdump ({H.INSTALL_HINT})")


def mfma_specs():
    return [s for s in F.amd_specs() if isinstance(s, AmdMfmaSpec)]


def test_every_mfma_has_a_kernel_for_its_check_target():
    specs = mfma_specs()
    assert sorted(s.entry for s in specs) == sorted(e.name for e in layoutsim.listing(family="mfma"))
    targets = {s.entry: s.offload_arch for s in specs}
    assert targets["v_mfma_f32_32x32x8_f16"] == "gfx942"          # exists on gfx908..gfx950
    assert targets["v_mfma_f32_16x16x32_f16"] == "gfx950"         # new in CDNA4
    assert targets["v_mfma_f32_32x32x2bf16"] == "gfx90a"          # dropped by CDNA3
    s = next(s for s in specs if s.entry == "v_mfma_f32_32x32x8_f16")
    assert "__builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0)" in s.source()
    old = next(s for s in specs if s.entry == "v_mfma_f32_32x32x1_2b_f32")
    assert old.mnemonic == "v_mfma_f32_32x32x1_2b_f32" and old.expected_counts() == [32, 1, 1, 32]


def _emulate(spec, inp):
    """What the MFMA computes, through the catalog maps (the stand-in 'hardware')."""
    a, b, c = spec.unpack_inputs(inp)
    fmt = spec.fmt
    from gpu_check.families.operand_maps import exact_d
    d = exact_d(fmt, a, b, c)
    return spec.pack_d(d).reshape(len(d), -1)


@pytest.mark.parametrize("entry", ["v_mfma_f32_4x4x4_16b_f16", "v_mfma_i32_32x32x4_2b_i8",
                                   "v_mfma_f64_4x4x4_4b_f64", "v_mfma_f32_16x16x4_f32"])
def test_probes_fill_every_block_and_catch_a_wrong_d_map(entry):
    """Every probe passes on a stand-in that computes through the catalog; with D's block order
    swapped in the kernel's output, the probes see it (multi-block forms: every block is probed)."""
    spec = AmdMfmaSpec(layoutsim.get(entry))
    rng = np.random.default_rng(3)
    for p in spec.probes(rng):
        out = _emulate(spec, p.inp)
        assert spec.compare(p.check, p.inp, out, p.meta).status == "pass", (entry, p.check)
        d = unpack(spec.fd, spec.d_words(out))
        wrong = pack(spec.fd, d[:, ::-1] if d.shape[1] > 1 else np.swapaxes(d, -1, -2)).reshape(len(d), -1)
        if not np.array_equal(wrong, out):
            assert spec.compare(p.check, p.inp, wrong, p.meta).status == "fail", (entry, p.check)


@need_clang
def test_mfma_kernels_compile_and_disassemble(tmp_path):
    specs = mfma_specs()
    results, info = H.compile_and_check(specs=specs, outdir=tmp_path)
    bad = [x.diff_text() or x.note for x in results if x.status not in ("pass", "skip")]
    assert not bad, "\n".join(bad[:5])
    assert len(results) == len(specs) and {"gfx942_w64", "gfx90a_w64"} <= set(info["objects"])
    skipped = {x.entry for x in results if x.status == "skip"}
    gfx950 = {s.entry for s in specs if s.offload_arch == "gfx950"}
    assert len(gfx950) == 10
    if H.toolchain_for("gfx950"):
        assert not skipped and "gfx950_w64" in info["objects"]
    else:                                    # clang-19 only: reported, not silently passed
        assert skipped == gfx950 and info["skipped_targets"] == ["gfx950"]
    by = {x.entry: x for x in results}
    assert by["v_mfma_f32_32x32x1_2b_f32"].note.startswith("v_mfma_f32_32x32x1_2b_f32 [32, 1, 1, 32]")
    assert by["v_mfma_f64_16x16x4_f64"].note.startswith("v_mfma_f64_16x16x4_f64 [8, 2, 2, 8]")
    assert by["v_mfma_f32_32x32x2bf16"].note.startswith("v_mfma_f32_32x32x2bf16 ")
