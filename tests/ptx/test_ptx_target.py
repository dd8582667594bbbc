"""PTX's .target against the arch it runs on, as the CUDA driver loads PTX (PTX ISA, .target
directive): PTX for sm_N runs on sm_N and later archs; arch-specific sm_Na PTX on sm_N only;
family-specific sm_Nf PTX on the later archs of sm_N's family. What the driver refuses is one line
(exit 2 on the command line)."""
import pytest
from ptx_kernels import EXAMPLES

import layoutsim.ptx as P
from layoutsim.cli import main
from layoutsim.errors import LayoutsimError
from layoutsim.ptx.runner import check_target

KERNEL = """.version 8.0
.target {target}
.address_size 64
.visible .entry k()
{{
	ret;
}}
"""


@pytest.mark.parametrize("target, arch", [("sm_80", "sm_80"), ("sm_80", "sm_90"), ("sm_70", "sm_120"),
                                          ("sm_90a", "sm_90"), ("sm_100f", "sm_100"), ("sm_90, debug", "sm_90")])
def test_what_loads(target, arch):
    check_target(target, arch)
    P.run(KERNEL.format(target=target), "k", 1, 32, [], arch=arch)


@pytest.mark.parametrize("target, arch, why", [
    ("sm_90", "sm_70", "PTX .target sm_90 cannot be loaded on sm_70: the CUDA driver refuses PTX for a newer "
                       "arch (give arch sm_90 or later)"),
    ("sm_90", "sm_89", "PTX .target sm_90 cannot be loaded on sm_89"),
    ("sm_90a", "sm_100", "PTX .target sm_90a cannot be loaded on sm_100: arch-specific PTX runs on sm_90 only "
                         "(give arch sm_90)"),
    ("sm_100f", "sm_120", "PTX .target sm_100f cannot be loaded on sm_120: family-specific PTX runs on sm_100 "
                          "and later archs of its family only"),
])
def test_what_the_driver_refuses(target, arch, why):
    with pytest.raises(LayoutsimError, match="^" + why.replace("(", r"\(").replace(")", r"\)")):
        P.run(KERNEL.format(target=target), "k", 1, 32, [], arch=arch)


def test_cli_says_it_in_one_line(capsys):
    rc = main(["ptx", "run", str(EXAMPLES / "transpose.sm_90.ptx"), "--kernel", "transpose_padded", "--grid", "1",
               "--block", "32,8", "--arg", "zeros:f32:32x32", "--arg", "zeros:f32:32x32", "--arg", "i32:32",
               "--arch", "sm_70"])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert err.strip().splitlines() == [err.strip()] and "PTX .target sm_90 cannot be loaded on sm_70" in err
