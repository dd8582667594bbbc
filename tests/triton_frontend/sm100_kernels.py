"""Triton kernels for the sm_100a tests (test_triton_sm100.py). Needs Triton."""
import triton
import triton.language as tl


@triton.jit
def back_to_back(a_ptr, b_ptr, d_ptr, c_ptr, BM: tl.constexpr, BK: tl.constexpr, BN: tl.constexpr,
                 BN2: tl.constexpr):
    """C = f16(A @ B) @ D, one tile: on sm_100a the second tl.dot's A operand (a register tensor)
    goes to tensor memory and tcgen05.mma reads it from there ([a-tmem])."""
    rm, rk, rn, rn2 = tl.arange(0, BM), tl.arange(0, BK), tl.arange(0, BN), tl.arange(0, BN2)
    a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
    s = tl.dot(a, b)
    d = tl.load(d_ptr + rn[:, None] * BN2 + rn2[None, :])
    c = tl.dot(s.to(tl.float16), d)
    tl.store(c_ptr + rm[:, None] * BN2 + rn2[None, :], c)
