"""3_CUDA_Features tensor-core GEMMs: the `simple_wmma_*gemm` kernel of cudaTensorCoreGemm (half ->
float), bf16TensorCoreGemm, tf32TensorCoreGemm, immaTensorCoreGemm (uint8 -> int) and
dmmaTensorCoreGemm (double, m8n8k4).

Each main() launches its simple kernel as
    blockDim = (128, 4)          (16 warps: a block computes a 64x64 tile, 32x32 for the m8n8k4 dmma)
    gridDim.x = ceil(M_GLOBAL / (WMMA_M * 128 / 32)), gridDim.y = ceil(N_GLOBAL / (WMMA_N * 4))
    simple_*<<<gridDim, blockDim>>>(A, B, C, D, M_GLOBAL, N_GLOBAL, K_GLOBAL, alpha, beta)
on the command line that selects it: `-kernel=2` (bf16, tf32) or `-kernel=3` (dmma); cudaTensorCoreGemm
and immaTensorCoreGemm have no option and take the simple kernel only on a device whose shared memory
per SM is below the big kernel's SHMEM_SZ (the else branch of main(); `argv` is empty for them).
M_GLOBAL = M * M_TILES etc. are plain #defines (M_TILES 256..1024: 4096^3 to 8192^3, not
#ifndef-guarded), so the sizes here are the kernel's own runtime m_ld, n_ld, k_ld with main()'s grid
formula applied to them (M_GLOBAL = N_GLOBAL = K_GLOBAL in every sample): square 64 for bf16 and imma,
whose index quirks (below) assume it; M x N x K = 128x128x32 (f16, grid 2x2), 128x64x32 (tf32, grid
2x1) and 64x32x16 (f64, grid 2x1) for the others, so that blocks past the first are measured too (each
kernel is a plain MxNxK GEMM for any multiples of its tile).
alpha, beta as main() sets them: 1.1f, 1.2f (float; dmma: those floats converted to double), and
1, 1 (int) for imma. Inputs: A (M x K, row major), B (N x K: col-major K x N), C (M x N) seeded random
in the sample's types (the samples fill rand() % 3); D the output.

Left out: the high-performance kernels (compute_gemm, compute_bf16gemm[_async_copy],
compute_tf32gemm[_async_copy], compute_gemm_imma, compute_dgemm[_async_copy, _cg_async_copy]): they
take no sizes, every size is a fixed non-guarded #define (a 4096^3 .. 8192^3 GEMM, far past what the
model runs), so they cannot be launched small.

The kernels as published, including their index quirks (the reference checks reproduce them):
simple_wmma_bf16gemm loads B's fragment at b + warpN*16 + i*k_ld (bRow/bCol swapped) with the bounds
test warpN*16 < k_ld, i < n_ld; simple_wmma_gemm_imma uses lda = m_ld. With square sizes both stay
inside the buffers.
"""
import numpy as np

from .common import Arg, case, cdiv, ints, scalar

UNIFORM = ("uniform", -1, 1)
BLOCK = (128, 4)
ALPHA, BETA = float(np.float32(1.1)), float(np.float32(1.2))      # main(): 1.1f, 1.2f


def _grid(m, n, tile_m, tile_n):
    """main()'s gridDim for blockDim (128, 4): tile_m * 128 / 32 rows, tile_n * 4 columns a block."""
    return (cdiv(m, tile_m * BLOCK[0] // 32), cdiv(n, tile_n * BLOCK[1]))


def _simple(name, source, kernel, argv, mnk, tile, elem, acc, fill, cfill, alpha, beta, what):
    m, n, k = mnk
    tm, tn = tile
    return case(name, f"3_CUDA_Features/{source}", kernel, argv, _grid(m, n, tm, tn), BLOCK,
                (Arg(elem, (m, k), "in", fill), Arg(elem, (n, k), "in", fill), Arg(acc, (m, n), "in", cfill),
                 Arg(acc, (m, n), "out"), *ints(m, n, k), alpha, beta), what)


def _f32(v):
    return scalar("float32", v)


def _f64(v):
    return scalar("float64", v)


CASES = (
    _simple("wmma_f16_simple", "cudaTensorCoreGemm/cudaTensorCoreGemm.cu", "_Z16simple_wmma_gemmP6__halfS0_PfS1_iiiff",
            (), (128, 128, 32), (16, 16), "float16", "float32", UNIFORM, UNIFORM, _f32(ALPHA), _f32(BETA),
            "cudaTensorCoreGemm simple_wmma_gemm: wmma m16n16k16 f16 -> f32 (A row major, B col major) straight "
            "from global, D = alpha * A*B + beta * C through a row-major accumulator load/store"),
    _simple("wmma_bf16_simple", "bf16TensorCoreGemm/bf16TensorCoreGemm.cu",
            "_Z20simple_wmma_bf16gemmP13__nv_bfloat16S0_PfS1_iiiff",
            ("-kernel=2",), (64, 64, 64), (16, 16), "bfloat16", "float32", UNIFORM, UNIFORM, _f32(ALPHA), _f32(BETA),
            "bf16TensorCoreGemm simple_wmma_bf16gemm: wmma m16n16k16 bf16 -> f32 from global (its B fragment "
            "address with row and column swapped), alpha/beta epilogue"),
    _simple("wmma_tf32_simple", "tf32TensorCoreGemm/tf32TensorCoreGemm.cu", "_Z20simple_wmma_tf32gemmPfS_S_S_iiiff",
            ("-kernel=2",), (128, 64, 32), (16, 16), "float32", "float32", UNIFORM, UNIFORM, _f32(ALPHA), _f32(BETA),
            "tf32TensorCoreGemm simple_wmma_tf32gemm: wmma m16n16k8 tf32 -> f32, fragments from global rounded "
            "by __float_to_tf32 (cvt.rna.tf32.f32), alpha/beta epilogue"),
    _simple("wmma_u8_simple", "immaTensorCoreGemm/immaTensorCoreGemm.cu", "_Z21simple_wmma_gemm_immaPKhS0_PKiPiiiiii",
            (), (64, 64, 64), (16, 16), "uint8", "int32", ("ints", 0, 255), ("ints", -100000, 100000),
            scalar("int32", 1), scalar("int32", 1),
            "immaTensorCoreGemm simple_wmma_gemm_imma: wmma m16n16k16 u8 -> s32 from global, integer "
            "alpha/beta epilogue"),
    _simple("wmma_f64_simple", "dmmaTensorCoreGemm/dmmaTensorCoreGemm.cu", "_Z16simple_wmma_gemmPdS_S_S_iiidd",
            ("-kernel=3",), (64, 32, 16), (8, 8), "float64", "float64", UNIFORM, UNIFORM, _f64(ALPHA), _f64(BETA),
            "dmmaTensorCoreGemm simple_wmma_gemm: wmma m8n8k4 f64 (DMMA) from global, 16 warps a block on a "
            "32x32 tile, double alpha/beta epilogue"),
)
