// arch: sm_90a
// TMA (cp.async.bulk.tensor, 1-5D, both directions), cp.async.bulk, mbarrier phases and
// transaction counts, and a CUTLASS-style sm90 mainloop: one elected producer thread issues the
// TMA loads of each k-stage with expect_tx, the consumer warpgroup waits on the stage's mbarrier
// parity, multiplies with wgmma from the 128B-swizzled tiles and frees the stage.
#include <cuda.h>

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred p;\n WAIT:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra WAIT;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ bool elect_one() {
  unsigned pred = 0;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(pred));
  return pred;
}

// one box of `rank` dimensions, coordinates c[0..rank-1] innermost first, into shared `dst`
__device__ void tma_load(unsigned dst, const CUtensorMap* m, const int* c, int rank, unsigned bar) {
  const void* p = m;
  switch (rank) {
  case 1: asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
                       ::"r"(dst), "l"(p), "r"(c[0]), "r"(bar) : "memory"); break;
  case 2: asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                       ::"r"(dst), "l"(p), "r"(c[0]), "r"(c[1]), "r"(bar) : "memory"); break;
  case 3: asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
                       ::"r"(dst), "l"(p), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(bar) : "memory"); break;
  case 4: asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                       ::"r"(dst), "l"(p), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(bar) : "memory"); break;
  default: asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                        ::"r"(dst), "l"(p), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]), "r"(bar) : "memory");
  }
}

// TMA load of one box at `coords` into shared memory at byte `dst_off` of a 1024-aligned buffer,
// then the first `nbytes` of that buffer to out; the buffer starts as 0xEE so untouched bytes show
__device__ void load_box(const CUtensorMap* m, unsigned char* out, const int* coords, int rank,
                         unsigned dst_off, unsigned nbytes, unsigned tx) {
  __shared__ __align__(1024) unsigned char buf[16384];
  __shared__ __align__(8) unsigned long long bar;
  for (unsigned i = threadIdx.x; i < sizeof(buf); i += blockDim.x) buf[i] = 0xEE;
  if (threadIdx.x == 0) {
    mbar_init(smem(&bar), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    expect_tx(smem(&bar), tx);
    tma_load(smem(buf) + dst_off, m, coords, rank, smem(&bar));
  }
  wait_parity(smem(&bar), 0);
  for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) out[i] = buf[i];
}

extern "C" __global__ void tma_box(const __grid_constant__ CUtensorMap m, unsigned char* out, int c0, int c1,
                                   int c2, int c3, int c4, int rank, unsigned dst_off, unsigned nbytes, unsigned tx) {
  int c[5] = {c0, c1, c2, c3, c4};
  load_box(&m, out, c, rank, dst_off, nbytes, tx);
}

// the same with the tensor map in global memory (a pointer parameter)
extern "C" __global__ void tma_box_ptr(const CUtensorMap* m, unsigned char* out, int c0, int c1, int rank,
                                       unsigned nbytes, unsigned tx) {
  int c[5] = {c0, c1, 0, 0, 0};
  load_box(m, out, c, rank, 0, nbytes, tx);
}

// the map inside a by-value struct, as a CUTLASS 3.x kernel's Params holds its TMA descriptors:
// the output pointer and the coordinates first, the map at byte 64
struct BoxParams {
  unsigned char* out;
  int c0, c1;
  alignas(64) CUtensorMap m;
};

extern "C" __global__ void tma_box_struct(const __grid_constant__ BoxParams p, unsigned nbytes, unsigned tx) {
  int c[5] = {p.c0, p.c1, 0, 0, 0};
  load_box(&p.m, p.out, c, 2, 0, nbytes, tx);
}

// TMA store of a 2-D box: `in` (nbytes) into shared memory, then cp.async.bulk.tensor to global
extern "C" __global__ void tma_store(const __grid_constant__ CUtensorMap m, const unsigned char* in, int c0,
                                     int c1, unsigned nbytes) {
  __shared__ __align__(1024) unsigned char buf[16384];
  for (unsigned i = threadIdx.x; i < nbytes; i += blockDim.x) buf[i] = in[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(&m), "r"(c0), "r"(c1), "r"(smem(buf)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

// cp.async.bulk (no tensor map): n bytes global -> shared (mbarrier) -> global (bulk group)
extern "C" __global__ void bulk_copy(const unsigned char* in, unsigned char* out, unsigned n) {
  __shared__ __align__(128) unsigned char buf[4096];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    mbar_init(smem(&bar), 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    expect_tx(smem(&bar), n);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(smem(buf)), "l"(in), "r"(n), "r"(smem(&bar)) : "memory");
  }
  __syncthreads();
  wait_parity(smem(&bar), 0);
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out), "r"(smem(buf)), "r"(n)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

// mbarrier phases: every warp's lane 0 arrives `rounds` times on a barrier expecting one arrival
// per warp; thread 0 records, per round, test_wait.parity before its own arrival, the token's
// pending count and, after waiting, try_wait on both parities; out[4 * r ...]
extern "C" __global__ void mbar_phases(unsigned* out, int rounds) {
  __shared__ __align__(8) unsigned long long bar;
  unsigned warps = blockDim.x / 32;
  if (threadIdx.x == 0) mbar_init(smem(&bar), warps);
  __syncthreads();
  for (int r = 0; r < rounds; r++) {
    unsigned before = 0, pending = 0, p0 = 0, p1 = 0;
    if (threadIdx.x == 0)
      asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                   : "=r"(before) : "r"(smem(&bar)), "r"(r & 1));
    if (threadIdx.x % 32 == 0) {
      unsigned long long tok;
      asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(tok) : "r"(smem(&bar)) : "memory");
      asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pending) : "l"(tok));
    }
    wait_parity(smem(&bar), r & 1);
    if (threadIdx.x == 0) {
      asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                   : "=r"(p0) : "r"(smem(&bar)), "r"(0u));
      asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                   : "=r"(p1) : "r"(smem(&bar)), "r"(1u));
      out[4 * r] = before; out[4 * r + 1] = pending; out[4 * r + 2] = p0; out[4 * r + 3] = p1;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem(&bar)) : "memory");
}

// a barrier nobody completes: thread 0 initializes it for `count` arrivals, `arrivers` threads
// arrive, every thread waits for phase 0
extern "C" __global__ void mbar_stuck(unsigned count, unsigned arrivers, int* out) {
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x == 0) mbar_init(smem(&bar), count);
  __syncthreads();
  if (threadIdx.x < arrivers) arrive(smem(&bar));
  wait_parity(smem(&bar), 0);
  out[threadIdx.x] = 1;
}

// ---- the GEMM ------------------------------------------------------------------------------------
// D (M x N, f32, row-major) = A (M x K, f16, row-major) . B, B given as N x K (row-major: K-major):
// CTA tile 64 x 64, k-tiles of 64 (a 128-byte swizzled row each), STAGES buffers; warps 0-3 (the
// warpgroup) consume, warp 4 produces. Elements outside M, N, K come in as TMA's zero fill.
constexpr int BM = 64, BN = 64, BK = 64, STAGES = 3;

__device__ __forceinline__ unsigned long long desc_sw128(unsigned addr) {
  // K-major, 128B swizzle: LBO unused (1), SBO = 8 rows x 128 bytes
  return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_64x64(float* acc, unsigned long long da, unsigned long long db, int scale_d) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3]), "+f"(acc[4]), "+f"(acc[5]), "+f"(acc[6]),
        "+f"(acc[7]), "+f"(acc[8]), "+f"(acc[9]), "+f"(acc[10]), "+f"(acc[11]), "+f"(acc[12]), "+f"(acc[13]),
        "+f"(acc[14]), "+f"(acc[15]), "+f"(acc[16]), "+f"(acc[17]), "+f"(acc[18]), "+f"(acc[19]), "+f"(acc[20]),
        "+f"(acc[21]), "+f"(acc[22]), "+f"(acc[23]), "+f"(acc[24]), "+f"(acc[25]), "+f"(acc[26]), "+f"(acc[27]),
        "+f"(acc[28]), "+f"(acc[29]), "+f"(acc[30]), "+f"(acc[31])
      : "l"(da), "l"(db), "r"(scale_d));
}

extern "C" __global__ void __launch_bounds__(160) tma_gemm(const __grid_constant__ CUtensorMap ta,
                                                           const __grid_constant__ CUtensorMap tb, float* d,
                                                           int M, int N, int K) {
  __shared__ __align__(1024) unsigned char a_s[STAGES][BM * BK * 2];
  __shared__ __align__(1024) unsigned char b_s[STAGES][BN * BK * 2];
  __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
  int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, ktiles = (K + BK - 1) / BK;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) { mbar_init(smem(&full[s]), 1); mbar_init(smem(&empty[s]), 1); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x >= 128) {                       // the producer warp: one elected thread
    if (elect_one()) {
      for (int kt = 0; kt < ktiles; kt++) {
        int s = kt % STAGES;
        wait_parity(smem(&empty[s]), ((kt / STAGES) & 1) ^ 1);    // a fresh stage passes at once
        expect_tx(smem(&full[s]), (BM + BN) * BK * 2);
        int ca[2] = {kt * BK, m0}, cb[2] = {kt * BK, n0};
        tma_load(smem(a_s[s]), &ta, ca, 2, smem(&full[s]));
        tma_load(smem(b_s[s]), &tb, cb, 2, smem(&full[s]));
      }
    }
    return;
  }
  float acc[32];
  for (int i = 0; i < 32; i++) acc[i] = 0.0f;
  for (int kt = 0; kt < ktiles; kt++) {
    int s = kt % STAGES;
    wait_parity(smem(&full[s]), (kt / STAGES) & 1);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    for (int kb = 0; kb < BK / 16; kb++)          // 16 k = 32 bytes further along the swizzled row
      wgmma_64x64(acc, desc_sw128(smem(a_s[s]) + 32 * kb), desc_sw128(smem(b_s[s]) + 32 * kb), kt | kb);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    if (threadIdx.x == 0) arrive(smem(&empty[s]));
  }
  // the m64nNk16 f32 accumulator: element i of thread t is row 16 w + l / 4 + 8 ((i / 2) % 2),
  // column 8 (i / 4) + 2 (l % 4) + i % 2 (w = t / 32, l = t % 32; PTX ISA wgmma D fragments)
  int w = threadIdx.x / 32, l = threadIdx.x % 32;
  for (int i = 0; i < 32; i++) {
    int row = m0 + 16 * w + l / 4 + 8 * ((i / 2) % 2), col = n0 + 8 * (i / 4) + 2 * (l % 4) + i % 2;
    if (row < M && col < N) d[row * N + col] = acc[i];
  }
}
