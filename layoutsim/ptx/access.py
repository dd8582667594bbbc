"""Memory accesses of a batch: resolve per-thread addresses in a state space, check them (faults
name the thread and the address), read and write bytes, and hand shared/global accesses to the
cost models.

A thread's access of `nbytes` must be aligned to `nbytes` (PTX ISA 5.4 'Alignment': vector
accesses to the whole vector) and lie inside its memory: one global buffer, the CTA's shared
memory (static + dynamic bytes), the thread's local frame, or a parameter.

.shared::cluster (distributed shared memory, cluster.py): an address, `rank << 24 | offset`, names
a byte of the shared memory of one CTA of the thread's cluster; the located part's space is
"shared::cluster" when it names another CTA, "shared" when it names the thread's own, so observers
tell a DSMEM access from a local one. A generic address in the shared window is a shared::cluster
one (ptxas compiles both to one generic access); a shared::cta access takes the CTA's own rank
field or none (cluster.cta_offsets).
"""
import numpy as np

from . import cluster as CL

from .state import (GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW, Fault, gather,
                    scatter)

SPACES = ("global", "shared", "local", "const", "param")


def space_of(mods):
    """The state space an instruction's modifiers name: "shared::cluster" for that window, the
    space without its sub-qualifier for the others (shared::cta is "shared")."""
    for m in mods:
        if m == "shared::cluster":
            return m
        s = m.split("::")[0]
        if s in SPACES:
            return s
    return "generic"


def _check_align(addr, nbytes, threads, what, space):
    if nbytes == 1:                       # every address is
        return
    # a power of two divides exactly the numbers whose low bits it masks are 0 (negatives too)
    low = addr & (nbytes - 1) if nbytes & (nbytes - 1) == 0 else addr % nbytes
    if np.count_nonzero(low):
        j = int(np.flatnonzero(low)[0])
        raise Fault(threads[j], addr[j], f"address {int(addr[j]):#x} is not {nbytes}-byte aligned, as a "
                                         f"{nbytes}-byte {what} needs: the GPU faults (misaligned address)",
                    "misaligned", space)


def _check_range(addr, nbytes, limit, threads, where, space):
    bad = (addr < 0) | (addr + nbytes > limit)
    if np.count_nonzero(bad):
        j = int(np.flatnonzero(bad)[0])
        raise Fault(threads[j], addr[j], f"address {int(addr[j]):#x} ({nbytes} bytes) is outside {where} "
                                         f"(valid 0..{limit - nbytes:#x}): the GPU faults", "out_of_bounds", space)


def locate(bt, space, addr, threads, nbytes, what, kparam=False):
    """[(space, flat views, flat byte offsets, thread indices, space-relative addresses)] for
    the given threads' addresses (int64), after the checks. Generic addresses are split by
    window."""
    addr = np.asarray(addr, np.int64)
    if space == "shared" and bt.cluster_size == 1 and bt.fast:
        got = _own_shared(bt, addr, threads, nbytes)
        if got is not None:
            return got
    if space == "generic":
        out = []
        win = addr & ~np.int64(WINDOW - 1)
        for sp, base in (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW), ("param", PARAM_WINDOW)):
            sel = win == base
            if np.any(sel):
                rel = addr[sel] - base
                if sp == "shared" and bt.cluster_size > 1:
                    sp = "shared::cluster"           # its rank field names the CTA
                out += locate(bt, sp, rel, threads[sel], nbytes, what, kparam=sp == "param")
        sel = (win != SHARED_WINDOW) & (win != LOCAL_WINDOW) & (win != PARAM_WINDOW)
        if np.any(sel):
            out += locate(bt, "global", addr[sel], threads[sel], nbytes, what)
        return out
    _check_align(addr, nbytes, threads, what, "global" if space == "const" else
                 "kparam" if space == "param" and kparam else space)
    if space in ("global", "const"):
        off = bt.heap.check(addr, nbytes, threads)
        return [("global", bt.heap.v, off, threads, addr)]
    if space == "shared::cluster":
        cta, off, remote = CL.resolve(bt, addr, threads, nbytes, what)
        flat = cta * bt.S + off
        out = []
        for sp, sel in (("shared", ~remote), ("shared::cluster", remote)):
            if np.any(sel):
                out.append((sp, bt.smem_v, flat[sel], threads[sel], off[sel]))
        return out
    if space == "shared":
        addr = CL.cta_offsets(bt, addr, threads)
        bad = np.flatnonzero(CL.foreign_rank_zero(addr))
        if bad.size:
            j = bad[0]
            a = int(addr[j] & ~CL.RANK_ZERO_ELSEWHERE)
            raise Fault(threads[j], a, f"{what}: shared::cta address {a:#x} has rank field 0 in the CTA of cluster "
                        f"rank {int(CL.rank_of(bt, threads[j:j + 1])[0])}: the GPU raises an illegal instruction "
                        f"(a CTA's shared::cta addresses carry its own rank at bit 24)", "invalid_address", "shared")
        _check_range(addr, nbytes, bt.smem_size, threads, f"the CTA's shared memory ({bt.smem_size} bytes" +
                     ("; a shared::cta address carries no rank field but the CTA's own at bit 24)"
                      if bt.cluster_size > 1 else ")"), "shared")
        return [("shared", bt.smem_v, bt.smem_base[threads] + addr, threads, addr)]
    if space == "local":
        _check_range(addr, nbytes, bt.prog.local_size, threads, f"the thread's local memory "
                                                                f"({bt.prog.local_size} bytes)", "local")
        return [("local", bt.local_v, bt.local_base[threads] + addr, threads, addr)]
    if space == "param":
        if kparam:
            lim = len(bt.launch.kparams)
            _check_range(addr, nbytes, lim, threads, f"the kernel parameters ({lim} bytes)", "kparam")
            return [("kparam", bt.launch.kparam_views, addr, threads, addr)]
        _check_range(addr, nbytes, bt.prog.param_size, threads, "the call parameters", "param")
        return [("param", bt.params_v, bt.param_base[threads] + addr, threads, addr)]
    raise ValueError(space)


def _own_shared(bt, addr, threads, nbytes):
    """locate's answer for shared addresses of a CTA outside a cluster that are all aligned and
    inside its shared memory (no rank field then: the checks below pass), in four numpy calls
    instead of a dozen; None when any is not (the general path then words the fault)."""
    if not addr.size or nbytes & (nbytes - 1) or np.count_nonzero(addr & (nbytes - 1)):
        return None
    if int(addr.min()) < 0 or int(addr.max()) + nbytes > bt.smem_size:
        return None
    return [("shared", bt.smem_v, bt.smem_base[threads] + addr, threads, addr)]


def load(bt, parts, nbytes):
    """Bytes [n, nbytes] for the located parts, in the order of the threads given."""
    if len(parts) == 1:
        return gather(parts[0][1], parts[0][2], nbytes)
    n = sum(len(p[3]) for p in parts)
    out = np.zeros((n, nbytes), np.uint8)
    order = np.concatenate([p[3] for p in parts])
    rank = np.argsort(np.argsort(order, kind="stable"), kind="stable")
    i = 0
    for p in parts:
        k = len(p[3])
        out[rank[i:i + k]] = gather(p[1], p[2], nbytes)
        i += k
    return out


def store(bt, parts, data, threads):
    """Write data [n, nbytes] (rows in the order of `threads`) to the located parts."""
    for p in parts:
        if p[0] == "kparam":          # a generic store through the address of a kernel parameter
            raise Fault(p[3][0], int(p[4][0]), "a store to a kernel parameter: kernel "
                                                              "parameters are read-only", "read_only", "kparam")
    if len(parts) == 1:
        scatter(parts[0][1], parts[0][2], data)
        return
    pos = {int(t): i for i, t in enumerate(threads)}
    for p in parts:
        rows = np.fromiter((pos[int(t)] for t in p[3]), np.int64, len(p[3]))
        scatter(p[1], p[2], data[rows])


def to_generic(space, addr):
    if space == "shared":
        return addr + SHARED_WINDOW
    if space == "local":
        return addr + LOCAL_WINDOW
    if space == "kparam":
        return addr + PARAM_WINDOW
    return addr


__all__ = ["locate", "load", "store", "space_of", "GLOBAL_BASE"]
