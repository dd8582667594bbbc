"""The kernel corpus: every case (kernel, launch, arguments) and how its inputs are made.

A case is one launch of one `extern "C"` kernel of a source file in tests/data/kernels/. Its
array arguments get deterministic contents from `fill` specs: the bits come from a counter-based
hash (splitmix64 of the element index, keyed by the case and argument), so the same corpus comes
out on every machine and numpy version; the stored `<case>.inputs.npz` is still what CI and the
GPU read. Output arrays start as the byte 0xCD everywhere, so an element a kernel never writes is
visible (the GPU leaves it, a faithful model must too).

Fill specs (a tuple, first item the kind):
    ("uniform", lo, hi)          floats uniform in [lo, hi), rounded (RNE) to the array's dtype
    ("rows", lo, hi, scales)     "uniform" times scales[row % len(scales)] (softmax logits)
    ("ints", lo, hi)             integers uniform in [lo, hi]
    ("skewed", nbins)            bytes, half of them in the first 8 bins (atomic contention)
    ("const", value)             every element the same value (e.g. a zero histogram)
    ("iota",)                    element i is i, converted to the dtype (a host program's own fill)
    ("pattern", byte)            every byte the same (outputs: 0xCD)

A case is compiled for `archs` (default ARCHS: sm_80 and sm_90); the wgmma and TMA cases only
for sm_90a, their arch-specific target (what the H200 runs of them, and the replay, read). A
`TensorMap` argument is a CUtensorMap over one of the case's array arguments: the GPU side
encodes it with cuTensorMapEncodeTiled (gpu_check/descriptors/driver.py), the replay passes
layoutsim.ptx.TensorMapArg.
"""
import zlib
from dataclasses import dataclass, field

import numpy as np

from layoutsim import archs
from layoutsim.formats import numpy_dtype

OUT = ("pattern", 0xCD)
NVCC_FLAGS = ("-ptx", "-lineinfo", "-std=c++17")
ARCHS = ("sm_80", "sm_90")
HOPPER_ARCH_SPECIFIC = archs.compile_target("sm_90", arch_specific=True)     # sm_90a
HOPPER = ("sm_90", HOPPER_ARCH_SPECIFIC)      # the targets an sm_90 GPU runs a case's PTX of (one per case)


@dataclass(frozen=True)
class Arg:
    dtype: str                    # numpy / ml_dtypes name: float16, bfloat16, float32, int8, int32, uint8, uint32
    shape: tuple = ()             # () for a scalar
    role: str = "in"              # in / out / inout; "scalar" for by-value parameters
    fill: tuple = OUT             # how an array starts (see the module docstring)
    value: object = None          # a scalar's value
    param: bool = True            # False: an array only a Struct argument points to (not a parameter)
    symbol: str = ""              # an array the host copies into this module variable (cudaMemcpyToSymbol)

    @property
    def is_array(self):
        return self.role != "scalar"


def scalar(dtype, value):
    return Arg(dtype, (), "scalar", (), value)


def symbol(name, dtype, shape, fill):
    """What the host program copies into the module's __constant__/__device__ variable `name`
    before the launch (cudaMemcpyToSymbol, from byte 0): not a parameter."""
    return Arg(dtype, shape, "in", fill, param=False, symbol=name)


@dataclass(frozen=True)
class Bytes:
    """A by-value struct parameter (`.param .align A .b8 name[N]`) given as its exact bytes, as the
    host program builds it (e.g. a CuTe tuple of ints; an empty struct is one byte)."""
    data: bytes
    role = "bytes"
    is_array = False


def struct_ints(*values, dtype="<i4"):
    """A struct of consecutive ints (a cute::tuple of dynamic ints: int32 each, no padding)."""
    return Bytes(np.asarray(values, dtype).tobytes())


@dataclass(frozen=True)
class Struct:
    """A by-value struct parameter that holds device pointers (a CuTe Tensor by value): its bytes,
    and at each (offset, i) of `pointers` the address of array argument i (one with param=False)."""
    data: bytes
    pointers: tuple
    role = "struct"
    is_array = False


EMPTY = Bytes(b"\0")            # a struct of only compile-time members: one byte in the PTX


@dataclass(frozen=True)
class TensorMap:
    """A tiled CUtensorMap argument (cuTensorMapEncodeTiled; interleave none, element strides 1,
    L2 promotion none, OOB fill none): over array argument `buffer`, dims and box innermost first,
    dense strides; `form` "value" for a __grid_constant__ parameter, "pointer" for a pointer to the
    map in global memory."""
    buffer: int
    dims: tuple
    box: tuple
    elem_bytes: int
    swizzle: str = "none"
    form: str = "value"
    role = "tensormap"
    is_array = False


@dataclass(frozen=True)
class Case:
    name: str                     # the case; also the kernel's entry name in the PTX
    source: str                   # the .cu file in tests/data/kernels/
    grid: tuple
    block: tuple
    args: tuple
    what: str
    shared_bytes: int = 0         # dynamic shared memory of the launch
    kernel: str = field(default="")
    archs: tuple = ARCHS          # the targets its PTX is built for

    @property
    def entry(self):
        return self.kernel or self.name

    @property
    def stem(self):
        return self.source.rsplit(".", 1)[0]

    @property
    def run_arch(self):
        """The target of the PTX an sm_90 GPU (and the replay) runs: sm_90, or sm_90a."""
        return next(a for a in self.archs if a in HOPPER)


def _u(lo, hi):
    return ("uniform", lo, hi)


def _wmma(name, elem, acc, fill, what):
    a = Arg(elem, (64, 64), "in", fill)
    b = Arg(elem, (64, 64), "in", fill)
    return Case(name, "wmma_gemm.cu", (2, 2, 1), (128, 1, 1),
                (a, b, Arg(acc, (64, 64), "out"), scalar("int32", 64), scalar("int32", 64), scalar("int32", 64)),
                what)


def _mma(name, what):
    return Case(name, "mma_ldmatrix.cu", (2, 1, 1), (128, 1, 1),
                (Arg("float16", (128, 64), "in", _u(-1, 1)), Arg("float16", (64, 64), "in", _u(-1, 1)),
                 Arg("float32", (128, 64), "out")), what)


def _transpose(name, what):
    return Case(name, "transpose.cu", (3, 2, 1), (32, 8, 1),
                (Arg("float32", (64, 96), "in", _u(-100, 100)), Arg("float32", (96, 64), "out"),
                 scalar("int32", 64), scalar("int32", 96)), what)


def _softmax(name, dtype, what):
    logits = ("rows", -4, 4, (1.0, 4.0, 16.0, 40.0))
    return Case(name, "softmax_ex2.cu", (4, 1, 1), (128, 1, 1),
                (Arg(dtype, (16, 128), "in", logits), Arg(dtype, (16, 128), "out")), what)


CASES = (
    _wmma("wmma_f16_global", "float16", "float32", _u(-1, 1), "wmma m16n16k16 f16 -> f32, fragments loaded from global"),
    _wmma("wmma_f16_shared", "float16", "float32", _u(-1, 1),
          "wmma m16n16k16 f16 -> f32, fragments loaded from shared tiles padded by 8 halves"),
    _wmma("wmma_bf16_global", "bfloat16", "float32", _u(-1, 1), "wmma m16n16k16 bf16 -> f32, fragments from global"),
    _wmma("wmma_bf16_shared", "bfloat16", "float32", _u(-1, 1),
          "wmma m16n16k16 bf16 -> f32, fragments from padded shared tiles (generic addresses)"),
    _wmma("wmma_s8_global", "int8", "int32", ("ints", -128, 127), "wmma m16n16k16 s8 -> s32, fragments from global"),
    _wmma("wmma_s8_shared", "int8", "int32", ("ints", -128, 127),
          "wmma m16n16k16 s8 -> s32, fragments from shared tiles padded by 16 bytes (byte stores)"),
    _wmma("wmma_tf32_global", "float32", "float32", _u(-1, 1),
          "wmma m16n16k8 tf32 -> f32 (f32 inputs rounded by __float_to_tf32), fragments from global"),
    _wmma("wmma_tf32_shared", "float32", "float32", _u(-1, 1),
          "wmma m16n16k8 tf32 -> f32, fragments from shared tiles padded by 4 words (generic addresses)"),
    _mma("mma_ldmatrix_plain", "mma.sync m16n8k16 + ldmatrix.x4 / .x2.trans from unpadded 128-byte rows (conflicts)"),
    _mma("mma_ldmatrix_padded", "mma.sync m16n8k16 + ldmatrix from rows padded to 144 bytes"),
    _mma("mma_ldmatrix_swizzled", "mma.sync m16n8k16 + ldmatrix from 16-byte chunks XOR-swizzled by row % 8"),
    Case("cp_async_gemv", "cp_async_pipeline.cu", (4, 1, 1), (128, 1, 1),
         (Arg("float32", (64, 1024), "in", _u(-1, 1)), Arg("float32", (1024,), "in", _u(-1, 1)),
          Arg("float32", (64,), "out"), scalar("int32", 1024)),
         "three-stage cp.async.cg pipeline (commit_group / wait_group 2) feeding an f32 GEMV"),
    Case("stmatrix_epilogue", "stmatrix_epilogue.cu", (2, 1, 1), (128, 1, 1),
         (Arg("float16", (128, 32), "in", _u(-1, 1)), Arg("float16", (32, 32), "in", _u(-1, 1)),
          Arg("float16", (128, 32), "out")),
         "mma.sync accumulators -> cvt.rn.f16x2 -> stmatrix.x4 into a padded tile -> 16-byte global stores"),
    Case("int8_gemv", "int8_gemv.cu", (4, 1, 1), (256, 1, 1),
         (Arg("int8", (128, 512), "in", ("ints", -128, 127)), Arg("int8", (512,), "in", ("ints", -128, 127)),
          Arg("float16", (128,), "in", _u(0.0005, 0.002)), Arg("float16", (128,), "in", _u(-1, 1)),
          Arg("float16", (128,), "out"), scalar("float32", 0.0078125), scalar("int32", 512)),
         "int8 GEMV by dp4a with a half-precision dequantising epilogue (cvt.rn.f16.f32, fma.rn.f16)"),
    _transpose("transpose_conflicts", "32x32 f32 shared-memory transpose, tile[32][32]: 32-way conflicts on the column read"),
    _transpose("transpose_padded", "32x32 f32 shared-memory transpose, tile[32][33]: conflict free"),
    _transpose("transpose_swizzled", "32x32 f32 shared-memory transpose, column c of row r at c ^ r: conflict free"),
    Case("warp_reduce", "warp_reduce.cu", (2, 1, 1), (256, 1, 1),
         (Arg("float32", (512,), "in", _u(-10, 10)), Arg("int32", (512,), "in", ("ints", -3, 40)),
          Arg("float32", (32,), "out"), Arg("int32", (48,), "out")),
         "warp reductions: shfl.sync.bfly f32 sum, shfl.sync.down max, redux.sync.add, vote ballot / any"),
    Case("byte_smem", "byte_smem.cu", (2, 1, 1), (256, 1, 1),
         (Arg("uint8", (512,), "in", ("ints", 0, 255)), Arg("uint32", (2560,), "out")),
         "st.shared.u8 at strides 1, 4, 33, 129 and st.shared.u16, read back as words"),
    _softmax("softmax_f32", "float32", "row softmax in f32 with __expf (ex2.approx.f32, non-ftz) and div.rn.f32"),
    _softmax("softmax_h2exp2", "float16", "row softmax in f16 pairs with CUDA's h2exp2 (ex2.approx.ftz.f32 inside)"),
    _softmax("softmax_f16x2", "float16", "row softmax in f16 pairs with ex2.approx.f16x2"),
    Case("histogram_atomics", "histogram_atomics.cu", (4, 1, 1), (256, 1, 1),
         (Arg("uint8", (8192,), "in", ("skewed", 256)), Arg("uint32", (256,), "inout", ("const", 0)),
          scalar("int32", 8192)),
         "byte histogram: atom.shared.add with contention, then atom.global.add per bin and CTA"),
)

def _wgmma(name, kernel, dtype, what):
    """128 x 128 x 128 GEMMs, one warpgroup per 64 x 64 tile (wgmma_smem_gemm.cu)."""
    return Case(name, "wgmma_smem_gemm.cu", (2, 2, 1), (128, 1, 1),
                (Arg(dtype, (128, 128), "in", _u(-1, 1)), Arg(dtype, (128, 128), "in", _u(-1, 1)),
                 Arg("float32", (128, 128), "out"), scalar("int32", 128), scalar("int32", 128), scalar("int32", 128)),
                what, kernel=kernel, archs=(HOPPER_ARCH_SPECIFIC,))


TMA_M, TMA_N, TMA_K = 112, 128, 200      # not multiples of the 64 x 64 x 64 tile: TMA's zero fill and clipping
CASES = CASES + (
    _wgmma("wgmma_ss_f16", "wgmma_ss_f16", "float16",
           "wgmma m64n64k16 f16 -> f32, A and B from 128B-swizzled K-major tiles filled by 16-byte st.shared"),
    _wgmma("wgmma_rs_bf16", "wgmma_rs_bf16", "bfloat16",
           "wgmma m64n64k16 bf16 -> f32, A from registers (ldmatrix.x4), B MN-major in a 64B-swizzled tile"),
    Case("tma_wgmma_gemm", "tma_wgmma_gemm.cu", (2, 2, 1), (160, 1, 1),
         (TensorMap(3, (TMA_K, TMA_M), (64, 64), 2, "128B"), TensorMap(4, (TMA_K, TMA_N), (64, 64), 2, "128B", "pointer"),
          TensorMap(5, (TMA_N, TMA_M), (64, 64), 4),
          Arg("float16", (TMA_M, TMA_K), "in", _u(-1, 1)), Arg("float16", (TMA_N, TMA_K), "in", _u(-1, 1)),
          Arg("float32", (TMA_M, TMA_N), "out"), scalar("int32", TMA_M), scalar("int32", TMA_N), scalar("int32", TMA_K)),
         "CUTLASS-style sm90 mainloop: elected producer, TMA loads with expect_tx on 2 mbarrier stages, a "
         "wgmma consumer warpgroup, TMA store epilogue; M, N, K off the tile", archs=(HOPPER_ARCH_SPECIFIC,)),
)

BY_NAME = {c.name: c for c in CASES}


# ---- deterministic contents ------------------------------------------------------------------
_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def hash_bits(key, n):
    """n pseudo-random uint64 from splitmix64 of the counters key * 2^32 + i (wrapping arithmetic,
    the same on every machine)."""
    with np.errstate(over="ignore"):
        z = np.arange(n, dtype=np.uint64) + np.uint64((zlib.crc32(key.encode()) << 32) & 0xFFFFFFFFFFFFFFFF)
        z = z * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E5A9)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return (z ^ (z >> np.uint64(31))) & _M64


def _unit(key, n):
    """Floats in [0, 1) with 53 random bits."""
    return (hash_bits(key, n) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def fill(spec, dtype, shape, key):
    """The initial content of one array argument."""
    dt = numpy_dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    kind = spec[0]
    if kind == "pattern":
        return np.full(n * dt.itemsize, spec[1], np.uint8).view(dt).reshape(shape)
    if kind == "const":
        return np.full(shape, spec[1], dt)
    if kind == "iota":
        return np.arange(n).astype(dt).reshape(shape)
    if kind in ("uniform", "rows"):
        lo, hi = spec[1], spec[2]
        v = lo + (hi - lo) * _unit(key, n)
        if kind == "rows":
            scales = np.asarray(spec[3], np.float64)
            v = v.reshape(shape[0], -1) * scales[np.arange(shape[0]) % len(scales)][:, None]
        return v.reshape(shape).astype(dt)
    if kind == "ints":
        lo, hi = spec[1], spec[2]
        return (lo + (hash_bits(key, n) % np.uint64(hi - lo + 1)).astype(np.int64)).astype(dt).reshape(shape)
    if kind == "skewed":
        bits = hash_bits(key, n)
        hot = (bits >> np.uint64(8)) & np.uint64(1)
        v = np.where(hot == 1, bits % np.uint64(8), bits % np.uint64(spec[1]))
        return v.astype(dt).reshape(shape)
    raise ValueError(f"unknown fill kind {kind!r}")


def inputs(case):
    """{f"arg{i}": array} for every array argument of the case, in parameter order."""
    return {f"arg{i}": fill(a.fill, a.dtype, a.shape, f"{case.name}/arg{i}")
            for i, a in enumerate(case.args) if a.is_array}
