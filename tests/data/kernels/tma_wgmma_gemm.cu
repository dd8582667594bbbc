// A TMA + mbarrier + wgmma GEMM in the shape of CUTLASS's sm90 warp-specialized mainloop,
// D[M][N] f32 = A[M][K] f16 (row-major) . B, B given as Bt[N][K] (row-major, so K-major):
//   - warp 4 is the producer: one elected thread waits for a free stage (its "empty" mbarrier,
//     parity flipping every STAGES k-tiles), arms the stage's "full" mbarrier with expect_tx and
//     issues two 2-D TMA loads (64 x 64 boxes, 128B swizzle) that complete on it;
//   - warps 0-3 (one warpgroup) wait on the full barrier's parity, run 4 wgmma m64n64k16 from the
//     swizzled tiles, wait for them and free the stage;
//   - the epilogue stages D in shared memory (plain stores), and one thread writes the tile with a
//     TMA store (cp.async.bulk.tensor, bulk_group).
// M, N and K need not be multiples of the tile: TMA fills the box outside the tensor with zeros
// and the store writes only the elements inside it. The map of A is a __grid_constant__ parameter,
// B's lives in global memory (a pointer), D's is a parameter again; A, B and D are also passed as
// plain pointers, which the kernel does not use (the host encodes the maps from them).
// Launch: grid (ceil(N/64), ceil(M/64)), block 160. Compile for sm_90a.
#include <cuda.h>

constexpr int BM = 64, BN = 64, BK = 64, STAGES = 2;

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile("{\n .reg .pred p;\n WAIT:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
               " @!p bra WAIT;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ void load_2d(unsigned dst, const CUtensorMap* m, int c0, int c1, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
               ::"r"(dst), "l"(m), "r"(c0), "r"(c1), "r"(bar) : "memory");
}

// K-major, 128B swizzle: LBO unused (1), SBO 1024 bytes (8 rows of 128)
__device__ __forceinline__ unsigned long long desc(unsigned addr) {
  return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

extern "C" __global__ void __launch_bounds__(160) tma_wgmma_gemm(
    const __grid_constant__ CUtensorMap ta, const CUtensorMap* tb, const __grid_constant__ CUtensorMap td,
    const unsigned short* A, const unsigned short* Bt, float* D, int M, int N, int K) {
  __shared__ __align__(1024) unsigned char a_s[STAGES][BM * BK * 2];     // D is staged here at the end
  __shared__ __align__(1024) unsigned char b_s[STAGES][BN * BK * 2];
  __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
  int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, ktiles = (K + BK - 1) / BK;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&full[s])) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&empty[s])) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x >= 128) {                                             // the producer warp
    unsigned elected;
    asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(elected));
    if (elected) {
      for (int kt = 0; kt < ktiles; kt++) {
        int s = kt % STAGES;
        wait_parity(smem(&empty[s]), ((kt / STAGES) & 1) ^ 1);        // a fresh stage passes at once
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(smem(&full[s])), "r"((BM + BN) * BK * 2) : "memory");
        load_2d(smem(a_s[s]), &ta, kt * BK, m0, smem(&full[s]));
        load_2d(smem(b_s[s]), tb, kt * BK, n0, smem(&full[s]));
      }
    }
    return;
  }
  float acc[32];
#pragma unroll
  for (int i = 0; i < 32; i++) acc[i] = 0.0f;
  for (int kt = 0; kt < ktiles; kt++) {
    int s = kt % STAGES;
    wait_parity(smem(&full[s]), (kt / STAGES) & 1);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kb = 0; kb < BK / 16; kb++)                                // 16 k = 32 bytes along the row
      asm volatile(
          "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
          "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
          "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, 0;"
          : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]),
            "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]),
            "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]),
            "+f"(acc[20]), "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]),
            "+f"(acc[26]), "+f"(acc[27]), "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31])
          : "l"(desc(smem(a_s[s]) + 32 * kb)), "l"(desc(smem(b_s[s]) + 32 * kb)));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    if (threadIdx.x == 0)
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&empty[s])) : "memory");
  }
  // every stage was consumed, so a_s is free: D's 64 x 64 tile, rows of 256 bytes (the store's box)
  float* stage = (float*)&a_s[0][0];
  int w = threadIdx.x / 32, l = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < 32; i += 2) {  // elements i, i + 1 of the m64n64 f32 accumulator: adjacent columns
    // (PTX ISA wgmma D fragments); one 8-byte store each, written so (nvcc would split the first)
    unsigned at = smem(&stage[(16 * w + l / 4 + 8 * ((i / 2) % 2)) * BN + 8 * (i / 4) + 2 * (l % 4)]);
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(at), "f"(acc[i]), "f"(acc[i + 1]) : "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("bar.sync 1, 128;" ::: "memory");                       // the consumers only
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(&td), "r"(n0), "r"(m0), "r"(smem(stage)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}
