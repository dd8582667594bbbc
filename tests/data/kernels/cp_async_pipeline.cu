// A three-stage cp.async pipeline: y[m] = sum_k A[m][k] * x[k] (f32), A streamed through shared
// memory in 16x64 tiles with cp.async.cg (16 bytes per copy), commit_group and wait_group 2, so
// the copy of tile t+2 overlaps the arithmetic on tile t.
// Launch: grid (M/16), block 128: thread t sums row t/8 over columns 8(t%8)..8(t%8)+7 of every
// tile, then the 8 threads of a row combine by shfl.sync.bfly.
#include <cstdint>

constexpr int ROWS = 16, TILE = 64, STAGES = 3;

__device__ __forceinline__ void copy16(float *smem, const float *gmem) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}

extern "C" __global__ void cp_async_gemv(const float *A, const float *x, float *y, int K) {
    __shared__ __align__(16) float tiles[STAGES][ROWS][TILE];
    const int tid = threadIdx.x, row = tid / 8, part = tid % 8;
    const float *Ablk = A + blockIdx.x * ROWS * K;
    const int ntiles = K / TILE;
    auto issue = [&](int t) {              // a 16x64 tile is 256 chunks of 16 bytes: 2 per thread
        if (t < ntiles)
            for (int i = tid; i < ROWS * TILE / 4; i += blockDim.x) {
                int r = i / (TILE / 4), c = (i % (TILE / 4)) * 4;
                copy16(&tiles[t % STAGES][r][c], Ablk + r * K + t * TILE + c);
            }
        asm volatile("cp.async.commit_group;");   // empty groups keep the wait count uniform
    };
    issue(0);
    issue(1);
    float sum = 0.f;
    for (int t = 0; t < ntiles; t++) {
        issue(t + 2);
        asm volatile("cp.async.wait_group 2;");    // tile t has landed (t+1, t+2 may be in flight)
        __syncthreads();
        for (int j = 0; j < 8; j++) {
            int c = part * 8 + j;
            sum = fmaf(tiles[t % STAGES][row][c], x[t * TILE + c], sum);
        }
        __syncthreads();                           // everyone is done with stage t % 3 before reuse
    }
    for (int off = 1; off < 8; off <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (part == 0) y[blockIdx.x * ROWS + row] = sum;
}
