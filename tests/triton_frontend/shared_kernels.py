"""A kernel whose shared memory the layouts tests predict, in variants chosen by constexprs: A
scaled in registers before tl.dot (on sm_80 a local_load of a dot operand: ldmatrix, .trans for
B), and A @ B.T (tl.trans of a loaded tile: a transposed shared encoding). Needs Triton."""
import triton
import triton.language as tl


@triton.jit
def matmul_variants(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                    SCALED: tl.constexpr, B_TRANSPOSED: tl.constexpr):
    """C = A @ B, A doubled in registers first if SCALED == 1, B if SCALED == 2; B_TRANSPOSED: B
    given as its (BN, K) transpose."""
    rows, cols, ks = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + k0 + ks[None, :])
        if SCALED == 1:
            a = a * 2.0
        if B_TRANSPOSED:
            b = tl.trans(tl.load(b_ptr + cols[:, None] * K + k0 + ks[None, :]))
        else:
            b = tl.load(b_ptr + (k0 + ks)[:, None] * BN + cols[None, :])
        if SCALED == 2:
            b = b * 2.0
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc)
