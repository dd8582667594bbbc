// coalesce_probe: execute one global-memory instruction per kernel launch, for Nsight Compute to
// count its L1TEX requests, sectors and wavefronts (l1tex__t_*_pipe_lsu_mem_global_op_*).
//
//   nvcc -O3 -arch=sm_90 -o coalesce_probe probe.cu
//   coalesce_probe PATTERNS              (PATTERNS written by gpu_check/coalesce_probe/corpus.py)
//
// PATTERNS: a pattern file as ../bank_probe/probe_host.cuh reads it (the host side both probes
// share): one line per launch, the kernel's name, the active-lane mask and the 32 lanes' byte
// offsets, each below BUFFER_BYTES.
// Each launch is one warp (32 threads, one block). The 32 byte offsets and the mask sit in
// __constant__ memory (read with LDC, which is no L1TEX global traffic), copied there before
// the launch. Lane L adds its offset to a 2 MiB aligned buffer and executes exactly one
// instance of the instruction (inline PTX), predicated off when bit L of the mask is clear.
// Values loaded go to a sink store that is guarded by a kernel argument that is 0 at run
// time: the SASS has the store (so ptxas keeps the load), the run executes none. The
// control kernel executes no memory instruction: its counts are the fixed overhead.
#include <cstdint>

#define BUFFER_BYTES (8u << 20)
#define BUFFER_ALIGN (2u << 20)

__constant__ unsigned c_off[32];
__constant__ unsigned c_active;

#define HEAD                                                                                 \
  const unsigned lane = threadIdx.x;                                                         \
  const unsigned long long a = reinterpret_cast<unsigned long long>(base) + c_off[lane];     \
  const unsigned p = (c_active >> lane) & 1u;                                                \
  (void)a;                                                                                   \
  (void)p;

#define SIG (unsigned char* base, unsigned* __restrict__ sink, int sink_on)
#define PRED(N) "{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %" #N ", 0;\n\t@q "
#define PRED_CLOSE ";\n\t}"

extern "C" __global__ void coalesce_probe_control SIG {
  HEAD
  if (sink_on) sink[lane] = static_cast<unsigned>(a) ^ p;
}

// ---- loads: 8/16/32-bit into one register, 64/128-bit into two/four ------------------------
#define LD1(NAME, INSTR)                                                                      \
  extern "C" __global__ void NAME SIG {                                                      \
    HEAD                                                                                     \
    unsigned v0 = 0u;                                                                        \
    asm volatile(PRED(2) INSTR " %0, [%1]" PRED_CLOSE : "+r"(v0) : "l"(a), "r"(p) : "memory"); \
    if (sink_on) sink[lane] = v0;                                                            \
  }
#define LD2(NAME, INSTR)                                                                      \
  extern "C" __global__ void NAME SIG {                                                      \
    HEAD                                                                                     \
    unsigned v0 = 0u, v1 = 0u;                                                               \
    asm volatile(PRED(3) INSTR " {%0, %1}, [%2]" PRED_CLOSE                                 \
                 : "+r"(v0), "+r"(v1) : "l"(a), "r"(p) : "memory");                      \
    if (sink_on) sink[lane] = v0 ^ v1;                                                       \
  }
#define LD4(NAME, INSTR)                                                                      \
  extern "C" __global__ void NAME SIG {                                                      \
    HEAD                                                                                     \
    unsigned v0 = 0u, v1 = 0u, v2 = 0u, v3 = 0u;                                             \
    asm volatile(PRED(5) INSTR " {%0, %1, %2, %3}, [%4]" PRED_CLOSE                         \
                 : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3) : "l"(a), "r"(p) : "memory");  \
    if (sink_on) sink[lane] = v0 ^ v1 ^ v2 ^ v3;                                             \
  }

LD1(coalesce_probe_ld_global_b8, "ld.global.u8")
LD1(coalesce_probe_ld_global_b16, "ld.global.u16")
LD1(coalesce_probe_ld_global_b32, "ld.global.b32")
LD2(coalesce_probe_ld_global_v2_b32, "ld.global.v2.b32")
LD4(coalesce_probe_ld_global_v4_b32, "ld.global.v4.b32")
LD1(coalesce_probe_ld_global_nc_b8, "ld.global.nc.u8")
LD1(coalesce_probe_ld_global_nc_b16, "ld.global.nc.u16")
LD1(coalesce_probe_ld_global_nc_b32, "ld.global.nc.b32")
LD2(coalesce_probe_ld_global_nc_v2_b32, "ld.global.nc.v2.b32")
LD4(coalesce_probe_ld_global_nc_v4_b32, "ld.global.nc.v4.b32")
LD1(coalesce_probe_ld_global_cg_b32, "ld.global.cg.b32")
LD4(coalesce_probe_ld_global_cg_v4_b32, "ld.global.cg.v4.b32")

// ---- stores --------------------------------------------------------------------------------
#define ST1(NAME, INSTR)                                                                      \
  extern "C" __global__ void NAME SIG {                                                      \
    HEAD                                                                                     \
    unsigned v0 = lane * 0x01010101u;                                                        \
    asm volatile(PRED(2) INSTR " [%0], %1" PRED_CLOSE :: "l"(a), "r"(v0), "r"(p) : "memory"); \
    (void)sink;                                                                              \
    (void)sink_on;                                                                           \
  }

ST1(coalesce_probe_st_global_b8, "st.global.u8")
ST1(coalesce_probe_st_global_b16, "st.global.u16")
ST1(coalesce_probe_st_global_b32, "st.global.b32")

extern "C" __global__ void coalesce_probe_st_global_v2_b32 SIG {
  HEAD
  unsigned v0 = lane * 2u, v1 = v0 + 1u;
  asm volatile(PRED(3) "st.global.v2.b32 [%0], {%1, %2}" PRED_CLOSE
               :: "l"(a), "r"(v0), "r"(v1), "r"(p) : "memory");
  (void)sink;
  (void)sink_on;
}

extern "C" __global__ void coalesce_probe_st_global_v4_b32 SIG {
  HEAD
  unsigned v0 = lane * 4u;
  asm volatile(PRED(5) "st.global.v4.b32 [%0], {%1, %2, %3, %4}" PRED_CLOSE
               :: "l"(a), "r"(v0), "r"(v0 + 1u), "r"(v0 + 2u), "r"(v0 + 3u), "r"(p) : "memory");
  (void)sink;
  (void)sink_on;
}

// ---- atomics (with a result) and reductions (without) ---------------------------------------
#define ATOM32(NAME, INSTR)                                                                   \
  extern "C" __global__ void NAME SIG {                                                      \
    HEAD                                                                                     \
    unsigned v0 = 0u, b = 1u;                                                                \
    asm volatile(PRED(3) INSTR " %0, [%1], %2" PRED_CLOSE : "+r"(v0) : "l"(a), "r"(b), "r"(p) : "memory"); \
    if (sink_on) sink[lane] = v0;                                                            \
  }

ATOM32(coalesce_probe_atom_global_add_u32, "atom.global.add.u32")
ATOM32(coalesce_probe_atom_global_exch_b32, "atom.global.exch.b32")
ATOM32(coalesce_probe_atom_global_add_noftz_f16x2, "atom.global.add.noftz.f16x2")

extern "C" __global__ void coalesce_probe_atom_global_add_u64 SIG {
  HEAD
  unsigned long long v0 = 0ull, b = 1ull;
  asm volatile(PRED(3) "atom.global.add.u64 %0, [%1], %2" PRED_CLOSE
               : "+l"(v0) : "l"(a), "l"(b), "r"(p) : "memory");
  if (sink_on) sink[lane] = static_cast<unsigned>(v0);
}

extern "C" __global__ void coalesce_probe_atom_global_add_f32 SIG {
  HEAD
  float v0 = 0.0f, b = 1.0f;
  asm volatile(PRED(3) "atom.global.add.f32 %0, [%1], %2" PRED_CLOSE
               : "+f"(v0) : "l"(a), "f"(b), "r"(p) : "memory");
  if (sink_on) sink[lane] = __float_as_uint(v0);
}

extern "C" __global__ void coalesce_probe_atom_global_cas_b32 SIG {
  HEAD
  unsigned v0 = 0u, cmp = 0u, val = lane + 1u;
  asm volatile(PRED(4) "atom.global.cas.b32 %0, [%1], %2, %3" PRED_CLOSE
               : "+r"(v0) : "l"(a), "r"(cmp), "r"(val), "r"(p) : "memory");
  if (sink_on) sink[lane] = v0;
}

#define RED(NAME, INSTR, CONSTRAINT, TYPE, VALUE)                                             \
  extern "C" __global__ void NAME SIG {                                                      \
    HEAD                                                                                     \
    TYPE b = VALUE;                                                                          \
    asm volatile(PRED(2) INSTR " [%0], %1" PRED_CLOSE :: "l"(a), CONSTRAINT(b), "r"(p) : "memory"); \
    (void)sink;                                                                              \
    (void)sink_on;                                                                           \
  }

RED(coalesce_probe_red_global_add_u32, "red.global.add.u32", "r", unsigned, 1u)
RED(coalesce_probe_red_global_add_u64, "red.global.add.u64", "l", unsigned long long, 1ull)
RED(coalesce_probe_red_global_add_f32, "red.global.add.f32", "f", float, 1.0f)
RED(coalesce_probe_red_global_add_noftz_f16x2, "red.global.add.noftz.f16x2", "r", unsigned, 0x3c003c00u)

// ---- cp.async: global -> shared, lane L writes shared bytes [16 L, 16 L + size) -------------
#define CPX(NAME, CACHE, SIZE)                                                                \
  extern "C" __global__ void NAME SIG {                                                      \
    HEAD                                                                                     \
    CP_ONE(CACHE, SIZE)                                                                      \
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define CP_ONE(CACHE, SIZE)                                                                   \
  __shared__ __align__(128) unsigned char smem[32 * 16];                                     \
  unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(smem)) + lane * 16u;            \
  asm volatile(PRED(2) "cp.async." CACHE ".shared.global [%0], [%1], " #SIZE PRED_CLOSE     \
               :: "r"(d), "l"(a), "r"(p) : "memory");                                    \
  asm volatile("cp.async.wait_all;" ::: "memory");                                           \
  if (sink_on) sink[lane] = reinterpret_cast<unsigned*>(smem)[lane * 4];
#else
#define CP_ONE(CACHE, SIZE) (void)sink_on;   // cp.async needs sm_80: never launched below it
#endif

CPX(coalesce_probe_cp_async_ca_shared_global_4, "ca", 4)
CPX(coalesce_probe_cp_async_ca_shared_global_8, "ca", 8)
CPX(coalesce_probe_cp_async_ca_shared_global_16, "ca", 16)
CPX(coalesce_probe_cp_async_cg_shared_global_16, "cg", 16)

// ---- host ------------------------------------------------------------------------------------
#define PROBE_TOOL "coalesce_probe"
typedef void (*probe_fn)(unsigned char*, unsigned*, int);
// Every kernel, one line per instruction family, with the compute capability it needs.
#define PROBE_KERNELS(K)                                                                                           \
  K(coalesce_probe_control, 0)                                                                                     \
  K(coalesce_probe_ld_global_b8, 0) K(coalesce_probe_ld_global_b16, 0) K(coalesce_probe_ld_global_b32, 0)          \
  K(coalesce_probe_ld_global_v2_b32, 0) K(coalesce_probe_ld_global_v4_b32, 0)                                      \
  K(coalesce_probe_ld_global_nc_b8, 0) K(coalesce_probe_ld_global_nc_b16, 0) K(coalesce_probe_ld_global_nc_b32, 0) \
  K(coalesce_probe_ld_global_nc_v2_b32, 0) K(coalesce_probe_ld_global_nc_v4_b32, 0)                                \
  K(coalesce_probe_ld_global_cg_b32, 0) K(coalesce_probe_ld_global_cg_v4_b32, 0)                                   \
  K(coalesce_probe_st_global_b8, 0) K(coalesce_probe_st_global_b16, 0) K(coalesce_probe_st_global_b32, 0)          \
  K(coalesce_probe_st_global_v2_b32, 0) K(coalesce_probe_st_global_v4_b32, 0)                                      \
  K(coalesce_probe_atom_global_add_u32, 0) K(coalesce_probe_atom_global_add_u64, 0)                                \
  K(coalesce_probe_atom_global_add_f32, 0) K(coalesce_probe_atom_global_add_noftz_f16x2, 0)                        \
  K(coalesce_probe_atom_global_exch_b32, 0) K(coalesce_probe_atom_global_cas_b32, 0)                               \
  K(coalesce_probe_red_global_add_u32, 0) K(coalesce_probe_red_global_add_u64, 0)                                  \
  K(coalesce_probe_red_global_add_f32, 0) K(coalesce_probe_red_global_add_noftz_f16x2, 0)                          \
  K(coalesce_probe_cp_async_ca_shared_global_4, 80) K(coalesce_probe_cp_async_ca_shared_global_8, 80)              \
  K(coalesce_probe_cp_async_ca_shared_global_16, 80) K(coalesce_probe_cp_async_cg_shared_global_16, 80)

#include "../bank_probe/probe_host.cuh"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: coalesce_probe PATTERNS\n");
    return 2;
  }
  std::vector<Pattern> pats;
  if (!read_patterns(argv[1], BUFFER_BYTES, pats)) return 2;
  long n = (long)pats.size();

  ProbeDevice d = probe_device();
  if (!runs_here(pats, 0, n, d)) return 2;
  unsigned char* raw = nullptr;
  unsigned* sink = nullptr;
  CHECK(cudaMalloc(&raw, BUFFER_BYTES + 2 * BUFFER_ALIGN));   // room to align, and 16 B past the end
  CHECK(cudaMemset(raw, 0, BUFFER_BYTES + 2 * BUFFER_ALIGN));
  CHECK(cudaMalloc(&sink, 32 * sizeof(unsigned)));
  unsigned char* base = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<uintptr_t>(raw) + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN);
  printf("COALESCE_PROBE device=\"%s\" cc=%d.%d driver_api=%d runtime=%d base=%p l2=%d\n", d.prop.name,
         d.prop.major, d.prop.minor, d.driver, d.runtime, (void*)base, d.prop.l2CacheSize);
  int sink_on = 0;
  for (const Pattern& p : pats) {
    CHECK(cudaMemcpyToSymbol(c_off, p.offsets, sizeof(p.offsets)));
    CHECK(cudaMemcpyToSymbol(c_active, &p.active, sizeof(unsigned)));
    void* args[] = {(void*)&base, (void*)&sink, (void*)&sink_on};
    launch_one(p, args, 0);
  }
  CHECK(cudaFree(raw));
  CHECK(cudaFree(sink));
  printf("COALESCE_PROBE launched=%ld\n", n);
  return 0;
}
