"""2_Concepts_and_Techniques/sortingNetworks: bitonicSort.cu and oddEvenMergeSort.cu.

main() sorts N = 1048576 keys (rand() % 65536) with values i, DIR = 0, calling bitonicSort(d_DstKey,
d_DstVal, d_SrcKey, d_SrcVal, N / arrayLength, arrayLength, DIR) for arrayLength 64 .. N (it never
calls oddEvenMergeSort, which has the same interface); it has no size option. A case here is one
launch of bitonicSort() / oddEvenMergeSort() called with a smaller batchSize (`argv` names the
call), which their asserts allow. SHARED_SIZE_LIMIT = 1024 (a plain #define): blockCount =
batchSize * arrayLength / 1024 blocks of 512 threads for the shared-memory kernels,
batchSize * arrayLength / 512 blocks of 256 for the global merge steps. Keys are uints in
[0, 65535] as rand() % 65536 gives, values the iota main() sets; dir 0 (main()'s DIR, descending).

For arrayLength > 1024 the host loops `for size = 2048 .. arrayLength, for stride = size / 2 .. 1`,
each step in place (d_Dst as both source and destination). A global-merge case is one (size, stride)
step of that loop with random keys rather than the previous steps' output (bitonic runs), and with
separate source and destination buffers: every comparator reads and writes only its own two
positions, so the values stored are those of the in-place step; where oddEvenMergeGlobal's
comparator is idle (offset < stride), the destination keeps its 0xCD fill instead of the source.
"""
from .common import Arg, case, ints

BITONIC = "2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu"
ODD_EVEN = "2_Concepts_and_Techniques/sortingNetworks/oddEvenMergeSort.cu"
LIMIT = 1024                    # SHARED_SIZE_LIMIT
KEYS = ("ints", 0, 65535)
DIR = 0


def _arrays(n):
    """d_DstKey, d_DstVal, d_SrcKey, d_SrcVal."""
    return (Arg("uint32", (n,), "out"), Arg("uint32", (n,), "out"), Arg("uint32", (n,), "in", KEYS),
            Arg("uint32", (n,), "in", ("iota",)))


def _u(*values):
    return ints(*values, dtype="uint32")


def _shared_sort(name, source, kernel, host, batch, length, what):
    """bitonicSort() / oddEvenMergeSort() for arrayLength <= SHARED_SIZE_LIMIT: <kernel><<<blockCount,
    SHARED_SIZE_LIMIT / 2>>>(d_DstKey, d_DstVal, d_SrcKey, d_SrcVal, arrayLength, dir)."""
    n = batch * length
    return case(f"{name}_len{length}", source, kernel, (host, f"batchSize={batch}", f"arrayLength={length}", "dir=0"),
                n // LIMIT, LIMIT // 2, (*_arrays(n), *_u(length, DIR)), what)


# the large-array path: bitonicSort / oddEvenMergeSort(batchSize = 2, arrayLength = 4096)
BATCH, LENGTH = 2, 4096
N = BATCH * LENGTH


def _argv(host, *step):
    return (host, f"batchSize={BATCH}", f"arrayLength={LENGTH}", "dir=0", *step)


CASES = (
    _shared_sort("bitonicSortShared", BITONIC, "_Z17bitonicSortShared", "bitonicSort", 64, 64,
                 "cuda-samples bitonic sort of 64-key arrays (16 per block) in shared memory: compare-exchange "
                 "of keys and values at strides 1..32, a barrier per step, per-array direction bits"),
    _shared_sort("bitonicSortShared", BITONIC, "_Z17bitonicSortShared", "bitonicSort", 4, 1024,
                 "cuda-samples bitonic sort of 1024-key arrays in shared memory: 55 compare-exchange steps at "
                 "strides 1..512 (bank conflicts at the large strides)"),
    case("bitonicSortShared1", BITONIC, "_Z18bitonicSortShared1", _argv("bitonicSort"), N // LIMIT, LIMIT // 2,
         _arrays(N),
         "cuda-samples bitonic sort, large arrays, first pass: each 1024-key chunk sorted in shared memory, "
         "odd chunks ascending and even ones descending"),
    case("bitonicMergeGlobal", BITONIC, "_Z18bitonicMergeGlobal", _argv("bitonicSort", "size=2048", "stride=1024"),
         N // 512, 256, (*_arrays(N), *_u(LENGTH, 2048, 1024, DIR)),
         "cuda-samples bitonic merge step in global memory (size 2048, stride 1024): coalesced key and value "
         "loads 4 KiB apart, a compare-exchange, four stores"),
    case("bitonicMergeShared", BITONIC, "_Z18bitonicMergeShared", _argv("bitonicSort", "size=2048"),
         N // LIMIT, LIMIT // 2, (*_arrays(N), *_u(LENGTH, 2048, DIR)),
         "cuda-samples bitonic merge, strides 512..1 of one size (2048) combined in shared memory, __umul24 "
         "comparator index"),
    _shared_sort("oddEvenMergeSortShared", ODD_EVEN, "_Z22oddEvenMergeSortShared", "oddEvenMergeSort", 64, 64,
                 "cuda-samples Batcher odd-even merge sort of 64-key arrays in shared memory: strided "
                 "compare-exchanges, half the threads idle in the odd-even steps"),
    _shared_sort("oddEvenMergeSortShared", ODD_EVEN, "_Z22oddEvenMergeSortShared", "oddEvenMergeSort", 4, 1024,
                 "cuda-samples Batcher odd-even merge sort of 1024-key arrays in shared memory (also the large "
                 "path's first pass)"),
    case("oddEvenMergeGlobal_size4096_stride2048", ODD_EVEN, "_Z18oddEvenMergeGlobal",
         _argv("oddEvenMergeSort", "size=4096", "stride=2048"), N // 512, 256, (*_arrays(N), *_u(LENGTH, 4096, 2048, DIR)),
         "cuda-samples odd-even merge step in global memory, stride = size / 2: every thread compares keys 8 KiB "
         "apart"),
    case("oddEvenMergeGlobal_size4096_stride256", ODD_EVEN, "_Z18oddEvenMergeGlobal",
         _argv("oddEvenMergeSort", "size=4096", "stride=256"), N // 512, 256, (*_arrays(N), *_u(LENGTH, 4096, 256, DIR)),
         "cuda-samples odd-even merge step in global memory, stride < size / 2: threads with offset < stride "
         "idle (whole warps), the rest compare keys stride apart"),
)
