// Where wgmma_rs_bf16's extra shared-load wavefronts come from (the kernel corpus: the model
// counts 512 op_ld wavefronts, the H200 616). The same kernel in four orders of one k-tile's
// ldmatrix.x4 and wgmma (A from registers, B from a 64B-swizzled tile; M = N = K = 128):
//   rs_in_flight   as in the corpus: ldmatrix of k-block kb+1 issued while the wgmma of kb runs
//   rs_ldsm_first  the four ldmatrix of a k-tile first, then its four wgmmas
//   rs_wait_each   wgmma.wait_group 0 after each wgmma: no ldmatrix while a wgmma runs
//   rs_no_wgmma    the ldmatrix alone (their results summed so that they stay live)
// Measured (tests/data/kernels/wgmma_rs_overlap.h200.json): 616 only for rs_in_flight, 512 for
// the other three; ncu's SourceCounters give every LDSM its 4 wavefronts in all four.
// Compile for sm_90a. With -DRS_OVERLAP_MAIN it is the program that was measured:
//   nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -DRS_OVERLAP_MAIN -o rs wgmma_rs_overlap.cu
#include "wgmma_smem_gemm.cu"

enum Order { IN_FLIGHT, LDSM_FIRST, WAIT_EACH, NO_WGMMA };

template <int V>
__device__ __forceinline__ void rs_body(const uint4* A, const uint4* B, float* D, int M, int N, int K) {
  constexpr int PITCH = BK * 2 + 16;                   // 144-byte rows of the A tile
  __shared__ __align__(128) unsigned char a_s[BM * PITCH];
  __shared__ __align__(1024) unsigned char b_s[BK * BN * 2];
  int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, w = threadIdx.x / 32, l = threadIdx.x % 32;
  unsigned sa = smem(a_s), sb = smem(b_s), sink = 0;
  float acc[32];
#pragma unroll
  for (int i = 0; i < 32; i++) acc[i] = 0.0f;
  for (int kt = 0; kt < K / BK; kt++) {
    for (int i = threadIdx.x; i < BM * BK / 8; i += 128) {
      int r = i / 8, c = i % 8;
      *(uint4*)(a_s + r * PITCH + c * 16) = A[(m0 + r) * (K / 8) + kt * 8 + c];
      unsigned at = (r % 8) * 64 + (r / 8) * 1024 + (c % 4) * 16 + (c / 4) * 512;
      *(uint4*)(b_s + swz(sb + at, 2) - sb) = B[(kt * BK + r) * (N / 8) + n0 / 8 + c];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    unsigned a[BK / 16][4];
#pragma unroll
    for (int step = 0; step < 2; step++)               // LDSM_FIRST: all ldmatrix in step 0
#pragma unroll
      for (int kb = 0; kb < BK / 16; kb++) {
        if ((V == LDSM_FIRST) ? step == 0 : step == 1)
          asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                       : "=r"(a[kb][0]), "=r"(a[kb][1]), "=r"(a[kb][2]), "=r"(a[kb][3])
                       : "r"(sa + (16 * w + l % 16) * PITCH + (kb * 16 + 8 * (l / 16)) * 2));
        if (step == 0)
          continue;
        if (V == NO_WGMMA) {
          sink += a[kb][0] ^ a[kb][1] ^ a[kb][2] ^ a[kb][3];
          continue;
        }
        asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " ACC32 ", {%32, %33, %34, %35}, "
                     "%36, 1, 1, 1, 1;"
                     : OUT32(acc) : "r"(a[kb][0]), "r"(a[kb][1]), "r"(a[kb][2]), "r"(a[kb][3]),
                       "l"(desc(sb + 2048 * kb, 512, 1024, 2)));
        if (V == WAIT_EACH) {
          asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
          asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        }
      }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    __syncthreads();
  }
  if (V == NO_WGMMA) acc[0] = (float)sink;
  store_tile(acc, D, m0, n0, N);
}

#define RS_KERNEL(name, order)                                                                        \
  extern "C" __global__ void __launch_bounds__(128) name(const uint4* A, const uint4* B, float* D, int M, \
                                                         int N, int K) { rs_body<order>(A, B, D, M, N, K); }
RS_KERNEL(rs_in_flight, IN_FLIGHT)
RS_KERNEL(rs_ldsm_first, LDSM_FIRST)
RS_KERNEL(rs_wait_each, WAIT_EACH)
RS_KERNEL(rs_no_wgmma, NO_WGMMA)

#ifdef RS_OVERLAP_MAIN
#include <cstdio>
// each kernel once, then rs_in_flight three times more (is its count stable?), all under ncu:
//   ncu --csv --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,... ./rs
int main() {
  const int M = 128, N = 128, K = 128;
  uint4 *A, *B;
  float* D;
  cudaMalloc(&A, M * K * 2);
  cudaMalloc(&B, K * N * 2);
  cudaMalloc(&D, M * N * 4);
  cudaMemset(A, 0x3c, M * K * 2);
  cudaMemset(B, 0x3c, K * N * 2);
  dim3 grid(N / 64, M / 64), block(128);
  rs_in_flight<<<grid, block>>>(A, B, D, M, N, K);
  rs_ldsm_first<<<grid, block>>>(A, B, D, M, N, K);
  rs_wait_each<<<grid, block>>>(A, B, D, M, N, K);
  rs_no_wgmma<<<grid, block>>>(A, B, D, M, N, K);
  for (int rep = 0; rep < 3; rep++) rs_in_flight<<<grid, block>>>(A, B, D, M, N, K);
  cudaError_t e = cudaDeviceSynchronize();
  printf("done: %s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
#endif
