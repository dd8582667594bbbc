"""The real-world launches: CUTLASS 4.2's CuTe tutorials (pip package nvidia-cutlass==4.2.0.0).

Each tutorial's main() reads M, N, K and the transposes from its command line (defaults 5120 x
5120 x 4096, NT) and calls its host function gemm_nt or gemm_tn, which builds the kernel's
arguments from CuTe values and launches `gemm_device`. A case here is one such launch with the
command line `m n k transA transB` it names (`argv`): the same kernel instantiation, grid, block,
dynamic shared memory and argument bytes that host function gives for those sizes:
  * ProblemShape = make_shape(int M, int N, int K): a cute::tuple of three ints, 12 bytes;
  * a stride make_stride(Int<1>{}, ld) or make_stride(ld, Int<1>{}): one int, 4 bytes;
  * a compile-time value (tiler, smem layout, thread layout, TiledCopy, TiledMma): an empty
    struct, 1 byte in the PTX;
  * A, B, C: device pointers (our buffers; A and B uniform in [-1, 1) as main() fills them,
    C the 0xCD pattern: beta = 0, as main() sets it);
  * alpha = 1, beta = 0 of the tutorial's TI (float; cute::half_t, a 2-byte struct, for the
    half-precision ones).
Leading dimensions as main() sets them: ldA = m (A m-major, 'N') or k ('T'), ldB = n ('N'... the
tutorials' NT means A m-major, B n-major) or k, ldC = m. The build checks every argument's size
against the PTX's .param list of the entry it picks.
"""
from dataclasses import dataclass

import numpy as np

from gpu_check.kernel_corpus.cases import EMPTY, HOPPER_ARCH_SPECIFIC, Arg, Bytes, Struct, scalar, struct_ints

PACKAGE = "nvidia-cutlass==4.2.0.0"
ONE_F16, ZERO_F16 = Bytes(np.float16(1).tobytes()), Bytes(np.float16(0).tobytes())
UNIFORM = ("uniform", -1, 1)


@dataclass(frozen=True)
class Case:
    name: str
    source: str            # path in the package's source tree (cutlass_library/source/...)
    entry: tuple           # (mangled-name prefix, index among the PTX's entries with it, in order)
    arch: str              # the nvcc target (sm_90, or sm_90a for wgmma)
    argv: tuple            # the example's command line that gives this launch
    grid: tuple
    block: tuple
    shared_bytes: int
    args: tuple
    what: str

    @property
    def stem(self):
        return self.source.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _gemm_args(m, n, k, trans, dtype, alpha, beta):
    """gemm_device's 16 arguments (sgemm_1/2, sm70) for the command line m n k transA transB."""
    lda, ldb = (m, n) if trans == "NT" else (k, k)
    a_shape, b_shape = ((k, m), (k, n)) if trans == "NT" else ((m, k), (n, k))
    return (struct_ints(m, n, k), EMPTY,
            Arg(dtype, a_shape, "in", UNIFORM), struct_ints(lda), EMPTY, EMPTY,
            Arg(dtype, b_shape, "in", UNIFORM), struct_ints(ldb), EMPTY, EMPTY,
            Arg(dtype, (n, m), "out"), struct_ints(m), EMPTY, EMPTY,
            alpha, beta)


def _f32(name, stem, trans, index, m, n, k, block, shared, what):
    return Case(f"{name}_{trans.lower()}", f"examples/cute/tutorial/{stem}.cu", ("_Z11gemm_device", index),
                "sm_90", (str(m), str(n), str(k), trans[0], trans[1]), (-(-m // 128), -(-n // 128), 1),
                (block, 1, 1), shared,
                _gemm_args(m, n, k, trans, "float32", scalar("float32", 1.0), scalar("float32", 0.0)),
                what)


def _f16(name, source, arch, trans, index, m, n, k, block, shared, extra, what):
    """The half-precision tutorials: A, B, C and alpha, beta in cute::half_t; `extra` adds the
    compile-time S2R copy atom after each TiledCopy (sgemm_sm80); wgmma_sm90 has no C smem layout."""
    base = _gemm_args(m, n, k, trans, "float16", ONE_F16, ZERO_F16)
    if extra == "s2r":          # ... TiledCopyA, S2RAtomA, B, dB, sB, TiledCopyB, S2RAtomB, C, dC, sC, mma
        args = base[:6] + (EMPTY,) + base[6:10] + (EMPTY,) + base[10:]
    else:                       # wgmma_sm90: C, dC, TiledMma (no C smem layout)
        # an SM90 GMMA TiledMMA is 8 bytes: its atom's GMMA::ScaleOut accumulate_ (an int enum,
        # default One = 1), then an empty member padded to 4 bytes
        args = base[:12] + (struct_ints(1, 0),) + base[14:]
    return Case(f"{name}_{trans.lower()}", source, ("_Z11gemm_device", index), arch,
                (str(m), str(n), str(k), trans[0], trans[1]), (-(-m // 128), -(-n // 128), 1), (block, 1, 1),
                shared, args, what)


# (tutorial, what its NT launch shows, what its TN launch shows): m n k = 256 128 64, as
# `./sgemm_1 256 128 64 N T` and `... T N` launch them (gemm_nt's kernel is the PTX's first entry)
_F32 = (
    ("sgemm_1", "CuTe tutorial sgemm_1 (NT): 128x128x8 f32 tiles through shared memory, 16x16 threads, FFMA",
     "CuTe tutorial sgemm_1 (TN): k-major A and B, 128x128x8 tiles"),
    ("sgemm_2", "CuTe tutorial sgemm_2 (NT): TiledCopy (vectorised 128-bit global loads) and a 16x16x1 "
                "UniversalFMA TiledMMA",
     "CuTe tutorial sgemm_2 (TN): k-major tiles padded in shared memory, scalar TiledCopy"),
    ("sgemm_sm70", "CuTe tutorial sgemm_sm70 (NT): shared and register double buffering (gmem->rmem->smem, "
                   "smem->rmem waves)",
     "CuTe tutorial sgemm_sm70 (TN): the pipelined mainloop on k-major, padded tiles"),
)

CASES = tuple(_f32(f"cute_{stem}", stem, trans, i, 256, 128, 64, 256, 0, what)
              for stem, *whats in _F32 for i, (trans, what) in enumerate(zip(("NT", "TN"), whats))) + (
    _f16("cute_hgemm_sm80", "examples/cute/tutorial/sgemm_sm80.cu", "sm_90", "TN", 0, 256, 128, 256, 128, 98304, "s2r",
         "CuTe tutorial sgemm_sm80 (TN, half_t: its default types): 3-stage cp.async 16-byte pipeline into "
         "128B-swizzled tiles, ldmatrix.x4, mma.sync m16n8k16 f16"),
    _f16("cute_wgmma_sm90", "examples/cute/tutorial/hopper/wgmma_sm90.cu", HOPPER_ARCH_SPECIFIC, "NT", 0, 256, 128, 256, 128,
         98304, "", "CuTe Hopper tutorial wgmma_sm90 (NT): 3-stage cp.async into MN-major 128B-swizzled tiles, "
                    "wgmma m64n128k16 f16 from shared-memory descriptors"),
    _f16("cute_wgmma_sm90", "examples/cute/tutorial/hopper/wgmma_sm90.cu", HOPPER_ARCH_SPECIFIC, "TN", 1, 256, 128, 256, 128,
         98304, "", "CuTe Hopper tutorial wgmma_sm90 (TN): K-major 128B-swizzled tiles, wgmma from descriptors"),
)


def _tensor(shape_ints, stride_ints, buffer):
    """A CuTe Tensor by value, as nvcc lays it out (24 bytes, align 8, the PTX's ld.param offsets):
    its Layout (the shape's dynamic ints, then the stride's), then its engine's global pointer."""
    ints = np.asarray(shape_ints + stride_ints, "<i4").tobytes()
    return Struct(ints + bytes(16 - len(ints)) + bytes(8), ((16, buffer),))


# tiled_copy's main(): a 256 x 512 float tensor (element i = i) copied to a zeroed one through
# tiled_divide by (128, 64): ((_128, _64), 2, 8) : ((_1, 256), _128, 16384), grid (2, 8), 256 threads
# (a 32 x 8 thread layout, 4 x 1 values: 128-bit UniversalCopy). Its fixed sizes are the only ones.
CASES = CASES + (
    Case("cute_tiled_copy_vectorized", "examples/cute/tutorial/tiled_copy.cu", ("_Z22copy_kernel_vectorized", 0),
         "sm_90", (), (2, 8, 1), (256, 1, 1), 0,
         (_tensor((2, 8), (256, 16384), 3), _tensor((2, 8), (256, 16384), 4), EMPTY,
          Arg("float32", (512, 256), "in", ("iota",), param=False), Arg("float32", (512, 256), "out", ("const", 0),
                                                                         param=False)),
         "CuTe tutorial tiled_copy: copy_kernel_vectorized, tensors passed by value (a pointer and a layout's "
         "dynamic ints), 128-bit global loads and stores through registers"),
)
# the sm_90a (wgmma) cases last: a launch that faults on the GPU ends the runs after it
CASES = tuple(c for c in CASES if c.arch == "sm_90") + tuple(c for c in CASES if c.arch != "sm_90")
BY_NAME = {c.name: c for c in CASES}
