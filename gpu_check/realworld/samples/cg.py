"""cuda-samples cases: cooperative groups and warp-level primitives.

binaryPartitionCG (cg::binary_partition, cg::reduce), simpleVoteIntrinsics (__any_sync /
__all_sync, its three kernels) and SobolQRNG (the __ffs bit intrinsic in a Gray-code recurrence,
two grid shapes of its launcher). Every output is deterministic on a GPU: the only atomics are
integer atomicAdds (binaryPartitionCG's count and sums), whose final values do not depend on the
order the warps reach them; everything else is written once by one thread.

Grids that the host code derives from the device use an H100 SXM / H200 (132 SMs, 2048 threads
and 64K registers an SM, sm_90).

Left out, and why:
  * warpAggregatedAtomicsCG (filter_arr, mapToBuckets, calculateMaxInEachBuckets): NUM_ELEMS is a
    plain #define 10000000 (no #ifndef, no command-line option), so main() always launches
    10M / 512 (+ 1) blocks of 512 threads over 40 MB arrays (mapToBuckets' index buffer is 200 MB):
    far beyond what the model runs in seconds, and no smaller launch is the sample's. Besides,
    filter_arr's dst and mapToBuckets' indicesBuckets get their positions from atomicAdd order
    across warps (only nres / bucketCounters / bucketsMax are deterministic), so those buffers could
    only be compared with a fill whose kept values are all equal.
  * simpleCooperativeGroups: cgkernel() takes no arguments; its only output is printf.
  * simpleAtomicIntrinsics (testKernel, 64 x 256 threads on one 11-int buffer): atomicExch(&g[2], tid)
    leaves the tid of whichever thread came last, and atomicCAS(&g[7], tid - 1, tid) chains only as
    far as the threads happen to arrive in order: both depend on the GPU's scheduling, and they
    share the one output buffer with the deterministic ones, so the launch cannot be compared.
  * jacobiCudaGraphs, simpleCudaGraphs (tile32.shfl_down reductions): CUDA graphs, and double
    atomicAdds whose rounding depends on order; simpleAWBarrier, reductionMultiBlockCG,
    conjugateGradient*CG: cooperative launch (grid.sync); cdpQuadtree, cdpAdvancedQuicksort
    (ballot / shfl): dynamic parallelism; MonteCarloMultiGPU: multi-GPU and curand states; dxtc
    (tiled_partition(cta, 16)): its fixed 512 x 512 image gives 16384 blocks of heavy float work.
"""
from .common import Arg, case, cdiv, ints, scalar

SMS = 132           # multiProcessorCount of an H100 SXM and of an H200


def _binary_partition():
    """binaryPartitionCG.cu main(): arrSize = 1024 * 100 (fixed in the source), inputs rand() % 50,
    numOfOdds and sumOfOddAndEvens cudaMemsetAsync to 0; block and grid from
    cudaOccupancyMaxPotentialBlockSize(oddEvenCountAndSumCG, 0 dynamic shared, no block limit):
    the kernel uses 16 registers and no shared memory (ptxas, sm_90), so 1024 threads already give
    the full 2048 threads an SM (2 blocks), the largest such block wins: block 1024, grid 2 * 132.
    Each thread takes at most one element (264 * 1024 > 102400). The counts and sums are integer
    atomicAdds: order-independent."""
    n = 1024 * 100
    block, grid = 1024, 2 * SMS
    return case("oddEvenCountAndSumCG", "3_CUDA_Features/binaryPartitionCG/binaryPartitionCG.cu",
                "_Z20oddEvenCountAndSumCG", (), grid, block,
                (Arg("int32", (n,), "in", ("ints", 0, 49)), Arg("int32", (1,), "inout", ("const", 0)),
                 Arg("int32", (2,), "inout", ("const", 0)), scalar("uint32", n)),
                "cuda-samples binaryPartitionCG: cg::binary_partition of a 32-thread tile by parity "
                "(vote.sync.ballot, popc), cg::reduce (redux.sync.add) in each part, integer atomicAdd by each "
                "part's leader, a grid-stride loop over grid_group ranks")


VOTE = "0_Introduction/simpleVoteIntrinsics/simpleVoteIntrinsics.cu"


def _vote():
    """simpleVoteIntrinsics.cu main(): warp_size 32, VOTE_DATA_GROUP 4; kernels 1 and 2 on one block of
    128 threads over 128 words (size 128), kernel 3 on one block of 3 * 32 threads with info = 3 * 3 *
    32 bools calloc'ed to zero (uint8 here), warp_size 32. The sample's input pattern makes some warps
    vote 0 and some 1; seeded fills that do the same here: kernel 1's words are 0 except ~2% ones
    (("uniform", 0, 1.02) truncated to uint32: in this seed one warp of four votes any = 1), kernel 2's
    are in [0, 40] (zero 1 time in 41: two warps of four vote all = 1)."""
    n = 4 * 32
    return (
        case("VoteAnyKernel1", VOTE, "_Z14VoteAnyKernel1", (), 1, n,
             (Arg("uint32", (n,), "in", ("uniform", 0, 1.02)), Arg("uint32", (n,), "out"), *ints(n)),
             "cuda-samples simpleVoteIntrinsics kernel 1: __any_sync (vote.sync.any) of each lane's word, "
             "one word a thread"),
        case("VoteAllKernel2", VOTE, "_Z14VoteAllKernel2", (), 1, n,
             (Arg("uint32", (n,), "in", ("ints", 0, 40)), Arg("uint32", (n,), "out"), *ints(n)),
             "cuda-samples simpleVoteIntrinsics kernel 2: __all_sync (vote.sync.all) of each lane's word"),
        case("VoteAnyKernel3", VOTE, "_Z14VoteAnyKernel3", (), 1, 3 * 32,
             (Arg("uint8", (3 * 3 * 32,), "inout", ("const", 0)), *ints(32)),
             "cuda-samples simpleVoteIntrinsics kernel 3: __any_sync / __all_sync of tid >= 48 across three "
             "warps, byte stores at a 3-byte stride, the third under the all-vote"),
    )


SOBOL = "5_Domain_Specific/SobolQRNG/sobol_gpu.cu"


def _sobol_grid(n_vectors, n_dimensions, sms=SMS):
    """sobolGPU(): grid.y = dimensions; grid.x = 4 * SMs when dimensions < 4 * SMs, else 1; when that
    exceeds vectors / 64 it becomes ceil(vectors / 64); then rounded up to a power of two."""
    gx = 4 * sms if n_dimensions < 4 * sms else 1
    if gx > n_vectors // 64:
        gx = cdiv(n_vectors, 64)
    p = 1
    while p < gx:
        p *= 2
    return p, n_dimensions


def _sobol(n_vectors, n_dimensions, what):
    """SobolQRNG `-vectors=V -dimensions=D` (sobol.cpp main(); sobolGPU() launches the kernel once,
    64 threads a block, grid by _sobol_grid). The direction numbers (D x 32 words, n_directions 32)
    are seeded random words here, not initSobolDirectionVectors' table: the kernel only XORs them;
    the output is D x V floats (float)X * 2.3283064E-10F."""
    return case(f"sobolGPU_kernel_{n_vectors}x{n_dimensions}", SOBOL, "_Z15sobolGPU_kernel",
                (f"-vectors={n_vectors}", f"-dimensions={n_dimensions}"), _sobol_grid(n_vectors, n_dimensions), 64,
                (scalar("uint32", n_vectors), scalar("uint32", n_dimensions),
                 Arg("uint32", (n_dimensions, 32), "in", ("ints", 0, 2**32 - 1)),
                 Arg("float32", (n_dimensions, n_vectors), "out")), what)


CASES = (
    _binary_partition(),
    *_vote(),
    # 1 dimension < 4 * 132: 528 blocks, not capped (100000 / 64 = 1562), rounded to 1024: stride 65536
    _sobol(100000, 1, "cuda-samples SobolQRNG: a dimension's vectors split over 1024 blocks (stride 65536), "
                      "16-step Gray-code XOR of shared direction numbers, then the __ffs (brev + bfind) recurrence"),
    # 528 = 4 * 132 dimensions: one block a dimension (stride 64), 4 vectors a thread
    _sobol(256, 528, "cuda-samples SobolQRNG: one block a dimension (stride 64), 4 vectors a thread by the __ffs "
                     "recurrence (data-dependent shared-memory index), cvt.rn.f32.u32 times 2^-32"),
)
