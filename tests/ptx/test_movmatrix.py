"""movmatrix.sync.aligned.m8n8.trans.b16 (PTX ISA 9.7.14.5.17): the warp's 8x8 b16 matrix, held as
ldmatrix.x1 holds it (lane l: row l/4, columns 2(l%4) and 2(l%4)+1, low half first), comes back
transposed in the same layout. Expected values: numpy's transpose of the matrix the lanes were given.
ThunderKittens' `warp::swap_layout` compiles to it (its educational H100 GEMM, level 04)."""
import shutil
import subprocess

import numpy as np
import pytest

from layoutsim import ptx
from layoutsim.errors import LayoutsimError

KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pi, .param .u64 po)
{
 .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .pred %p<2>;
 ld.param.u64 %rd1, [pi];
 ld.param.u64 %rd2, [po];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd3, %r1, 4;
 add.s64 %rd4, %rd1, %rd3;
 add.s64 %rd5, %rd2, %rd3;
 ld.global.b32 %r2, [%rd4];
 GUARDmovmatrix.sync.aligned.m8n8.trans.b16 %r3, %r2;
 st.global.b32 [%rd5], %r3;
 ret;
}
"""


def _run(text, words):
    out = np.zeros(words.size, np.uint32)
    r = ptx.run(text, "k", 1, words.size, [words, out])
    return np.asarray(r.buffers[1])


def test_each_warp_gets_its_matrix_transposed():
    rng = np.random.default_rng(5)
    A = rng.integers(0, 1 << 16, (2, 8, 8), dtype=np.uint16)           # two warps, two matrices
    words = np.ascontiguousarray(A.reshape(2, 32, 2)).view(np.uint32).reshape(64)
    got = _run(KERNEL.replace("GUARD", ""), words).view(np.uint16).reshape(2, 8, 8)
    assert np.array_equal(got, A.transpose(0, 2, 1))
    assert not np.array_equal(got, A)                                    # the inputs tell the two apart


def test_a_partial_warp_is_a_fault():
    text = KERNEL.replace(" .reg .pred %p<2>;", " .reg .pred %p<2>;").replace(
        "GUARD", "setp.lt.u32 %p1, %r1, 16;\n @%p1 ")
    with pytest.raises(LayoutsimError, match="movmatrix"):
        _run(text, np.arange(32, dtype=np.uint32))


def test_ptxas_assembles_the_kernel(tmp_path):
    if shutil.which("ptxas") is None:
        pytest.skip("needs ptxas (the CUDA toolkit)")
    f = tmp_path / "k.ptx"
    f.write_text(KERNEL.replace("GUARD", ""))
    r = subprocess.run(["ptxas", "-arch=sm_90", "-o", str(tmp_path / "k.cubin"), str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
