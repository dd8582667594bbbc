"""The mbarrier operand of an instruction: its address resolved to the CTA and offset holding it,
the batch's mbarriers (mbarrier.MBarriers), and the completion of st.async / red.async bytes on
one. Shared by the async copies (ops_async.py), the TMA reductions (ops_reduce.py), tcgen05.commit
(ops_tcgen05.py), clusterlaunchcontrol (ops_clc.py) and the remote stores (ops_mem.py)."""
import numpy as np

from .access import locate, space_of
from .builders import unsupported
from .mbarrier import MBarriers
from .state import SHARED_WINDOW, WINDOW, Fault


def batch_mbarriers(bt):
    """The batch's MBarriers (made at the first mbarrier operand)."""
    if bt.mbarriers is None:
        bt.mbarriers = MBarriers()
    return bt.mbarriers


def barrier_address(b, ins, op, low32=False):
    """function(bt, thr) -> (flat offsets, shared addresses) of the mbarrier operand `op`.
    low32: a generic operand is read by its low 32 bits as a shared::cluster address (a generic
    shared address, or a shared address zero-extended); any other is a fault (tcgen05.commit)."""
    addr, _ = b.address(op, ins)
    space = space_of(ins.mods)
    if space not in ("shared", "shared::cluster", "generic"):
        raise unsupported(ins, f"an mbarrier in .{space} memory (mbarriers live in shared memory)")
    low32 = low32 and space == "generic"

    def at(bt, thr):
        a = np.broadcast_to(np.asarray(addr(bt)), (bt.T,))[thr].astype(np.int64)
        if low32:
            hi = a & ~np.int64(WINDOW - 1)
            bad = np.flatnonzero((hi != 0) & (hi != SHARED_WINDOW))
            if len(bad):
                raise Fault(int(thr[bad[0]]), int(a[bad[0]]), f"{ins.name}: the mbarrier address {int(a[bad[0]]):#x} "
                            f"is neither a generic shared address nor a zero-extended shared one", "invalid_address")
            a = a & np.int64(WINDOW - 1)
        parts = locate(bt, "shared::cluster" if low32 else space, a, thr, 8, ins.name)
        flat, rel = np.zeros(len(thr), np.int64), np.zeros(len(thr), np.int64)
        for p in parts:
            if p[0] not in ("shared", "shared::cluster"):
                raise Fault(p[3][0], int(p[4][0]), f"{ins.name}: the mbarrier address is not in shared memory",
                            "invalid_address")
            k = np.searchsorted(thr, p[3])
            flat[k], rel[k] = p[2], p[2] % bt.S      # rel: the offset in the CTA holding the mbarrier
        return flat, rel
    return at


def remote_completion(ins, b, op):
    """The mbarrier side of st.async / red.async (PTX ISA 9.7.9.12, 9.7.13.6): function(bt, threads,
    destination batch CTAs, bytes) that completes each thread's bytes on the mbarrier operand `op`,
    a shared::cluster address that must lie in the CTA of the thread's destination."""
    at = barrier_address(b, ins, op)

    def complete(bt, thr, cta, nbytes):
        flat, rel = at(bt, thr)
        in_destination(bt, ins, thr, flat, cta)
        bt.events.sync("async")
        mb = batch_mbarriers(bt)
        s = mb.slots(flat, rel, thr, ins.name)
        mb.complete_tx(s, np.full(len(thr), nbytes, np.int64), thr, rel)
    return complete


def in_destination(bt, ins, thr, flat, cta):
    """Fault unless each thread's mbarrier (flat offsets) lies in the batch CTA its data goes to
    (st.async, red.async, the shared-to-shared bulk copy: the PTX ISA requires it there)."""
    bad = np.flatnonzero(np.asarray(flat) // bt.S != np.asarray(cta))
    if len(bad):
        j = bad[0]
        raise Fault(int(thr[j]), int(flat[j] % bt.S), f"{ins.name}: the mbarrier is not in the CTA of the "
                                                      f"destination (the PTX ISA requires it there)",
                    "invalid_operand", "shared::cluster")
