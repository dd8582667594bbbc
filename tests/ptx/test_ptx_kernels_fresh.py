"""The committed test kernels are what kernels/build.py makes now: each PTX is what nvcc emits
for its .cu (for the ALU kernels, the .cu generated from their case tables)."""
import re
import shutil

import sys

import pytest
from ptx_kernels import KERNELS

sys.path.insert(0, str(KERNELS))
import build  # noqa: E402


def _strip(text):
    """Without what depends on where the file was compiled: .file paths and the debug strings
    (nvcc mangles a hash of the path into internal names)."""
    text = text.split(".section\t.debug_str")[0]
    return re.sub(r'^\s*\.file\s+\d+\s+".*"$', "", text, flags=re.M)


CASES = build.sources() if shutil.which("nvcc") else []


def test_every_kernel_is_built():
    """Each committed PTX of the test kernels has its source (a .cu or a case table)."""
    names = {f"{p.stem}.ptx" for p in KERNELS.glob("*.ptx")}
    built = {f"{cu.stem}.{arch}.ptx" for cu, arch, dest in (CASES or build.sources()) if dest == KERNELS}
    assert names == built


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("src,arch,dest", CASES, ids=[f"{p.name}-{a}" for p, a, _ in CASES])
def test_ptx_is_current(src, arch, dest, tmp_path):
    out = build.compile_ptx(src, arch, dest, out=tmp_path / "k.ptx")
    committed = (dest / f"{src.stem}.{arch}.ptx").read_text()
    assert _strip(out.read_text()) == _strip(committed), f"run python {KERNELS / 'build.py'}"
