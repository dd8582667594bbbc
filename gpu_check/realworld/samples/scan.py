"""2_Concepts_and_Techniques: scan (scan.cu) and shfl_scan (shfl_scan.cu, shfl_integral_image.cuh).

scan: main() fixes N = 13 * 1048576 / 2 uints (rand() values) and calls scanExclusiveShort(d_Dst,
d_Src, N / arrayLength, arrayLength) for arrayLength 4 .. 1024 and scanExclusiveLarge(...) for
arrayLength 2048 .. 262144; it has no size option. A case here is one launch of those host
functions called with a smaller batchSize (`argv` names the call), which their asserts allow:
arrayLength a power of two in the function's range, batchSize * arrayLength a multiple of
4 * THREADBLOCK_SIZE = 1024 (THREADBLOCK_SIZE 256, a plain #define). Inputs are uints uniform in
[0, RAND_MAX = 2^31 - 1] as rand() gives; sums wrap mod 2^32 as on the GPU. scanExclusiveLarge's
first launch (scanExclusiveShared with size 1024) is the same launch as the short arrayLength-1024
case, only more blocks, so it is not repeated.

shfl_scan: shuffle_simple_test() scans n_elements = 65536 ints (its own fixed size, kept here):
shfl_scan_test over the data, shfl_scan_test over the 256 block sums, uniform_add of those back.
Data are random ints in [-1000, 1000] instead of the sample's 1s. uniform_add's data pointer is
d_data + blockSize: the case's buffer is that tail (65280 ints), which is all the kernel touches.
shuffle_integral_image_test() fixes a 1920 x 1080 byte image; shfl_intimage_rows hard-codes 1920
bytes a row (120 uint4) and is launched one block per row, so fewer rows (a smaller grid) is the
only size it takes; shfl_vertical_shfl hard-codes 135 steps of 8 rows (h = 1080, its `height`
argument is unused) but takes the width as an argument and its grid is w / 32: the case uses a
narrower image (w = 128) at the full 1080 rows, the 1920-wide one being ~2M thread-iterations.
"""
from .common import Arg, case, cdiv, ints

THREADBLOCK_SIZE = 256
RAND = ("ints", 0, 2**31 - 1)
SCAN = "2_Concepts_and_Techniques/scan/scan.cu"
SHFL = "2_Concepts_and_Techniques/shfl_scan/shfl_scan.cu"


def _scan_short(batch, length):
    """scanExclusiveShort(d_Dst, d_Src, batchSize, arrayLength): scanExclusiveShared<<<batchSize *
    arrayLength / (4 * THREADBLOCK_SIZE), THREADBLOCK_SIZE>>>((uint4 *)d_Dst, (uint4 *)d_Src, arrayLength)."""
    n = batch * length
    return case(f"scan_scanExclusiveShared_len{length}", SCAN, "_Z19scanExclusiveShared",
                ("scanExclusiveShort", f"batchSize={batch}", f"arrayLength={length}"), n // (4 * THREADBLOCK_SIZE),
                THREADBLOCK_SIZE,
                (Arg("uint32", (n,), "out"), Arg("uint32", (n,), "in", RAND), *ints(length, dtype="uint32")),
                f"cuda-samples scan: exclusive scan of {length}-uint arrays, uint4 loads, a 4-wide register scan, "
                "then a Hillis-Steele scan over a zero-padded 2x shared buffer (__syncthreads per step)")


# scanExclusiveLarge(d_Dst, d_Src, batchSize = 12, arrayLength = 8192): 98304 uints
LARGE_BATCH, LARGE_LEN = 4, 8192
LARGE_N = LARGE_BATCH * LARGE_LEN
LARGE_ARGV = ("scanExclusiveLarge", f"batchSize={LARGE_BATCH}", f"arrayLength={LARGE_LEN}")


def _scan_shared2():
    """scanExclusiveLarge's second launch: scanExclusiveShared2<<<iDivUp(N, THREADBLOCK_SIZE),
    THREADBLOCK_SIZE>>>(d_Buf, d_Dst, d_Src, N, arrayLength / (4 * THREADBLOCK_SIZE)) with N =
    batchSize * arrayLength / (4 * THREADBLOCK_SIZE) = 32 (one block, threads 32.. idle): d_Dst is
    the first launch's per-1024 exclusive scans (random uints here), d_Src the input."""
    chunks = LARGE_N // (4 * THREADBLOCK_SIZE)
    return case("scan_scanExclusiveShared2", SCAN, "_Z20scanExclusiveShared2", LARGE_ARGV,
                cdiv(chunks, THREADBLOCK_SIZE), THREADBLOCK_SIZE,
                (Arg("uint32", (chunks,), "out"), Arg("uint32", (LARGE_N,), "in", RAND),
                 Arg("uint32", (LARGE_N,), "in", RAND), *ints(chunks, LARGE_LEN // (4 * THREADBLOCK_SIZE), dtype="uint32")),
                "cuda-samples scan: top elements of 1024-element chunks gathered at a 4 KiB stride, a "
                "Hillis-Steele exclusive scan over 8-element segments in shared memory, a bounds-checked store")


def _uniform_update():
    """scanExclusiveLarge's third launch: uniformUpdate<<<batchSize * arrayLength / (4 *
    THREADBLOCK_SIZE), THREADBLOCK_SIZE>>>((uint4 *)d_Dst, d_Buf): d_Buf the second launch's scans."""
    chunks = LARGE_N // (4 * THREADBLOCK_SIZE)
    return case("scan_uniformUpdate", SCAN, "_Z13uniformUpdate", LARGE_ARGV, chunks, THREADBLOCK_SIZE,
                (Arg("uint32", (LARGE_N,), "inout", RAND), Arg("uint32", (chunks,), "in", RAND)),
                "cuda-samples scan: one shared word per block broadcast by thread 0 after a barrier, "
                "added to uint4 loads and stores in place")


N_ELEMENTS, BLOCK = 65536, 256          # shuffle_simple_test()
SMALL_INTS = ("ints", -1000, 1000)
NULL = ints(0, dtype="uint64")[0]


def _shfl_scan(name, grid, n, partial, what):
    """shfl_scan_test<<<gridSize, blockSize, nWarps * sizeof(int)>>>(data, 32[, partial_sums])."""
    return case(name, SHFL, "_Z14shfl_scan_test", (), grid, BLOCK,
                (Arg("int32", (n,), "inout", SMALL_INTS), *ints(32),
                 Arg("int32", (grid,), "out") if partial else NULL), what, shared=BLOCK // 32 * 4)


W, H = 1920, 1080                       # shuffle_integral_image_test()
ROWS = 64                               # shfl_intimage_rows: 64 of the 1080 rows (blocks)
VW = 128                                # shfl_vertical_shfl: a 128-wide image of the 1080 rows


CASES = (
    _scan_short(256, 16),
    _scan_short(4, 1024),
    _scan_shared2(),
    _uniform_update(),
    _shfl_scan("shfl_scan_test", N_ELEMENTS // BLOCK, N_ELEMENTS, True,
               "cuda-samples shfl_scan: shfl.sync.up warp scan (width 32), warp sums through shared memory "
               "scanned by warp 0 with a partial mask, block sums to global"),
    _shfl_scan("shfl_scan_test_partials", 1, N_ELEMENTS // BLOCK, False,
               "cuda-samples shfl_scan: the second pass over the 256 block sums, one block, partial_sums NULL"),
    case("shfl_uniform_add", SHFL, "_Z11uniform_add", (), N_ELEMENTS // BLOCK - 1, BLOCK,
         (Arg("int32", (N_ELEMENTS - BLOCK,), "inout", SMALL_INTS), Arg("int32", (N_ELEMENTS // BLOCK,), "in", SMALL_INTS),
          *ints(N_ELEMENTS)),
         "cuda-samples shfl_scan: uniform_add<<<gridSize - 1, blockSize>>>(d_data + blockSize, d_partial_sums, "
         "n): a shared word broadcast after a barrier, added to every element"),
    case("shfl_intimage_rows", SHFL, "_Z18shfl_intimage_rows", ("shuffle_integral_image_test", f"h={ROWS}"), ROWS,
         cdiv(W, 16),
         (Arg("uint8", (ROWS, W), "in", ("ints", 0, 255)), Arg("uint32", (ROWS, W), "out")),
         "cuda-samples shfl_scan integral image, row pass: 16 bytes per thread unpacked and scanned in registers, "
         "cg tile shfl_up scan across a 120-thread block (last warp partial), shfl_xor register transposes "
         "before uint4 stores"),
    case("shfl_vertical_shfl", SHFL, "_Z18shfl_vertical_shfl", ("shuffle_integral_image_test", f"w={VW}"),
         (VW // 32, 1), (32, 8),
         (Arg("uint32", (H, VW), "inout", ("ints", 0, W * 255)), *ints(VW, H)),
         "cuda-samples shfl_scan integral image, column pass: 135 steps of 8 rows, a transposed shared tile "
         "sums[32][9], shfl.sync.up scans over 8-lane groups, a running column sum"),
)
