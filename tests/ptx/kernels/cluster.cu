// arch: sm_90a
// Thread-block cluster probes (issue 24): our own kernels, compiled to PTX by build.py.
// Every output is a deterministic function of the launch; the H200's buffers are the reference.
#include <cooperative_groups.h>
#include <cuda.h>
#include <stdint.h>
namespace cg = cooperative_groups;

__device__ __forceinline__ unsigned sreg_ctarank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }

// every cluster special register, one row of 16 words per thread
extern "C" __global__ void cluster_regs(unsigned *out) {
  unsigned v[16];
  asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v[0]));
  asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(v[1]));
  asm volatile("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(v[2]));
  asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(v[3]));
  asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(v[4]));
  asm volatile("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(v[5]));
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(v[6]));
  asm volatile("mov.u32 %0, %%clusterid.y;" : "=r"(v[7]));
  asm volatile("mov.u32 %0, %%clusterid.z;" : "=r"(v[8]));
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(v[9]));
  asm volatile("mov.u32 %0, %%nclusterid.y;" : "=r"(v[10]));
  asm volatile("mov.u32 %0, %%nclusterid.z;" : "=r"(v[11]));
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[12]));
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[13]));
  unsigned e;
  asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(e));
  v[14] = e;
  v[15] = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned t = threadIdx.x + blockDim.x * v[15];
  for (int i = 0; i < 16; ++i) out[t * 16 + i] = v[i];
}

// DSMEM through cooperative groups (generic addresses from mapa): each CTA fills its shared array,
// the cluster syncs, each thread reads the neighbour rank's array and adds atomically into rank 0's
extern "C" __global__ void dsmem_ring(int *out, int *sums) {
  __shared__ int buf[128];
  __shared__ int acc;
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank(), n = cluster.num_blocks();
  if (threadIdx.x == 0) acc = 0;
  buf[threadIdx.x] = (int)(rank * 1000 + threadIdx.x * 3);
  cluster.sync();
  int *peer = cluster.map_shared_rank(buf, (rank + 1) % n);
  int *root = cluster.map_shared_rank(&acc, 0);
  int v = peer[(threadIdx.x + 5) % blockDim.x];
  atomicAdd(root, v);
  out[(blockIdx.x * blockDim.x) + threadIdx.x] = v;
  cluster.sync();
  if (threadIdx.x == 0) sums[blockIdx.x] = acc;
}

// the explicit .shared::cluster forms: mapa.shared::cluster, st/ld/atom/red.shared::cluster, getctarank,
// and barrier.cluster.arrive.release / wait.acquire with work between them
extern "C" __global__ void dsmem_explicit(unsigned *out) {
  __shared__ unsigned cell[64];
  __shared__ unsigned counter;
  unsigned rank = sreg_ctarank(), n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  cell[threadIdx.x] = 0;
  if (threadIdx.x == 0) counter = 0;
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
  unsigned local = (unsigned)__cvta_generic_to_shared(&cell[threadIdx.x]);
  unsigned lctr = (unsigned)__cvta_generic_to_shared(&counter);
  unsigned dst = (rank + 1) % n, remote, rctr, who;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(dst));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rctr) : "r"(lctr), "r"(threadIdx.x % n));
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(who) : "r"(remote));
  asm volatile("st.shared::cluster.u32 [%0], %1;" :: "r"(remote), "r"(rank * 100 + threadIdx.x) : "memory");
  unsigned old;
  asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(rctr), "r"(threadIdx.x + 1) : "memory");
  asm volatile("red.shared::cluster.max.u32 [%0], %1;" :: "r"(rctr), "r"(0u) : "memory");
  (void)old;
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  unsigned busy = rank * 7 + threadIdx.x;            // work between arrive and wait
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  unsigned back;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(back) : "r"(remote) : "memory");
  unsigned base = (blockIdx.x * blockDim.x + threadIdx.x) * 5;
  out[base + 0] = cell[threadIdx.x];
  out[base + 1] = back;
  out[base + 2] = who;
  out[base + 3] = counter;
  out[base + 4] = busy;
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
}

// remote mbarrier arrive: every CTA's warps arrive on rank 0's mbarrier; rank 0 waits for them all
extern "C" __global__ void remote_mbarrier(unsigned *out) {
  __shared__ uint64_t bar;
  __shared__ unsigned seen;
  unsigned rank = sreg_ctarank(), n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  unsigned warps = blockDim.x / 32;
  unsigned lbar = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    seen = 0;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(lbar), "r"(n * warps));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.relaxed.aligned; barrier.cluster.wait.aligned;" ::: "memory");
  unsigned rbar;
  asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(rbar) : "r"(lbar));
  if (threadIdx.x % 32 == 0) {
    unsigned remote_seen;
    unsigned lseen = (unsigned)__cvta_generic_to_shared(&seen);
    asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(remote_seen) : "r"(lseen));
    asm volatile("red.shared::cluster.add.u32 [%0], %1;" :: "r"(remote_seen), "r"(rank * 10 + threadIdx.x / 32 + 1) : "memory");
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" :: "r"(rbar) : "memory");
  }
  if (rank == 0) {
    unsigned done = 0;
    while (!done)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                   : "=r"(done) : "r"(lbar) : "memory");
    out[blockIdx.x / n * blockDim.x + threadIdx.x] = seen;
  }
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
}

// multicast TMA: a (rows x 64) f32 tile; CTA rank r loads row block r with ctaMask = every CTA, so each
// CTA's shared tile holds all blocks; each CTA's mbarrier expects the whole tile's bytes
#define MC_ROWS 16
#define MC_COLS 32
extern "C" __global__ void tma_multicast(const __grid_constant__ CUtensorMap tmap, float *out) {
  __shared__ alignas(128) float tile[MC_ROWS * MC_COLS];
  __shared__ uint64_t bar;
  unsigned rank = sreg_ctarank(), n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  unsigned lbar = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned ltile = (unsigned)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(lbar));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    uint64_t st; (void)st;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(lbar), "r"((unsigned)sizeof(tile)));
    unsigned rows = MC_ROWS / n;
    unsigned short mask = (unsigned short)((1u << n) - 1);
    unsigned dst = ltile + rank * rows * MC_COLS * 4;
    int c0 = 0, c1 = (int)(blockIdx.x / n * MC_ROWS + rank * rows);
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1, {%2, %3}], [%4], %5;"
                 :: "r"(dst), "l"(&tmap), "r"(c0), "r"(c1), "r"(lbar), "h"(mask) : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(lbar) : "memory");
  for (unsigned i = threadIdx.x; i < MC_ROWS * MC_COLS; i += blockDim.x)
    out[blockIdx.x * MC_ROWS * MC_COLS + i] = tile[i];
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
}

// the cluster shape fixed at compile time
extern "C" __global__ void __cluster_dims__(2, 2, 1) fixed_cluster(unsigned *out) {
  cg::cluster_group cluster = cg::this_cluster();
  __shared__ unsigned v;
  if (threadIdx.x == 0) v = cluster.block_rank() * 11;
  cluster.sync();
  unsigned *peer = cluster.map_shared_rank(&v, (cluster.block_rank() + 3) % cluster.num_blocks());
  unsigned b = blockIdx.x + gridDim.x * blockIdx.y, e;
  asm volatile("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(e));
  if (threadIdx.x == 0) out[b] = *peer + (cluster.dim_blocks().x << 8) + (cluster.dim_blocks().y << 12) + (e << 20);
  cluster.sync();
}

// shared-to-shared bulk copy into another CTA of the cluster (cp.async.bulk.shared::cluster.shared::cta):
// each CTA sends its 512-byte block to rank+1 and bytes 64..111 of it to rank+2 (itself in a cluster of
// two), both completing on the destination CTA's mbarrier, which expects the 560 bytes it receives
#define BULK_BYTES 512
extern "C" __global__ void dsmem_bulk(unsigned *out) {
  __shared__ alignas(16) unsigned src[BULK_BYTES / 4];
  __shared__ alignas(16) unsigned dst[(BULK_BYTES + 128) / 4];
  __shared__ uint64_t bar;
  unsigned rank = sreg_ctarank(), n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  for (unsigned i = threadIdx.x; i < BULK_BYTES / 4; i += blockDim.x) src[i] = (blockIdx.x << 16) ^ (i * 2654435761u);
  for (unsigned i = threadIdx.x; i < (BULK_BYTES + 128) / 4; i += blockDim.x) dst[i] = 0xdeadbeefu;
  unsigned lbar = (unsigned)__cvta_generic_to_shared(&bar);
  if (threadIdx.x == 0) {
    uint64_t st;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(lbar));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(lbar), "r"(BULK_BYTES + 48));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
  if (threadIdx.x == 0) {
    unsigned lsrc = (unsigned)__cvta_generic_to_shared(src), ldst = (unsigned)__cvta_generic_to_shared(dst);
    for (unsigned k = 1; k <= 2; k++) {
      unsigned to = (rank + k) % n, rdst, rbar;
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rdst) : "r"(ldst + (k == 1 ? 0 : BULK_BYTES + 16)), "r"(to));
      asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(lbar), "r"(to));
      asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                   :: "r"(rdst), "r"(lsrc + (k == 1 ? 0 : 64)), "r"(k == 1 ? BULK_BYTES : 48), "r"(rbar) : "memory");
    }
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(lbar) : "memory");
  for (unsigned i = threadIdx.x; i < (BULK_BYTES + 128) / 4; i += blockDim.x)
    out[blockIdx.x * ((BULK_BYTES + 128) / 4) + i] = dst[i];
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
}

// st.async and red.async into the next rank's shared memory, each completing its bytes on that CTA's
// mbarrier: per thread 4 (st.async.b32) + 8 (st.async.v2.b32) + 4 (red.async.add.u32) bytes. The wait
// is bounded, so that a count the GPU does not complete shows in the output instead of hanging:
// word 3 of each thread's row is 1 when the phase completed
extern "C" __global__ void dsmem_async_store(unsigned *out) {
  __shared__ unsigned word[64];
  __shared__ alignas(8) unsigned pair[64 * 2];
  __shared__ unsigned sum;
  __shared__ uint64_t bar;
  unsigned rank = sreg_ctarank(), n, t = threadIdx.x;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  word[t] = pair[2 * t] = pair[2 * t + 1] = 0xdeadbeefu;
  unsigned lbar = (unsigned)__cvta_generic_to_shared(&bar);
  if (t == 0) {
    uint64_t st;
    sum = 1000 * rank;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(lbar));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;" : "=l"(st) : "r"(lbar), "r"(blockDim.x * 16));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
  unsigned to = (rank + 1) % n, rbar, rw, rp, rsum;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rbar) : "r"(lbar), "r"(to));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rw) : "r"((unsigned)__cvta_generic_to_shared(&word[t])), "r"(to));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rp) : "r"((unsigned)__cvta_generic_to_shared(&pair[2 * (63 - t)])), "r"(to));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rsum) : "r"((unsigned)__cvta_generic_to_shared(&sum)), "r"(to));
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];"
               :: "r"(rw), "r"(rank * 100 + t), "r"(rbar) : "memory");
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];"
               :: "r"(rp), "r"(rank * 7 + t), "r"(~(rank * 9 + t)), "r"(rbar) : "memory");
  asm volatile("red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%0], %1, [%2];"
               :: "r"(rsum), "r"(t + 1), "r"(rbar) : "memory");
  unsigned done = 0;
  for (unsigned k = 0; k < (1u << 20) && !done; k++)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(lbar) : "memory");
  unsigned *row = out + (blockIdx.x * blockDim.x + t) * 5;
  row[0] = word[t];
  row[1] = pair[2 * t];
  row[2] = pair[2 * t + 1];
  row[3] = done;
  row[4] = sum;
  asm volatile("barrier.cluster.arrive.aligned; barrier.cluster.wait.aligned;" ::: "memory");
}
