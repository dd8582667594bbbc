// Shared-memory transpose of a 32x32 f32 tile per CTA, out[j][i] = in[i][j] for an R x C matrix.
// Three tile layouts: tile[32][32] (the column read of the second phase puts all 32 lanes in one
// bank: 32-way conflicts), tile[32][33] (one word of padding per row: conflict free) and
// tile[32][32] with column c of row r stored at c ^ r (an XOR swizzle: conflict free, no padding).
// Launch: grid (C/32, R/32), block (32, 8): each thread moves 4 elements in and 4 out.
template <int PITCH, bool XOR>
__device__ void transpose(const float *in, float *out, int R, int C) {
    __shared__ float tile[32 * PITCH];
    const int x = threadIdx.x, bx = blockIdx.x * 32, by = blockIdx.y * 32;
    for (int y = threadIdx.y; y < 32; y += 8)      // coalesced read of rows by..by+31
        tile[y * PITCH + (XOR ? x ^ y : x)] = in[(by + y) * C + bx + x];
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += 8)      // column x of the tile becomes row bx + y of out
        out[(bx + y) * R + by + x] = tile[x * PITCH + (XOR ? y ^ x : y)];
}

extern "C" __global__ void transpose_conflicts(const float *in, float *out, int R, int C) { transpose<32, false>(in, out, R, C); }
extern "C" __global__ void transpose_padded(const float *in, float *out, int R, int C) { transpose<33, false>(in, out, R, C); }
extern "C" __global__ void transpose_swizzled(const float *in, float *out, int R, int C) { transpose<32, true>(in, out, R, C); }
