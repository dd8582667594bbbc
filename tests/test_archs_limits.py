"""layoutsim/archs.py, the one place for targets, suffixes and per-arch limits (issue 23): what
moved there (PTX .target loading from ptx/runner.py, ptxas's -arch from ptx/sass.py, the launch
limits from ptx/launch.py and ptx/nvcc.py; the shared-memory sizes moved with the address layer)
keeps its values, and the old places use it."""
import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim import archs
from layoutsim.errors import LayoutsimError
from layoutsim.ptx import nvcc, runner
from layoutsim.sim import smem_limit

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{
	ret;
}
"""


def test_the_executor_loads_ptx_by_the_archs_rule():
    assert runner.check_target is archs.check_ptx_target


@pytest.mark.parametrize("target, arch, want", [
    ("sm_90a", "sm_90", "sm_90a"), ("sm_90", "sm_90", "sm_90"), ("sm_100f", "sm_100", "sm_100f"),
    ("sm_80", "sm_90", "sm_90"), ("sm_90a, debug", "sm_90", "sm_90a"), (None, "sm_80", "sm_80"),
    ("sm_100a", "sm_120", "sm_120")])
def test_ptxas_builds_an_arch_specific_target_for_its_own_arch_only(target, arch, want):
    assert archs.ptxas_arch(target, arch) == want


@pytest.mark.parametrize("arch, nbytes", [("sm_90", 227 * 1024), ("sm_80", 163 * 1024), ("sm_120", 99 * 1024),
                                          ("gfx1100", 64 * 1024), ("gfx942", 64 * 1024), ("gfx950", 160 * 1024),
                                          ("gfx90a", 64 * 1024)])
def test_shared_memory_per_block(arch, nbytes):
    assert archs.shared_memory_limit(arch)[0] == smem_limit(arch) == nbytes


def test_launch_limits_are_the_archs_limits():
    with pytest.raises(LayoutsimError, match=r"at most 1024 threads \(z at most 64\)"):
        P.run(KERNEL, "k", 1, (1, 1, 65), [], arch="sm_90")
    with pytest.raises(LayoutsimError, match="exceeds 65535"):
        P.run(KERNEL, "k", (1, 65536), 32, [], arch="sm_90")
    with pytest.raises(LayoutsimError, match=f"exceeds the {227 * 1024} bytes a CTA can have on sm_90"):
        P.run(KERNEL.replace("{", "{\n\t.shared .b8 s[232449];", 1), "k", 1, 32, [], arch="sm_90")


def test_nsmid_is_the_sm_count():
    src = KERNEL.replace("{\n\tret;", "{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\tmov.u32 %r1, %nsmid;\n\t"
                         "ld.param.u64 %rd1, [o];\n\tcvta.to.global.u64 %rd1, %rd1;\n\tst.global.u32 [%rd1], %r1;\n\tret;")
    src = src.replace("k()", "k(.param .u64 o)").replace(".target sm_90", ".target sm_80")
    for arch, n in (("sm_80", 108), ("sm_90", 132), ("sm_120", 132)):
        out = np.zeros(1, np.uint32)
        assert P.run(src, "k", 1, 32, [out], arch=arch).buffers[0][0] == n == archs.sm_count(arch)


def test_register_limit_of_nvcc_flags():
    assert nvcc.check_flags(["-maxrregcount=255"]) == [("tokens", ["-maxrregcount=255"])]
    with pytest.raises(LayoutsimError, match=f"N from 1 to {archs.MAX_THREAD_REGISTERS}"):
        nvcc.check_flags(["-maxrregcount=256"])


def test_blackwell_targets_and_tensor_memory():
    # PTX ISA 9.x 9.7.16 (tcgen05: sm_100a) and 9.7.14 mma .kind:: (sm_120a); 9.7.16.2.2 'Tensor
    # Memory': 128 lanes x 512 columns of 32 bits; CUDA C++ Programming Guide, compute
    # capability 10.0: 228 KiB shared memory per SM, 227 KiB per block.
    assert archs.compile_target("sm_100", arch_specific=True) == "sm_100a"
    assert archs.target_of_device("sm_120") == "sm_120a"
    assert archs.normalize("sm_100a") == archs.normalize("b200") == "sm_100"
    t = archs.tmem("sm_100")
    assert (t["lanes"], t["columns"], t["cell_bits"], t["alloc_min_columns"]) == (128, 512, 32, 32)
    assert archs.shared_memory_limit("sm_100")[0] == 227 * 1024 and archs.SMEM_KIB["sm_100"][0] == 228
    with pytest.raises(LayoutsimError, match="sm_120 has no tensor memory"):
        archs.tmem("sm_120")
