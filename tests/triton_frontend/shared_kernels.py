"""Kernels whose shared memory the layouts tests predict: a tl.dot whose A is scaled in registers
(on sm_80 a local_load of a dot operand: ldmatrix, .trans for B), and A @ B.T (tl.trans of a
loaded tile: a transposed shared encoding). Importing this module needs Triton."""
import triton
import triton.language as tl


@triton.jit
def matmul_scaled(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(a * 2.0, b)
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)


@triton.jit
def matmul_bt(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :])
        b = tl.load(b_ptr + rn[:, None] * K + (k + rk)[None, :])
        acc += tl.dot(a, tl.trans(b))
    tl.store(c_ptr + rm[:, None] * BN + rn[None, :], acc)
