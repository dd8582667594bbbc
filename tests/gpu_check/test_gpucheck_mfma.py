"""AMD CDNA MFMA: a HIP kernel per catalog entry (gpu_check/families/amd_mfma.py), compiled for its
check target (layoutsim.archs.check_target: gfx942, else gfx950, else gfx90a) and disassembled:
one v_mfma_* with the catalog's VGPR counts of D, A, B, C. gfx950 needs clang 20 or newer (clang-19:
"invalid target ID 'gfx950'"); where no installed clang has it, its kernels are reported as
skipped, and this test says so. No AMD GPU: nothing here runs a kernel; the probes and the
numerics group run on a CPU stand-in that computes through the catalog's maps and layoutsim.mma."""
import numpy as np
import pytest

import layoutsim
from fakegpu import FakeBackend
from gpu_check import families as F
from gpu_check.backends import hip as H
from gpucheck_helpers import need_clang
from gpu_check.families.amd_mfma import AmdMfmaSpec
from gpu_check.run import Session
from layoutsim.packing import pack, unpack



def mfma_specs():
    return [s for s in F.amd_specs() if isinstance(s, AmdMfmaSpec)]


def test_every_mfma_has_a_kernel_for_its_check_target():
    specs = mfma_specs()
    assert {s.entry for s in specs} == {e.name for e in layoutsim.listing(family="mfma")}
    both = {s.entry for s in specs if s.offload_arch == "gfx950"} & {s.entry for s in specs if s.offload_arch == "gfx942"}
    assert both == {e.name for e in layoutsim.listing(family="mfma") if e.variant}        # fp8/bf8: FNUZ, OCP
    assert len(both) == 8 and len(specs) == len(layoutsim.listing(family="mfma")) + 8
    targets = {s.entry: s.offload_arch for s in specs if not (s.entry in both and s.offload_arch == "gfx950")}
    assert targets["v_mfma_f32_32x32x8_f16"] == "gfx942"          # exists on gfx908..gfx950
    assert targets["v_mfma_f32_16x16x32_f16"] == "gfx950"         # new in CDNA4
    assert targets["v_mfma_f32_32x32x2bf16"] == "gfx90a"          # dropped by CDNA3
    s = next(s for s in specs if s.entry == "v_mfma_f32_32x32x8_f16")
    assert "__builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0)" in s.source()
    old = next(s for s in specs if s.entry == "v_mfma_f32_32x32x1_2b_f32")
    assert old.mnemonic == "v_mfma_f32_32x32x1_2b_f32" and old.expected_counts() == [32, 1, 1, 32]


class ModelMfma(FakeBackend):
    """A CPU stand-in for an MI300 (gfx942): an MFMA kernel computes D through the catalog maps
    and layoutsim.mma (MMA-Sim's model); everything else as fakegpu does."""
    vendor, arch, target = "amd", "gfx942", "gfx942"

    def launch(self, module, spec, inp, ncases):
        if not isinstance(spec, AmdMfmaSpec):
            return super().launch(module, spec, inp, ncases)
        a, b, c = spec.unpack_inputs(np.asarray(inp, np.uint32).reshape(ncases, -1))
        d = layoutsim.mma(spec.instr, a, b, c, arch=self.arch, raw=True)
        return spec.pack_d(d).reshape(-1)


ONLY = "v_mfma_f32_4x4x4_16b_f16,v_mfma_i32_32x32x4_2b_i8,v_mfma_f64_4x4x4_4b_f64,v_mfma_f32_16x16x16_f16"


@need_clang
def test_session_on_a_gfx942_stand_in():
    """gpu-check's AMD path for CDNA: the HIP build for the device's gfx942, every block of a
    multi-block MFMA through the layout probes and the numerics group (its cases drawn, one per
    block, and compared against layoutsim.mma)."""
    s = Session(ModelMfma(), log=lambda x: None, groups=("layouts", "numerics"), only=ONLY, cases=64)
    s.run()
    bad = [r.diff_text() for r in s.results if r.status != "pass"]
    assert not bad, bad[:3]
    lay = {r.entry for r in s.results if r.group == "layouts"}
    num = {r.entry for r in s.results if r.group == "numerics"}
    assert lay == num == set(ONLY.split(","))
    blocks = next(r for r in s.results if r.group == "numerics" and r.entry == "v_mfma_f32_4x4x4_16b_f16")
    assert blocks.compared == blocks.cases * 16 * 4 * 4                  # every D element of 16 blocks


@need_clang
def test_numerics_sees_a_wrong_block(tmp_path):
    """A stand-in whose multi-block MFMA swaps two blocks of D: the numerics group names them."""
    class SwappedBlocks(ModelMfma):
        def launch(self, module, spec, inp, ncases):
            out = super().launch(module, spec, inp, ncases)
            if spec.entry != "v_mfma_f32_4x4x4_16b_f16" or len(inp) == 0:
                return out
            d = unpack(spec.fd, spec.d_words(out.reshape(ncases, -1)))
            return spec.pack_d(d[:, [1, 0] + list(range(2, 16))]).reshape(-1)

    s = Session(SwappedBlocks(), log=lambda x: None, groups=("numerics",), only="v_mfma_f32_4x4x4_16b_f16", cases=32)
    s.run()
    [r] = [r for r in s.results if r.group == "numerics"]
    assert r.status == "fail" and {d.where.split("[")[0] for d in r.details} <= {"D0", "D1"}


@pytest.mark.parametrize("entry", ONLY.split(","))
def test_the_probes_see_a_wrong_d_map(entry):
    """With D's blocks in the wrong order (a transposed D for one block) in what the kernel
    writes, every probe that can tell fails."""
    spec = AmdMfmaSpec(layoutsim.get(entry))
    backend = ModelMfma()
    for p in spec.probes(np.random.default_rng(3)):
        out = backend.launch(None, spec, p.inp, len(p.inp)).reshape(len(p.inp), -1)
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
    assert len(gfx950) == 18                  # 10 CDNA4 forms, 8 fp8/bf8 MFMAs in their OCP form
    if skipped:       # only where no installed clang has gfx950 at all, and CI does not require it
        assert not H.required() and H.broken_for("gfx950") is None
        assert skipped == gfx950 and info["skipped_targets"] == ["gfx950"]
    else:
        assert "gfx950_w64" in info["objects"] and info["compilers"]["gfx950"].endswith(("-20", "-21", "-22"))
        on950 = [x for x in results if x.check == "gfx950 disasm"]
        assert len(on950) == 18 and all(x.status == "pass" for x in on950)
    by = {x.entry: x for x in results if x.check != "gfx950 disasm"}
    assert by["v_mfma_f32_32x32x1_2b_f32"].note.startswith("v_mfma_f32_32x32x1_2b_f32 [32, 1, 1, 32]")
    assert by["v_mfma_f64_16x16x4_f64"].note.startswith("v_mfma_f64_16x16x4_f64 [8, 2, 2, 8]")
    assert by["v_mfma_f32_32x32x2bf16"].note.startswith("v_mfma_f32_32x32x2bf16 ")


@pytest.mark.skipif(not H.required(), reason=f"{H.REQUIRE_ENV} is not set (CI sets it)")
def test_ci_builds_every_amd_target():
    """CI (.ci/run) installs clang-19, clang-22 and their lld and llvm: every compile target builds."""
    missing = [a for a in F.amd_targets() if H.toolchain_for(a) is None]
    assert not missing, f"no installed clang builds for {missing}: {H.broken_for(missing[0]) or H.INSTALL_HINT}"


def _fake_tool(path, stderr):
    path.write_text(f"#!/bin/sh\necho \"{stderr}\" >&2\nexit 1\n")
    path.chmod(0o755)
    return str(path)


def test_a_clang_that_has_the_target_but_cannot_build_is_an_error(tmp_path, monkeypatch):
    """clang-22 without ld.lld-22 knows gfx950 but fails to link: that is a broken install, an
    error naming the missing linker, never a skip; a clang without the target is a skip, except
    where every target is required."""
    spec = next(s for s in mfma_specs() if s.offload_arch == "gfx950")
    monkeypatch.delenv(H.REQUIRE_ENV, raising=False)
    monkeypatch.setenv("GPU_CHECK_OBJDUMP", _fake_tool(tmp_path / "llvm-objdump-22", "unused"))
    monkeypatch.setenv("GPU_CHECK_CLANG", _fake_tool(
        tmp_path / "clang-22", "clang-22: error: unable to execute command: posix_spawn failed: No such file"))
    [r], info = H.compile_and_check(specs=[spec], outdir=tmp_path)
    assert r.status == "error" and info["unbuilt_targets"] == ["gfx950"] and not info["skipped_targets"]
    assert "has gfx950 but cannot build for it" in r.note and "apt-get install lld-22" in r.note

    monkeypatch.setenv("GPU_CHECK_CLANG", _fake_tool(
        tmp_path / "clang-19", "clang-19: error: invalid target ID 'gfx950'; format is a processor name"))
    [r], info = H.compile_and_check(specs=[spec], outdir=tmp_path)
    assert r.status == "skip" and info["skipped_targets"] == ["gfx950"]
    monkeypatch.setenv(H.REQUIRE_ENV, "1")
    [r], info = H.compile_and_check(specs=[spec], outdir=tmp_path)
    assert r.status == "error" and H.REQUIRE_ENV in r.note


def test_gfx950_builds_its_own_fp8_forms_and_skips_numerics_it_has_no_model_for():
    """On a gfx950 device the fp8/bf8 MFMAs get their OCP form; float MFMAs, which no published
    model covers on gfx950, are skipped by the numerics group with the reason, not errors."""
    from gpu_check.checks import numerics
    on950 = {s.entry: s for s in F.amd_specs(arch="gfx950") if isinstance(s, AmdMfmaSpec)}
    assert on950["v_mfma_f32_16x16x32_fp8_bf8"].instr.formats["b"] == "e5m2"
    assert on950["v_mfma_f32_16x16x32_fp8_bf8"].offload_arch == "gfx950"
    why = numerics.no_model(on950["v_mfma_f32_16x16x32_f16"].instr, "gfx950")
    assert why and "no arithmetic model for f16 MFMA on gfx950" in why
    assert numerics.no_model(on950["v_mfma_i32_16x16x64_i8"].instr, "gfx950") is None
    assert numerics.no_model(layoutsim.get("v_mfma_f32_16x16x32_fp8_bf8", arch="gfx942"), "gfx942") is None
