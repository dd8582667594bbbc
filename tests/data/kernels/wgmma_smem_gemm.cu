// wgmma GEMMs whose operands reach shared memory by plain stores (no TMA), D[M][N] f32:
//   wgmma_ss_f16   A (M x K, f16, row-major) and B given as Bt (N x K, row-major), both K-major in
//                  128B-swizzled tiles written with 16-byte st.shared (chunk c of row r at
//                  c ^ (r % 8)), 4 wgmma m64n64k16 per 64-wide k-tile, the descriptor start moving
//                  32 bytes along the swizzled row;
//   wgmma_rs_bf16  A (bf16) from registers, loaded per k-block with ldmatrix.x4 from a tile padded
//                  to 144-byte rows; B (K x N, row-major) MN-major in a 64B-swizzled tile
//                  (imm-trans-b 1), the start moving 2 x SBO per k-block.
// Launch: grid (N/64, M/64), block 128 (one warpgroup per CTA, a 64 x 64 tile of D).
// Compile for sm_90a: wgmma is an arch-specific instruction.

constexpr int BM = 64, BN = 64, BK = 64;

__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// the XOR of a swizzle mode of `bits` (3: 128B, 2: 64B) on a shared address
__device__ __forceinline__ unsigned swz(unsigned a, unsigned bits) { return a ^ (((a >> 7) & ((1u << bits) - 1)) << 4); }

// a matrix descriptor: start, LBO, SBO in 16-byte units; mode 1 = 128B, 2 = 64B (bits 62-63)
__device__ __forceinline__ unsigned long long desc(unsigned addr, unsigned lbo, unsigned sbo, unsigned mode) {
  return ((addr & 0x3FFFF) >> 4) | ((unsigned long long)(lbo >> 4) << 16) | ((unsigned long long)(sbo >> 4) << 32)
         | ((unsigned long long)mode << 62);
}

#define ACC32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
              "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define OUT32(a) "+f"(a[0]), "+f"(a[1]), "+f"(a[2]), "+f"(a[3]), "+f"(a[4]), "+f"(a[5]), "+f"(a[6]), \
    "+f"(a[7]), "+f"(a[8]), "+f"(a[9]), "+f"(a[10]), "+f"(a[11]), "+f"(a[12]), "+f"(a[13]), "+f"(a[14]), \
    "+f"(a[15]), "+f"(a[16]), "+f"(a[17]), "+f"(a[18]), "+f"(a[19]), "+f"(a[20]), "+f"(a[21]), "+f"(a[22]), \
    "+f"(a[23]), "+f"(a[24]), "+f"(a[25]), "+f"(a[26]), "+f"(a[27]), "+f"(a[28]), "+f"(a[29]), "+f"(a[30]), \
    "+f"(a[31])

// the m64n64 f32 accumulator of thread t: element i is row 16 w + l / 4 + 8 ((i / 2) % 2), column
// 8 (i / 4) + 2 (l % 4) + i % 2, w = t / 32, l = t % 32 (PTX ISA, wgmma D register fragments)
__device__ __forceinline__ void store_tile(const float* acc, float* D, int m0, int n0, int N) {
  int w = threadIdx.x / 32, l = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < 32; i++)
    D[(m0 + 16 * w + l / 4 + 8 * ((i / 2) % 2)) * N + n0 + 8 * (i / 4) + 2 * (l % 4) + i % 2] = acc[i];
}

extern "C" __global__ void __launch_bounds__(128) wgmma_ss_f16(const uint4* A, const uint4* Bt, float* D, int M,
                                                               int N, int K) {
  __shared__ __align__(1024) unsigned char a_s[BM * BK * 2];
  __shared__ __align__(1024) unsigned char b_s[BN * BK * 2];
  int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, chunks = K / 8;
  unsigned sa = smem(a_s), sb = smem(b_s);
  float acc[32];
#pragma unroll
  for (int i = 0; i < 32; i++) acc[i] = 0.0f;
  for (int kt = 0; kt < K / BK; kt++) {
    for (int i = threadIdx.x; i < BM * BK / 8; i += 128) {   // 16-byte chunk c of row r
      int r = i / 8, c = i % 8;
      *(uint4*)(a_s + swz(sa + r * 128 + c * 16, 3) - sa) = A[(m0 + r) * chunks + kt * 8 + c];
      *(uint4*)(b_s + swz(sb + r * 128 + c * 16, 3) - sb) = Bt[(n0 + r) * chunks + kt * 8 + c];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");     // st.shared -> wgmma's proxy
    __syncthreads();
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kb = 0; kb < BK / 16; kb++)
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " ACC32 ", %32, %33, 1, 1, 1, 0, 0;"
                   : OUT32(acc) : "l"(desc(sa + 32 * kb, 16, 1024, 1)), "l"(desc(sb + 32 * kb, 16, 1024, 1)));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    __syncthreads();                                   // the tiles are read: the next k-tile may land
  }
  store_tile(acc, D, m0, n0, N);
}

extern "C" __global__ void __launch_bounds__(128) wgmma_rs_bf16(const uint4* A, const uint4* B, float* D, int M,
                                                                int N, int K) {
  constexpr int PITCH = BK * 2 + 16;                   // 144-byte rows of the A tile
  __shared__ __align__(128) unsigned char a_s[BM * PITCH];
  __shared__ __align__(1024) unsigned char b_s[BK * BN * 2];
  int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, w = threadIdx.x / 32, l = threadIdx.x % 32;
  unsigned sa = smem(a_s), sb = smem(b_s);
  float acc[32];
#pragma unroll
  for (int i = 0; i < 32; i++) acc[i] = 0.0f;
  for (int kt = 0; kt < K / BK; kt++) {
    for (int i = threadIdx.x; i < BM * BK / 8; i += 128) {
      int r = i / 8, c = i % 8;                         // A: row r, chunk c; B: k row r, n chunk c
      *(uint4*)(a_s + r * PITCH + c * 16) = A[(m0 + r) * (K / 8) + kt * 8 + c];
      // MN-major 64B swizzle: 8 k-rows of 64 bytes (32 n) per atom, atoms along n 512 bytes apart,
      // 8-k groups 1024 bytes apart
      unsigned at = (r % 8) * 64 + (r / 8) * 1024 + (c % 4) * 16 + (c / 4) * 512;
      *(uint4*)(b_s + swz(sb + at, 2) - sb) = B[(kt * BK + r) * (N / 8) + n0 / 8 + c];
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kb = 0; kb < BK / 16; kb++) {
      unsigned a0, a1, a2, a3;                          // the warp's 16 x 16 block: mma.sync's A fragment
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                   : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                   : "r"(sa + (16 * w + l % 16) * PITCH + (kb * 16 + 8 * (l / 16)) * 2));
      asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " ACC32 ", {%32, %33, %34, %35}, %36, "
                   "1, 1, 1, 1;"
                   : OUT32(acc) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(desc(sb + 2048 * kb, 512, 1024, 2)));
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    __syncthreads();
  }
  store_tile(acc, D, m0, n0, N);
}
