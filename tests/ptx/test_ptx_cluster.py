"""Thread-block clusters in the executor (layoutsim/ptx/cluster.py, ops_cluster.py): the launch shape,
the cluster special registers, barrier.cluster, mapa/getctarank, ld/st/atom/red on .shared::cluster,
remote mbarrier arrivals and multicast TMA, on the probe kernels of kernels/cluster.cu
(gpu_check/clusters/cases.py launches them; the H200's buffers are test_ptx_cluster_replay.py's).

Expected values come from the PTX ISA 9.0: section 10 (%cluster_ctaid = %ctaid mod the cluster
shape, %clusterid = %ctaid / the shape, %cluster_ctarank = x + y*nx + z*nx*ny, %nclusterid = the
grid / the shape, %is_explicit_cluster), 9.7.9.23 (mapa: the same offset in CTA `rank`),
9.7.13.3 (barrier.cluster), 9.7.13.15 (mbarrier on .shared::cluster), 9.7.9.25 (cp.async.bulk.tensor: the
multicast copy lands at the same CTA-relative offset in every CTA of ctaMask), and 11.7 (the
cluster directives); CUDA C++ Programming Guide, Thread Block Clusters (8 CTAs portable, 16
non-portable).
"""
import numpy as np
import pytest
from ptx_kernels import ptx

import layoutsim.ptx as P
from gpu_check.clusters import cases as C
from layoutsim.errors import LayoutsimError

SRC = ptx("cluster", C.ARCH)
CASES = {c["name"]: c for c in C.cases()}


def run(name, **kw):
    c = CASES[name]
    return P.run(SRC, c["kernel"], c["grid"], c["block"], C.executor_args(c), cluster=c["cluster"], **kw)


def expected_regs(grid, cl):
    """Rows of cluster_regs' 16 words per CTA from the ISA's definitions."""
    explicit = cl is not None
    cl = cl or (1, 1, 1)
    rows = []
    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                c = (x, y, z)
                cc = [a % d for a, d in zip(c, cl)]
                rows.append(cc + list(cl) + [a // d for a, d in zip(c, cl)] + [g // d for g, d in zip(grid, cl)]
                            + [cc[0] + cc[1] * cl[0] + cc[2] * cl[0] * cl[1], int(np.prod(cl)), int(explicit),
                               x + grid[0] * (y + grid[1] * z)])
    return np.array(rows, np.uint32)


@pytest.mark.parametrize("name", ["regs_2x2", "regs_none", "regs_1x2x2", "regs_8"])
def test_cluster_registers(name):
    c = CASES[name]
    got = run(name).buffers[0].reshape(-1, 32, 16)
    assert (got == got[:, :1]).all()                     # the same in every thread of a CTA
    assert np.array_equal(got[:, 0], expected_regs(c["grid"], c["cluster"]))


def test_dsmem_through_generic_addresses():
    """cluster.map_shared_rank (mapa.u64 on generic addresses), plain ld and atom through them."""
    r = run("ring_4")
    out, sums = r.buffers
    for b in range(8):
        rank = b % 4
        t = np.arange(128)
        assert np.array_equal(out[b * 128:(b + 1) * 128], ((rank + 1) % 4) * 1000 + ((t + 5) % 128) * 3)
    per = out.reshape(2, 4 * 128).sum(1)
    assert np.array_equal(sums, [per[0], 0, 0, 0, per[1], 0, 0, 0])
    assert any("distributed shared memory" in n for n in r.notes)
    rows = {i.cuda[1]: i for i in r.instructions if i.note and "distributed shared memory" in i.note}
    assert rows[48].wavefronts is None          # peer[...]: every access in another CTA, not costed as banks
    # atomicAdd(root, v): root names rank 0, so rank 0's own atomics are local shared accesses (the
    # address is rank 0's own shared::cta address, cluster.py) and only theirs are costed
    assert rows[49].wavefronts is not None


@pytest.mark.parametrize("name,n", [("explicit_4", 4), ("explicit_8", 8), ("explicit_2", 2)])
def test_shared_cluster_forms(name, n):
    """mapa.shared::cluster, st/ld/atom/red.shared::cluster, getctarank, split arrive/wait."""
    out = run(name).buffers[0].reshape(-1, 64, 5)
    t = np.arange(64)
    for b in range(out.shape[0]):
        rank = b % n
        assert np.array_equal(out[b, :, 0], ((rank - 1) % n) * 100 + t)           # what rank-1 stored
        assert np.array_equal(out[b, :, 1], rank * 100 + t)                       # read back remotely
        assert (out[b, :, 2] == (rank + 1) % n).all()                              # getctarank
        mine = t[t % n == rank]
        assert (out[b, :, 3] == n * (mine + 1).sum()).all()                       # atomics of n CTAs
        assert np.array_equal(out[b, :, 4], rank * 7 + t)


@pytest.mark.parametrize("name,n", [("mbarrier_2", 2), ("mbarrier_4", 4)])
def test_remote_mbarrier_arrive(name, n):
    out = run(name).buffers[0]
    want = sum(r * 10 + w + 1 for r in range(n) for w in range(4))
    assert (out == want).all()


@pytest.mark.parametrize("name,n", [("multicast_2", 2), ("multicast_4", 4)])
def test_multicast_tma(name, n):
    """Each CTA issues one row block with ctaMask = every rank: every CTA holds the whole tile."""
    c = CASES[name]
    t = c["args"][0]["tensor"]
    out = run(name).buffers[1].reshape(-1, C.MC_ROWS, C.MC_COLS)
    for b in range(out.shape[0]):
        assert np.array_equal(out[b], t[b // n * C.MC_ROWS:(b // n + 1) * C.MC_ROWS])


@pytest.mark.parametrize("name,n", [("bulk_s2s_2", 2), ("bulk_s2s_4", 4)])
def test_shared_to_shared_bulk_copy(name, n):
    """cp.async.bulk.shared::cluster.shared::cta (PTX ISA 9.7.9.25.4.1): each CTA receives rank-1's
    512-byte block and bytes 64..111 of rank-2's (its own in a cluster of two) at byte 528, the rest
    as its threads filled it; the waits end only because both copies completed on its mbarrier."""
    out = run(name).buffers[0].reshape(-1, 160)

    def block(cta):
        return ((cta << 16) ^ (np.arange(128, dtype=np.uint64) * 2654435761 % 2**32)).astype(np.uint32)
    for b in range(out.shape[0]):
        rank, first = b % n, b - b % n
        want = np.full(160, 0xDEADBEEF, np.uint32)
        want[:128] = block(first + (rank - 1) % n)
        want[132:144] = block(first + (rank - 2) % n)[16:28]
        assert np.array_equal(out[b], want)


@pytest.mark.parametrize("size,match", [(8, "and size 8 must be positive multiples of 16 bytes"),
                                        (64, r"shared 0x410 \+ 64 bytes is outside the CTA's shared memory \(1064 bytes\)")])
def test_shared_to_shared_bulk_copy_checks_its_operands(size, match):
    """Both CTAs copy their s into rank 1's s + 16: a size not a multiple of 16 bytes, or 64
    bytes from 0x410 (s is at 0x400, after sm_90's reserved KiB) past the 1064 bytes of shared
    memory a CTA has here."""
    text = kernel(".shared .align 16 .b8 s[32]; .shared .align 8 .b64 bar;\n"
                  "mov.u32 %r0, s; mapa.shared::cluster.u32 %r2, %r0, 1; mov.u32 %r3, bar;\n"
                  "mapa.shared::cluster.u32 %r3, %r3, 1; mbarrier.init.shared::cta.b64 [bar], 1;\n"
                  "barrier.cluster.arrive; barrier.cluster.wait;\n"
                  f"add.u32 %r2, %r2, 16; cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes "
                  f"[%r2], [%r0], {size}, [%r3];")
    with pytest.raises(P.PtxFault, match=match):
        P.run(text, "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2)


def test_shared_to_shared_bulk_copy_needs_the_mbarrier_in_the_destination():
    """Here the mbarrier named is rank 0's, the destination rank 1's."""
    text = kernel(".shared .align 16 .b8 s[32]; .shared .align 8 .b64 bar;\n"
                  "mov.u32 %r0, s; mapa.shared::cluster.u32 %r2, %r0, 1; mov.u32 %r3, bar;\n"
                  "mapa.shared::cluster.u32 %r3, %r3, 0; mbarrier.init.shared::cta.b64 [bar], 1;\n"
                  "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r2], [%r0], 16, [%r3];")
    with pytest.raises(LayoutsimError, match="not in the CTA of the destination"):
        P.run(text, "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2)


def test_reqnctapercluster_directive():
    """__cluster_dims__(2,2,1): .reqnctapercluster 2,2,1 gives the shape; the launch is explicit."""
    assert ".reqnctapercluster" in SRC
    out = run("fixed_2x2").buffers[0].reshape(2, 4)
    rank = np.array([[0, 1, 0, 1], [2, 3, 2, 3]])
    assert np.array_equal(out, ((rank + 3) % 4) * 11 + (2 << 8) + (2 << 12) + (1 << 20))
    with pytest.raises(LayoutsimError, match="reqnctapercluster"):
        P.run(SRC, "fixed_cluster", (4, 2), 32, [np.zeros(8, np.uint32)], cluster=(4, 1, 1))


@pytest.mark.parametrize("grid,cl,match", [
    (4, (3, 1, 1), "multiple of the cluster shape"),
    (32, (32, 1, 1), "at most 8 .portable. or 16"),
    ((2, 2, 1), (1, 1, 0), "at least 1"),
])
def test_cluster_shape_errors(grid, cl, match):
    with pytest.raises(LayoutsimError, match=match):
        P.run(SRC, "cluster_regs", grid, 32, [np.zeros(32 * 32 * 16, np.uint32)], cluster=cl)


def test_non_portable_size_and_arch():
    r = P.run(SRC, "cluster_regs", 16, 32, [np.zeros(16 * 32 * 16, np.uint32)], cluster=16)
    assert any("non-portable" in n.lower() or "NonPortable" in n for n in r.notes)
    with pytest.raises(LayoutsimError, match="sm_90"):
        P.run(SRC.replace("sm_90a", "sm_80"), "cluster_regs", 2, 32, [np.zeros(2 * 32 * 16, np.uint32)],
              arch="sm_80", cluster=2)


HEAD = ".version 8.0\n.target sm_90a\n.address_size 64\n"


def test_explicitcluster_and_maxclusterrank():
    src = HEAD + ".visible .entry k(.param .u64 p) .explicitcluster .maxclusterrank 4\n{ ret; }\n"
    with pytest.raises(LayoutsimError, match="explicitcluster"):
        P.run(src, "k", 4, 32, [np.zeros(4, np.uint32)])
    with pytest.raises(LayoutsimError, match="maxclusterrank 4"):
        P.run(src, "k", 8, 32, [np.zeros(4, np.uint32)], cluster=8)
    assert P.run(src, "k", 8, 32, [np.zeros(4, np.uint32)], cluster=4).buffers[0].sum() == 0


def test_sample_runs_whole_clusters():
    r = run("ring_2", ctas=[3])
    assert r.sampled["ctas"] == [(2, 0, 0), (3, 0, 0)]
    out = r.buffers[0]
    assert np.array_equal(out[3 * 128:3 * 128 + 4], 0 * 1000 + ((np.arange(4) + 5) % 128) * 3)


BODY = """
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<4>; .reg .b64 %rd<3>; .reg .pred %p<2>;
  mov.u32 %r1, %cluster_ctarank;
  {body}
  ret;
}}
"""


def kernel(body):
    return HEAD + BODY.format(body=body)


def test_exited_threads_release_the_cluster_barrier():
    """9.7.12.7: threads that exit no longer hold barrier.cluster up."""
    src = kernel("""setp.ne.u32 %p1, %r1, 0;
  @%p1 exit;
  barrier.cluster.arrive; barrier.cluster.wait;
  ld.param.u64 %rd1, [p]; st.global.u32 [%rd1], 7;""")
    assert P.run(src, "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2).buffers[0][0] == 7


def test_cluster_barrier_misuse_faults():
    with pytest.raises(P.PtxFault, match="no barrier.cluster.arrive"):
        P.run(kernel("barrier.cluster.wait;"), "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2)
    with pytest.raises(P.PtxFault, match="arrives again"):
        P.run(kernel("barrier.cluster.arrive; barrier.cluster.arrive;"), "k", 2, 32, [np.zeros(1, np.uint32)],
              cluster=2)


def test_cluster_barrier_deadlock():
    """Rank 1 never arrives and never exits (it spins on a barrier.cluster.wait of a later phase)."""
    src = kernel("""setp.ne.u32 %p1, %r1, 0;
  @%p1 bra SKIP;
  barrier.cluster.arrive; barrier.cluster.wait;
  SKIP:
  @%p1 bar.sync 0;
  @%p1 barrier.cluster.wait;""")
    with pytest.raises(P.PtxFault) as e:
        P.run(src, "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2)
    assert "deadlock" in str(e.value) or "no barrier.cluster.arrive" in str(e.value)


def test_mapa_rank_outside_the_cluster_faults():
    src = kernel(""".shared .b32 s;
  mov.u32 %r2, s; mapa.shared::cluster.u32 %r3, %r2, 2;""")
    with pytest.raises(P.PtxFault, match="rank 2 is outside the cluster of 2"):
        P.run(src, "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2)


def test_shared_cta_access_of_a_cluster_address_faults():
    """A mapa'd (shared::cluster) address used by ld.shared::cta lies outside the CTA's window."""
    src = kernel(""".shared .b32 s;
  mov.u32 %r2, s; mapa.shared::cluster.u32 %r3, %r2, 1; ld.shared.u32 %r2, [%r3];""")
    with pytest.raises(P.PtxFault, match="outside"):
        P.run(src, "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2)


def test_racecheck_says_dsmem_is_not_seen():
    r = run("ring_2", racecheck=True)
    assert any("racecheck does not see distributed shared memory" in n for n in r.notes)


@pytest.mark.parametrize("name,n", [("async_store_2", 2), ("async_store_4", 4)])
def test_async_remote_stores(name, n):
    """st.async (.b32, .v2.b32) and red.async.add.u32 into rank+1's shared memory (PTX ISA 9.7.9.12,
    9.7.13.6): the words land, and their 16 bytes per thread complete that CTA's mbarrier phase
    (word 3: the bounded wait saw it complete)."""
    out = run(name).buffers[0].reshape(-1, 64, 5)
    t = np.arange(64, dtype=np.uint32)
    for b in range(out.shape[0]):
        rank = b % n
        src = np.uint32((rank - 1) % n)
        assert np.array_equal(out[b, :, 0], src * 100 + t)
        assert np.array_equal(out[b, :, 1], src * 7 + (63 - t))
        assert np.array_equal(out[b, :, 2], ~(src * 9 + (63 - t)))
        assert (out[b, :, 3] == 1).all()
        assert (out[b, :, 4] == 1000 * rank + 64 * 65 // 2).all()


@pytest.mark.parametrize("text", ["st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r2], %r1, [%r3];",
                                  "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 "
                                  "[%r2], %r1, [%r3];"])
def test_async_remote_store_needs_the_mbarrier_in_the_destination(text):
    """rank 0's mbarrier, rank 1's word: a fault."""
    src = kernel(".shared .align 8 .b64 bar; .shared .align 4 .b32 w;\n"
                 "mov.u32 %r0, bar; mbarrier.init.shared::cta.b64 [bar], 1; barrier.cluster.arrive; barrier.cluster.wait;\n"
                 "mov.u32 %r2, w; mapa.shared::cluster.u32 %r2, %r2, 1; mapa.shared::cluster.u32 %r3, %r0, 0;\n" + text)
    with pytest.raises(P.PtxFault, match="not in the CTA of the destination"):
        P.run(src, "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2)


def test_async_store_outside_shared_cluster_is_refused():
    with pytest.raises(LayoutsimError, match="needs .shared::cluster"):
        P.run(kernel("st.async.shared::cta.u32 [%r2], %r1, [%r3];"), "k", 2, 32, [np.zeros(1, np.uint32)], cluster=2)
