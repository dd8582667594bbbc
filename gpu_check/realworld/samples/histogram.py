"""2_Concepts_and_Techniques/histogram: histogram64.cu and histogram256.cu.

main() histograms byteCount = 64 MiB (times -sizemult=1..10) of rand() % 256 bytes through
histogram64(d_Histogram, d_Data, byteCount) and histogram256(...); each launches a partial-
histogram kernel and a merge kernel. The smallest command line is ~4M thread-iterations for the
first kernels, so a case there is one launch of histogram64() / histogram256() called with a
smaller byteCount (`argv` names the call): 256 KiB, a multiple of sizeof(uint4) = 16 as both
functions assert. The merge kernels read only the partial histograms: random small counts, at
the histogramCount the host computes for a 4 MiB byteCount (histogram64: 274 partials, more than
the merge block's 256 threads, so its loop runs twice) or its fixed PARTIAL_HISTOGRAM256_COUNT (240). Block sizes are the macros of histogram_common.h
(HISTOGRAM64_THREADBLOCK_SIZE = 4 * SHARED_MEMORY_BANKS = 64, HISTOGRAM256_THREADBLOCK_SIZE =
WARP_COUNT * WARP_SIZE = 192, MERGE_THREADBLOCK_SIZE = 256; none #ifndef-guarded).
histogram64 counts in per-thread byte counters (no atomics); histogram256's shared-memory
atomicAdd is on ints, so every output is deterministic.
"""
from .common import Arg, case, cdiv, ints

H64 = "2_Concepts_and_Techniques/histogram/histogram64.cu"
H256 = "2_Concepts_and_Techniques/histogram/histogram256.cu"
BYTES = ("ints", 0, 255)
SMALL_BYTES = 256 * 1024                                # histogram64/256(d_Histogram, d_Data, 262144)
MERGE_BYTES = 4 * 1048576                               # histogram64/256(..., 4194304) for the merge cases


def hist64_count(byte_count):
    """histogram64(): histogramCount = iDivUp(byteCount, HISTOGRAM64_THREADBLOCK_SIZE * iSnapDown(255, 16))."""
    return cdiv(byte_count, 64 * (255 - 255 % 16))


def _histogram64():
    """histogram64(): histogram64Kernel<<<histogramCount, HISTOGRAM64_THREADBLOCK_SIZE>>>(d_PartialHistograms,
    (uint4 *)d_Data, byteCount / sizeof(uint4)); histogramCount 18 for 256 KiB."""
    count = hist64_count(SMALL_BYTES)
    return case("histogram64Kernel", H64, "_Z17histogram64Kernel", ("histogram64", f"byteCount={SMALL_BYTES}"),
                count, 64,
                (Arg("uint32", (count, 64), "out"), Arg("uint8", (SMALL_BYTES,), "in", BYTES),
                 *ints(SMALL_BYTES // 16, dtype="uint32")),
                "cuda-samples histogram64: uint4 grid-stride loads, 16 byte-counter increments per load "
                "(ld/st.shared.u8 at a thread-permuted base, stride 64 bytes), then a per-bin byte sum "
                "walked around the banks")


def _merge64():
    """histogram64(): mergeHistogram64Kernel<<<HISTOGRAM64_BIN_COUNT, MERGE_THREADBLOCK_SIZE>>>(d_Histogram,
    d_PartialHistograms, histogramCount), histogramCount 274 for a 4 MiB byteCount."""
    count = hist64_count(MERGE_BYTES)
    return case("histogram_mergeHistogram64Kernel", H64, "_Z22mergeHistogram64Kernel",
                ("histogram64", f"byteCount={MERGE_BYTES}"), 64, 256,
                (Arg("uint32", (64,), "out"), Arg("uint32", (count, 64), "in", ("ints", 0, 1000)),
                 *ints(count, dtype="uint32")),
                "cuda-samples histogram64 merge: one block per bin, strided (256-byte) uncoalesced loads of "
                "every partial histogram, a shared-memory tree reduction")


def _histogram256():
    """histogram256(): histogram256Kernel<<<PARTIAL_HISTOGRAM256_COUNT = 240, HISTOGRAM256_THREADBLOCK_SIZE>>>(
    d_PartialHistograms, (uint *)d_Data, byteCount / sizeof(uint))."""
    return case("histogram256Kernel", H256, "_Z18histogram256Kernel", ("histogram256", f"byteCount={SMALL_BYTES}"),
                240, 192,
                (Arg("uint32", (240, 256), "out"), Arg("uint8", (SMALL_BYTES,), "in", BYTES),
                 *ints(SMALL_BYTES // 4, dtype="uint32")),
                "cuda-samples histogram256: a 256-bin sub-histogram per warp, atom.shared.add.u32 per byte, "
                "then six sub-histograms summed per bin")


def _merge256():
    """histogram256(): mergeHistogram256Kernel<<<HISTOGRAM256_BIN_COUNT, MERGE_THREADBLOCK_SIZE>>>(d_Histogram,
    d_PartialHistograms, PARTIAL_HISTOGRAM256_COUNT)."""
    return case("histogram_mergeHistogram256Kernel", H256, "_Z23mergeHistogram256Kernel",
                ("histogram256", f"byteCount={MERGE_BYTES}"), 256, 256,
                (Arg("uint32", (256,), "out"), Arg("uint32", (240, 256), "in", ("ints", 0, 5000)),
                 *ints(240, dtype="uint32")),
                "cuda-samples histogram256 merge: one block per bin, 240 partials at a 1 KiB stride (threads "
                "240..255 idle), a shared-memory tree reduction")


CASES = (_histogram64(), _merge64(), _histogram256(), _merge256())
