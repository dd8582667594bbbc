// Byte-wide and 16-bit shared-memory stores, read back as 32-bit words. Thread t of a CTA writes
// one byte to shared position (t * STRIDE) % 1024 for four strides (1: four lanes share a word;
// 4: one byte per word; 33; 129: four lanes per bank), all positions distinct, and a 16-bit
// value at halfword (t * 3) % 512 (the two halves of a word written by different lanes). After
// a barrier every thread copies word t of each region to global memory.
// Launch: grid 2, block 256; out has 2 * 5 * 256 words, region r of CTA b at (b * 5 + r) * 256.
#include <cstdint>

extern "C" __global__ void byte_smem(const uint8_t *in, uint32_t *out) {
    __shared__ uint32_t words[5][256];
    const int t = threadIdx.x;
    for (int r = 0; r < 5; r++) words[r][t] = 0xA5A5A5A5u;   // untouched bytes stay visible
    __syncthreads();
    const uint8_t v = in[blockIdx.x * 256 + t];
    uint8_t *bytes = reinterpret_cast<uint8_t *>(words);
    const int strides[4] = {1, 4, 33, 129};
    for (int r = 0; r < 4; r++)
        bytes[r * 1024 + (t * strides[r]) % 1024] = (uint8_t)(v + r);
    reinterpret_cast<uint16_t *>(words[4])[(t * 3) % 512] = (uint16_t)(v * 257u + t);
    __syncthreads();
    for (int r = 0; r < 5; r++) out[(blockIdx.x * 5 + r) * 256 + t] = words[r][t];
}
