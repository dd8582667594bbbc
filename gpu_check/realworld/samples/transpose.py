"""6_Performance/transpose: the eight kernels transpose.cu's main() times, at `-dimX=128 -dimY=128`.

main() takes the matrix size from its command line (getParams(): -dimX, -dimY), refuses
non-square sizes and sizes that are not a multiple of TILE_DIM (32), then launches every kernel of
its `for (k = 0; k < 8; k++)` switch the same way: grid (size_x / TILE_DIM, size_y / TILE_DIM),
threads (TILE_DIM, BLOCK_ROWS) = (32, 16), no dynamic shared memory, kernel(d_odata, d_idata,
size_x, size_y). For 128 x 128 that is grid (4, 4), block (32, 16): each thread moves TILE_DIM /
BLOCK_ROWS = 2 elements. The input is uniform random floats (main() fills element i with (float)i);
the output starts as the 0xCD pattern (every kernel writes all of it for a square size: the coarse-
and fine-grained ones move whole tiles without, or only within, the tile transpose, as the sample
says, but still write every element).
"""
from .common import Arg, case, ints

SOURCE = "6_Performance/transpose/transpose.cu"
TILE_DIM, BLOCK_ROWS = 32, 16
SIZE = 128              # -dimX=128 -dimY=128
UNIFORM = ("uniform", -100, 100)

# (kernel, its mangled entry, what the launch exercises), in main()'s order k = 0..7
_KERNELS = (
    ("copy", "_Z4copyPfS_ii",
     "cuda-samples transpose: simple copy, coalesced 32-float rows in and out, 2 rows per thread"),
    ("copySharedMem", "_Z13copySharedMemPfS_ii",
     "cuda-samples transpose: copy staged through a 32x32 shared tile (bounds-checked loads and stores)"),
    ("transposeNaive", "_Z14transposeNaivePfS_ii",
     "cuda-samples transpose: naive transpose, coalesced reads, stores strided by the height"),
    ("transposeCoalesced", "_Z18transposeCoalescedPfS_ii",
     "cuda-samples transpose: 32x32 shared tile, coalesced reads and writes, column reads of the tile "
     "(32-way bank conflicts)"),
    ("transposeNoBankConflicts", "_Z24transposeNoBankConflictsPfS_ii",
     "cuda-samples transpose: 32x33 padded shared tile, coalesced both ways without bank conflicts"),
    ("transposeCoarseGrained", "_Z22transposeCoarseGrainedPfS_ii",
     "cuda-samples transpose: tiles moved to their transposed place through a padded shared tile, "
     "elements within a tile not transposed"),
    ("transposeFineGrained", "_Z20transposeFineGrainedPfS_ii",
     "cuda-samples transpose: each tile transposed in place through a padded shared tile "
     "(column reads of shared memory), tiles not moved"),
    ("transposeDiagonal", "_Z17transposeDiagonalPfS_ii",
     "cuda-samples transpose: diagonal block reordering (square path: (bx + by) % gridDim.x) over a "
     "padded shared tile, against partition camping"),
)


def _transpose(name, entry, what):
    """transpose.cu main(): grid (dimX / TILE_DIM, dimY / TILE_DIM), threads (TILE_DIM, BLOCK_ROWS),
    kernel(d_odata, d_idata, size_x, size_y) for -dimX=128 -dimY=128."""
    return case(f"transpose_{name}", SOURCE, entry, (f"-dimX={SIZE}", f"-dimY={SIZE}"),
                (SIZE // TILE_DIM, SIZE // TILE_DIM), (TILE_DIM, BLOCK_ROWS),
                (Arg("float32", (SIZE, SIZE), "out"), Arg("float32", (SIZE, SIZE), "in", UNIFORM),
                 *ints(SIZE, SIZE)),
                what)


CASES = tuple(_transpose(*k) for k in _KERNELS)
