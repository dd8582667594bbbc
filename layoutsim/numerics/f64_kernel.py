"""f64 mma (DMMA): the chain of fused multiply-adds over k, with the NaN rule measured on the H200.

Imported only when `layoutsim.mma` runs an f64 instruction (it imports numba)."""
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def _fma(typingctx, x, y, z):
    """llvm.fma.f64: the correctly rounded fused multiply-add."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(d, [d, d, d]),
                                            "llvm.fma.f64")
        return builder.call(fn, args)
    return sig, codegen


@njit(cache=True, inline="always")
def _f64_step(x, y, acc, mode):
    """One step of the chain with the NaN rule measured on the H200: a NaN accumulator goes
    on as it is; else a NaN x, then y, goes on (payload and sign kept; the host quiets it); an
    invalid operation (Inf * 0, Inf - Inf) gives -NaN (0xFFF8000000000000); else IEEE."""
    if acc != acc:
        return acc
    if x != x:
        return x
    if y != y:
        return y
    r = acc + x * y if mode == 2 else _fma(x, y, acc)
    if r != r:
        return -abs(r)          # -NaN (a literal -math.nan folds to +NaN in numba)
    return r


@njit(cache=True, parallel=True)
def f64_chain(a, b, c, mode, out):
    """D = C then, for each k, D = fma(a[k], b[k], D) (mode 0: k ascending, 1: descending),
    or D = D + a[k]*b[k] with two roundings (mode 2). a (B,M,K), b (B,N,K), c/out (B,M,N)."""
    nb, M, K = a.shape
    N = b.shape[1]
    for bi in prange(nb):
        for i in range(M):
            for j in range(N):
                acc = c[bi, i, j]
                for t in range(K):
                    k = K - 1 - t if mode == 1 else t
                    acc = _f64_step(a[bi, i, k], b[bi, j, k], acc, mode)
                out[bi, i, j] = acc
