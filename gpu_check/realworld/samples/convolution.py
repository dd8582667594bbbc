"""__constant__-memory samples: convolutionSeparable (2_Concepts_and_Techniques) and
quasirandomGenerator (5_Domain_Specific). Each kernel reads a table the host copies in with
cudaMemcpyToSymbol before the launch: a `symbol` argument here (after the kernel's parameters).

convolutionSeparable: main() fixes imageW = imageH = 3072 (no option) and calls
setConvolutionKernel(h_Kernel) (c_Kernel[KERNEL_LENGTH = 17], KERNEL_RADIUS 8 a plain #define),
convolutionRowsGPU(d_Buffer, d_Input, imageW, imageH) and convolutionColumnsGPU(d_Output,
d_Buffer, imageW, imageH). A case is one of those host calls with a smaller image, W x H = 384 x 192,
which every assert of both accepts: W % (ROWS_RESULT_STEPS * ROWS_BLOCKDIM_X = 128) == 0,
H % ROWS_BLOCKDIM_Y (4) == 0, W % COLUMNS_BLOCKDIM_X (16) == 0, H % (COLUMNS_RESULT_STEPS *
COLUMNS_BLOCKDIM_Y = 64) == 0; three tiles each way so that both halo edges and an inner tile
occur. Data and taps are floats uniform in [0, 16) (the sample's are rand() % 16, integral, whose
sums would be exact); the columns pass reads random data where the sample gives it the rows pass's.

quasirandomGenerator: main() fixes N = 1048576 (no option) and calls initTableGPU(tableCPU) (c_Table,
3 x 31 uints), quasirandomGeneratorGPU(d_Output, 0, N): quasirandomGeneratorKernel<<<128, (128, 3)>>>
and inverseCNDgpu(d_Output, NULL, QRNG_DIMENSIONS * N): inverseCNDKernel<<<128, 128>>>. Both grids
are fixed; the cases call those host functions with a smaller N (`argv` names the call): 32768
(two grid-stride steps of 16384 positions per dimension) and 3 * 16384 (three steps of 16384
threads). The table is random uints below 2^31 (its 31-bit resolution) in place of the sample's
Niederreiter direction numbers; seed 0 as main() passes. Both kernels are `static`: their PTX
entries are _Z... names (no _ZL) declared without .visible, and c_Table keeps its plain name.

Left out: FDTD3d (5_Domain_Specific, __constant__ stencil) keeps its headers in FDTD3d/inc, which
its CMake adds as an include directory and this build does not (only Common/): FDTD3dGPU.cu does
not compile here. nbody's kernels include GL headers; binomialOptions writes its results to a
__device__ array read back with cudaMemcpyFromSymbol (no output buffer to compare); bilateralFilter,
convolutionTexture, FunctionPointers and the volume renderers read textures; particles and
smokeParticles use Thrust and GL interop; threadFenceReduction is in reduction.py.
"""
from gpu_check.kernel_corpus.cases import symbol

from .common import Arg, case, ints

CONV = "2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable.cu"
KERNEL_LENGTH = 17
IMAGE_W, IMAGE_H = 384, 192
TAPS = symbol("c_Kernel", "float32", (KERNEL_LENGTH,), ("uniform", 0, 16))
PIXELS = ("uniform", 0, 16)
CONV_ARGV = (f"imageW={IMAGE_W}", f"imageH={IMAGE_H}")


def _conv(name, entry, host, grid, block, what):
    """convolution{Rows,Columns}GPU: <<<grid, block>>>(d_Dst, d_Src, imageW, imageH, imageW)."""
    return case(f"convolution_{name}", CONV, entry, (host, *CONV_ARGV), grid, block,
                (Arg("float32", (IMAGE_H, IMAGE_W), "out"), Arg("float32", (IMAGE_H, IMAGE_W), "in", PIXELS),
                 *ints(IMAGE_W, IMAGE_H, IMAGE_W), TAPS), what)


QRNG = "5_Domain_Specific/quasirandomGenerator/quasirandomGenerator_kernel.cu"
QRNG_DIMENSIONS, QRNG_RESOLUTION = 3, 31
QRNG_N = 32768
INV_N = QRNG_DIMENSIONS * 16384
NULL = ints(0, dtype="uint64")[0]

CASES = (
    # convolutionRowsGPU: blocks(imageW / (8 * 16), imageH / 4), threads(16, 4)
    _conv("convolutionRowsKernel", "_Z21convolutionRowsKernel", "convolutionRowsGPU",
          (IMAGE_W // 128, IMAGE_H // 4), (16, 4),
          "cuda-samples convolutionSeparable, rows: 16x4 threads stage 8 result steps plus a 16-wide halo "
          "each side (zero outside the image) in s_Data[4][160], then a 17-tap FMA chain per output with "
          "taps from __constant__ c_Kernel (uniform across the warp)"),
    # convolutionColumnsGPU: blocks(imageW / 16, imageH / (8 * 8)), threads(16, 8)
    _conv("convolutionColumnsKernel", "_Z24convolutionColumnsKernel", "convolutionColumnsGPU",
          (IMAGE_W // 16, IMAGE_H // 64), (16, 8),
          "cuda-samples convolutionSeparable, columns: 16x8 threads load 8 row steps plus an 8-row halo "
          "each side with a row-pitch stride, transposed into s_Data[16][81] (odd pitch), a 17-tap FMA "
          "chain down each column with __constant__ taps"),
    # quasirandomGeneratorGPU(d_Output, seed = 0, N): <<<128, dim3(128, QRNG_DIMENSIONS)>>>
    case("quasirandomGenerator_quasirandomGeneratorKernel", QRNG, "_Z26quasirandomGeneratorKernel",
         ("quasirandomGeneratorGPU", "seed=0", f"N={QRNG_N}"), 128, (128, QRNG_DIMENSIONS),
         (Arg("float32", (QRNG_DIMENSIONS, QRNG_N), "out"), *ints(0, QRNG_N, dtype="uint32"),
          symbol("c_Table", "uint32", (QRNG_DIMENSIONS, QRNG_RESOLUTION), ("ints", 0, 2**31 - 1))),
         "cuda-samples quasirandomGenerator: Niederreiter sequence, a grid-stride loop, 31 data-dependent "
         "XORs of __constant__ c_Table entries indexed by threadIdx.y (divergent predicated loads), "
         "mul24 indexing, u32 -> f32 conversion and scale"),
    # inverseCNDgpu(d_Output, NULL, N): <<<128, 128>>>
    case("quasirandomGenerator_inverseCNDKernel", QRNG, "_Z16inverseCNDKernel",
         ("inverseCNDgpu", "d_Input=NULL", f"N={INV_N}"), 128, 128,
         (Arg("float32", (INV_N,), "out"), NULL, *ints(INV_N, dtype="uint32")),
         "cuda-samples quasirandomGenerator: Moro's inverse normal CDF of evenly spaced uints generated on "
         "the fly (the d_Input NULL branch), rational polynomial or __logf Chebyshev tail by branch, "
         "grid-stride loop"),
)
