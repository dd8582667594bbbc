// Control flow: divergence and reconvergence, loops with per-thread trip counts, early exit with
// barriers afterwards, calls of non-inlined functions (parameters, results), printf.
#include <cstdio>

__device__ __noinline__ int collatz(int x, int* steps) {
  int s = 0;
  while (x != 1) { x = (x & 1) ? 3 * x + 1 : x / 2; s++; }
  *steps = s;
  return s * 2 + 1;
}

__device__ __noinline__ float2 polar(float r, float t) { return make_float2(r * t, r - t); }

extern "C" __global__ void diverge(const int* in, int* out, float* fout, int n) {
  __shared__ int tile[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  int r;
  if (v % 3 == 0) r = v * 2;
  else if (v % 3 == 1) { r = 0; for (int k = 0; k < (v & 15); k++) r += k * v; }
  else { int st; r = collatz((v & 63) + 1, &st) + st; }
  switch (v & 7) { case 0: r += 1; break; case 3: r -= 7; break; case 5: r ^= 0x55; break; default: r += v & 7; }
  tile[threadIdx.x] = r;
  __syncthreads();
  out[i] = tile[(threadIdx.x + 1) % blockDim.x] - r;
  float2 p = polar((float)v, 0.5f);
  fout[i] = p.x + p.y;
  if (v == 12345) printf("v=%d r=%d\n", v, r);
}

// threads past n return early; the others still meet at the barrier
extern "C" __global__ void early_exit(const float* in, float* out, int n) {
  __shared__ float s[128];
  int i = threadIdx.x;
  if (i >= n) return;
  s[i] = in[i] * 2.f;
  __syncthreads();
  out[i] = s[n - 1 - i];
}

// lanes 0-15 wait at the barrier for their warp; lanes 16-31 wait in a full-warp shuffle for
// lanes 0-15: neither can go on (the model reports the deadlock)
extern "C" __global__ void deadlock(float* out) {
  float v = out[threadIdx.x];
  if ((threadIdx.x & 31) < 16) __syncthreads();
  else v = __shfl_sync(0xffffffff, v, 0);
  out[threadIdx.x] = v;
}

// a loop that never ends
extern "C" __global__ void endless(volatile int* flag) {
  while (flag[0] == 0) { flag[1] += 1; }
}
