"""Every generated CUDA kernel compiles (nvcc + ptxas) for sm_80, sm_90 and sm_90a (wgmma)."""
import pytest

from gpu_check import build as B
from gpu_check import families as F

from gpucheck_helpers import need_nvcc

# mma.sync m16n8k8 / m16n8k16 with .f16 inputs and mixed C/D types (f16.f16.f16.f32 and
# f32.f16.f16.f16): ptxas 13.0 rejects them (".dtype must be '.f32' when .ctype is '.f32' for
# 'mma' instruction with shape '.m16n8k8'"); the catalog still lists them. gpu-check reports
# them as failures of the build group until the catalog drops them.
MIXED = ("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f32", "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f16",
         "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16")


def _build(target):
    specs = F.nvidia_specs(target)
    cubin, kept, rejected, stats = B.compile_specs(specs, target, use_cache=False)
    return specs, cubin, kept, rejected


@need_nvcc
@pytest.mark.parametrize("target", ["sm_80", "sm_90", "sm_90a"])
def test_every_generated_kernel_compiles(target, kernel_cache):
    specs, cubin, kept, rejected = _build(target)
    by_name = {s.name: s for s in specs}
    unexpected = {n: m for n, m in rejected.items() if by_name[n].entry not in MIXED}
    assert not unexpected, f"ptxas rejected generated kernels: {unexpected}"
    assert len(kept) == len(specs) - len(rejected)
    for s in kept:                                   # each kernel is in the cubin
        assert s.name.encode() in cubin, s.name
    kinds = {s.kind for s in kept}
    assert {"mma", "ldmatrix", "e2e"} <= kinds
    if target != "sm_80":
        assert "stmatrix" in kinds
    if target == "sm_90a":
        assert "wgmma" in kinds
        names = {s.entry for s in kept if s.kind == "wgmma"}
        for short in ("wgmma.m64n8k16.f32.f16.f16", "wgmma.m64n8k16.f32.bf16.bf16", "wgmma.m64n8k8.f32.tf32.tf32",
                      "wgmma.m64n8k32.f32.e4m3.e4m3", "wgmma.m64n8k32.s32.s8.s8", "wgmma.m64n256k16.f32.f16.f16"):
            import layoutsim
            assert layoutsim.get(short).name in names
    else:
        assert "wgmma" not in kinds


@need_nvcc
def test_catalog_lists_only_assemblable_mma(kernel_cache):
    _, _, _, rejected = _build("sm_80")
    assert not rejected


@need_nvcc
@pytest.mark.parametrize("target", ["sm_80", "sm_90"])
def test_discover_kernels_compile(target, kernel_cache):
    specs = F.wmma_specs()
    cubin, kept, rejected, _ = B.compile_specs(specs, target, use_cache=False)
    assert not rejected and len(kept) == 78       # f16/bf16/s8/u8 x 3 shapes, tf32 m16n16k8, f64 m8n8k4
    for s in kept:
        assert s.name.encode() in cubin


@need_nvcc
def test_build_cache_reuses_the_cubin(kernel_cache):
    specs = F.nvidia_specs("sm_90", only="ldmatrix.x1")
    first = B.compile_specs(specs, "sm_90")
    again = B.compile_specs(specs, "sm_90")
    assert not first[3]["cached"] and again[3]["cached"]
    assert first[0] == again[0]
    assert list(kernel_cache.glob("*.cubin"))


def test_generated_source_uses_catalog_spellings():
    import layoutsim
    for s in F.nvidia_specs("sm_90a", only="mma.m16n8k16.f32.bf16.bf16.f32,ldmatrix.x4.trans"):
        assert s.entry in s.source()
        assert layoutsim.get(s.entry).name == s.entry
