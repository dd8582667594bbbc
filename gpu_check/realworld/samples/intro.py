"""0_Introduction: vectorAdd and matrixMul."""
from .common import Arg, case, cdiv, ints

UNIFORM = ("uniform", -1, 1)


def _vector_add():
    """vectorAdd.cu main(): 256 threads a block, ceil(numElements / 256) blocks (numElements 50000
    in the sample, fixed in its source; 5000 here would change it, so the sample's own size)."""
    n = 50000
    return case("vectorAdd", "0_Introduction/vectorAdd/vectorAdd.cu", "_Z9vectorAdd", (), cdiv(n, 256), 256,
                (Arg("float32", (n,), "in", UNIFORM), Arg("float32", (n,), "in", UNIFORM), Arg("float32", (n,), "out"),
                 *ints(n)),
                "cuda-samples vectorAdd: C = A + B, one float per thread, a bounds check on the last block")


def _matrix_mul():
    """matrixMul.cu MatrixMultiply(): block_size 32 (the sample's default), threads (32, 32), grid
    (wB / 32, hA / 32), MatrixMulCUDA<32>(C, A, B, wA, wB); -wA=128 -hA=64 -wB=64 -hB=128."""
    wa, ha, wb, hb = 128, 64, 64, 128
    return case("matrixMul", "0_Introduction/matrixMul/matrixMul.cu", "_Z13MatrixMulCUDAILi32EEvPfS0_S0_ii",
                (f"-wA={wa}", f"-hA={ha}", f"-wB={wb}", f"-hB={hb}"), (wb // 32, ha // 32), (32, 32),
                (Arg("float32", (ha, wb), "out"), Arg("float32", (ha, wa), "in", UNIFORM),
                 Arg("float32", (hb, wb), "in", UNIFORM), *ints(wa, wb)),
                "cuda-samples matrixMul: 32x32 tiles of A and B through shared memory, an unrolled FMA loop "
                "over the tile, one C element per thread")


CASES = (_vector_add(), _matrix_mul())
