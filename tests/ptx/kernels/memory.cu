// Memory instructions: every state space and vector width, generic pointers, atomics, cp.async.
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

__constant__ float ctab[8] = {1.f, 2.f, 4.f, 8.f, 16.f, 32.f, 64.f, 128.f};
__device__ unsigned gcounter;

// loads and stores of 1, 2, 4, 8, 16 bytes per thread
extern "C" __global__ void widths(const char* c, const short* s, const float* f, const double2* d2,
                                  const float4* f4, const int2* i2, char* oc, short* os, float* of,
                                  double2* od2, float4* of4, int2* oi2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  oc[i] = c[i] + 1;
  os[i] = s[i] * 3;
  of[i] = f[i] * ctab[i & 7];
  double2 x = d2[i]; od2[i] = make_double2(x.y, x.x);
  float4 v = f4[i]; of4[i] = make_float4(v.w, v.z, v.y, v.x);
  int2 w = i2[i]; oi2[i] = make_int2(w.x ^ w.y, w.x + w.y);
}

// a local array indexed by data (stays in local memory), and a loop over it
extern "C" __global__ void local_array(const int* in, int* out, int n) {
  int buf[32];
  int i = threadIdx.x;
  for (int k = 0; k < 32; k++) buf[k] = in[(i + k) % n] * k;
  int acc = 0;
  for (int k = 0; k < 32; k++) acc += buf[(k * 7 + i) & 31];
  out[i] = acc;
}

// a non-inlined function reached with a shared and a global pointer: generic ld/st
__device__ __noinline__ float bump(float* p, int k, float by) { float old = p[k]; p[k] = old + by; return old; }

extern "C" __global__ void generic(float* g, float* out) {
  __shared__ float s[64];
  int i = threadIdx.x;
  s[i] = i * 0.5f;
  __syncthreads();
  float a = bump(s, (i + 1) % 64, 1.0f);
  float b = bump(g, i, a);
  __syncthreads();
  out[i] = s[i] + b;
}

// dynamic shared memory after a static array
extern "C" __global__ void dynamic_shared(const float* in, float* out) {
  extern __shared__ float dyn[];
  __shared__ float stat[3];
  int i = threadIdx.x;
  if (i < 3) stat[i] = i + 1.0f;
  dyn[i] = in[i];
  __syncthreads();
  out[i] = dyn[blockDim.x - 1 - i] * stat[i % 3];
}

// atomics on shared and global memory with repeated addresses
extern "C" __global__ void atomics(const unsigned* keys, unsigned* hist, int* imin, int* imax, unsigned* ands,
                                   unsigned* ors, unsigned* xors, float* fsum, double* dsum, unsigned* incs,
                                   unsigned* cas_out, unsigned* exch_out, unsigned* shared_hist) {
  __shared__ unsigned sh[16];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 16) sh[threadIdx.x] = 0;
  __syncthreads();
  unsigned k = keys[i];
  atomicAdd(&hist[k % 16], 1u);
  atomicAdd(&sh[k % 16], k & 0xff);
  atomicMin(&imin[k % 4], (int)k);
  atomicMax(&imax[k % 4], (int)k);
  atomicAnd(&ands[k % 4], k | 0x0f0f0000u);
  atomicOr(&ors[k % 4], k & 0x00ff00ffu);
  atomicXor(&xors[k % 4], k);
  atomicAdd(&fsum[k % 2], (float)(k % 1000) * 0.25f);
  atomicAdd(&dsum[k % 2], (double)k * 0.125);
  atomicInc(&incs[k % 3], 37u);
  unsigned old = atomicCAS(&cas_out[0], 0u, (unsigned)i + 1);
  exch_out[i] = atomicExch(&exch_out[blockDim.x * gridDim.x], (unsigned)i) + old * 0u;
  __syncthreads();
  if (threadIdx.x < 16) atomicAdd(&shared_hist[threadIdx.x], sh[threadIdx.x]);
  if (i == 0) atomicAdd(&gcounter, 1u);
}

// a three-stage cp.async pipeline (16-byte copies) with a zero-filled tail
extern "C" __global__ void cp_async_pipeline(const float4* in, float* out, int tiles, int valid_bytes) {
  __shared__ __align__(16) float4 stage[3][32];
  int i = threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < 2 && t < tiles; t++) {
    __pipeline_memcpy_async(&stage[t][i], &in[t * 32 + i], 16, (t == tiles - 1 && i == 31) ? 16 - valid_bytes : 0);
    __pipeline_commit();
  }
  for (int t = 0; t < tiles; t++) {
    int nxt = t + 2;
    if (nxt < tiles)
      __pipeline_memcpy_async(&stage[nxt % 3][i], &in[nxt * 32 + i], 16, (nxt == tiles - 1 && i == 31) ? 16 - valid_bytes : 0);
    __pipeline_commit();
    __pipeline_wait_prior(2);
    __syncthreads();
    float4 v = stage[t % 3][(i + 5) & 31];
    acc += v.x + 2.f * v.y + 4.f * v.z + 8.f * v.w;
    __syncthreads();
  }
  out[i] = acc;
}

// byte-wide shared stores then word reads
extern "C" __global__ void bytes_shared(const unsigned char* in, unsigned* out) {
  __shared__ unsigned char b[128];
  int i = threadIdx.x;
  for (int k = 0; k < 4; k++) b[i * 4 + k] = in[(i * 4 + k) ^ 5];
  __syncthreads();
  out[i] = reinterpret_cast<unsigned*>(b)[(i * 9) & 31];
}

// reads index[i] from a buffer of n floats: out of range when index[i] >= n
extern "C" __global__ void gather(const float* x, const int* index, float* out) {
  int i = threadIdx.x;
  out[i] = x[index[i]];
}

// a 16-byte load from an address that is only 4-byte aligned when off is not a multiple of 4
extern "C" __global__ void misaligned(const float* x, float* out, int off) {
  const float4* p = reinterpret_cast<const float4*>(x + off);
  float4 v = p[threadIdx.x];
  out[threadIdx.x] = v.x + v.y + v.z + v.w;
}
