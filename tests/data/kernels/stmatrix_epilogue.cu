// An stmatrix epilogue: mma.sync m16n8k16 (f16 in, f32 accumulate) with fragments loaded from
// global memory in the PTX ISA's register layout, the accumulators rounded to f16 pairs
// (cvt.rn.f16x2.f32), written to a padded shared tile with stmatrix.x4 (sm_90; the sm_80 build
// stores the same registers with st.shared.b32, since stmatrix needs sm_90), then copied to
// global memory in 16-byte rows.
// Shapes: A[M][32] row-major, Bt[32][32] = B transposed (n-major, so each b register is one
// 32-bit load), C[M][32] f16. Launch: grid (M/64), block 128: warp w computes rows 16w..16w+15
// of the CTA's 64 rows, all 32 columns as 4 m16n8 tiles.
#include <cuda_fp16.h>
#include <cstdint>

constexpr int K = 32, N = 32, PITCH = N + 8;

extern "C" __global__ void stmatrix_epilogue(const half *A, const half *Bt, half *C) {
    __shared__ __align__(16) half Cs[64 * PITCH];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    const half *Aw = A + (blockIdx.x * 64 + warp * 16) * K;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += 16) {
        uint32_t a[4];   // a0a1: (g, 2t..), a2a3: (g+8, 2t..), a4a5: (g, 2t+8..), a6a7: (g+8, 2t+8..)
        a[0] = *reinterpret_cast<const uint32_t *>(&Aw[g * K + k0 + 2 * t]);
        a[1] = *reinterpret_cast<const uint32_t *>(&Aw[(g + 8) * K + k0 + 2 * t]);
        a[2] = *reinterpret_cast<const uint32_t *>(&Aw[g * K + k0 + 2 * t + 8]);
        a[3] = *reinterpret_cast<const uint32_t *>(&Aw[(g + 8) * K + k0 + 2 * t + 8]);
        for (int n = 0; n < 4; n++) {
            uint32_t b[2];   // b0b1: (k 2t.., n g), b2b3: (k 2t+8.., n g)
            b[0] = *reinterpret_cast<const uint32_t *>(&Bt[(n * 8 + g) * K + k0 + 2 * t]);
            b[1] = *reinterpret_cast<const uint32_t *>(&Bt[(n * 8 + g) * K + k0 + 2 * t + 8]);
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                         "{%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(acc[n][0]), "+f"(acc[n][1]), "+f"(acc[n][2]), "+f"(acc[n][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        }
    }
    for (int p = 0; p < 2; p++) {        // two 16x16 halves of the warp's 16x32 tile
        uint32_t r[4];                   // matrices: (rows 0-7, cols 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15)
        for (int j = 0; j < 4; j++) {
            const float *c = acc[2 * p + j / 2] + (j % 2) * 2;
            __half2 h = __floats2half2_rn(c[0], c[1]);
            r[j] = *reinterpret_cast<uint32_t *>(&h);
        }
#if __CUDA_ARCH__ >= 900
        // lane l gives the address of row l%8 of matrix l/8
        int j = lane / 8, row = warp * 16 + (j % 2) * 8 + lane % 8, col = p * 16 + (j / 2) * 8;
        uint32_t s = (uint32_t)__cvta_generic_to_shared(&Cs[row * PITCH + col]);
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};"
                     ::"r"(s), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]));
#else
        for (int j = 0; j < 4; j++) {    // lane holds row g, columns 2t, 2t+1 of matrix j
            int row = warp * 16 + (j % 2) * 8 + g, col = p * 16 + (j / 2) * 8 + 2 * t;
            *reinterpret_cast<uint32_t *>(&Cs[row * PITCH + col]) = r[j];
        }
#endif
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 64 * N / 8; i += blockDim.x) {    // 16-byte chunks: 4 per row
        int row = i / (N / 8), c = (i % (N / 8)) * 8;
        *reinterpret_cast<uint4 *>(&C[(blockIdx.x * 64 + row) * N + c]) = *reinterpret_cast<uint4 *>(&Cs[row * PITCH + c]);
    }
}
