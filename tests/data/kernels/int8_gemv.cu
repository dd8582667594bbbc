// An int8 GEMV with a dequantising fp16 epilogue: y[n] = half(acc[n] * x_scale) * w_scale[n] + bias[n]
// (half multiply-add), acc[n] = sum_k W[n][k] * x[k] over int8 with dp4a (4 products per 32-bit load).
// Launch: grid (N/32), block 256: warp w of a CTA handles rows 32 blockIdx.x + 4w .. +3; lane l
// loads bytes 4l..4l+3 of each 128-byte step of a row; the lanes combine with shfl.sync.down.
#include <cuda_fp16.h>

extern "C" __global__ void int8_gemv(const int *W, const int *x, const half *w_scale, const half *bias,
                                     half *y, float x_scale, int K) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int words = K / 4;                       // int8 x 4 per 32-bit word
    for (int r = 0; r < 4; r++) {
        const int n = blockIdx.x * 32 + warp * 4 + r;
        int acc = 0;
        for (int w = lane; w < words; w += 32) acc = __dp4a(W[n * words + w], x[w], acc);
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (lane == 0) {
            half h = __float2half_rn((float)acc * x_scale);
            y[n] = __hfma(h, w_scale[n], bias[n]);
        }
    }
}
