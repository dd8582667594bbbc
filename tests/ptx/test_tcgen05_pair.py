"""tcgen05 .cta_group::2 in the executor: a CTA pair of a cluster runs one MMA over both CTAs'
shared memory into both CTAs' tensor memory (hand-written PTX; no Blackwell GPU here: every
expected value below is the documents', written out again in this file).

- PTX ISA 9.x (v9.2) 9.7.16.5 'Issue Granularity' (Table 46): tcgen05.mma/.commit .cta_group::2 is
  issued by one thread of the CTA pair (the CTAs of a cluster whose %cluster_ctarank differ in bit 0);
  tcgen05.alloc/dealloc/relinquish_alloc_permit .cta_group::2 by one warp in each CTA of the pair.
- The split of the operands and of D, as CuTe's SM100_MMA_F16BF16_2x1SM_SS traits state it
  (nvidia-cutlass 4.2.0.0, cute/atom/mma_traits_sm100.hpp: ThrID = Layout<_2>; ALayout gives the
  peer v rows v*M/2 .. of A, BLayout rows v*N/2 .. of B (N x K), CLayout rows v*M/2 .. of D) and the
  PTX ISA's data-path Layouts A (M=256: lane = row % 128 of CTA row // 128) and B (M=128: 64 rows
  per CTA, the column halves folded onto lanes 64..127; 9.7.16.10): the even CTA's shared memory
  holds A[0:M/2] and B[0:N/2], the odd CTA's the other halves, at the same descriptor addresses.
- The disable-output-lane vector of .cta_group::2 has 8 words: bit L of the pair's 256 lanes
  (lane L % 128 of the CTA L // 128).
- .multicast::cluster commit: one arrival on the mbarrier at its offset in each CTA of the mask.
- cp.async.bulk.tensor .cta_group::2 (9.7.9.25.5.1): the mbarrier may lie in the destination CTA's
  peer; a multicast signals, for each destination, the CTA of its pair on the operand's side.
"""
import numpy as np
import pytest

import layoutsim
from layoutsim import ptx
from layoutsim.isa.ptx_tcgen05_idesc import encode
from layoutsim.ptx.state import Fault, PtxFault
from layoutsim.ptx.tensormap import TensorMapArg
from layoutsim.ptx.tmem import TensorMemory
from layoutsim.smem.umma import UmmaDescriptor

from test_ptx_tcgen05 import HEAD, MMA_OPERANDS, WAIT_SLAB, copy_image, disable_lanes, k_major, mma_entry, read_back

IMG = 16384


def pair_kernel(n_cols, two=False, mask=None, issuer=0):
    mask_op, movs = disable_lanes(mask)
    second = ("  mov.pred %p4, 1;\n  tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd10, %rd11, %r20," + mask_op
              + " %p4;\n") if two else ""
    return mma_entry(n_cols, IMG) + f"""  mov.u32 %r30, %cluster_ctarank;
  shr.u32 %r5, %r3, 5;
  setp.eq.u32 %p1, %r5, 0;
  @%p1 tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r1], 256;
  ld.param.u64 %rd1, [img];
  mul.wide.u32 %rd7, %r30, {IMG};
  add.s64 %rd1, %rd1, %rd7;
{copy_image(IMG)}  mov.u32 %r10, bar;
  setp.eq.u32 %p2, %r3, 0;
  @%p2 mbarrier.init.shared::cta.b64 [%r10], 1;
  tcgen05.fence::before_thread_sync;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  tcgen05.fence::after_thread_sync;
{MMA_OPERANDS}  setp.ne.u32 %p5, %r30, {issuer};
  or.pred %p2, %p2, %p5;
  @%p2 bra WAIT;
  mov.pred %p3, 0;
{movs}  tcgen05.mma.cta_group::2.kind::f16 [%r2], %rd10, %rd11, %r20, %p3;
{second}  mov.u16 %rs1, 3;
  tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r10], %rs1;
{WAIT_SLAB}  mad.lo.u32 %r13, %r30, 128, %r3;
{read_back("%r12", n_cols, "%r13")}  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  @%p1 tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;
  @%p1 tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r2, 256;
  ret;
}}
"""


def _images(A, B):
    """Each CTA's shared image: its half of A at 0, its half of B at 8192 (K-major, no swizzle)."""
    M, K = A.shape
    N = B.shape[0]
    img = np.zeros((2, IMG), np.uint8)
    descs = []
    for x, rows, base in ((A, M // 2, 0), (B, N // 2, 8192)):
        lbo, sbo = 128, 128 * (K * 2 // 16)
        off = k_major(rows, K, 2, lbo, sbo)
        for c in range(2):
            raw = x[c * rows:(c + 1) * rows].view(np.uint16)
            img[c][(base + off)[..., None] + np.arange(2)] = raw.view(np.uint8).reshape(rows, K, 2)
        descs.append(UmmaDescriptor(base, lbo, sbo).encode())
    return img, descs


def _run(M, N, two=False, mask=None, issuer=0, seed=0):
    inst = layoutsim.get(f"tcgen05.mma.cta_group::2.kind::f16.m{M}n{N}k16")
    rng = np.random.default_rng(seed + M + N)
    A = rng.standard_normal((M, 16)).astype(np.float16)
    B = rng.standard_normal((N, 16)).astype(np.float16)
    img, descs = _images(A, B)
    cols = N if M == 256 else N // 2
    out = np.zeros((256, cols), np.uint32)
    idesc = encode("f16", M, N, "f32.f16.f16")
    r = ptx.run(pair_kernel(cols, two, mask, issuer), "k", 2, 128,
                [img.reshape(-1), out, np.uint64(descs[0]), np.uint64(descs[1]), np.uint32(idesc)],
                arch="sm_100", cluster=(2, 1, 1))
    a, b = A.view(np.uint16), np.ascontiguousarray(B.view(np.uint16).T)
    first = layoutsim.mma(inst, a, b, np.zeros((M, N), np.uint32), arch="sm_100a", raw=True, types="f32.f16.f16")
    D = layoutsim.mma(inst, a, b, first, arch="sm_100a", raw=True, types="f32.f16.f16") if two else first
    return r.buffers[1], np.asarray(D, np.uint32), np.asarray(first, np.uint32)


def _cells(M, N):
    """(CTA, lane, column) of D[i][j], written out from the PTX ISA's Layouts A and B (9.7.16.10)."""
    i, j = np.meshgrid(np.arange(M), np.arange(N), indexing="ij")
    if M == 256:
        return i // 128, i % 128, j
    return i // 64, i % 64 + 64 * (j // (N // 2)), j % (N // 2)


@pytest.mark.parametrize("M,N,issuer", [(256, 64, 0), (256, 32, 1), (128, 64, 0)])
def test_pair_mma_reads_both_ctas_shared_memory_and_writes_both_tmems(M, N, issuer):
    got, D, _ = _run(M, N, issuer=issuer)
    cta, lane, col = _cells(M, N)
    assert np.array_equal(got[128 * cta + lane, col], D)


def test_pair_mma_disable_output_lane_has_a_bit_for_each_of_the_pairs_256_lanes():
    mask = (0xF0F0F0F0, 0, 1, 0, 0, 0x80000001, 0, 0xFFFF0000)
    got, D, first = _run(256, 32, two=True, mask=mask)
    cta, lane, col = _cells(256, 32)
    L = 128 * cta + lane
    off = np.array([(mask[x // 32] >> (x % 32)) & 1 for x in range(256)], bool)[L]
    assert off.any() and (~off).any()
    assert np.array_equal(got[L, col], np.where(off, first, D))


def test_pair_alloc_needs_a_cta_pair():
    src = pair_kernel(32)
    img = np.zeros(2 * IMG, np.uint8)
    with pytest.raises(PtxFault, match="CTA pair"):
        ptx.run(src, "k", 1, 128, [img, np.zeros((256, 32), np.uint32), np.uint64(0), np.uint64(0), np.uint32(0)],
                arch="sm_100")


TMA_KERNEL = HEAD + """.visible .entry k(.param .u64 out, .param .u32 mode, .param .align 64 .b8 tmap[128])
{
  .reg .b32 %r<20>; .reg .b64 %rd<10>; .reg .pred %p<8>; .reg .b16 %rs<2>; .reg .f32 %f<2>;
  .shared .align 1024 .b8 sm[1024];
  .shared .align 8 .b64 bar;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, bar;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r3], 1;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  and.b32 %r4, %r2, 1;
  setp.eq.u32 %p2, %r4, 0;
  and.pred %p3, %p1, %p2;
  @%p3 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r3], 2048;
  ld.param.u32 %r5, [mode];
  and.b32 %r6, %r2, -2;
  setp.eq.u32 %p4, %r5, 1;
  @%p4 add.u32 %r6, %r2, 2;
  @%p4 and.b32 %r6, %r6, 3;
  mapa.shared::cluster.u32 %r7, %r3, %r6;
  mov.u32 %r8, sm;
  shl.b32 %r9, %r2, 3;
  mov.u32 %r10, 0;
  setp.eq.u32 %p6, %r5, 2;
  @%p6 bra MULTICAST;
  @%p1 cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes [%r8], [tmap, {%r10, %r9}], [%r7];
  bra ISSUED;
MULTICAST:
  setp.eq.u32 %p7, %r2, 0;
  and.pred %p7, %p7, %p1;
  mov.u16 %rs1, 15;
  @%p7 cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r8], [tmap, {%r10, %r10}], [%r3], %rs1;
ISSUED:
  @!%p2 bra WAITED;
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p5, [%r3], 0;
  @!%p5 bra WAIT;
WAITED:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ld.param.u64 %rd1, [out];
  mad.lo.u32 %r11, %r2, 32, %r1;
  mul.wide.u32 %rd2, %r11, 32;
  add.s64 %rd3, %rd1, %rd2;
  shl.b32 %r12, %r1, 5;
  add.u32 %r13, %r8, %r12;
  ld.shared.v4.b32 {%r14, %r15, %r16, %r17}, [%r13];
  st.global.v4.b32 [%rd3], {%r14, %r15, %r16, %r17};
  ld.shared.v4.b32 {%r14, %r15, %r16, %r17}, [%r13+16];
  st.global.v4.b32 [%rd3+16], {%r14, %r15, %r16, %r17};
  ret;
}
"""


def _tma(mode):
    T = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.zeros((4, 8, 32), np.float32)
    r = ptx.run(TMA_KERNEL, "k", 4, 32, [out, np.uint32(mode), TensorMapArg(T, (32, 32), (32, 8))],
                arch="sm_100", cluster=(4, 1, 1))
    return r.buffers[0], T


def test_tma_cta_group_2_signals_the_pairs_even_cta_named_by_mapa():
    # every CTA loads its own 8 rows; each pair's boxes complete on the even CTA's mbarrier (2 x 1024 bytes)
    got, T = _tma(0)
    assert np.array_equal(got, T.reshape(4, 8, 32))


def test_tma_cta_group_2_multicast_signals_each_targets_pair_cta_on_the_operands_side():
    # rank 0 multicasts rows 0..7 to all 4 CTAs with its own (even) mbarrier: the boxes landing in
    # CTAs 0, 1 signal CTA 0, those in 2, 3 signal CTA 2 (2 x 1024 bytes each)
    got, T = _tma(2)
    assert np.array_equal(got, np.broadcast_to(T[:8], (4, 8, 32)))


def test_tma_cta_group_2_mbarrier_outside_the_pair_is_a_fault():
    with pytest.raises(PtxFault, match="neither the destination CTA nor its peer"):
        _tma(1)


def test_pair_allocation_takes_columns_free_in_both_ctas_and_the_peer_gets_the_same():
    # PTX ISA 9.7.16.5 Table 46: one warp in each CTA of the pair performs the alloc collectively
    tm = TensorMemory(2)
    assert tm.alloc(1, 64, 0) == 0                     # the odd CTA alone holds columns 0..63
    start = tm.alloc_pair(0, 1, 128, 0)                # the first warp of the pair: free in both
    assert start == 128 and tm.owned[0, 128:256].all() and tm.owned[1, 128:256].all()
    assert tm.alloc_pair(1, 0, 128, 1) == start        # the peer's warp: the same columns
    tm.alloc_pair(0, 1, 32, 0)
    with pytest.raises(Fault, match="the peer CTA's warp allocated 32"):
        tm.alloc_pair(1, 0, 64, 1)
