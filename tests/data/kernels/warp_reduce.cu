// Warp-level reductions without shared memory: per warp, the f32 sum by butterfly
// (shfl.sync.bfly), the f32 maximum by shfl.sync.down, the s32 sum by redux.sync (sm_80+), the
// ballot of positive values (vote.sync.ballot) and whether any value is zero (vote.sync.any).
// Launch: grid (n/256), block 256; out_f[2w] = sum, out_f[2w+1] = max, out_i[3w..3w+2] = s32 sum,
// ballot, any, for warp w = global warp index.
extern "C" __global__ void warp_reduce(const float *xf, const int *xi, float *out_f, int *out_i) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x, w = i / 32, lane = threadIdx.x % 32;
    float v = xf[i], s = v, m = v;
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, off));
    int total = __reduce_add_sync(0xffffffffu, xi[i]);
    unsigned pos = __ballot_sync(0xffffffffu, v > 0.f);
    int zero = __any_sync(0xffffffffu, xi[i] == 0);
    if (lane == 0) {
        out_f[2 * w] = s;
        out_f[2 * w + 1] = m;
        out_i[3 * w] = total;
        out_i[3 * w + 1] = (int)pos;
        out_i[3 * w + 2] = zero;
    }
}
