"""The encoding of shared addresses in a cluster (issues 24 and 27): gpu_check/clusters/cluster_addr.sm_90.ptx
(what each word is, in its header) in the executor, against

  - the SASS ptxas 13.0 writes for it and for the same PTX on sm_100a (nvdisasm): a shared::cta address
    is `SR_CgaCtaId << 24 | offset` (`LEA R0, R3, 0x400, 0x18`; SR_CgaCtaId is also what ptxas reads
    for %cluster_ctarank), mapa.shared::cluster puts the target rank into byte 3 (`PRMT Rd, rank,
    0x654, a`), getctarank is the address >> 24 (`SHF.L.U64.HI Rd, a, 0x8, RZ`), ld.shared::cluster and
    a generic load are one `LD.E [SR_SWINHI : address]`, and ld.shared (::cta) is `LDS` of the
    address as it is, the rank field included or not (ptxas gives LDS both `0x400 + ...` for a
    register address and `SR_CgaCtaId << 24 | 0x400` for a variable);
  - the GPU: `python -m gpu_check.clusters.addresses --out DIR` (tests/data/clusters/addresses/),
    byte for byte (measured on an H100 on 2026-12-07); a word the GPU faulted on (the file's per-case
    "errors": word 9, the ld.shared with the rank field cleared, an illegal instruction in every
    cluster shape) must fault in the executor too, or the test names the model rule the GPU
    contradicts (RULES) and xfails.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as P
from gpu_check.clusters import addresses as A

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "clusters" / "addresses"
BASE = 0x400          # the first static array (archs.user_smem_base): ptxas's `MOV R4, 0x400`


ALL = sum(A.SELS)     # every word
NO9 = ALL & ~(1 << 9)  # every word but 9, which the GPU runs as an illegal instruction in a cluster
# the model's rule each word rests on (layoutsim/ptx/cluster.py and access.py docstrings)
RULES = {7: "cluster.py: an address built by hand, offset | rank << 24, reaches the CTA its rank field names "
            "(ld.shared::cluster is LD.E [SR_SWINHI : address])",
         8: "cluster.py: clearing bit 24 names the even CTA of a pair (CuTe's Sm100MmaPeerBitMask)",
         9: "cluster.py: a shared::cta access (LDS) takes only the CTA's own rank field (rank field 0 in "
            "another CTA faults)",
         10: "access.py: a generic address in the shared window is a shared::cluster one; rank field 0 names rank 0",
         11: "cluster.py: a CTA's own shared::cta address is a shared::cluster address naming it "
             "(LEA R, SR_CgaCtaId, 0x400, 0x18)",
         12: "cluster.py: red.shared::cluster at rank field 0 reaches rank 0's shared memory"}
SAFE_RULE = "the model runs mov/cvta/mapa/getctarank and the cluster special registers without a fault"


def _run(grid, cluster, sel=ALL):
    src = (ROOT / A.PTX).read_text()
    r = P.run(src, A.KERNEL, grid, A.BLOCK, [A.buffer(grid), np.uint32(sel)], arch=A.ARCH, cluster=cluster)
    return r.buffers[0].reshape(-1, A.WORDS)


def _expected(n, ctas):
    """The 16 words of each CTA as ptxas's SASS reads them (module docstring)."""
    rows = []
    for c in range(ctas):
        r = c % n
        nxt = (r + 1) % n
        rows.append([r << 24 | BASE, r << 24 | BASE, r << 24 | BASE, nxt << 24 | BASE, nxt << 24 | BASE, r, nxt,
                     nxt * 1000 + 1, (r & ~1) * 1000 + 2, r * 1000 + 3,
                     4,                    # a generic address with the rank field cleared names rank 0
                     r * 1000 + 5, n * (n + 1) // 2 if r == 0 else 0, r, n, c])
    return np.asarray(rows, np.uint32)


@pytest.mark.parametrize("name,grid,cluster", A.CASES, ids=[c[0] for c in A.CASES])
def test_shared_addresses_carry_the_cluster_rank_at_bit_24(name, grid, cluster):
    got = _run(grid, cluster, NO9 if cluster else ALL)
    n = int(np.prod(cluster)) if cluster else 1
    if cluster == (2, 2, 1):            # CTA (x, y) of a 2x2 cluster has rank x % 2 + 2 * (y % 2)
        ranks = [(c % 4) % 2 + 2 * ((c // 4) % 2) for c in range(8)]
        want = np.stack([_expected(n, 4)[r] for r in ranks])
        want[:, 15] = np.arange(8)
    else:
        want = _expected(n, int(np.prod(grid)))
    if cluster:
        want[:, 9] = 0                  # not run: word 9 alone faults, as on the GPU
        with pytest.raises(P.PtxFault, match=r"rank field 0 in the CTA of cluster rank 1: the GPU raises an illegal"):
            _run(grid, cluster, 1 << 9)
    assert np.array_equal(got, want), np.argwhere(got != want)[:4]


MEASURED = sorted(DATA.glob("addresses.npz"))


@pytest.mark.skipif(not MEASURED, reason="tests/data/clusters/addresses/ is not measured yet: run `python -m "
                                         "gpu_check.clusters.addresses --out DIR` on the GPU and commit DIR's files")
@pytest.mark.parametrize("name,grid,cluster", A.CASES, ids=[c[0] for c in A.CASES])
def test_replay_equals_the_gpu(name, grid, cluster):
    arrays = np.load(DATA / "addresses.npz")
    meta = {m["name"]: m for m in json.loads((DATA / "addresses.json").read_text())["cases"]}
    errors = {int(w): e for w, e in meta[name].get("errors", {}).items()}
    ran = [w for w in range(A.WORDS) if w not in errors]
    gpu = arrays[name].reshape(-1, A.WORDS)
    sel = sum(s for s in A.SELS if not set(A.words_of(s)) & set(errors))
    if ran:
        got = _run(grid, cluster, sel)
        assert got.dtype == gpu.dtype == np.uint32 and np.array_equal(got[:, ran], gpu[:, ran]), \
            (name, np.argwhere(got[:, ran] != gpu[:, ran])[:4])
    contradicted = []
    for s in A.SELS:
        faulted = [w for w in A.words_of(s) if w in errors and not errors[w].startswith("not run")]
        if not faulted:
            continue
        try:
            _run(grid, cluster, s)
        except P.PtxFault:
            continue
        rule = SAFE_RULE if s == 0 else RULES[faulted[0]]
        contradicted.append(f"word(s) {faulted}: the GPU gave {errors[faulted[0]]!r}; the model does not fault, by {rule}")
    if contradicted:
        pytest.xfail("; ".join(contradicted))


HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
BULK = HEAD + """
.visible .entry k(.param .u64 out, .param .u64 src)
{
  .reg .pred %p<3>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<12>;
  .shared .align 16 .b32 buf[4];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [src];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, %ctaid.x;
  setp.eq.u32 %p1, %r1, 0;
  mov.u32 %r4, bar;
  @%p1 mbarrier.init.shared::cta.b64 [%r4], 1;
  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [%r4], 16;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  xor.b32 %r5, %r2, 1;
  mov.u32 %r6, buf;
  and.b32 %r12, %r6, 16777215;
  shl.b32 %r13, %r5, 24;
  or.b32 %r7, %r12, %r13;
  mapa.shared::cluster.u32 %r8, %r4, %r5;
  mul.wide.u32 %rd4, %r3, 16;
  add.u64 %rd5, %rd2, %rd4;
  @%p1 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r7], [%rd5], 16, [%r8];
WAIT:
  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r4], 0;
  @!%p2 bra WAIT;
  shl.b32 %r9, %r1, 2;
  add.u32 %r10, %r6, %r9;
  ld.shared.u32 %r11, [%r10];
  mul.wide.u32 %rd6, %r3, 16;
  add.u64 %rd7, %rd1, %rd6;
  mul.wide.u32 %rd8, %r1, 4;
  add.u64 %rd9, %rd7, %rd8;
  st.global.u32 [%rd9], %r11;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;
}
"""


def test_a_bulk_copy_and_its_mbarrier_reach_the_peer_the_rank_field_names():
    # each CTA copies its 16 bytes into the pair's other CTA: the destination built by hand (rank field
    # replaced), the mbarrier by mapa; PTX ISA 9.7.9.25.4.1: the mbarrier lies in the destination's CTA
    src = np.arange(16, dtype=np.uint32) + 100
    r = P.run(BULK, "k", 4, 4, [np.zeros(16, np.uint32), src], arch="sm_90", cluster=2)
    assert np.array_equal(r.buffers[0].reshape(4, 4), src.reshape(4, 4)[[1, 0, 3, 2]])


def _one(body, cluster=2):
    src = HEAD + (".visible .entry k(.param .u64 out)\n{\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n"
                  "  .shared .align 8 .b32 buf[4];\n  mov.u32 %r1, buf;\n" + body + "\n  ret;\n}\n")
    return P.run(src, "k", cluster, 32, [np.zeros(4, np.uint32)], arch="sm_90", cluster=cluster)


def test_a_rank_field_outside_the_cluster_is_a_fault():
    with pytest.raises(P.PtxFault, match=r"not in the shared::cluster window of a cluster of 2 CTA\(s\) "
                                          r"\(its rank field, bit 24 and up, is 2\)"):
        _one("  or.b32 %r2, %r1, 33554432;\n  ld.shared::cluster.u32 %r3, [%r2];")


def test_a_shared_cta_access_takes_only_its_own_rank_field():
    # rank 0 reads through its address with rank field 1: outside its shared::cta window (rank 1's memory)
    with pytest.raises(P.PtxFault, match=r"outside the CTA.s shared memory .*the CTA.s own at bit 24"):
        _one("  or.b32 %r2, %r1, 16777216;\n  ld.shared.u32 %r3, [%r2];")
    # rank field 0 in rank 1's CTA: an illegal instruction on the GPU (tests/data/clusters/addresses, word 9)
    with pytest.raises(P.PtxFault, match=r"rank field 0 in the CTA of cluster rank 1: the GPU raises an illegal"):
        _one("  and.b32 %r2, %r1, 16777215;\n  ld.shared.u32 %r3, [%r2];")
    _one("  and.b32 %r2, %r1, 16777215;\n  ld.shared.u32 %r3, [%r2];", cluster=1)    # no cluster: no rank field


ARRIVE = HEAD + """
.visible .entry k(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<6>;
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %cluster_ctarank;
  mov.u32 %r3, %cluster_nctarank;
  mov.u32 %r4, bar;
  setp.eq.u32 %p1, %r1, 0;
  setp.eq.u32 %p2, %r2, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r4], %r3;
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  and.b32 %r5, %r4, 16777215;
  @%p1 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r5];
  @!%p2 bra DONE;
WAIT:
  mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %p1, [%r4], 0;
  @!%p1 bra WAIT;
  st.global.u32 [%rd1], %r3;
DONE:
  barrier.cluster.arrive.aligned;
  barrier.cluster.wait.aligned;
  ret;
}
"""


def test_mbarrier_arrivals_through_a_cleared_rank_field_reach_rank_0():
    # every CTA's thread 0 arrives on `bar & 0xFFFFFF` (rank field 0); rank 0's phase completes only if
    # all n arrivals land on its barrier (a rank-1 arrival on its own uninitialised one would fault)
    r = P.run(ARRIVE, "k", 4, 32, [np.zeros(1, np.uint32)], arch="sm_90", cluster=4)
    assert r.buffers[0][0] == 4


def test_the_measure_script_writes_what_the_replay_reads(tmp_path, monkeypatch):
    # addresses.main with the executor standing in for the GPU's child processes (pycuda absent here),
    # one launch faulting as on the H100: the child stops there, a new one runs the launches left,
    # and the files it writes are the ones test_replay_equals_the_gpu reads
    shapes = {name: (grid, cluster) for name, grid, cluster in A.CASES}
    children = []

    def spawn(jobs, timeout):
        children.append(jobs)
        recs = [{"device": "executor", "driver": 0}]
        for job in jobs:
            name, sel = job.split(":")
            if job == "pair_2:128":
                return recs + [{"job": job, "error": "LaunchError: cuCtxSynchronize failed: an illegal instruction"}], None
            try:
                recs.append({"job": job, "values": [int(v) for v in _run(*shapes[name], int(sel)).reshape(-1)]})
            except P.PtxFault:              # word 9 in a cluster, as on the GPU: this child is done
                return recs + [{"job": job, "error": "LaunchError: an illegal instruction"}], None
        return recs, None

    monkeypatch.setattr(A, "spawn", spawn)
    A.main(["--out", str(tmp_path)])
    assert len(children) == 6 and children[1][0] == "pair_2:256" and children[2][0] == "pair_2:1024"
    arrays = np.load(tmp_path / "addresses.npz")
    meta = json.loads((tmp_path / "addresses.json").read_text())
    assert meta["device"] == "executor"
    assert [m["name"] for m in meta["cases"]] == [c[0] for c in A.CASES]
    assert meta["cases"][0]["errors"] == {"7": "LaunchError: cuCtxSynchronize failed: an illegal instruction",
                                          "9": "LaunchError: an illegal instruction"}
    assert [sorted(m["errors"]) for m in meta["cases"][1:]] == [["9"], ["9"], ["9"], []]
    for name, grid, cluster in A.CASES:
        assert arrays[name].dtype == np.uint32 and arrays[name].shape == (int(np.prod(grid)) * A.WORDS,)
        want = _run(grid, cluster, NO9 if cluster else ALL).reshape(-1, A.WORDS)
        if name == "pair_2":
            want[:, 7] = 0
        assert np.array_equal(arrays[name].reshape(-1, A.WORDS), want), name
