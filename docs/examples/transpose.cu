// A 32x32 float tile transposed through shared memory, with a row pitch of 32 (column reads
// conflict) or 33 (padded: no conflicts). blockDim (32, 8).
template <int PITCH>
__device__ void transpose_tile(const float* in, float* out, int n) {
  __shared__ float tile[32 * PITCH];
  int bx = blockIdx.x * 32, by = blockIdx.y * 32;
  for (int j = threadIdx.y; j < 32; j += 8) tile[j * PITCH + threadIdx.x] = in[(by + j) * n + bx + threadIdx.x];
  __syncthreads();
  for (int j = threadIdx.y; j < 32; j += 8) out[(bx + j) * n + by + threadIdx.x] = tile[threadIdx.x * PITCH + j];
}
extern "C" __global__ void transpose_conflicts(const float* in, float* out, int n) { transpose_tile<32>(in, out, n); }
extern "C" __global__ void transpose_padded(const float* in, float* out, int n) { transpose_tile<33>(in, out, n); }

// the same with the barrier left out: the reads race with other warps' writes
extern "C" __global__ void transpose_racy(const float* in, float* out, int n) {
  __shared__ float tile[32 * 33];
  int bx = blockIdx.x * 32, by = blockIdx.y * 32;
  for (int j = threadIdx.y; j < 32; j += 8) tile[j * 33 + threadIdx.x] = in[(by + j) * n + bx + threadIdx.x];
  for (int j = threadIdx.y; j < 32; j += 8) out[(bx + j) * n + by + threadIdx.x] = tile[threadIdx.x * 33 + j];
}
