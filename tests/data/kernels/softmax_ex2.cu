// Row softmax of a tile, y = exp(x - max) / sum, one warp per row of 128 values, three ways:
//   softmax_f32     f32, __expf: mul by log2(e) then ex2.approx.f32 (the non-ftz form: ptxas
//                   wraps MUFU.EX2 in a rescaling for results below 2^-126); the quotient is the
//                   IEEE div.rn.f32
//   softmax_h2exp2  f16 pairs through CUDA's h2exp2 (cuda_fp16.hpp: cvt to f32, ex2.approx.ftz.f32,
//                   an fma by 2^-24, cvt.rn back), sums in f32
//   softmax_f16x2   f16 pairs through ex2.approx.f16x2 itself (inline PTX), sums in f32
// Lane l holds columns 2l, 2l+1, 64+2l, 65+2l. Launch: grid (rows/4), block 128.
#include <cuda_fp16.h>
#include <cstdint>

__device__ __forceinline__ float warp_max(float v) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

extern "C" __global__ void softmax_f32(const float *x, float *y) {
    const int lane = threadIdx.x % 32, row = blockIdx.x * 4 + threadIdx.x / 32;
    const float *xr = x + row * 128;
    float v[4] = {xr[2 * lane], xr[2 * lane + 1], xr[64 + 2 * lane], xr[65 + 2 * lane]};
    const float m = warp_max(fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3])));
    float s = 0.f;
    for (int j = 0; j < 4; j++) { v[j] = __expf(v[j] - m); s += v[j]; }
    s = warp_sum(s);
    float *yr = y + row * 128;
    yr[2 * lane] = v[0] / s; yr[2 * lane + 1] = v[1] / s; yr[64 + 2 * lane] = v[2] / s; yr[65 + 2 * lane] = v[3] / s;
}

__device__ __forceinline__ __half2 ex2_f16x2(__half2 a) {
    uint32_t r, in = *reinterpret_cast<uint32_t *>(&a);
    asm("ex2.approx.f16x2 %0, %1;" : "=r"(r) : "r"(in));
    return *reinterpret_cast<__half2 *>(&r);
}

template <bool INLINE>
__device__ void softmax_half(const __half2 *x, __half2 *y) {
    const int lane = threadIdx.x % 32, row = blockIdx.x * 4 + threadIdx.x / 32;
    const __half2 log2e = __float2half2_rn(1.4426950408889634f);
    __half2 v[2] = {x[row * 64 + lane], x[row * 64 + 32 + lane]};
    __half2 mm = __hmax2(v[0], v[1]);
    const float m = warp_max(fmaxf(__low2float(mm), __high2float(mm)));
    const __half2 mh = __float2half2_rn(m);
    float s = 0.f;
    for (int j = 0; j < 2; j++) {
        __half2 t = __hmul2(__hsub2(v[j], mh), log2e);
        v[j] = INLINE ? ex2_f16x2(t) : h2exp2(t);
        s += __low2float(v[j]) + __high2float(v[j]);
    }
    const float inv = 1.f / warp_sum(s);
    for (int j = 0; j < 2; j++)
        y[row * 64 + 32 * j + lane] = __floats2half2_rn(__low2float(v[j]) * inv, __high2float(v[j]) * inv);
}

extern "C" __global__ void softmax_h2exp2(const __half2 *x, __half2 *y) { softmax_half<false>(x, y); }
extern "C" __global__ void softmax_f16x2(const __half2 *x, __half2 *y) { softmax_half<true>(x, y); }
