// nvcuda::wmma GEMMs, C[M][N] = A[M][K] * B[K][N] (A, B, C row-major), for f16, bf16, s8 and tf32
// inputs, with fragments loaded either straight from global memory or from padded shared tiles.
// Launch: grid (N/32, M/32), block 128: each CTA computes a 32x32 tile of C, each of its 4 warps
// one 16x16 tile. K is at most KMAX (the shared variant stages the CTA's whole A and B strips).
// What it exercises: wmma.load.{a,b} from .global and .shared (ptxas lowers the shared ones to
// LDSM on sm_90), wmma.mma of every input type, wmma.store to global, and element-wise copies
// into padded shared tiles (2-byte, 1-byte and 4-byte st.shared).
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

constexpr int KMAX = 64;

template <typename T> struct Cfg;  // Elem: what memory holds; Acc: accumulator; FK: fragment K; PAD: ldm padding
template <> struct Cfg<half> { using Elem = half; using Acc = float; static constexpr int FK = 16, PAD = 8; };
template <> struct Cfg<__nv_bfloat16> { using Elem = __nv_bfloat16; using Acc = float; static constexpr int FK = 16, PAD = 8; };
template <> struct Cfg<signed char> { using Elem = signed char; using Acc = int; static constexpr int FK = 16, PAD = 16; };
template <> struct Cfg<wmma::precision::tf32> { using Elem = float; using Acc = float; static constexpr int FK = 8, PAD = 4; };

template <typename Frag> __device__ void to_tf32(Frag &f) {
    for (int t = 0; t < f.num_elements; t++) f.x[t] = wmma::__float_to_tf32(f.x[t]);
}

template <typename T, bool SHARED>
__device__ void gemm(const typename Cfg<T>::Elem *A, const typename Cfg<T>::Elem *B, typename Cfg<T>::Acc *C,
                     int M, int N, int K) {
    using E = typename Cfg<T>::Elem;
    constexpr int FK = Cfg<T>::FK, PAD = Cfg<T>::PAD;
    const int warp = threadIdx.x / 32;
    const int row0 = blockIdx.y * 32, col0 = blockIdx.x * 32;     // the CTA's tile of C
    const int wr = (warp / 2) * 16, wc = (warp % 2) * 16;          // the warp's 16x16 tile in it
    wmma::fragment<wmma::matrix_a, 16, 16, FK, T, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, FK, T, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, FK, typename Cfg<T>::Acc> c;
    wmma::fill_fragment(c, 0);
    __shared__ E As[32][KMAX + PAD];   // padded so that the 16 rows of a fragment fall in different banks
    __shared__ E Bs[KMAX][32 + PAD];
    if (SHARED) {
        for (int i = threadIdx.x; i < 32 * K; i += blockDim.x)
            As[i / K][i % K] = A[(row0 + i / K) * K + i % K];
        for (int i = threadIdx.x; i < K * 32; i += blockDim.x)
            Bs[i / 32][i % 32] = B[(i / 32) * N + col0 + i % 32];
        __syncthreads();
    }
    for (int k = 0; k < K; k += FK) {
        if (SHARED) {
            wmma::load_matrix_sync(a, &As[wr][k], KMAX + PAD);
            wmma::load_matrix_sync(b, &Bs[k][wc], 32 + PAD);
        } else {
            wmma::load_matrix_sync(a, A + (row0 + wr) * K + k, K);
            wmma::load_matrix_sync(b, B + k * N + col0 + wc, N);
        }
        if constexpr (FK == 8) { to_tf32(a); to_tf32(b); }
        wmma::mma_sync(c, a, b, c);
    }
    wmma::store_matrix_sync(C + (row0 + wr) * N + col0 + wc, c, N, wmma::mem_row_major);
}

#define WMMA_GEMM(NAME, T)                                                                                   \
    extern "C" __global__ void wmma_##NAME##_global(const Cfg<T>::Elem *A, const Cfg<T>::Elem *B,             \
                                                    Cfg<T>::Acc *C, int M, int N, int K) {                    \
        gemm<T, false>(A, B, C, M, N, K);                                                                      \
    }                                                                                                          \
    extern "C" __global__ void wmma_##NAME##_shared(const Cfg<T>::Elem *A, const Cfg<T>::Elem *B,             \
                                                    Cfg<T>::Acc *C, int M, int N, int K) {                    \
        gemm<T, true>(A, B, C, M, N, K);                                                                       \
    }

WMMA_GEMM(f16, half)
WMMA_GEMM(bf16, __nv_bfloat16)
WMMA_GEMM(s8, signed char)
WMMA_GEMM(tf32, wmma::precision::tf32)
