// nvcuda::wmma GEMMs: C[M x N] = A[M x K] * B[K x N] (A row-major, B column-major), one warp per
// 16x16 output tile (grid (N/16, M/16), block 32), for f16, bf16, s8 and tf32 inputs, loading the
// fragments from global memory or from shared tiles with a row pitch given by the launch.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

template <typename T, typename F, typename Acc, int KT>
__device__ void gemm_global(const T* A, const T* B, Acc* C, int N, int K) {
  int tm = blockIdx.y * 16, tn = blockIdx.x * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, KT, F, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, KT, F, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, KT, Acc> c;
  wmma::fill_fragment(c, (Acc)0);
  for (int k = 0; k < K; k += KT) {
    wmma::load_matrix_sync(a, A + tm * K + k, K);
    wmma::load_matrix_sync(b, B + tn * K + k, K);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + tm * N + tn, c, N, wmma::mem_row_major);
}

extern "C" __global__ void gemm_f16(const half* A, const half* B, float* C, int N, int K) { gemm_global<half, half, float, 16>(A, B, C, N, K); }
extern "C" __global__ void gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, float* C, int N, int K) { gemm_global<__nv_bfloat16, __nv_bfloat16, float, 16>(A, B, C, N, K); }
extern "C" __global__ void gemm_s8(const signed char* A, const signed char* B, int* C, int N, int K) { gemm_global<signed char, signed char, int, 16>(A, B, C, N, K); }
extern "C" __global__ void gemm_tf32(const float* A, const float* B, float* C, int N, int K) {
  int tm = blockIdx.y * 16, tn = blockIdx.x * 16;
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> c;
  wmma::fill_fragment(c, 0.f);
  for (int k = 0; k < K; k += 8) {
    wmma::load_matrix_sync(a, A + tm * K + k, K);
    wmma::load_matrix_sync(b, B + tn * K + k, K);
    for (int i = 0; i < a.num_elements; i++) a.x[i] = wmma::__float_to_tf32(a.x[i]);
    for (int i = 0; i < b.num_elements; i++) b.x[i] = wmma::__float_to_tf32(b.x[i]);
    wmma::mma_sync(c, a, b, c);
  }
  wmma::store_matrix_sync(C + tm * N + tn, c, N, wmma::mem_row_major);
}

// f16 through shared tiles with a row pitch (in elements): 16 x K of A and 16 x K of B (col-major)
extern "C" __global__ void gemm_f16_shared(const half* A, const half* B, float* C, int N, int K, int pitch) {
  extern __shared__ __align__(32) half sm[];
  half* sa = sm;
  half* sb = sm + 16 * pitch;
  float* sc = reinterpret_cast<float*>(sm + 32 * pitch);
  int tm = blockIdx.y * 16, tn = blockIdx.x * 16, lane = threadIdx.x;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
  wmma::fill_fragment(c, 0.f);
  for (int k0 = 0; k0 < K; k0 += 16) {
    for (int e = lane; e < 256; e += 32) {
      sa[(e / 16) * pitch + e % 16] = A[(tm + e / 16) * K + k0 + e % 16];
      sb[(e / 16) * pitch + e % 16] = B[(tn + e / 16) * K + k0 + e % 16];
    }
    __syncwarp();
    wmma::load_matrix_sync(a, sa, pitch);
    wmma::load_matrix_sync(b, sb, pitch);
    wmma::mma_sync(c, a, b, c);
    __syncwarp();
  }
  wmma::store_matrix_sync(sc, c, 16, wmma::mem_row_major);
  __syncwarp();
  for (int e = lane; e < 256; e += 32) C[(tm + e / 16) * N + tn + e % 16] = sc[e];
}
