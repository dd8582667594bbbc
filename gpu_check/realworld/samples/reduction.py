"""2_Concepts_and_Techniques/reduction and threadFenceReduction: sum reductions.

reduction (reduction.cpp host, reduction_kernel.cu kernels): runTest<T>() reads --n (elements),
--threads (maxThreads, default 256), --kernel (whichKernel 0..9), --maxblocks (default 64) and
-type=int|float|double (default int), fills the input with rand() & 0xFF (int) or
(rand() & 0xFF) / RAND_MAX (float), computes the launch with getNumBlocksAndThreads(whichKernel, n,
maxBlocks, maxThreads, blocks, threads):
  * kernels 0..2: threads = min(nextPow2(n), maxThreads), blocks = ceil(n / threads);
  * kernels >= 3: threads = min(nextPow2((n + 1) / 2), maxThreads), blocks = ceil(n / (2 threads));
  * kernels >= 6: blocks = min(maxBlocks, blocks),
and calls reduce<T>(n, threads, blocks, whichKernel, d_idata, d_odata) (reduction_kernel.cu), whose
switch picks the kernel instance (the blockSize template = threads; reduce6/reduce7's nIsPow2 =
isPow2(n)) and the dynamic shared memory: threads * sizeof(T) (2 * threads * sizeof(T) for
threads <= 32), ((threads / 32) + 1) * sizeof(T) for kernel 7, 2 * sizeof(T) for kernel 9
(multi_warp_cg_reduce<T, threads, threads / 2>, which also has a static cg::block_tile_memory).
A case is that first launch, whose output is one partial sum per block (the later launches of
benchmarkReduce() reduce those partial sums again with the same kernel). Kernels 0..5 at
--n=16384 (one element or two per thread); kernels 6..9 at --n=65536, where maxBlocks = 64 caps
the grid so the grid-stride loop runs twice (four times for cg_reduce, which strides by
blocks * threads), and at --n=50000 for the non-power-of-2 paths. Int inputs are rand() & 0xFF's
range [0, 255] (exact sums); the float ones uniform in [0, 1): every kernel adds in a fixed
order (shared-memory trees, shuffles, redux.sync for int; no atomics), so the bits are
deterministic. The int instances of reduce7, cg_reduce and multi_warp_cg_reduce use
__reduce_add_sync (redux.sync, sm_80+), the float ones shuffle trees.

threadFenceReduction (threadFenceReduction.cu, kernels in threadFenceReduction_kernel.cuh): float
only; runTest() reads --n, --threads (maxThreads, default 128), --maxblocks (default 64), and
getNumBlocksAndThreads(n, maxBlocks, maxThreads): threads = n < 2 maxThreads ? nextPow2(n / 2) :
maxThreads, blocks = min(maxBlocks, max(1, n / (2 threads))). runTest() first launches the
multi-pass reduce() (reduceMultiPass<threads, isPow2(n)>, shared threads * 4 bytes, or twice that
for threads <= 32), then benchmarkReduce() the single-pass reduceSinglePass(): reduceSinglePass<
threads, isPow2(n)>, shared threads * 4 bytes. The single-pass kernel writes each block's partial
sum, __threadfence()s, takes a ticket with atomicInc on the __device__ retirementCount (0 at
module load; the last block resets it), and the last block adds all the partial sums in index
order into g_odata[0]: the result does not depend on which block comes last.
"""
from .common import Arg, case, ints

SOURCE = "2_Concepts_and_Techniques/reduction/reduction_kernel.cu"
FENCE_SOURCE = "2_Concepts_and_Techniques/threadFenceReduction/threadFenceReduction.cu"
INT_DATA = ("ints", 0, 255)             # rand() & 0xFF
FLOAT_DATA = ("uniform", 0, 1)
_T = {"int": ("int32", "i", 4, INT_DATA), "float": ("float32", "f", 4, FLOAT_DATA)}


def _next_pow2(x):
    return 1 << (x - 1).bit_length()


def launch(kernel, n, max_threads=256, max_blocks=64):
    """reduction.cpp getNumBlocksAndThreads(whichKernel, n, maxBlocks, maxThreads): (blocks, threads)."""
    if kernel < 3:
        threads = _next_pow2(n) if n < max_threads else max_threads
        blocks = (n + threads - 1) // threads
    else:
        threads = _next_pow2((n + 1) // 2) if n < max_threads * 2 else max_threads
        blocks = (n + threads * 2 - 1) // (threads * 2)
    if kernel >= 6:
        blocks = min(max_blocks, blocks)
    return blocks, threads


def _is_pow2(n):
    return n & (n - 1) == 0


def _entry(kernel, code, threads, n):
    """The instance reduce<T>()'s switch launches, as nvcc mangles it."""
    pow2 = "1" if _is_pow2(n) else "0"
    if kernel <= 3:
        return f"_Z7reduce{kernel}I{code}EvPT_S1_j"
    if kernel in (4, 5):
        return f"_Z7reduce{kernel}I{code}Lj{threads}EEvPT_S1_j"
    if kernel == 6:
        return f"_Z7reduce6I{code}Lj{threads}ELb{pow2}EEvPT_S1_j"
    if kernel == 7:
        return f"_Z7reduce7I{code}Lj{threads}ELb{pow2}EEvPKT_PS0_j"
    if kernel == 8:
        return f"_Z9cg_reduceI{code}EvPT_S1_j"
    return f"_Z20multi_warp_cg_reduceI{code}Lm{threads}ELm{threads // 2}EEvPT_S1_j"


def _smem(kernel, threads, size):
    """reduce<T>()'s smemSize for the kernel it launches."""
    if kernel == 7:
        return (threads // 32 + 1) * size
    if kernel == 9:
        return 2 * size
    return 2 * threads * size if threads <= 32 else threads * size


_NAMES = ("reduce0", "reduce1", "reduce2", "reduce3", "reduce4", "reduce5", "reduce6", "reduce7", "cg_reduce",
          "multi_warp_cg_reduce")
_WHAT = (
    "interleaved-address tree in shared memory with tid % (2s) (divergent warps, an integer modulo)",
    "interleaved-address tree with contiguous active threads (strided shared-memory bank conflicts)",
    "sequential-address tree in shared memory (no divergence within active warps, no conflicts)",
    "first add while loading two elements a thread, then the sequential tree",
    "sequential tree down to 64, then the last warp in tile32.shfl_down (blockSize template 256)",
    "fully unrolled tree (blockSize 256), last warp by tile32.shfl_down",
    "grid-stride loop (two elements an iteration), unrolled tree, last warp by shuffles",
    "grid-stride loop, warp sums (warpReduceSum), per-warp sums through shared memory, a second warp sum",
    "grid-stride loop, shared-memory tree down to 32, cg::reduce over one 32-thread tile",
    "grid-stride loop, cg::reduce over two 128-thread tiles (block_tile_memory scratch), thread 0 adds "
    "the two",
)


def _reduce(kernel, n, ctype="int", np2_suffix=False):
    """reduction.cpp runTest<T>(): getNumBlocksAndThreads(kernel, n, 64, 256), then
    reduce<T>(n, threads, blocks, kernel, d_idata, d_odata) (reduction_kernel.cu)."""
    dtype, code, size, fill = _T[ctype]
    blocks, threads = launch(kernel, n)
    name = f"{_NAMES[kernel]}_{ctype}" + ("_np2" if np2_suffix else "")
    path = ("" if _is_pow2(n) or kernel < 6 else ", non-power-of-2 n") + (", float" if ctype == "float" else "")
    argv = (f"--n={n}", f"--kernel={kernel}") + ((f"-type={ctype}",) if ctype != "int" else ())
    return case(name, SOURCE, _entry(kernel, code, threads, n), argv, blocks, threads,
                (Arg(dtype, (n,), "in", fill), Arg(dtype, (blocks,), "out"), *ints(n, dtype="uint32")),
                f"cuda-samples reduction {_NAMES[kernel]}: {_WHAT[kernel]}{path}", shared=_smem(kernel, threads, size))


def fence_launch(n, max_threads=128, max_blocks=64):
    """threadFenceReduction.cu getNumBlocksAndThreads(n, maxBlocks, maxThreads): (blocks, threads)."""
    if n == 1:
        return 1, 1
    threads = _next_pow2(n // 2) if n < max_threads * 2 else max_threads
    return min(max_blocks, max(1, n // (threads * 2))), threads


def _fence(kernel, n, what):
    """threadFenceReduction.cu runTest(): getNumBlocksAndThreads(n, 64, 128), then reduce() (multi-pass)
    and reduceSinglePass() (threadFenceReduction_kernel.cuh): kernel<threads, isPow2(n)>(d_idata,
    d_odata, n) with threads * sizeof(float) shared bytes."""
    blocks, threads = fence_launch(n)
    pow2 = _is_pow2(n)
    name = f"threadfence_{kernel}" + ("" if pow2 else "_np2")
    entry = f"_Z{len(kernel)}{kernel}ILj{threads}ELb{int(pow2)}EEvPKfPfj"
    shared = (2 if threads <= 32 and kernel == "reduceMultiPass" else 1) * threads * 4
    argv = (f"--n={n}",)
    return case(name, FENCE_SOURCE, entry, argv, blocks, threads,
                (Arg("float32", (n,), "in", FLOAT_DATA), Arg("float32", (blocks,), "out"), *ints(n, dtype="uint32")),
                what, shared=shared)


CASES = (
    *(_reduce(k, 16384) for k in range(6)),
    *(_reduce(k, 65536) for k in range(6, 10)),
    _reduce(6, 50000, np2_suffix=True), _reduce(7, 50000, np2_suffix=True), _reduce(9, 50000, np2_suffix=True),
    *(_reduce(k, 65536, "float") for k in range(6, 10)),
    _fence("reduceMultiPass", 32768,
           "cuda-samples threadFenceReduction reduceMultiPass: grid-stride loop (two elements a trip), a volatile "
           "shared-memory warp tree with tile syncs, thread 0 adds the warp sums; float partial sums"),
    _fence("reduceSinglePass", 32768,
           "cuda-samples threadFenceReduction reduceSinglePass: per-block sums, __threadfence, an atomicInc ticket on "
           "a __device__ counter, the last block sums the partial sums (float)"),
    _fence("reduceSinglePass", 50000,
           "cuda-samples threadFenceReduction reduceSinglePass, non-power-of-2 n (bounds-checked second load), "
           "last-block final sum through __threadfence and atomicInc"),
)
