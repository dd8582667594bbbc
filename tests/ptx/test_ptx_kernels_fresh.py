"""The committed test kernels are what kernels/build.py makes now: the generated sources match
their case tables, and (where nvcc is installed) each PTX is what nvcc emits for its .cu."""
import re
import shutil
import subprocess

import sys

import pytest
from ptx_kernels import EXAMPLES, KERNELS

sys.path.insert(0, str(KERNELS))
import build  # noqa: E402


@pytest.mark.parametrize("name", sorted(build.GENERATED))
def test_generated_sources_match_tables(name):
    assert (KERNELS / name).read_text() == build.GENERATED[name](), f"run python {KERNELS / 'build.py'}"


def _strip(text):
    """Without what depends on where the file was compiled: .file paths and the debug strings
    (nvcc mangles a hash of the path into internal names)."""
    text = text.split(".section\t.debug_str")[0]
    return re.sub(r'^\s*\.file\s+\d+\s+".*"$', "", text, flags=re.M)


CASES = [(p, "sm_90") for p in sorted(KERNELS.glob("*.cu"))] + \
    [(p, a) for p in sorted(EXAMPLES.glob("*.cu")) for a in ("sm_80", "sm_90")]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
@pytest.mark.parametrize("src,arch", CASES, ids=[f"{p.name}-{a}" for p, a in CASES])
def test_ptx_is_current(src, arch, tmp_path):
    cu = src.name
    shutil.copy(src, tmp_path / cu)
    out = tmp_path / "k.ptx"
    subprocess.run(["nvcc", "-ptx", "-lineinfo", f"-arch={arch}", "-std=c++17", cu, "-o", str(out)],
                   check=True, cwd=tmp_path, capture_output=True)
    committed = (src.parent / f"{src.stem}.{arch}.ptx").read_text()
    assert _strip(out.read_text()) == _strip(committed), f"run python {KERNELS / 'build.py'}"
