// mma.sync + ldmatrix GEMM, C[M][64] = A[M][64] * B[64][64] (f16 in, f32 out, all row-major),
// with the two shared tiles laid out three ways: no padding (rows 128 B apart: the 8 row
// addresses of one ldmatrix matrix hit the same banks), padding by 8 halves (rows 144 B apart),
// and an XOR swizzle of the 16-byte chunks (chunk c of row r stored at chunk c ^ (r % 8)).
// Launch: grid (M/64), block 128: each CTA computes 64 rows, warp w rows 16w..16w+15, all 64
// columns as 8 m16n8 tiles. A is read with ldmatrix.x4, B with ldmatrix.x2.trans.
#include <cuda_fp16.h>
#include <cstdint>

enum Layout { PLAIN = 0, PADDED = 1, SWIZZLED = 2 };
constexpr int TK = 64, TN = 64, PITCH_PAD = 8;

// Element (r, c) of a 64x64 f16 tile -> its index in the shared array (pitch 64 or 72).
template <int L> __device__ __forceinline__ int at(int r, int c) {
    if (L == PADDED) return r * (64 + PITCH_PAD) + c;
    if (L == SWIZZLED) return r * 64 + ((((c >> 3) ^ (r & 7)) << 3) | (c & 7));
    return r * 64 + c;
}

template <int L>
__device__ void gemm(const half *A, const half *B, float *C) {
    constexpr int PITCH = L == PADDED ? 64 + PITCH_PAD : 64;
    __shared__ __align__(16) half As[64 * PITCH];
    __shared__ __align__(16) half Bs[TK * PITCH];
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const half *Ablk = A + blockIdx.x * 64 * TK;
    // 16-byte chunks: 64 rows x 8 chunks per tile, 4 per thread and tile
    for (int i = tid; i < 64 * 8; i += blockDim.x) {
        int r = i / 8, c = (i % 8) * 8;
        *reinterpret_cast<uint4 *>(&As[at<L>(r, c)]) = *reinterpret_cast<const uint4 *>(&Ablk[r * TK + c]);
        *reinterpret_cast<uint4 *>(&Bs[at<L>(r, c)]) = *reinterpret_cast<const uint4 *>(&B[r * TN + c]);
    }
    __syncthreads();
    float acc[8][4] = {};
    for (int k0 = 0; k0 < TK; k0 += 16) {
        uint32_t a[4];
        // A 16x16 at (16 warp, k0): lanes 0-15 give rows 0-15 at k0, lanes 16-31 rows 0-15 at k0 + 8
        uint32_t pa = (uint32_t)__cvta_generic_to_shared(&As[at<L>(warp * 16 + lane % 16, k0 + (lane / 16) * 8)]);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(pa));
        for (int n = 0; n < 8; n++) {
            uint32_t b[2];
            // B 16x8 at (k0, 8n), stored k-major: lanes 0-15 give rows k0..k0+15 (lanes 16-31 ignored)
            uint32_t pb = (uint32_t)__cvta_generic_to_shared(&Bs[at<L>(k0 + lane % 16, n * 8)]);
            asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                         : "=r"(b[0]), "=r"(b[1]) : "r"(pb));
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                         "{%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(acc[n][0]), "+f"(acc[n][1]), "+f"(acc[n][2]), "+f"(acc[n][3])
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        }
    }
    // c0,c1: row lane/4, columns 2(lane%4)+{0,1}; c2,c3: 8 rows further down
    float *Cw = C + (blockIdx.x * 64 + warp * 16) * TN;
    for (int n = 0; n < 8; n++) {
        int r = lane / 4, c = n * 8 + 2 * (lane % 4);
        *reinterpret_cast<float2 *>(&Cw[r * TN + c]) = make_float2(acc[n][0], acc[n][1]);
        *reinterpret_cast<float2 *>(&Cw[(r + 8) * TN + c]) = make_float2(acc[n][2], acc[n][3]);
    }
}

extern "C" __global__ void mma_ldmatrix_plain(const half *A, const half *B, float *C) { gemm<PLAIN>(A, B, C); }
extern "C" __global__ void mma_ldmatrix_padded(const half *A, const half *B, float *C) { gemm<PADDED>(A, B, C); }
extern "C" __global__ void mma_ldmatrix_swizzled(const half *A, const half *B, float *C) { gemm<SWIZZLED>(A, B, C); }
