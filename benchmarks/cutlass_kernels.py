"""Real-world GEMM launches for the benchmarks: CUTLASS's CuTe tutorial kernels, compiled to PTX
here from the `nvidia-cutlass` PyPI wheel (`pip install nvidia-cutlass`: its cutlass_library
package ships CUTLASS's headers and examples under cutlass_library/source). Nothing of CUTLASS
is committed: the PTX is rebuilt into a temporary folder on every run.

    examples/cute/tutorial/sgemm_sm80.cu        half-precision TN GEMM: cp.async, ldmatrix (LDSM), mma.sync m16n8k16
    examples/cute/tutorial/hopper/wgmma_sm90.cu half-precision TN GEMM: cp.async, wgmma m64n64k16 from shared memory

Both kernels take CuTe structs by value (the problem shape, tilers, strides, layouts, the tiled MMA).
Their argument bytes are built from the PTX's .param list: a 12-byte shape (M, N, K as int32), a
4-byte stride (the one dynamic stride of a TN layout: ldA = K, ldB = K, ldC = M), a 2-byte
half_t (alpha = 1, beta = 0), an 8-byte tiled MMA (wgmma's GMMA::ScaleOut accumulate_ = One),
pointers for A (M x K, row-major), B (N x K, row-major) and C (M x N, column-major), and zero
bytes for the empty structs. CTA tile 128 x 128 x 64 and 3 pipeline stages: grid (M/128, N/128),
128 threads, 98304 bytes of dynamic shared memory (two 128 x 64 x 3 half buffers), as the
examples' host code launches them.
"""
import importlib.util
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import numpy as np

KERNELS = {                      # name -> (example source, which .entry holds the TN GEMM)
    "cute_sgemm_sm80": ("examples/cute/tutorial/sgemm_sm80.cu", 0),
    "cute_wgmma_sm90": ("examples/cute/tutorial/hopper/wgmma_sm90.cu", 1),
}
SHARED_BYTES = 2 * 128 * 64 * 3 * 2


def source_root(given=None):
    """The CUTLASS source tree of the installed nvidia-cutlass wheel (or `given`), or None."""
    if given:
        return Path(given)
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or spec.origin is None:
        return None
    root = Path(spec.origin).parent / "source"
    return root if (root / "include").is_dir() else None


def build(root, out_dir):
    """{name: PTX path} compiled with nvcc into out_dir (sm_90a, -lineinfo)."""
    if shutil.which("nvcc") is None:
        raise RuntimeError("nvcc is not on PATH: the CUTLASS kernels are compiled here")
    out = {}
    for name, (src, _) in KERNELS.items():
        ptx = Path(out_dir) / f"{name}.ptx"
        subprocess.run(["nvcc", "-ptx", "-arch=sm_90a", "-std=c++17", "--expt-relaxed-constexpr", "-lineinfo",
                        "-I", str(root / "include"), "-I", str(root / "tools/util/include"), str(root / src),
                        "-o", str(ptx)], check=True, capture_output=True)
        out[name] = ptx
    return out


def launch(name, ptx_text, m, n, k, seed=0):
    """(kernel, grid, block, args, shared_bytes, reference C or None) of a TN GEMM M x N x K
    (multiples of 128, 128, 64) with integer inputs in -2..2: for K <= 512 every partial sum is
    an integer of at most 2048 in magnitude, exact in f16, so C is checked against that
    reference bit for bit (None for larger K)."""
    from layoutsim.ptx.module import load
    fns = [f for f in load(ptx_text).functions.values() if f.kind == "entry" and f.params]
    fn = fns[KERNELS[name][1]]
    rng = np.random.default_rng(seed)
    A = rng.integers(-2, 3, (m, k)).astype(np.float16)
    B = rng.integers(-2, 3, (n, k)).astype(np.float16)
    C = np.zeros((n, m), np.float16)                       # column-major M x N
    arrays, strides, args = iter([A, B, C]), iter([k, k, m]), []
    for i, p in enumerate(fn.params):
        size = (p.count or 1) * p.ptype.bits // 8
        if p.count is None:
            args.append(next(arrays))
        elif i == 0:
            args.append(struct.pack("<3i", m, n, k))
        elif size == 4:
            args.append(struct.pack("<i", next(strides)))
        elif size == 8:
            args.append(struct.pack("<2i", 1, 0))
        elif size == 2:
            args.append(np.float16(1.0 if i == len(fn.params) - 2 else 0.0).tobytes())
        else:
            args.append(bytes(size))
    ref = (A.astype(np.float32) @ B.astype(np.float32).T).astype(np.float16).T if k <= 512 else None
    return fn.name, (m // 128, n // 128), 128, args, SHARED_BYTES, ref


def temp_dir():
    return tempfile.mkdtemp(prefix="layoutsim-cutlass-")
