// The division probe: div.approx.f32, div.approx.ftz.f32, div.full.f32, div.full.ftz.f32 on an
// input set both this kernel and gpu_check/sfu/div_inputs.py generate (splitmix64 of the pair
// index), each result folded into a 64-bit sum per block of pairs that numpy recomputes exactly
// (gpu_check/sfu/div_measure.py drives it; tests/numerics/test_sfu_div.py replays it).
//
// Pair i of a group (mode):
//   0 random   a = (w & a_and) | a_or, b = (v & b_and) | b_or, w, v = splitmix64(seed + 2i), (seed + 2i + 1)
//   1 special  a = special[i >> 8], b = special[i & 255] (the 256 x 256 cross product)
//   2 sweep    a = fixed_a, b = i (every 32-bit divisor)
// Hash of pair i with result r: splitmix64((i << 32) ^ r); the block sum wraps mod 2^64.
#include <cstdint>

__device__ __forceinline__ unsigned long long splitmix64(unsigned long long z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define DIV(INSTR) asm volatile(INSTR " %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b))

__device__ __forceinline__ float divide(int op, float a, float b) {
    float r;
    switch (op) {
    case 0: DIV("div.approx.f32"); break;
    case 1: DIV("div.approx.ftz.f32"); break;
    case 2: DIV("div.full.f32"); break;
    default: DIV("div.full.ftz.f32"); break;
    }
    return r;
}

extern "C" __global__ void probe(int op, int mode, unsigned long long n, unsigned long long seed,
                                 unsigned a_and, unsigned a_or, unsigned b_and, unsigned b_or,
                                 const unsigned *special, unsigned fixed_a, int log2_block,
                                 unsigned long long *block_hash, unsigned *out) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    // n is a multiple of 32 * 2^log2_block's divisor: every warp's 32 pairs lie in one block
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned a, b;
        if (mode == 0) {
            a = ((unsigned)splitmix64(seed + 2 * i) & a_and) | a_or;
            b = ((unsigned)splitmix64(seed + 2 * i + 1) & b_and) | b_or;
        } else if (mode == 1) {
            a = special[i >> 8];
            b = special[i & 255];
        } else {
            a = fixed_a;
            b = (unsigned)i;
        }
        unsigned r = __float_as_uint(divide(op, __uint_as_float(a), __uint_as_float(b)));
        if (out) out[i] = r;
        unsigned long long h = splitmix64((i << 32) ^ r);
        for (int o = 16; o; o >>= 1) h += __shfl_xor_sync(0xffffffffu, h, o);
        if ((threadIdx.x & 31) == 0) atomicAdd(&block_hash[i >> log2_block], h);
    }
}
