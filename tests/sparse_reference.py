"""The reference for tcgen05.mma.sp tests (tests/numerics/test_sparse_tcgen05.py, tests/ptx/
test_tcgen05_sparse.py), written from the PTX ISA 9.7.16.10.8.1-2 index tables, not from the code
under test: which K positions of each chunk the kept values of A fill."""
import numpy as np

# the ISA's meaningful 2:4 indices, as (position of the first kept value, of the second)
PAIRS = {0b0100: (0, 1), 0b1000: (0, 2), 0b1100: (0, 3), 0b1001: (1, 2), 0b1101: (1, 3), 0b0110: (2, 1),
         0b1110: (2, 3)}
# tf32's 1:2 indices: the position of the one kept value
SINGLES = {0b0100: (0,), 0b1110: (1,)}


def logical(values, index, size):
    """The logical A written out from the index table: chunk c of row m (size 2 for tf32, else 4)
    gets row m's kept values of that chunk at the positions its index names, zeros elsewhere."""
    M, n = index.shape
    kept = values.shape[1] // n
    out = np.zeros((M, n * size), values.dtype)
    for m in range(M):
        for c in range(n):
            for j, p in enumerate((SINGLES if size == 2 else PAIRS)[int(index[m, c])]):
                out[m, size * c + p] = values[m, kept * c + j]
    return out
