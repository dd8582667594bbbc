"""f64 mma (DMMA): the chain of fused multiply-adds over k, with the NaN rule measured on the H200.

Imported only when `layoutsim.mma` runs an f64 instruction (it imports numba)."""
from numba import njit

from .bitcast import f64_bits, f64_from_bits, fma

QUIET = 1 << 51                 # the quiet bit of an f64 NaN


@njit(cache=True, inline="always")
def _is_snan(v):
    b = f64_bits(v)
    return v != v and (b & QUIET) == 0


@njit(cache=True, inline="always")
def _step_input(w, x, y, acc):
    """Operand w of a step: 0 the accumulator (C), 1 A's element, 2 B's element."""
    return acc if w == 0 else (x if w == 1 else y)


@njit(cache=True, inline="always")
def _f64_step(x, y, acc, mode, order, snan_first, invalid):
    """One step of the chain. A NaN operand goes on, quieted (payload and sign kept): the
    first in `order` (operand numbers, see _step_input), a signaling one first when snan_first;
    an invalid operation (Inf * 0, Inf - Inf) gives the NaN whose bits are `invalid`; else
    IEEE."""
    if acc != acc or x != x or y != y:
        if snan_first:
            for t in range(3):
                v = _step_input(order[t], x, y, acc)
                if _is_snan(v):
                    return f64_from_bits(f64_bits(v) | QUIET)
        for t in range(3):
            v = _step_input(order[t], x, y, acc)
            if v != v:
                return f64_from_bits(f64_bits(v) | QUIET)
    r = acc + x * y if mode == 2 else fma(x, y, acc)
    if r != r:
        return f64_from_bits(invalid)
    return r


def f64_chain(a, b, c, mode, order, snan_first, invalid, out):
    """D = C then, for each k, D = fma(a[k], b[k], D) (mode 0: k ascending, 1: descending),
    or D = D + a[k]*b[k] with two roundings (mode 2). a (B,M,K), b (B,N,K), c/out (B,M,N);
    order (3 int64): the NaN priority of the operands (0 C, 1 A, 2 B); invalid: the bits
    (int64) of the NaN an invalid operation gives. Runs in chunks of the batch on threads
    (kernel.in_chunks: no parfor driver to compile)."""
    from .kernel import in_chunks
    in_chunks(a.shape[0], lambda lo, hi: _f64_chunk(a, b, c, mode, order, snan_first, invalid,
                                                    out, lo, hi))


@njit(cache=True, nogil=True)
def _f64_chunk(a, b, c, mode, order, snan_first, invalid, out, lo, hi):
    """f64_chain on instances lo..hi-1."""
    _, M, K = a.shape
    N = b.shape[1]
    for bi in range(lo, hi):
        for i in range(M):
            for j in range(N):
                acc = c[bi, i, j]
                for t in range(K):
                    k = K - 1 - t if mode == 1 else t
                    acc = _f64_step(a[bi, i, k], b[bi, j, k], acc, mode, order, snan_first,
                                          invalid)
                out[bi, i, j] = acc
