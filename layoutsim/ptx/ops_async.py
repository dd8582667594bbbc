"""Hopper's asynchronous copies and their barriers: mbarrier (init, arrive, expect_tx, complete_tx,
test_wait / try_wait, inval, pending_count), cp.async.bulk.tensor (TMA, tile mode, 1-5D, both
directions), cp.async.bulk (non-tensor), their commit/wait groups, and setmaxnreg. PTX ISA 9.0,
9.7.9.25 (cp.async.bulk*), 9.7.13.15 (mbarrie The TMA reductions
(cp.reduce.async.bulk*) are ops_reduce.py's, on this module's box and copy-step helpers.

A copy is executed when its thread issues it, and the bytes it brings are credited to its
mbarrier at once (complete_tx): the data is there as soon as a waiter can see the phase
complete, which is a valid schedule of the hardware's. Shared-memory placement and the rules on
coordinates are layoutsim.smem's (measured on the H200); the tensor's global side and the map
itself are tensormap.py's. The TMA unit, not the LSU, moves these bytes, so they add nothing to
the shared ld/st wavefront totals (Nsight Compute's op_ld/op_st) and nothing to the global
requests.

Clusters (cluster.py): an mbarrier operand in .shared::cluster may be another CTA's (a remote
arrive, PTX ISA 9.7.13.15); a TMA load's .shared::cluster destination may be another CTA's
shared memory, its mbarrier then in that CTA; with .multicast::cluster the box
lands at the same CTA-relative offset in every CTA the 16-bit ctaMask names (bit i: rank i; 9.7.9.25), and
each of them gets the transaction bytes on its mbarrier at the mbarrier operand's CTA-relative
offset. The shared-to-shared bulk copy (.shared::cluster.shared::cta) writes into any CTA of the
cluster and completes on the destination CTA's mbarrier. A
.cta_group::2 load (sm_100a) may signal the mbarrier of the destination's peer CTA (_signalled).

Tensor maps built by the kernel (issue 25, Triton's tl.make_tensor_descriptor): tensormap.replace
sets one field of a 128-byte map object in shared or global memory (tensormap.py's encoding),
tensormap.cp_fenceproxy copies one from shared to global memory; neither is an LSU access (the
tensormap proxy), so neither adds shared or global ld/st counts.

test_wait and try_wait are the scheduler's yield points (scheduler.py, step kind "mbwait"): a
thread whose phase has not completed parks there until some mbarrier changes, so the warps that
will arrive run; a kernel whose every warp waits on phases nobody completes is a deadlock.
"""
from functools import lru_cache

import numpy as np

from .. import smem
from . import cluster as CL
from . import tensormap as TM
from . import types as T
from .access import load as load_parts
from .access import locate, space_of
from .access import store as store_parts
from .builders import need, unsupported
from .collective import check_warps
from .events import Access
from .mbarrier_operand import barrier_address, batch_mbarriers, in_destination
from .ops_mem import async_groups
from .state import PARAM_WINDOW, Fault

TMA_ALIGN = smem.tma.DST_ALIGN         # the box's shared address (dst of a load, src of a store)
LANDINGS_KEPT = 32                     # _landing: boxes x destinations kept (a box is at most 228 KiB)
BULK_ALIGN = 16                        # cp.async.bulk: addresses and size multiples of 16 bytes
TMA_NOTE = ("cp.async.bulk (TMA) moves shared memory outside the LSU: no shared ld/st wavefronts "
            "are counted for it")


def _vals(read, bt, thr, dtype=np.int64):
    v = np.asarray(read(bt))
    return (v[thr] if v.ndim else np.full(len(thr), v)).astype(dtype)


def _on_barrier(at, bt, g):
    """(threads executing, flat offsets, shared addresses, the batch's MBarriers), or None."""
    thr = np.flatnonzero(g)
    if len(thr) == 0:
        return None
    flat, rel = at(bt, thr)
    return thr, flat, rel, batch_mbarriers(bt)


# ---- mbarrier ------------------------------------------------------------------------------------
def _mbarrier(ins, b, prog):
    op = ins.mods[0] if ins.mods else ""
    o = ins.operands
    if op == "pending_count":
        need(ins, 2)
        w = b.write(o[0], T.get("u32"), ins)
        st = b.read(o[1], T.get("b64"), ins)
        return {"fn": lambda bt, g, full: w(bt, (np.asarray(st(bt)) >> np.uint64(32)).astype(np.uint32), g, full)}
    if op in ("init", "inval", "expect_tx", "complete_tx"):
        need(ins, 1 if op == "inval" else 2)
        at = barrier_address(b, ins, o[0])
        n = b.read(o[1], T.get("u32"), ins) if op != "inval" else None

        def fn(bt, g, full):
            on = _on_barrier(at, bt, g)
            if on is None:
                return
            thr, flat, rel, mb = on
            if op == "init":
                mb.init(flat, rel, _vals(n, bt, thr), thr)
            elif op == "inval":
                mb.inval(flat, rel, thr)
            else:
                s = mb.slots(flat, rel, thr, ins.name)
                (mb.expect_tx if op == "expect_tx" else mb.complete_tx)(s, _vals(n, bt, thr), thr, rel)
        return {"fn": fn}
    if op in ("arrive", "arrive_drop"):
        return _arrive(ins, b, op)
    if op in ("test_wait", "try_wait"):
        return _wait(ins, b)
    raise unsupported(ins)


def _arrive(ins, b, op):
    o = ins.operands
    need(ins, 2)
    expect = "expect_tx" in ins.mods
    no_complete = "noComplete" in ins.mods
    w = b.write(o[0], T.get("b64"), ins)
    at = barrier_address(b, ins, o[1])
    third = b.read(o[2], T.get("u32"), ins) if len(o) > 2 else None
    if no_complete and third is None:
        raise unsupported(ins, ".noComplete needs a count")

    def fn(bt, g, full):
        on = _on_barrier(at, bt, g)
        if on is None:
            return
        thr, flat, rel, mb = on
        s = mb.slots(flat, rel, thr, ins.name)
        count = np.ones(len(thr), np.int64)
        if expect:                          # expect-tx of the bytes first, then one arrival
            mb.expect_tx(s, _vals(third, bt, thr), thr, rel)
        elif third is not None:
            count = _vals(third, bt, thr)
        tok = mb.arrive(s, count, thr, rel, drop=op == "arrive_drop", no_complete=no_complete)
        out = np.zeros(bt.T, np.uint64)
        out[thr] = tok
        w(bt, out, g, full)
    return {"fn": fn}


def _wait(ins, b):
    """test_wait / try_wait (.parity): a step of kind "mbwait" (see the module docstring)."""
    o = ins.operands
    need(ins, 3)
    parity = "parity" in ins.mods
    w = b.write(o[0], T.get("pred"), ins)
    at = barrier_address(b, ins, o[1])
    third = b.read(o[2], T.get("u32" if parity else "b64"), ins)
    site = ins.extra["site"]

    def fn(bt, g, full, forced):
        waiting = np.zeros(bt.T, bool)
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return waiting
        bt.events.sync("mbarrier")
        flat, rel = at(bt, thr)
        mb = batch_mbarriers(bt)
        s = mb.slots(flat, rel, thr, ins.name)
        v = _vals(third, bt, thr, np.int64 if parity else np.uint64)
        ok = mb.test(s, parity=v) if parity else mb.test(s, tokens=v)
        done = ok | forced[thr] if forced is not None else ok
        out = np.zeros(bt.T, bool)
        out[thr] = ok
        written = np.zeros(bt.T, bool)
        written[thr[done]] = True
        w(bt, out, written, False)
        if not done.all():
            waiting[thr[~done]] = True
            j = int(np.flatnonzero(~done)[0])
            mb.parked[site] = (int(thr[j]), int(rel[j]), int(flat[j]))
        return waiting
    return {"kind": "mbwait", "fn": fn}


# ---- cp.async.bulk -------------------------------------------------------------------------------
def cp_bulk(ins, b, prog):
    """cp.async.bulk* (ops_mem routes every cp.async.bulk form here)."""
    mods = ins.mods[2:]
    if mods[:1] in (("commit_group",), ("wait_group",)):
        return {"fn": lambda bt, g, full: None}       # every bulk copy completed at issue
    if mods[:1] == ("prefetch",):
        return {"fn": lambda bt, g, full: None}       # an L2 prefetch changes no state
    spaces = [m.split("::")[0] for m in mods if m.split("::")[0] in ("shared", "global")]
    if spaces[:2] == ["shared", "shared"]:
        return _bulk_to_cluster(ins, b)
    if "multicast::cluster" in mods and mods[:1] != ("tensor",):
        raise unsupported(ins, "multicast of a non-tensor bulk copy (not modelled)")
    load = spaces[:1] == ["shared"]
    if mods[:1] == ("tensor",):
        bad = [m for m in mods if m.startswith(("im2col", "tile::"))]
        if bad:
            raise unsupported(ins, f"load mode .{bad[0]} (only the tile mode is modelled)")
        dim = int(mods[1].rstrip("d")) if len(mods) > 1 and mods[1].rstrip("d").isdigit() else 0
        if not 1 <= dim <= smem.tma.MAX_RANK:
            raise unsupported(ins, "cp.async.bulk.tensor needs .1d ... .5d")
        return _tensor(ins, b, prog, dim, load)
    return _bulk(ins, b, load)


def _tensor_ref(ins, b, prog, op, dim):
    """(function(bt, thr) -> map addresses, coordinate readers) of `[tensorMap, {c0, ...}]`."""
    if op.kind != "tref" or len(op.value) != 2 or op.value[1].kind != "vec":
        raise unsupported(ins, f"tensor operand {op}: give [tensorMap, {{coordinates}}] (the tile mode)")
    m, cv = op.value
    coords = [b.read(c, T.get("s32"), ins) for c in cv.value]
    if len(coords) != dim:
        raise unsupported(ins, f"{len(coords)} coordinates for a .{dim}d copy")
    if m.kind == "sym" and prog.symbol_space(m.value, ins) == "kparam":
        a = PARAM_WINDOW + prog.symbol_address(m.value, ins)      # [param, {..}]: the parameter itself
        return (lambda bt, thr: np.full(len(thr), a, np.int64)), coords
    rd = b.read(m, T.get("u64"), ins)
    return (lambda bt, thr: _vals(rd, bt, thr)), coords


def _tensor(ins, b, prog, dim, load):
    o = ins.operands
    multicast = load and "multicast::cluster" in ins.mods
    need(ins, 4 if multicast else 3 if load else 2)
    tref = o[1] if load else o[0]
    maps, coords = _tensor_ref(ins, b, prog, tref, dim)
    smem_addr, _ = b.address(o[0] if load else o[1], ins)
    at = barrier_address(b, ins, o[2]) if load else None
    mask = b.read(o[3], T.get("u16"), ins) if multicast else None
    cluster_dst = load and space_of(ins.mods) == "shared::cluster"

    def body(bt, thr):
        """Copy for each issuing thread; returns [(thread index, target batch CTA, bytes)]."""
        sa_all = _vals(smem_addr, bt, thr)
        ma = maps(bt, thr)
        cs = np.stack([_vals(c, bt, thr) for c in coords], axis=1)
        mk = _vals(mask, bt, thr) if multicast else None
        landed = []
        for j, t in enumerate(thr):
            gm = TM.resolve(bt, ma[j], t, ins.name)
            c = tuple(int(x) for x in cs[j])
            at_ = int(sa_all[j])
            targets = [int(bt.cta_index[t])]
            if cluster_dst:           # a shared::cluster address: the CTA it names, at its offset
                cta, off, _ = CL.resolve(bt, np.array([at_], np.int64), np.array([t]), 1, ins.name)
                targets, at_ = [int(cta[0])], int(off[0])
            if multicast:             # the same CTA-relative offset in every CTA of the mask
                targets = CL.mask_targets(bt, t, mk[j], ins.name)
            sa, sab = _box(bt, gm, c, at_, t, ins.name)
            box = sa.reshape(1, -1)
            at_bytes = gm.box_bytes_at(c)
            if at_bytes is None:                       # offsets past the checked ranges: element by element
                inside = _copy_elements(bt, gm, c, sa, t, targets, load)
                if not load:
                    box = sa[inside].reshape(1, -1)
            else:
                heap, inside = at_bytes
                m = None if inside is None else np.repeat(inside.reshape(-1), gm.e)
                if load:                               # elements outside the tensor read as zeros
                    if m is None:
                        data = bt.heap.data[heap]
                    else:
                        data = np.zeros(heap.shape, np.uint8)
                        data[m] = bt.heap.data[heap[m]]
                    for tc in targets:
                        bt.smem[tc * bt.S + sab] = data
                elif m is None:                        # ... and are not written
                    bt.heap.data[heap] = bt.smem[bt.smem_base[t] + sab]
                else:
                    bt.heap.data[heap[m]] = bt.smem[bt.smem_base[t] + sab[m]]
                    box = sa[inside].reshape(1, -1)
            for tc in targets:
                bt.events.access(Access("tma", "shared", ins.extra["site"], gm.e, np.array([t]), box,
                                        tc * bt.S + box, "write" if load else "read", proxy="async",
                                        target=np.array([tc])))
                landed.append((j, tc, gm.box_bytes))
        return landed
    return {"fn": _copy_step(ins, at, body, multicast, "cta_group::2" in ins.mods)}


def _copy_elements(bt, gm, c, sa, t, targets, load):
    """A box copy element by element (GlobalMap.elements): elements outside the tensor read as
    zeros and are not written. Returns which elements are inside."""
    off, inside = gm.elements(c)
    k = np.arange(gm.e)
    if load:
        data = np.zeros(sa.shape + (gm.e,), np.uint8)
        data[inside] = bt.heap.data[off[inside][:, None] + k]
        for tc in targets:
            bt.smem[tc * bt.S + sa[..., None] + k] = data
    else:
        bt.heap.data[off[inside][:, None] + k] = bt.smem[bt.smem_base[t] + sa[..., None] + k][inside]
    return inside


def _signalled(bt, ins, thr, flat, tc, multicast, pair):
    """Flat offsets of the mbarrier each landed box signals: the operand's; multicast: the one at its
    CTA-relative offset in each target CTA. .cta_group::2 (PTX ISA 9.7.9.25.5.1: the mbarrier may lie
    in the destination CTA's peer, the CTA of the cluster whose rank differs in bit 0): for each target,
    the CTA of the target's pair that the operand's rank bit 0 names (CuTe's SM100_TMA_2SM_LOAD*,
    cute/arch/copy_sm100_tma.hpp, clears that bit: every box of a pair signals its even CTA)."""
    mcta, off = flat // bt.S, flat % bt.S
    if not pair:
        return tc * bt.S + off if multicast else flat
    near = np.where(multicast, bt.cta_index[thr], tc)       # the pair the operand must lie in
    bad = (mcta | 1) != (near | 1)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise Fault(thr[j], int(flat[j]), f"{ins.name}: .cta_group::2: the mbarrier is in neither the "
                                          f"{'issuing' if multicast else 'destination'} CTA nor its peer",
                    "invalid_operand", "shared::cluster")
    return ((tc & ~1) | (mcta & 1)) * bt.S + off


def _copy_step(ins, at, body, multicast=False, pair=False):
    """fn(bt, g, full) of a copy: body(bt, threads) copies for the issuing threads and returns
    [(thread index, target batch CTA, bytes)]; a load (at: its mbarrier operand) credits the bytes
    to the mbarrier (multicast: the one at the same CTA-relative offset in each target CTA), which
    must exist before the copy starts."""
    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return
        _notes(bt)
        if at is not None:
            flat, rel = at(bt, thr)
            mb = batch_mbarriers(bt)
            mb.slots(flat, rel, thr, ins.name)
        landed = body(bt, thr)
        if at is not None and landed:
            j = np.array([x[0] for x in landed])
            tc = np.array([x[1] for x in landed], np.int64)
            mflat = _signalled(bt, ins, thr[j], flat[j], tc, multicast, pair)
            s = mb.slots(mflat, rel[j], thr[j], ins.name)
            mb.complete_tx(s, np.array([x[2] for x in landed], np.int64), thr[j], rel[j])
    return fn


def _notes(bt):
    bt.launch.notes.add(TMA_NOTE)
    bt.events.sync("async")


def _box(bt, gm, coords, at, t, what):
    """The shared addresses of the box at `at` (a load's destination, a store's source), checked:
    (element addresses [*box[::-1]], the byte addresses of their bytes, flat)."""
    why = smem.coords_problem(gm.tmap, coords)
    if why:
        raise Fault(t, at, f"{what}: {why}", "tma_coordinates", "shared")
    if at % TMA_ALIGN:
        raise Fault(t, at, f"{what}: the box's shared address {at:#x} is not {TMA_ALIGN}-byte aligned: the "
                           f"GPU faults (misaligned address)", "misaligned", "shared")
    why, sa, sab = _landing(gm.tmap, at, bt.smem_size)
    if why:
        raise Fault(t, at, f"{what}: {why} (the CTA's shared memory)", "out_of_bounds", "shared")
    return sa, sab


@lru_cache(maxsize=LANDINGS_KEPT)
def _landing(tmap, at, smem_size):
    """(why the box at `at` faults or None, its element addresses, their bytes' addresses), kept per
    (map's shared side, destination, CTA's shared size): a k loop cycles through a few stages; the
    arrays are read-only."""
    if not smem_size:
        return "the CTA has no shared memory for the box", None, None
    why = smem.box_fault(tmap, at, smem_bytes=smem_size)
    if why:
        return why, None, None
    sa = smem.box_addresses(tmap, at, smem_bytes=smem_size)
    sab = (sa[..., None] + np.arange(tmap.elem_bytes)).reshape(-1)
    sa.flags.writeable = sab.flags.writeable = False
    return None, sa, sab


def _bulk(ins, b, load):
    """cp.async.bulk.shared::cta|cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
    and cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size."""
    o = ins.operands
    need(ins, 4 if load else 3)
    dst, _ = b.address(o[0], ins)
    src, _ = b.address(o[1], ins)
    size = b.read(o[2], T.get("u32"), ins)
    at = barrier_address(b, ins, o[3]) if load else None
    cluster_dst = load and space_of(ins.mods) == "shared::cluster"

    def body(bt, thr):
        d, s_, n = _vals(dst, bt, thr), _vals(src, bt, thr), _vals(size, bt, thr)
        cta = bt.cta_index[thr]
        if cluster_dst:               # shared::cluster addresses: the CTA each names, at its offset
            cta, d, _ = CL.resolve(bt, d, thr, 1, ins.name)
        elif load:                    # shared::cta: the CTA's own rank field dropped
            d = CL.cta_offsets(bt, d, thr, raw=True)
        else:
            s_ = CL.cta_offsets(bt, s_, thr, raw=True)
        for j, t in enumerate(thr):
            sh, gl = (d[j], s_[j]) if load else (s_[j], d[j])
            _bulk_checked(bt, ins, t, n[j], (sh,), gl)
            off = int(bt.heap.check(np.array([gl], np.int64), int(n[j]), np.array([t]))[0])
            so = int(cta[j] * bt.S + sh)
            if load:
                bt.smem[so:so + n[j]] = bt.heap.data[off:off + n[j]]
            else:
                bt.heap.data[off:off + n[j]] = bt.smem[so:so + n[j]]
            bt.events.access(Access("bulk", "shared", ins.extra["site"], int(n[j]), np.array([t]), np.array([sh]),
                                    np.array([so]), "write" if load else "read", proxy="async",
                                    target=np.array([cta[j]])))
        return [(j, int(cta[j]), int(n[j])) for j in range(len(thr))]
    return {"fn": _copy_step(ins, at, body)}


def _bulk_checked(bt, ins, t, n, shared, other=None):
    """Fault unless the size and every address (the shared ones, then any global one) are positive
    multiples of BULK_ALIGN and each shared range of n bytes lies in the CTA's shared memory."""
    addrs = (*shared, *(() if other is None else (other,)))
    if n <= 0 or any(x % BULK_ALIGN for x in (*addrs, n)):
        raise Fault(t, shared[0], f"{ins.name}: addresses {', '.join(f'{int(x):#x}' for x in addrs)} and size "
                                  f"{int(n)} must be positive multiples of {BULK_ALIGN} bytes", "misaligned", "shared")
    for a in shared:
        if a < 0 or a + n > bt.smem_size:
            raise Fault(t, a, f"{ins.name}: shared {int(a):#x} + {int(n)} bytes is outside the CTA's shared "
                              f"memory ({bt.smem_size} bytes)", "out_of_bounds", "shared")


def _bulk_to_cluster(ins, b):
    """cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
    (PTX ISA 9.7.9.25.4.1): `size` bytes of the issuing CTA's shared memory to a shared::cluster
    address (any CTA of the cluster, the issuer's own included); the bytes complete on the mbarrier at
    `mbar`, a shared::cluster address that must lie in the destination's CTA."""
    o = ins.operands
    need(ins, 4)
    dst, _ = b.address(o[0], ins)
    src, _ = b.address(o[1], ins)
    size = b.read(o[2], T.get("u32"), ins)
    at = barrier_address(b, ins, o[3])

    def body(bt, thr):
        d, s_, n = _vals(dst, bt, thr), _vals(src, bt, thr), _vals(size, bt, thr)
        to, d, _ = CL.resolve(bt, d, thr, 1, ins.name)
        s_ = CL.cta_offsets(bt, s_, thr, raw=True)      # shared::cta: the CTA's own rank field dropped
        own = bt.cta_index[thr]
        in_destination(bt, ins, thr, at(bt, thr)[0], to)
        for j, t in enumerate(thr):
            _bulk_checked(bt, ins, t, n[j], (d[j], s_[j]))
            so, do = int(own[j] * bt.S + s_[j]), int(to[j] * bt.S + d[j])
            bt.smem[do:do + n[j]] = bt.smem[so:so + n[j]].copy()
            for kind, a, f, cta in (("read", s_[j], so, own[j]), ("write", d[j], do, to[j])):
                bt.events.access(Access("bulk", "shared", ins.extra["site"], int(n[j]), np.array([t]), np.array([a]),
                                        np.array([f]), kind, proxy="async", target=np.array([cta])))
        return [(j, int(to[j]), int(n[j])) for j in range(len(thr))]
    return {"fn": _copy_step(ins, at, body)}


def cp_async_arrive(ins, b, prog):
    """cp.async.mbarrier.arrive{.noinc}.b64 [mbar]: the arrive-on fires when the thread's prior
    cp.async copies complete; here they complete at this instruction (a valid schedule). Without
    .noinc the pending count is raised by one first, so the net effect is no arrival."""
    need(ins, 1)
    at = barrier_address(b, ins, ins.operands[0])
    noinc = "noinc" in ins.mods

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return
        a = async_groups(bt)
        a.open[thr] += 1                      # close the open group, then complete every group
        a.wait(bt, thr, 0)
        flat, rel = at(bt, thr)
        mb = batch_mbarriers(bt)
        s = mb.slots(flat, rel, thr, ins.name)
        if noinc:
            mb.arrive(s, np.ones(len(thr), np.int64), thr, rel)
    return {"fn": fn}


def _setmaxnreg(ins, b, prog):
    # a register-allocation hint for warp-specialized kernels: no effect on the model's state;
    # .aligned: every lane of the warp executes it (collective.py)
    return {"fn": check_warps(ins)}


# ---- tensor maps built by the kernel (tensormap.replace, tensormap.cp_fenceproxy; issue 25) ---------
def _map_parts(bt, space, addr, thr, what):
    """The located 128 bytes of a tensor-map object at `addr` (64-byte aligned, PTX ISA 9.7.9.29)."""
    return [locate(bt, space, addr + h, thr, TM.MAP_BYTES // 2, what) for h in (0, TM.MAP_BYTES // 2)]


def _map_read(bt, parts, nthr):
    return np.concatenate([load_parts(bt, p, TM.MAP_BYTES // 2) for p in parts], axis=1).reshape(nthr, TM.MAP_BYTES)


def _map_write(bt, parts, data, thr):
    for h, p in enumerate(parts):
        store_parts(bt, p, data[:, h * (TM.MAP_BYTES // 2):(h + 1) * (TM.MAP_BYTES // 2)], thr)


def tensormap_replace(ins, b, prog):
    mods = ins.mods
    field = mods[2] if len(mods) > 2 and mods[1] == "tile" else ""
    if field not in TM.FIELDS:
        raise unsupported(ins, "tensormap.replace.tile.<field> (global_address, rank, box_dim, global_dim, "
                               "global_stride, element_stride, elemtype, interleave_layout, swizzle_mode, "
                               "swizzle_atomicity, fill_mode)")
    space = space_of(mods)
    if space not in ("shared", "global"):
        raise unsupported(ins, "a tensor map in .shared::cta or .global memory")
    o = ins.operands
    with_ord = TM.FIELDS[field][2] > 1
    need(ins, 3 if with_ord else 2)
    addr, _ = b.address(o[0], ins)
    ordinal = b.constant(o[1], T.get("u32"), ins) if with_ord else None
    value = b.read(o[-1], T.get("b64" if "b64" in mods else "b32"), ins)

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return
        a = _vals(addr, bt, thr)
        v = _vals(value, bt, thr, np.uint64)
        parts = _map_parts(bt, space, a, thr, ins.name)
        if space == "shared":                     # what ptxas's in-place rewrite of the map costs (costs.py)
            for sp, _, flat, who, rel in parts[0]:
                bt.events.access(Access("tensormap", sp, ins.extra["site"], 4, who, rel, flat, "write", lands=False))
        raw = _map_read(bt, parts, len(thr))
        # one map per address, and in shared memory per CTA too: the same shared address in two
        # CTAs of a batch is two maps
        owner = thr // bt.tpc if space == "shared" else np.zeros(len(thr), np.int64)
        for j in range(len(thr)):                 # threads in order: a later one's value wins
            raw[j] = np.frombuffer(TM.replace(raw[j].tobytes(), field, None if ordinal is None else int(ordinal),
                                              int(v[j]), ins.name), np.uint8)
            same = (a == a[j]) & (owner == owner[j])
            raw[same] = raw[j]
        _map_write(bt, parts, raw, thr)
    return {"fn": fn}


def tensormap_cp_fenceproxy(ins, b, prog):
    """tensormap.cp_fenceproxy.global.shared::cta...: the 128-byte map from shared to global memory."""
    spaces = [m for m in ins.mods if m.split("::")[0] in ("global", "shared")]
    if spaces != ["global", "shared::cta"]:
        raise unsupported(ins, "the copy .global.shared::cta (a map from shared to global memory)")
    o = ins.operands
    need(ins, 3)
    dst, _ = b.address(o[0], ins)
    src, _ = b.address(o[1], ins)
    size = b.constant(o[2], T.get("u32"), ins)
    if int(size) != TM.MAP_BYTES:
        raise unsupported(ins, f"a size of {int(size)} bytes (a tensor map is {TM.MAP_BYTES})")

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return
        parts = _map_parts(bt, "shared", _vals(src, bt, thr), thr, ins.name)
        for sp, _, flat, who, rel in parts[0]:    # the read of the map, as its SASS does it (costs.py)
            bt.events.access(Access("tensormap", sp, ins.extra["site"], 4, who, rel, flat, "read", lands=False))
        raw = _map_read(bt, parts, len(thr))
        _map_write(bt, _map_parts(bt, "global", _vals(dst, bt, thr), thr, ins.name), raw, thr)
    return {"fn": fn}


# what ops_reduce.py's TMA reductions share with the bulk copies here
box, copy_step, tensor_ref, values = _box, _copy_step, _tensor_ref, _vals
