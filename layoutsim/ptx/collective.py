"""Which threads must execute a warp-collective instruction (PTX ISA 9.0), checked as it runs.

.aligned warp collectives (ldmatrix, stmatrix, mma, wmma.load/store/mma, wgmma.fence,
commit_group, wait_group, setmaxnreg): "The mandatory .aligned qualifier indicates that all
threads in the warp must execute the same <instruction>. In conditionally executed code, [it]
should only be used if it is known that all threads in the warp evaluate the condition
identically, otherwise behavior is undefined", and mma/ldmatrix/wmma are undefined "if any
thread in the warp has exited" (9.7.14.5.14 mma, 9.7.14.5.15 ldmatrix, 9.7.14.4.3 wmma.load).
wgmma.mma_async says the same of "all threads in the warpgroup" (9.7.15.5.2). A warp that runs
one with a lane missing (a block whose size is no multiple of 32, a branch, a false guard, an
exited thread) is refused: the GPU's result is undefined, and the executor would otherwise read
zeros for the missing lanes' registers: a silent wrong answer.

membermask collectives (shfl.sync, vote.sync, match.sync, redux.sync, elect.sync, bar.warp.sync)
are not .aligned: each waits for "all non-exited threads in membermask", so a partial warp is
legal (a block of 16 with membermask 0xffffffff waits for the 16 threads there are). What the ISA
leaves undefined is "if the executing thread is not in the membermask" (9.7.9.6, 9.7.13.8-14):
that thread is refused. (A shfl lane reading an inactive lane gets an undefined value the
executor does not flag: the value is commonly discarded.)

bar.sync / barrier.sync.aligned are not checked here: CUDA's __syncthreads() is
`bar.sync 0`, and kernels reach it after some threads returned; the scheduler counts the
warps that arrive (scheduler.py).
"""
import numpy as np

from ..access import lane_ranges
from .state import Fault

ALIGNED = "PTX ISA: .aligned: all threads in the {group} must execute the same {op}; otherwise undefined"
MEMBERMASK = "PTX ISA: undefined if the executing thread is not in the membermask"


def short_name(ins):
    """'wmma.load', 'wgmma.mma_async', 'mma', 'ldmatrix': what the ISA's sentences call it."""
    if ins.opcode in ("wmma", "wgmma") and ins.mods:
        return f"{ins.opcode}.{ins.mods[0]}"
    return ins.opcode


def whole_warps(bt, g, ins):
    """(warp indices, their threads [nA, 32]) of the warps executing `ins`; a Fault when one of
    them runs it with a lane missing."""
    if np.count_nonzero(g) == g.size:    # every thread of the batch: every warp, whole
        if bt.every_warp is None:        # made once per batch, read-only: every caller shares them
            w = np.arange(bt.W)
            t = w[:, None] * 32 + np.arange(32)
            w.flags.writeable = t.flags.writeable = False
            bt.every_warp = (w, t)
        return bt.every_warp
    G = g.reshape(bt.W, 32)
    w = np.flatnonzero(G.any(1))
    if len(w):
        full = G[w].all(1)
        if not full.all():
            bad = int(w[np.argmin(full)])
            raise partial(bt, ins, bad * 32 + np.arange(32), g, "warp")
    return w, w[:, None] * 32 + np.arange(32)


def check_warps(ins):
    """The step function of an .aligned instruction with no effect on the model's state."""
    def fn(bt, g, full):
        whole_warps(bt, g, ins)          # even when `full`: every live thread is not every lane
    return fn


def partial(bt, ins, thr, g, group):
    """The Fault of a warp (thr: its 32 threads) or warpgroup (128) that runs `ins` with some of
    its threads missing: the active mask, which lanes are missing and why."""
    present = g[thr]
    first = int(thr[present][0]) if present.any() else int(thr[0])
    masks = np.packbits(present.reshape(-1, 32), axis=1, bitorder="little").view("<u4").reshape(-1)
    mask = "active mask " + " ".join(f"{int(m):#010x}" for m in masks)
    # lanes of a warp, threads (0-127) of a warpgroup
    lane, what = ((thr - thr[0]), "threads") if group == "warpgroup" else (thr % 32, "lanes")
    missing = ~present
    why = []
    gone = missing & ~bt.exists[thr]
    if gone.any():
        why.append(f"a block of {bt.tpc} threads runs a partial {group}; {ins.opcode} needs all {len(thr)} {what}")
    exited = missing & bt.exists[thr] & ~bt.live[thr]
    if exited.any():
        why.append(f"{what} {lane_ranges(lane[exited])} have exited")
    off = missing & bt.live[thr]
    if off.any():
        why.append(f"{what} {lane_ranges(lane[off])} do not execute it (a branch or a false guard)")
    op = short_name(ins)
    return Fault(first, 0, f"{op} run by a partial {group} ({mask}: {what} {lane_ranges(lane[present])}): "
                           f"{'; '.join(why)} ({ALIGNED.format(group=group, op=op)})",
                 "partial_warpgroup" if group == "warpgroup" else "partial_warp")


def check_membermask(bt, g, mm, ins):
    """A Fault when an executing thread is not in its own membermask (mm: uint32 per thread)."""
    mm = np.broadcast_to(np.asarray(mm, np.uint32), (bt.T,))
    out = g & (((mm >> bt.lane) & np.uint32(1)) == 0)
    if out.any():
        t = int(np.flatnonzero(out)[0])
        raise Fault(t, 0, f"{ins.name} with membermask {int(mm[t]):#010x}: lane {int(bt.lane[t])} "
                          f"executes it but is not in the membermask ({MEMBERMASK})", "membermask")
