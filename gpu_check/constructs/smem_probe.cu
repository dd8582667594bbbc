#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__device__ unsigned sreg_begin() { unsigned v; asm volatile("mov.u32 %0, %%reserved_smem_offset_begin;" : "=r"(v)); return v; }
__device__ unsigned sreg_end() { unsigned v; asm volatile("mov.u32 %0, %%reserved_smem_offset_end;" : "=r"(v)); return v; }
__device__ unsigned sreg_cap() { unsigned v; asm volatile("mov.u32 %0, %%reserved_smem_offset_cap;" : "=r"(v)); return v; }
__device__ unsigned sreg_0() { unsigned v; asm volatile("mov.u32 %0, %%reserved_smem_offset_0;" : "=r"(v)); return v; }
__device__ unsigned sreg_1() { unsigned v; asm volatile("mov.u32 %0, %%reserved_smem_offset_1;" : "=r"(v)); return v; }

// Where the user's static and dynamic shared memory start in the shared window, and the
// reserved-region registers, for a kernel without cooperative groups.
extern "C" __global__ void k_addr(unsigned *out) {
  __shared__ int st[10];
  extern __shared__ int dyn[];
  st[threadIdx.x % 10] = threadIdx.x; dyn[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) {
    out[0] = (unsigned)__cvta_generic_to_shared(st); out[1] = (unsigned)__cvta_generic_to_shared(dyn);
    out[2] = sreg_begin(); out[3] = sreg_end(); out[4] = sreg_cap(); out[5] = sreg_0(); out[6] = sreg_1();
    out[7] = st[3] + dyn[5];
  }
}

// A 64-thread tile's reduce uses cooperative groups' multi-warp scratch in reserved shared
// memory (cooperative_groups/details/memory.h), beside the user's static shared array.
extern "C" __global__ void k_cg_tile(int *out, const int *in) {
  __shared__ int st[256];
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<64>(block);
  st[threadIdx.x] = in[threadIdx.x] * 3;
  block.sync();
  int v = cg::reduce(tile, st[(threadIdx.x + 1) % blockDim.x], cg::plus<int>());
  int w = cg::reduce(tile, in[threadIdx.x], cg::greater<int>());
  out[threadIdx.x * 4] = v; out[threadIdx.x * 4 + 1] = w;
  out[threadIdx.x * 4 + 2] = st[threadIdx.x];
  out[threadIdx.x * 4 + 3] = (int)__cvta_generic_to_shared(st);
}
