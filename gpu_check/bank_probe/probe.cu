// bank_probe: execute one shared-memory instruction per kernel launch, for Nsight Compute to
// count its wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld / _op_st).
//
//   nvcc -O3 -arch=sm_90 -o bank_probe probe.cu
//   bank_probe PATTERNS [FIRST COUNT]      (PATTERNS written by gpu_check/bank_probe/corpus.py)
//
// PATTERNS: a pattern file as probe_host.cuh reads it (the host side both probes share): one
// line per launch, the kernel's name, the active-lane mask and the 32 lanes' byte offsets.
// Each launch is one warp (32 threads, one block). Lane L reads its byte offset and the active
// mask from global memory and executes exactly one instance of the instruction (inline PTX,
// asm volatile), predicated off when bit L of the mask is clear (ldmatrix/stmatrix are
// .sync.aligned: all lanes execute them). Load kernels never initialise shared memory (no
// other shared-memory traffic in the kernel) and write what they loaded to global memory, so
// nothing is eliminated. stmatrix exists from sm_90: its kernels are empty below sm_90 and the
// host refuses to launch them there. The bank_probe_wmma_* extras load one nvcuda::wmma fragment.
#include <cuda_fp16.h>
#include <mma.h>

extern __shared__ __align__(128) unsigned char bank_probe_smem[];

__device__ __forceinline__ unsigned probe_addr(const unsigned* __restrict__ off) {
  return static_cast<unsigned>(__cvta_generic_to_shared(bank_probe_smem)) + off[threadIdx.x];
}

__device__ __forceinline__ unsigned probe_pred(unsigned active) { return (active >> threadIdx.x) & 1u; }

// ---- ld.shared / st.shared -------------------------------------------------------------
#define PROBE_LD1(NAME, TYPE)                                                               \
  extern "C" __global__ void NAME(const unsigned* __restrict__ off, unsigned active,       \
                                  unsigned* __restrict__ out) {                            \
    unsigned a = probe_addr(off), p = probe_pred(active), v0 = 0xdeadbeefu;                \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t@p ld.shared." TYPE       \
                 " %0, [%1];\n\t}" : "+r"(v0) : "r"(a), "r"(p) : "memory");               \
    out[threadIdx.x * 4] = v0;                                                             \
  }

#define PROBE_ST1(NAME, TYPE)                                                               \
  extern "C" __global__ void NAME(const unsigned* __restrict__ off, unsigned active,       \
                                  unsigned* __restrict__ out) {                            \
    unsigned a = probe_addr(off), p = probe_pred(active), v0 = threadIdx.x * 0x01010101u; \
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p st.shared." TYPE       \
                 " [%0], %2;\n\t}" :: "r"(a), "r"(p), "r"(v0) : "memory");                \
    (void)out;                                                                             \
  }

PROBE_LD1(bank_probe_ld_shared_b8, "u8")
PROBE_LD1(bank_probe_ld_shared_b16, "u16")
PROBE_LD1(bank_probe_ld_shared_b32, "b32")
PROBE_ST1(bank_probe_st_shared_b8, "u8")
PROBE_ST1(bank_probe_st_shared_b16, "u16")
PROBE_ST1(bank_probe_st_shared_b32, "b32")

extern "C" __global__ void bank_probe_ld_shared_v2_b32(const unsigned* __restrict__ off, unsigned active,
                                                       unsigned* __restrict__ out) {
  unsigned a = probe_addr(off), p = probe_pred(active), v0 = 0xdeadbeefu, v1 = 0xdeadbeefu;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\t@p ld.shared.v2.b32 {%0, %1}, [%2];\n\t}"
               : "+r"(v0), "+r"(v1) : "r"(a), "r"(p) : "memory");
  out[threadIdx.x * 4 + 0] = v0;
  out[threadIdx.x * 4 + 1] = v1;
}

extern "C" __global__ void bank_probe_ld_shared_v4_b32(const unsigned* __restrict__ off, unsigned active,
                                                       unsigned* __restrict__ out) {
  unsigned a = probe_addr(off), p = probe_pred(active);
  unsigned v0 = 0xdeadbeefu, v1 = 0xdeadbeefu, v2 = 0xdeadbeefu, v3 = 0xdeadbeefu;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %5, 0;\n\t@p ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n\t}"
               : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3) : "r"(a), "r"(p) : "memory");
  out[threadIdx.x * 4 + 0] = v0;
  out[threadIdx.x * 4 + 1] = v1;
  out[threadIdx.x * 4 + 2] = v2;
  out[threadIdx.x * 4 + 3] = v3;
}

extern "C" __global__ void bank_probe_st_shared_v2_b32(const unsigned* __restrict__ off, unsigned active,
                                                       unsigned* __restrict__ out) {
  unsigned a = probe_addr(off), p = probe_pred(active), v0 = threadIdx.x * 2, v1 = v0 + 1;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p st.shared.v2.b32 [%0], {%2, %3};\n\t}"
               :: "r"(a), "r"(p), "r"(v0), "r"(v1) : "memory");
  (void)out;
}

extern "C" __global__ void bank_probe_st_shared_v4_b32(const unsigned* __restrict__ off, unsigned active,
                                                       unsigned* __restrict__ out) {
  unsigned a = probe_addr(off), p = probe_pred(active), v0 = threadIdx.x * 4;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %1, 0;\n\t@p st.shared.v4.b32 [%0], {%2, %3, %4, %5};\n\t}"
               :: "r"(a), "r"(p), "r"(v0), "r"(v0 + 1), "r"(v0 + 2), "r"(v0 + 3) : "memory");
  (void)out;
}

// ---- ldmatrix / stmatrix ---------------------------------------------------------------
#define PROBE_LDMATRIX(NAME, QUAL, N, REGS, OUTS, STORE)                                     \
  extern "C" __global__ void NAME(const unsigned* __restrict__ off, unsigned active,        \
                                  unsigned* __restrict__ out) {                             \
    (void)active;                                                                           \
    unsigned a = probe_addr(off), r[4] = {0u, 0u, 0u, 0u};                                  \
    asm volatile("ldmatrix.sync.aligned.m8n8." QUAL ".shared.b16 " REGS ", [%" #N "];"      \
                 : OUTS : "r"(a) : "memory");                                              \
    STORE                                                                                   \
  }

#define OUT1 "=r"(r[0])
#define OUT2 "=r"(r[0]), "=r"(r[1])
#define OUT4 "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
#define STORE_N(N) for (int i = 0; i < N; ++i) out[threadIdx.x * 4 + i] = r[i];

PROBE_LDMATRIX(bank_probe_ldmatrix_x1, "x1", 1, "{%0}", OUT1, STORE_N(1))
PROBE_LDMATRIX(bank_probe_ldmatrix_x2, "x2", 2, "{%0, %1}", OUT2, STORE_N(2))
PROBE_LDMATRIX(bank_probe_ldmatrix_x4, "x4", 4, "{%0, %1, %2, %3}", OUT4, STORE_N(4))
PROBE_LDMATRIX(bank_probe_ldmatrix_x1_trans, "x1.trans", 1, "{%0}", OUT1, STORE_N(1))
PROBE_LDMATRIX(bank_probe_ldmatrix_x2_trans, "x2.trans", 2, "{%0, %1}", OUT2, STORE_N(2))
PROBE_LDMATRIX(bank_probe_ldmatrix_x4_trans, "x4.trans", 4, "{%0, %1, %2, %3}", OUT4, STORE_N(4))

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PROBE_STSM_BODY(QUAL, REGS, ...)                                                      \
  unsigned a = probe_addr(off), v = threadIdx.x * 4;                                         \
  unsigned r[4] = {v, v + 1, v + 2, v + 3};                                                  \
  asm volatile("stmatrix.sync.aligned.m8n8." QUAL ".shared.b16 [%0], " REGS ";"             \
               :: "r"(a), __VA_ARGS__ : "memory");
#else
#define PROBE_STSM_BODY(QUAL, REGS, ...) (void)off;   // stmatrix needs sm_90: never launched here
#endif

#define PROBE_STMATRIX(NAME, QUAL, REGS, ...)                                                \
  extern "C" __global__ void NAME(const unsigned* __restrict__ off, unsigned active,        \
                                  unsigned* __restrict__ out) {                             \
    (void)active;                                                                           \
    (void)out;                                                                              \
    PROBE_STSM_BODY(QUAL, REGS, __VA_ARGS__)                                                \
  }

PROBE_STMATRIX(bank_probe_stmatrix_x1, "x1", "{%1}", "r"(r[0]))
PROBE_STMATRIX(bank_probe_stmatrix_x2, "x2", "{%1, %2}", "r"(r[0]), "r"(r[1]))
PROBE_STMATRIX(bank_probe_stmatrix_x4, "x4", "{%1, %2, %3, %4}", "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]))
PROBE_STMATRIX(bank_probe_stmatrix_x1_trans, "x1.trans", "{%1}", "r"(r[0]))
PROBE_STMATRIX(bank_probe_stmatrix_x2_trans, "x2.trans", "{%1, %2}", "r"(r[0]), "r"(r[1]))
PROBE_STMATRIX(bank_probe_stmatrix_x4_trans, "x4.trans", "{%1, %2, %3, %4}", "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]))

// ---- extras: nvcuda::wmma fragment loads (not modelled: their shared-memory walk is opaque) ----
// OFFSET_0 is the byte offset of the fragment's (0,0) (32-byte aligned), OFFSET_1 the leading
// dimension in elements. Measured so the docs can quote what load_matrix_sync really costs.
#define PROBE_WMMA(NAME, USE, LAYOUT)                                                         \
  extern "C" __global__ void NAME(const unsigned* __restrict__ off, unsigned active,        \
                                  unsigned* __restrict__ out) {                             \
    (void)active;                                                                           \
    const half* p = reinterpret_cast<const half*>(bank_probe_smem + off[0]);                \
    nvcuda::wmma::fragment<nvcuda::wmma::USE, 16, 16, 16, half, nvcuda::wmma::LAYOUT> f;    \
    nvcuda::wmma::load_matrix_sync(f, p, off[1]);                                           \
    for (int i = 0; i < f.num_elements; ++i) out[threadIdx.x * 16 + i] = __half_as_ushort(f.x[i]); \
  }

PROBE_WMMA(bank_probe_wmma_load_a_row, matrix_a, row_major)
PROBE_WMMA(bank_probe_wmma_load_b_row, matrix_b, row_major)

// ---- host --------------------------------------------------------------------------------
#define PROBE_TOOL "bank_probe"
typedef void (*probe_fn)(const unsigned*, unsigned, unsigned*);
// Every kernel, one line per instruction family, with the compute capability it needs.
#define PROBE_KERNELS(K)                                                                                      \
  K(bank_probe_ld_shared_b8, 0) K(bank_probe_ld_shared_b16, 0) K(bank_probe_ld_shared_b32, 0)                 \
  K(bank_probe_ld_shared_v2_b32, 0) K(bank_probe_ld_shared_v4_b32, 0)                                         \
  K(bank_probe_st_shared_b8, 0) K(bank_probe_st_shared_b16, 0) K(bank_probe_st_shared_b32, 0)                 \
  K(bank_probe_st_shared_v2_b32, 0) K(bank_probe_st_shared_v4_b32, 0)                                         \
  K(bank_probe_ldmatrix_x1, 75) K(bank_probe_ldmatrix_x2, 75) K(bank_probe_ldmatrix_x4, 75)                   \
  K(bank_probe_ldmatrix_x1_trans, 75) K(bank_probe_ldmatrix_x2_trans, 75) K(bank_probe_ldmatrix_x4_trans, 75) \
  K(bank_probe_stmatrix_x1, 90) K(bank_probe_stmatrix_x2, 90) K(bank_probe_stmatrix_x4, 90)                   \
  K(bank_probe_stmatrix_x1_trans, 90) K(bank_probe_stmatrix_x2_trans, 90) K(bank_probe_stmatrix_x4_trans, 90) \
  K(bank_probe_wmma_load_a_row, 70) K(bank_probe_wmma_load_b_row, 70)

#include "probe_host.cuh"

int main(int argc, char** argv) {
  if (argc != 2 && argc != 4) {
    fprintf(stderr, "usage: %s PATTERNS [FIRST COUNT]\n", argv[0]);
    return 2;
  }
  std::vector<Pattern> pats;
  if (!read_patterns(argv[1], 1ull << 32, pats)) return 2;
  long n = (long)pats.size(), first = 0, count = n;
  if (argc == 4) {
    first = atol(argv[2]);
    count = atol(argv[3]);
    if (first < 0 || count < 0 || first + count > n) {
      fprintf(stderr, "bank_probe: range %ld+%ld outside 0..%ld\n", first, count, n);
      return 2;
    }
  }

  ProbeDevice d = probe_device();
  printf("BANK_PROBE device=\"%s\" cc=%d.%d driver_api=%d runtime=%d smem_optin=%zu\n", d.prop.name,
         d.prop.major, d.prop.minor, d.driver, d.runtime, (size_t)d.prop.sharedMemPerBlockOptin);
  if (!runs_here(pats, first, count, d)) return 2;

  size_t smem = 1024;
  for (long i = first; i < first + count; ++i) {
    for (int l = 0; l < 32; ++l) {
      size_t end = (size_t)pats[i].offsets[l] + 16;
      if (end > smem) smem = end;
    }
    if (strncmp(pats[i].kernel->name, "bank_probe_wmma_", 16) == 0) {  // 16 rows of ldm halfs
      size_t end = (size_t)pats[i].offsets[0] + 16 * (size_t)pats[i].offsets[1] * 2 + 32;
      if (end > smem) smem = end;
    }
  }
  smem = (smem + 1023) / 1024 * 1024;
  if (smem > d.prop.sharedMemPerBlockOptin) {
    fprintf(stderr, "bank_probe: patterns need %zu bytes of shared memory; the GPU allows %zu\n", smem,
            (size_t)d.prop.sharedMemPerBlockOptin);
    return 2;
  }
  for (const ProbeKernel& k : kKernels)
    if (d.cc >= k.min_cc)
      CHECK(cudaFuncSetAttribute((const void*)k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));

  unsigned *d_off = nullptr, *d_out = nullptr;
  CHECK(cudaMalloc(&d_off, sizeof(unsigned) * 32 * (count > 0 ? count : 1)));
  CHECK(cudaMalloc(&d_out, sizeof(unsigned) * 32 * 16));
  std::vector<unsigned> host(32 * (count > 0 ? count : 1));
  for (long i = 0; i < count; ++i) memcpy(&host[32 * i], pats[first + i].offsets, sizeof(unsigned) * 32);
  CHECK(cudaMemcpy(d_off, host.data(), sizeof(unsigned) * 32 * count, cudaMemcpyHostToDevice));

  for (long i = 0; i < count; ++i) {
    const unsigned* off = d_off + 32 * i;
    unsigned active = pats[first + i].active;
    void* args[] = {(void*)&off, (void*)&active, (void*)&d_out};
    launch_one(pats[first + i], args, smem);
  }
  CHECK(cudaFree(d_off));
  CHECK(cudaFree(d_out));
  printf("BANK_PROBE launched=%ld first=%ld smem=%zu\n", count, first, smem);
  return 0;
}
