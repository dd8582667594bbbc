// Tensor-core instructions through inline PTX: ldmatrix (plain and .trans), stmatrix, mma.sync of
// several shapes and types. One warp; tiles live in shared memory with a row pitch given by the
// launch so the tests can vary padding.
#include <cuda_fp16.h>

// D[16x8] = A[16x16] * B[16x8] + C with A loaded by ldmatrix.x4, B by ldmatrix.x2.trans
extern "C" __global__ void mma_f16(const half* A, const half* B, const float* C, float* D, int pitch) {
  extern __shared__ __align__(16) half sm[];
  half* sa = sm;                 // 16 rows x pitch
  half* sb = sm + 16 * pitch;    // 16 rows (k) x pitch, n contiguous
  int lane = threadIdx.x;
  for (int k = lane; k < 256; k += 32) { sa[(k / 16) * pitch + k % 16] = A[k]; }
  for (int k = lane; k < 128; k += 32) { sb[(k / 8) * pitch + k % 8] = B[k]; }
  __syncwarp();
  unsigned a0, a1, a2, a3, b0, b1;
  unsigned pa = (unsigned)__cvta_generic_to_shared(sa + (lane % 16) * pitch + (lane / 16) * 8);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
  unsigned pb = (unsigned)__cvta_generic_to_shared(sb + (lane % 16) * pitch);
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(b0), "=r"(b1) : "r"(pb));
  int g = lane >> 2, t = lane & 3;
  float c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1], c2 = C[(g + 8) * 8 + 2 * t], c3 = C[(g + 8) * 8 + 2 * t + 1];
  float d0, d1, d2, d3;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%10,%11,%12,%13};" : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
  D[g * 8 + 2 * t] = d0; D[g * 8 + 2 * t + 1] = d1; D[(g + 8) * 8 + 2 * t] = d2; D[(g + 8) * 8 + 2 * t + 1] = d3;
}

// stmatrix.x4 of an f16 tile held as four 8x8 fragments, then read back row by row
extern "C" __global__ void stmatrix_tile(const unsigned* regs, half* out, int pitch) {
  extern __shared__ __align__(16) half sm[];
  int lane = threadIdx.x;
  unsigned r0 = regs[lane], r1 = regs[32 + lane], r2 = regs[64 + lane], r3 = regs[96 + lane];
  unsigned p = (unsigned)__cvta_generic_to_shared(sm + (lane % 16) * pitch + (lane / 16) * 8);
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};" :: "r"(p), "r"(r0), "r"(r1), "r"(r2), "r"(r3));
  __syncwarp();
  for (int k = lane; k < 256; k += 32) out[k] = sm[(k / 16) * pitch + k % 16];
}

// s8 x s8 -> s32 m16n8k32, tf32 m16n8k8 and f64 m8n8k4 with registers from global memory
extern "C" __global__ void mma_mixed(const unsigned* a8, const unsigned* b8, const int* c8, int* d8,
                                     const float* at, const float* bt, const float* ct, float* dt,
                                     const double* a64, const double* b64, const double* c64, double* d64) {
  int l = threadIdx.x;
  int r[4];
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a8[4 * l]), "r"(a8[4 * l + 1]), "r"(a8[4 * l + 2]), "r"(a8[4 * l + 3]), "r"(b8[2 * l]), "r"(b8[2 * l + 1]),
                 "r"(c8[4 * l]), "r"(c8[4 * l + 1]), "r"(c8[4 * l + 2]), "r"(c8[4 * l + 3]));
  for (int k = 0; k < 4; k++) d8[4 * l + k] = r[k];
  float f[4];
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
               : "=f"(f[0]), "=f"(f[1]), "=f"(f[2]), "=f"(f[3])
               : "r"(__float_as_uint(at[4 * l])), "r"(__float_as_uint(at[4 * l + 1])), "r"(__float_as_uint(at[4 * l + 2])),
                 "r"(__float_as_uint(at[4 * l + 3])), "r"(__float_as_uint(bt[2 * l])), "r"(__float_as_uint(bt[2 * l + 1])),
                 "f"(ct[4 * l]), "f"(ct[4 * l + 1]), "f"(ct[4 * l + 2]), "f"(ct[4 * l + 3]));
  for (int k = 0; k < 4; k++) dt[4 * l + k] = f[k];
  double d0, d1;
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
               : "=d"(d0), "=d"(d1) : "d"(a64[l]), "d"(b64[l]), "d"(c64[2 * l]), "d"(c64[2 * l + 1]));
  d64[2 * l] = d0; d64[2 * l + 1] = d1;
}
