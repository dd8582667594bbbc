// Small kernels that use the constructs of issue 24, for the H200 measurement
// (gpu_check/constructs/measure.py) and its replay (tests/ptx/test_constructs_replay.py).
#include <cstdio>
#include <cassert>
#include <mma.h>

extern "C" __global__ void k_printf(int *out) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  float f = 0.5f * t - 3.0f;
  out[t] = printf("t=%d u=%u x=%#x X=%08X o=%o c=%c s=%s|%-6s| f=%f %.2f e=%e g=%g G=%G lld=%lld llx=%llx "
                  "w=%5d|%-5d|%+d hd=%hd p=%p nil=%p\n",
                  t, 4000000000u + t, t * 255, t * 4099, t, 'A' + (t % 26), "hi", "ab", f, f * 3.3f,
                  (double)t * 12345.678, (double)t / 7.0, 1e20 + t, -(1LL << 40) - t, (1ULL << 63) + t,
                  t, t, t, (short)(70000 + t), (void *)(size_t)(4096 + t), (void *)0);
}

extern "C" __global__ void k_assert(int *out, int limit) {
  int t = threadIdx.x;
  out[t + blockIdx.x * blockDim.x] = 7;
  assert(t < limit);
}

extern "C" __global__ void k_sregs(unsigned *out) {
  extern __shared__ unsigned dyn[];
  __shared__ unsigned st[25];
  unsigned t = threadIdx.x, v[8];
  st[t % 25] = t;
  dyn[t] = t;
  asm volatile("mov.u32 %0, WARP_SZ;" : "=r"(v[0]));
  asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(v[1]));
  asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(v[2]));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_begin;" : "=r"(v[3]));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_end;" : "=r"(v[4]));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_cap;" : "=r"(v[5]));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_0;" : "=r"(v[6]));
  asm volatile("mov.u32 %0, %%reserved_smem_offset_1;" : "=r"(v[7]));
  __syncthreads();
  for (int i = 0; i < 8; i++) out[t * 9 + i] = v[i];
  out[t * 9 + 8] = st[(t + 1) % 25] + dyn[(t + 1) % blockDim.x];
}

extern "C" __global__ void k_gdc(int *out) {
  asm volatile("griddepcontrol.wait;" ::: "memory");
  out[threadIdx.x] = threadIdx.x * 3;
  asm volatile("griddepcontrol.launch_dependents;");
}

extern "C" __global__ void k_bmsk(unsigned *out, const unsigned *a, const unsigned *b) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  unsigned c, w;
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(c) : "r"(a[t]), "r"(b[t]));
  asm("bmsk.wrap.b32 %0, %1, %2;" : "=r"(w) : "r"(a[t]), "r"(b[t]));
  out[2 * t] = c;
  out[2 * t + 1] = w;
}

__device__ __noinline__ unsigned down(unsigned n, volatile unsigned *keep) {
  if (n == 0) return 1;
  unsigned mine = n * 7 + keep[0];
  unsigned r = down(n - 1, keep);
  return 3 * r + mine;
}

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

extern "C" __global__ void k_recurse(unsigned *out, unsigned *keep) {
  unsigned t = threadIdx.x;
  out[2 * t] = down(t, keep);
  out[2 * t + 1] = fib(t % 12);
}

__device__ __noinline__ int inc(int x) { return x + 1; }
__device__ __noinline__ int twice(int x) { return 2 * x; }
__device__ __noinline__ int square(int x) { return x * x; }
typedef int (*op_t)(int);
__device__ op_t table[3] = {inc, twice, square};

extern "C" __global__ void k_fnptr(int *out) {
  int t = threadIdx.x;
  op_t f = table[t % 3];
  out[t] = f(t + 5);
}

extern "C" __global__ void k_wmma_f64(double *d, const double *a, const double *b, const double *c) {
  using namespace nvcuda;
  wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> fc;
  wmma::load_matrix_sync(fa, a, 4);
  wmma::load_matrix_sync(fb, b, 4);
  wmma::load_matrix_sync(fc, c, 8, wmma::mem_row_major);
  wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(d, fc, 8, wmma::mem_row_major);
}

// device malloc/free (the 8 MiB default heap): how many blocks of n bytes one CTA gets, that each
// holds what its thread wrote, and that after free the same requests succeed again; which lanes get
// a block is the allocator's business, so only counts are written
extern "C" __global__ void k_malloc(int *out, unsigned long long n) {
  int t = threadIdx.x;
  int *p = (int *)malloc(n);
  if (p) {
    atomicAdd(&out[0], 1);
    if (((unsigned long long)p & 15) == 0) atomicAdd(&out[1], 1);
    p[0] = t; p[n / 4 - 1] = t;
    if (p[0] == t && p[n / 4 - 1] == t) atomicAdd(&out[2], 1);
  }
  __syncthreads();
  free(p);
  __syncthreads();
  int *q = (int *)malloc(n);
  if (q) atomicAdd(&out[3], 1);
  free(q);
  free(0);
}

// movmatrix.sync.aligned.m8n8.trans.b16 (ThunderKittens' warp::swap_layout): each warp's 8x8 b16
// matrix, held as ldmatrix.x1 holds it, transposed.
extern "C" __global__ void k_movmatrix(unsigned *out, const unsigned *in) {
  unsigned t = threadIdx.x + blockIdx.x * blockDim.x, d;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(in[t]));
  out[t] = d;
}

// cp.reduce.async.bulk (TMA reduction, ThunderKittens' tma::store_add_async, split-K epilogues):
// every CTA adds its 256 words into the same global words (.add.u32), then takes the minimum of
// them into a second array (.min.s32); integers, so the order the CTAs arrive in cannot matter.
extern "C" __global__ void k_bulk_reduce(unsigned *sum, int *low, const unsigned *in) {
  __shared__ alignas(128) unsigned s[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) s[i] = in[blockIdx.x * 256 + i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned sa = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], 1024;"
                 :: "l"(sum), "r"(sa) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [%0], [%1], 1024;"
                 :: "l"(low), "r"(sa) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
  __syncthreads();
}
