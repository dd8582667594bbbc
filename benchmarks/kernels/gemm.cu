// Benchmark kernels for layoutsim.ptx (benchmarks/bench_ptx.py).
//
// wmma_gemm64: C[M x N] (f32) = A[M x K] (f16, row-major) * B[K x N] (f16, col-major, i.e. N x K
// rows) with 64 x 64 CTA tiles: 4 warps (block 128), each computing 32 x 32 as 2 x 2 wmma 16x16x16
// fragments; per K step of 32 the CTA stages A and B tiles (64 x 32 f16) through shared memory with
// 8 elements of padding per row. grid (N / 64, M / 64).
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

#define BK 32
#define PAD 8
#define LDS (BK + PAD)

extern "C" __global__ void wmma_gemm64(const half* A, const half* B, float* C, int M, int N, int K) {
  __shared__ __align__(32) half sa[64 * LDS];
  __shared__ __align__(32) half sb[64 * LDS];
  int warp = threadIdx.x / 32;
  int wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  int tm = blockIdx.y * 64, tn = blockIdx.x * 64;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);
  for (int k0 = 0; k0 < K; k0 += BK) {
    // 64 rows x 32 halves = 256 x 16-byte chunks per operand; 128 threads copy 2 each
    for (int c = threadIdx.x; c < 256; c += blockDim.x) {
      int r = c / 4, q = (c % 4) * 8;
      *reinterpret_cast<int4*>(&sa[r * LDS + q]) = *reinterpret_cast<const int4*>(&A[(tm + r) * K + k0 + q]);
      *reinterpret_cast<int4*>(&sb[r * LDS + q]) = *reinterpret_cast<const int4*>(&B[(tn + r) * K + k0 + q]);
    }
    __syncthreads();
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> b[2];
      for (int i = 0; i < 2; i++) wmma::load_matrix_sync(a[i], &sa[(wm + 16 * i) * LDS + kk], LDS);
      for (int j = 0; j < 2; j++) wmma::load_matrix_sync(b[j], &sb[(wn + 16 * j) * LDS + kk], LDS);
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      wmma::store_matrix_sync(&C[(tm + wm + 16 * i) * N + tn + wn + 16 * j], acc[i][j], N, wmma::mem_row_major);
}
