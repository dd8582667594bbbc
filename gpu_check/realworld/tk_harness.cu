/* Our host harness for ThunderKittens' Hopper kernels (this project's code; ThunderKittens itself is
   not copied here: tk_build.py compiles this file against a ThunderKittens checkout).

   It #includes one ThunderKittens source as published (TK_SOURCE; its main renamed by
   -Dmain=tk_published_main, so the published N = 4096 benchmark never runs) and launches that
   source's own kernel through its own host code at the size given on the command line: the
   educational levels through their matmul(A, B, C, N), the LCF GEMM through inner_run<mmt>, the
   attention forward through fwd_globals as harness.impl builds them. ThunderKittens' gl
   constructors encode the TMA descriptors (cuTensorMapEncodeTiled), so the capture shim
   (hopper_capture.c) records them with the launch.

   TK_PROGRAM: 1 an educational level (argv: N), 2 the bf16 LCF GEMM (argv: M N K), 3 the MHA
   forward, head dim 64, non-causal (argv: batch heads seqlen), 4 the fp8 (e4m3) LCF GEMM, C = A B^T
   (argv: M N K). Inputs are seeded (splitmix64 of the element index): GEMM operands are k/16, k in
   -16..16 (exact in bf16 and e4m3), so every product and every fp32 sum is exact and the output is
   the float64 GEMM rounded once to bf16 or e4m3; attention inputs are k/64 in [-1, 1]. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

/* ThunderKittens calls two driver functions directly (tma.cuh); resolving them through the runtime's
   entry points, as CUTLASS does, spares linking libcuda (the build machine has no driver) and lets the
   capture shim and the CPU stand-in runtime (hopper_fake_runtime.c) hook them. */
template <typename F> static F driver(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess || !fn) {
    fprintf(stderr, "tk_harness: the driver has no %s\n", name);
    exit(2);
  }
  return reinterpret_cast<F>(fn);
}
extern "C" CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap* m, CUtensorMapDataType dt, cuuint32_t rank, void* g,
                                                   const cuuint64_t* dims, const cuuint64_t* strides, const cuuint32_t* box,
                                                   const cuuint32_t* estr, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                                                   CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  static auto f = driver<decltype(&cuTensorMapEncodeTiled)>("cuTensorMapEncodeTiled");
  return f(m, dt, rank, g, dims, strides, box, estr, il, sw, l2, oob);
}
extern "C" CUresult CUDAAPI cuGetErrorString(CUresult e, const char** s) {
  *s = e == CUDA_SUCCESS ? "no error" : "cuTensorMapEncodeTiled failed";
  return CUDA_SUCCESS;
}

#include TK_SOURCE
#undef main

static uint64_t splitmix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* n values k/scale of type T (bf16, e4m3), k uniform in -scale..scale, seeded by the tensor's index `which` */
template <typename T> static T* device_values(size_t n, int which, int scale) {
  T* h = new T[n];
  for (size_t i = 0; i < n; i++) {
    int k = int(splitmix((uint64_t(which) << 40) + i) % uint64_t(2 * scale + 1)) - scale;
    h[i] = T(float(k) / scale);
  }
  T* d;
  cudaMalloc(&d, n * sizeof(*d));
  cudaMemcpy(d, h, n * sizeof(*d), cudaMemcpyHostToDevice);
  delete[] h;
  return d;
}

template <typename T> static T* device_zeros(size_t n) {
  T* d;
  cudaMalloc(&d, n * sizeof(T));
  cudaMemset(d, 0, n * sizeof(T));
  return d;
}

static int usage(const char* what) {
  fprintf(stderr, "usage: tk_harness %s\n", what);
  return 2;
}

int main(int argc, char** argv) {
#if TK_PROGRAM == 1
  if (argc != 2) return usage("N");
  size_t n = strtoul(argv[1], nullptr, 10);
  bf16 *a = device_values<bf16>(n * n, 0, 16), *b = device_values<bf16>(n * n, 1, 16), *c = device_zeros<bf16>(n * n);
  matmul(a, b, c, n);                                   // the level's own launch (launch.cu calls it so)
#elif TK_PROGRAM == 2
  if (argc != 4) return usage("M N K");
  size_t m = strtoul(argv[1], nullptr, 10), n = strtoul(argv[2], nullptr, 10), k = strtoul(argv[3], nullptr, 10);
  using mmt = matmul_template<2, 4, 8>;                 // main()'s configuration
  bf16 *a = device_values<bf16>(m * k, 0, 16), *b = device_values<bf16>(k * n, 1, 16), *c = device_zeros<bf16>(m * n);
  // run_benchmark's attribute and block; the grid is the template's non-persistent one (a CTA per
  // 128x256 output tile) rather than its 132 persistent CTAs, most of which would find no tile
  cudaFuncSetAttribute(prototype::lcf::kernel<mmt>, cudaFuncAttributeMaxDynamicSharedMemorySize, MAX_SHARED_MEMORY - 1024);
  inner_run<mmt>(a, b, c, m, n, k, mmt::grid<false>(m, n, k), dim3(kittens::prototype::detail::NUM_THREADS_v<mmt>));
#elif TK_PROGRAM == 3
  if (argc != 4) return usage("batch heads seqlen");
  int batch = atoi(argv[1]), heads = atoi(argv[2]), seq = atoi(argv[3]);
  constexpr int D = 64;
  size_t qo = size_t(batch) * heads * seq * D;
  bf16 *q = device_values<bf16>(qo, 0, 64), *k = device_values<bf16>(qo, 1, 64), *v = device_values<bf16>(qo, 2, 64);
  bf16* o = device_zeros<bf16>(qo);
  float* l = device_zeros<float>(size_t(batch) * heads * seq);
  // harness.impl's globals, grid, block and shared memory (there for ATTN_D = 128, 16 heads, N = 3072)
  using globals = fwd_globals<D>;
  globals g{typename globals::q_gl{q, batch, heads, seq, D}, typename globals::k_gl{k, batch, heads, seq, D},
            typename globals::v_gl{v, batch, heads, seq, D}, typename globals::l_gl{l, batch, heads, 1, seq},
            typename globals::o_gl{o, batch, heads, seq, D}, seq, 1};
  unsigned long mem_size = kittens::MAX_SHARED_MEMORY - 1024;
  cudaFuncSetAttribute(fwd_attend_ker<D, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, mem_size);
  dim3 grid(seq / (CONSUMER_WARPGROUPS * kittens::TILE_ROW_DIM<bf16> * 4), heads, batch);
  fwd_attend_ker<D, false><<<grid, 32 * NUM_WORKERS, mem_size>>>(g);
#elif TK_PROGRAM == 4
  if (argc != 4) return usage("M N K");
  size_t m = strtoul(argv[1], nullptr, 10), n = strtoul(argv[2], nullptr, 10), k = strtoul(argv[3], nullptr, 10);
  using mmt = matmul_template<8>;                       // main()'s configuration
  fp8e4m3 *a = device_values<fp8e4m3>(m * k, 0, 16), *b = device_values<fp8e4m3>(n * k, 1, 16);
  fp8e4m3* c = device_zeros<fp8e4m3>(m * n);
  // as for TK_PROGRAM 2: run_benchmark's attribute and block, the template's non-persistent grid
  cudaFuncSetAttribute(prototype::lcf::kernel<mmt>, cudaFuncAttributeMaxDynamicSharedMemorySize, MAX_SHARED_MEMORY - 1024);
  inner_run<mmt>(a, b, c, m, n, k, mmt::grid<false>(m, n, k), dim3(kittens::prototype::detail::NUM_THREADS_v<mmt>));
#else
#error "TK_PROGRAM must be 1, 2, 3 or 4"
#endif
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaGetLastError();
  printf("tk_harness: %s\n", e == cudaSuccess ? "launched" : cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
