// A byte histogram with shared-memory atomics (many lanes of a warp hit the same bin: the data
// are skewed) merged into global memory with one atomic add per non-empty bin and CTA.
// Integer adds commute, so the result does not depend on the order the atomics land in.
// Launch: grid 4, block 256 (one shared bin per thread); hist has 256 u32, zero on entry.
#include <cstdint>

extern "C" __global__ void histogram_atomics(const uint8_t *data, unsigned *hist, int n) {
    __shared__ unsigned bins[256];
    bins[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[data[i]], 1u);
    __syncthreads();
    const unsigned c = bins[threadIdx.x];
    if (c) atomicAdd(&hist[threadIdx.x], c);
}
