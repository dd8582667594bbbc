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

The model's shared::cluster address of byte `off` of the CTA of rank r is
CLUSTER_BIT | r << RANK_SHIFT | off (mapa's result; its generic form adds the shared window). The
encoding is this model's choice and, like the hardware's, opaque to a correct kernel; an address
without CLUSTER_BIT is a shared::cta address and names the executing CTA's own memory.

A launch runs its CTAs cluster by cluster: the CTAs of one cluster sit next to each other in one
batch, in rank order, so cluster barriers, DSMEM and multicast copies see every CTA of the
cluster (the hardware's co-scheduling guarantee).
"""
import math

import numpy as np

from .. import archs
from ..errors import LayoutsimError
from .state import Fault

CLUSTER_BIT = 1 << 31
RANK_SHIFT = 24
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
    """The shared::cluster address of byte `off` of the CTA of cluster rank `rank`."""
    return np.int64(CLUSTER_BIT) | (np.asarray(rank, np.int64) << RANK_SHIFT) | (np.asarray(off, np.int64)
                                                                                 & OFFSET_MASK)


def rank_of(bt, threads):
    """The cluster rank of each thread's CTA."""
    return bt.cta_index[threads] % bt.cluster_size


def resolve(bt, addr, threads, nbytes, what):
    """(batch CTA index, CTA-relative offset, remote flag) of shared::cluster addresses; a
    shared::cta address (no CLUSTER_BIT) names the thread's own CTA. Faults on a rank outside the
    cluster and on an offset outside the CTA's shared memory."""
    addr = np.asarray(addr, np.int64)
    cl = (addr & CLUSTER_BIT) != 0
    rank = np.where(cl, (addr >> RANK_SHIFT) & 0x7F, rank_of(bt, threads))
    off = np.where(cl, addr & OFFSET_MASK, addr)
    bad = (addr >> 32 != 0) | (cl & (((addr >> RANK_SHIFT) & 0x7F) >= bt.cluster_size))
    if np.any(bad):
        j = int(np.flatnonzero(bad)[0])
        raise Fault(threads[j], addr[j], f"{what}: address {int(addr[j]):#x} is not in the shared::cluster "
                                         f"window of a cluster of {bt.cluster_size} CTA(s): the GPU faults",
                    "out_of_bounds", "shared::cluster")
    bad = (off < 0) | (off + nbytes > bt.smem_size)
    if np.any(bad):
        j = int(np.flatnonzero(bad)[0])
        raise Fault(threads[j], addr[j], f"{what}: address {int(addr[j]):#x} ({nbytes} bytes) is outside the "
                                         f"shared memory of cluster rank {int(rank[j])} ({bt.smem_size} bytes): "
                                         f"the GPU faults", "out_of_bounds", "shared::cluster")
    base = bt.cta_index[threads] - rank_of(bt, threads)
    return base + rank, off, cl


def mask_targets(bt, t, mask, what):
    """The batch CTA indices a ctaMask names for issuing thread t (bit i: cluster rank i)."""
    m = int(mask) & 0xFFFF
    ranks = [r for r in range(16) if m >> r & 1]
    if not ranks or max(ranks) >= bt.cluster_size:
        raise Fault(t, 0, f"{what}: ctaMask {m:#06x} names rank(s) outside the cluster of {bt.cluster_size} "
                          f"CTA(s) (undefined behaviour)", "invalid_operand", "shared::cluster")
    base = int(bt.cta_index[t]) - int(rank_of(bt, np.array([t]))[0])
    return [base + r for r in ranks]
