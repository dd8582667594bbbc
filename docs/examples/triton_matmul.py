"""A Triton kernel for docs/triton.md: C = A @ B for one BM x BN tile, K in steps of BK (row-major)."""
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_tile = a_ptr + tl.arange(0, BM)[:, None] * K + tl.arange(0, BK)[None, :]
    b_tile = b_ptr + tl.arange(0, BK)[:, None] * BN + tl.arange(0, BN)[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        a = tl.load(a_tile)
        b = tl.load(b_tile)
        acc = tl.dot(a, b, acc)
        a_tile += BK
        b_tile += BK * BN
    c_tile = c_ptr + tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    tl.store(c_tile, acc)
