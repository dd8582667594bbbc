"""Thread-block clusters (sm_90): the launch's cluster shape, the cluster special registers, the
order in which CTAs run (a cluster's CTAs always in one batch) and the shared::cluster window
(distributed shared memory).

Sources: PTX ISA 9.0 section 5.1.6 (the .shared state space: the shared::cta window lies inside
the shared::cluster window, and a shared::cta address used as a shared::cluster address names
the executing CTA's own shared memory), 9.7.9.23 (mapa), 10 (special registers %cluster_ctaid,
%cluster_nctaid, %clusterid, %nclusterid, %cluster_ctarank, %cluster_nctarank,
%is_explicit_cluster), 11.7 (the cluster dimension directives .reqnctapercluster, .explicitcluster,
.maxclusterrank); CUDA C++ Programming Guide, "Thread Block Clusters" (a cluster's CTAs are
co-scheduled on one GPC; 8 CTAs is the portable cluster size, 16 with
cudaFuncAttributeNonPortableClusterSizeAllowed on H100/H200) and "Distributed Shared Memory".

Shared addresses (issues 24 and 27; the PTX ISA leaves the encoding open): a 32-bit shared
address is `rank << 24 | offset`, the cluster rank of a CTA in bits 24-31 and the byte offset in its
shared window in bits 0-23, as ptxas 13.0 writes it for sm_90, sm_100a and sm_120a (nvdisasm;
tests/ptx/test_ptx_cluster_addr.py): a shared variable's address is `LEA R, SR_CgaCtaId, 0x400,
0x18` (SR_CgaCtaId is what ptxas reads for %cluster_ctarank), mapa.shared::cluster puts the target
rank into byte 3 (`PRMT Rd, rank, 0x654, a`), getctarank is the address >> 24, and
ld/st/atom.shared::cluster are a generic access of `SR_SWINHI : address`. So a CTA's own shared::cta
addresses are shared::cluster addresses that name it, and an address built by hand reaches the CTA
its rank field names (CuTe's Sm100MmaPeerBitMask clears bit 24 to name the even CTA of a pair).
A shared::cta access (`LDS`, which ptxas gives both `0x400 + ...` and `SR_CgaCtaId << 24 | ...` for
the same bytes) takes the offset of an address whose rank field is the CTA's own rank; any other
rank field is a fault. Rank field 0 in a CTA of another rank, too: `ld.shared` of `buf & 0xFFFFFF`
is an illegal instruction on the GPU in every cluster shape measured (tests/data/clusters/addresses,
word 9, an H100 on 2026-12-07), while a generic access at `cvta.shared(buf & 0xFFFFFF)` reads rank
0's bytes (word 10). A rank field naming no CTA of the cluster is a fault.

A launch runs its CTAs cluster by cluster: the CTAs of one cluster sit next to each other in one
batch, in rank order, so cluster barriers, DSMEM and multicast copies see every CTA of the
cluster (the hardware's co-scheduling guarantee).
"""
import math

import numpy as np

from .. import archs
from ..errors import LayoutsimError
from .state import Fault

RANK_SHIFT = 24                 # ptxas: LEA R, SR_CgaCtaId, offset, 0x18
OFFSET_MASK = (1 << RANK_SHIFT) - 1
PORTABLE = 8                    # CUDA guide: the portable cluster size
MOST = 16                       # H100/H200 with cudaFuncAttributeNonPortableClusterSizeAllowed


class Shape:
    """The cluster shape of a launch: dims (x, y, z), size (CTAs per cluster), explicit (launched
    with a cluster shape, from the launch or the kernel's .reqnctapercluster)."""

    def __init__(self, dims=(1, 1, 1), explicit=False):
        self.dims, self.explicit = tuple(dims), explicit
        self.size = math.prod(self.dims)

    def of_cta(self, cta, grid):
        """(cluster coordinates, CTA-in-cluster coordinates, rank) of linear CTA ids (arrays)."""
        gx, gy, _ = grid
        c = (cta % gx, (cta // gx) % gy, cta // (gx * gy))
        cid = tuple(a // d for a, d in zip(c, self.dims))
        cc = tuple(a % d for a, d in zip(c, self.dims))
        cx, cy, _ = self.dims
        return cid, cc, cc[0] + cc[1] * cx + cc[2] * cx * cy


def shape(fn, cluster, grid, arch, parse_dims):
    """The launch's Shape from the `cluster` argument (None, an int, (x, y, z) or 'X,Y,Z') and the
    kernel's directives, checked: a one-line error for every launch the driver refuses."""
    d = fn.directives
    req = d.get("reqnctapercluster")
    req = tuple(req) + (1,) * (3 - len(req)) if req else None
    given = parse_dims(cluster, "cluster") if cluster is not None else None
    if req is not None and given is not None and given != req:
        raise LayoutsimError(f"cluster {given}: kernel {fn.name} declares .reqnctapercluster {req}; launch it "
                             f"with that cluster shape or none")
    dims = given or req
    if dims is None:
        if "explicitcluster" in d:
            raise LayoutsimError(f"kernel {fn.name} declares .explicitcluster: launch it with a cluster shape "
                                 f"(cluster=(x, y, z) in Python, --cluster X,Y,Z)")
        return Shape()
    if not archs.nvidia_at_least(arch, "sm_90"):
        raise LayoutsimError(f"cluster {dims}: thread-block clusters need sm_90 or newer, not {arch}")
    n = math.prod(dims)
    if n > MOST:
        raise LayoutsimError(f"cluster {dims}: {n} CTAs in a cluster; at most {PORTABLE} (portable) or "
                             f"{MOST} (non-portable, sm_90) are allowed")
    mx = d.get("maxclusterrank")
    if mx and n > mx[0]:
        raise LayoutsimError(f"cluster {dims}: {n} CTAs in a cluster, but kernel {fn.name} declares "
                             f".maxclusterrank {mx[0]}")
    bad = [f"{'xyz'[i]}: {g} % {c} = {g % c}" for i, (g, c) in enumerate(zip(grid, dims)) if g % c]
    if bad:
        raise LayoutsimError(f"cluster {dims}: the grid {tuple(grid)} must be a multiple of the cluster shape "
                             f"in every dimension ({'; '.join(bad)})")
    return Shape(dims, explicit=True)


def size_note(sh):
    """The launch note of a non-portable cluster size (None when portable)."""
    if sh.size > PORTABLE:
        return (f"cluster of {sh.size} CTAs: more than the portable {PORTABLE}; the GPU launches it only "
                f"with cudaFuncAttributeNonPortableClusterSizeAllowed set")
    return None


def registers(sh, cta, grid):
    """The cluster special registers of the batch threads whose linear CTA ids are `cta`."""
    u = np.uint32
    cid, cc, rank = sh.of_cta(cta, grid)
    sp = {"%cluster_ctarank": rank.astype(u), "%cluster_nctarank": u(sh.size),
          "%is_explicit_cluster": np.bool_(sh.explicit)}
    for i, c in enumerate("xyz"):
        sp[f"%clusterid.{c}"] = cid[i].astype(u)
        sp[f"%nclusterid.{c}"] = u(grid[i] // sh.dims[i])
        sp[f"%cluster_ctaid.{c}"] = cc[i].astype(u)
        sp[f"%cluster_nctaid.{c}"] = u(sh.dims[i])
    return sp


def order(sh, grid, ids):
    """The CTA ids to run, cluster by cluster (each cluster whole, its CTAs in rank order): the
    clusters of the CTAs in `ids`."""
    ids = np.asarray(ids, np.int64)
    if sh.size == 1:
        return ids
    gx, gy, _ = grid
    cid, _, _ = sh.of_cta(ids, grid)
    ncx, ncy = gx // sh.dims[0], gy // sh.dims[1]
    clusters = np.unique(cid[0] + cid[1] * ncx + cid[2] * ncx * ncy)
    kx, ky, kz = clusters % ncx, (clusters // ncx) % ncy, clusters // (ncx * ncy)
    r = np.arange(sh.size)
    dx, dy, dz = sh.dims
    x = (kx[:, None] * dx + r % dx)
    y = (ky[:, None] * dy + (r // dx) % dy)
    z = (kz[:, None] * dz + r // (dx * dy))
    return (x + y * gx + z * gx * gy).reshape(-1)


# ---- the shared::cluster window --------------------------------------------------------------------
def encode(rank, off):
    """The shared::cluster address of byte `off` of the CTA of cluster rank `rank` (mapa's result:
    the rank replaces bits 24-31)."""
    return (np.asarray(rank, np.int64) << RANK_SHIFT) | (np.asarray(off, np.int64) & OFFSET_MASK)


def rank_of(bt, threads):
    """The cluster rank of each thread's CTA."""
    return bt.cta_index[threads] % bt.cluster_size


def rank_bits(bt):
    """rank << 24 of every batch thread's CTA, the part of its shared::cta addresses that names it
    (0 without a cluster)."""
    if bt.cluster_size == 1:
        return np.int64(0)
    return (bt.cta_index % bt.cluster_size).astype(np.int64) << RANK_SHIFT


# What cta_offsets makes of a shared::cta address with rank field 0 in a CTA of another rank: past
# every window, so that the access's range check faults; foreign_rank_zero tells it apart.
RANK_ZERO_ELSEWHERE = np.int64(1) << 40


def cta_offsets(bt, addr, threads=None, raw=False):
    """Shared::cta addresses of `threads` (all batch threads: None) with the CTA's own rank field
    dropped; another rank field is kept, so that the range check faults on it. raw: the addresses
    are the instruction's operand values (not offsets already taken), and rank field 0 in a CTA of
    another rank is moved past every window (RANK_ZERO_ELSEWHERE) for the same reason."""
    if bt.cluster_size == 1:
        return addr
    addr = np.asarray(addr, np.int64)
    own = rank_bits(bt) if threads is None else rank_of(bt, threads).astype(np.int64) << RANK_SHIFT
    field = addr & ~np.int64(OFFSET_MASK)
    if not raw:
        return np.where(field == own, addr & OFFSET_MASK, addr)
    return np.where(field == own, addr & OFFSET_MASK,
                    np.where((field == 0) & (own != 0) & (addr >= 0), addr | RANK_ZERO_ELSEWHERE, addr))


def foreign_rank_zero(addr):
    """The shared::cta addresses cta_offsets moved past every window (rank field 0, another CTA)."""
    return (np.asarray(addr, np.int64) & RANK_ZERO_ELSEWHERE) != 0


def resolve(bt, addr, threads, nbytes, what):
    """(batch CTA index, CTA-relative offset, remote flag: another CTA than the thread's) of
    shared::cluster addresses. Faults on a rank field outside the cluster and on an offset outside
    the CTA's shared memory."""
    addr = np.asarray(addr, np.int64)
    rank = addr >> RANK_SHIFT
    off = addr & OFFSET_MASK
    bad = (rank < 0) | (rank >= bt.cluster_size)
    if np.any(bad):
        j = int(np.flatnonzero(bad)[0])
        raise Fault(threads[j], addr[j], f"{what}: address {int(addr[j]):#x} is not in the shared::cluster "
                                         f"window of a cluster of {bt.cluster_size} CTA(s) (its rank field, bit 24 "
                                         f"and up, is {int(rank[j])}): the GPU faults", "out_of_bounds",
                    "shared::cluster")
    bad = off + nbytes > bt.smem_size
    if np.any(bad):
        j = int(np.flatnonzero(bad)[0])
        raise Fault(threads[j], addr[j], f"{what}: address {int(addr[j]):#x} ({nbytes} bytes) is outside the "
                                         f"shared memory of cluster rank {int(rank[j])} ({bt.smem_size} bytes): "
                                         f"the GPU faults", "out_of_bounds", "shared::cluster")
    own = rank_of(bt, threads)
    return bt.cta_index[threads] - own + rank, off, rank != own


def mask_targets(bt, t, mask, what):
    """The batch CTA indices a ctaMask names for issuing thread t (bit i: cluster rank i)."""
    m = int(mask) & 0xFFFF
    ranks = [r for r in range(16) if m >> r & 1]
    if not ranks or max(ranks) >= bt.cluster_size:
        raise Fault(t, 0, f"{what}: ctaMask {m:#06x} names rank(s) outside the cluster of {bt.cluster_size} "
                          f"CTA(s) (undefined behaviour)", "invalid_operand", "shared::cluster")
    base = int(bt.cta_index[t]) - int(rank_of(bt, np.array([t]))[0])
    return [base + r for r in ranks]
