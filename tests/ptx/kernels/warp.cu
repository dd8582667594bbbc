// Warp-level instructions: shuffles of every mode and width, votes, match, reductions.
extern "C" __global__ void shuffles(const int* in, int* out, int width) {
  int i = threadIdx.x;
  int v = in[i];
  int n = blockDim.x;
  out[0 * n + i] = __shfl_sync(0xffffffff, v, (i * 7 + 3) & 31, width);
  out[1 * n + i] = __shfl_up_sync(0xffffffff, v, 3, width);
  out[2 * n + i] = __shfl_down_sync(0xffffffff, v, 5, width);
  out[3 * n + i] = __shfl_xor_sync(0xffffffff, v, 6, width);
}

extern "C" __global__ void votes(const int* in, unsigned* out) {
  int i = threadIdx.x;
  int n = blockDim.x;
  int v = in[i];
  out[0 * n + i] = __ballot_sync(0xffffffff, v > 0);
  out[1 * n + i] = __all_sync(0xffffffff, v > -100);
  out[2 * n + i] = __any_sync(0xffffffff, v > 90);
  out[3 * n + i] = __uni_sync(0xffffffff, v & 1);
  out[4 * n + i] = __match_any_sync(0xffffffff, v % 5);
  int pred;
  unsigned m = __match_all_sync(0xffffffff, v / 1000, &pred);
  out[5 * n + i] = m ^ (pred ? 0x10000u : 0x20000u);
  out[6 * n + i] = __reduce_add_sync(0xffffffff, (unsigned)v);
  out[7 * n + i] = (unsigned)__reduce_max_sync(0xffffffff, v);
  out[8 * n + i] = __reduce_xor_sync(0xffffffff, (unsigned)v);
  if (v & 1) out[9 * n + i] = __activemask();
  else out[9 * n + i] = __ballot_sync(__activemask(), v > 10);
}

// block-wide: warp reductions through shared memory, and __syncthreads_count/and/or
extern "C" __global__ void block_reduce(const float* in, float* out, int* counts) {
  __shared__ float part[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = in[i];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
  }
  int c = __syncthreads_count(in[i] > 0.f);
  int a = __syncthreads_and(in[i] > -3.f);
  int o = __syncthreads_or(in[i] > 2.5f);
  if (threadIdx.x == 0) { counts[3 * blockIdx.x] = c; counts[3 * blockIdx.x + 1] = a; counts[3 * blockIdx.x + 2] = o; }
}
