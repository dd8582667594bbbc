"""Warp-level instructions (shfl.sync, vote.sync, match.sync, redux.sync, activemask, elect.sync,
bar.warp.sync) and the CTA barriers (bar/barrier .sync/.arrive/.red), PTX ISA 9.0 sections
9.7.9.6 and 9.7.13.1-3, 9.7.13.8-14.

A membermask collective's handler returns `membermask`, the reader of its membermask operand;
the instruction table's sync class (table.py) makes it the step's `sync`, the lanes the
scheduler waits for before it runs the step for a warp (CTA barriers: the table makes the step
a "bar" step). The values are computed per warp with the batch's arrays reshaped
[warps, 32]. A thread executing one outside its own membermask is refused (collective.py).
"""
import numpy as np

from . import types as T
from .builders import need, unsupported
from .collective import check_membermask

def _warps(x, bt):
    return np.broadcast_to(np.asarray(x), (bt.T,)).reshape(bt.W, 32)


def _bits(mask2d):
    """bool [W, 32] -> uint32 [W] lane masks."""
    return np.packbits(mask2d, axis=1, bitorder="little").view("<u4").reshape(-1)


def _participants(bt, g, mmv, ins):
    """bool [W, 32]: executing lanes named in their warp's membermask (each must be in its own)."""
    check_membermask(bt, g, mmv, ins)
    G = g.reshape(bt.W, 32)
    M = np.bitwise_or.reduce(np.where(G, mmv.reshape(bt.W, 32), np.uint32(0)), axis=1)
    return G & ((M[:, None] >> np.arange(32, dtype=np.uint32)) & np.uint32(1)).astype(bool)


def _membermask(b, op, ins):
    r = b.read(op, T.get("u32"), ins)
    return lambda bt: np.broadcast_to(np.asarray(r(bt), np.uint32), (bt.T,))


def _shfl(ins, b, prog):
    need(ins, 5)
    if "sync" not in ins.mods:
        raise unsupported(ins, "shfl without .sync (removed for sm_70+)")
    mode = next((m for m in ins.mods if m in ("up", "down", "bfly", "idx")), None)
    dst = ins.operands[0]
    d_op, p_op = (dst.value[0], dst.value[1]) if dst.kind == "pair" else (dst, None)
    wd = b.write(d_op, T.get("b32"), ins)
    wp = b.write(p_op, T.get("pred"), ins) if p_op is not None else None
    ra = b.read(ins.operands[1], T.get("b32"), ins)
    rb = b.read(ins.operands[2], T.get("u32"), ins)
    rc = b.read(ins.operands[3], T.get("u32"), ins)
    mm = _membermask(b, ins.operands[4], ins)
    if all(o.kind == "imm" for o in ins.operands[2:5]):
        return {"fn": _shfl_constant(ins, b, mode, wd, wp, ra), "membermask": mm}

    def fn(bt, g, full):
        check_membermask(bt, g, mm(bt), ins)
        lane = bt.lane.astype(np.int64)
        bval = np.broadcast_to(np.asarray(rb(bt)).astype(np.int64) & 31, (bt.T,))
        c = np.broadcast_to(np.asarray(rc(bt)).astype(np.int64), (bt.T,))
        j, ok = _source_lane(mode, lane, bval, c)
        src = np.arange(bt.T, dtype=np.int64) - lane + j
        a = np.broadcast_to(np.asarray(ra(bt)), (bt.T,))
        wd(bt, a[src], g, full)
        if wp is not None:
            wp(bt, ok, g, full)
    return {"fn": fn, "membermask": mm}


def _source_lane(mode, lane, bval, c):
    """(the lane each lane reads, whether it is in range) of shfl.sync (PTX ISA 9.7.9.6's
    pseudo-code): b (0..31) the lane or offset, c the clamp (bits 0-4) and segment mask (bits 8-12);
    a lane out of range reads its own value."""
    cval, seg = c & 31, (c >> 8) & 31
    max_lane = (lane & seg) | (cval & ~seg)
    j = {"up": lane - bval, "down": lane + bval, "bfly": lane ^ bval}.get(mode, (lane & seg) | (bval & ~seg))
    ok = j >= max_lane if mode == "up" else j <= max_lane
    return np.where(ok, j, lane), ok


def _shfl_constant(ins, b, mode, wd, wp, ra):
    """shfl.sync with b, c and the membermask immediates (what compilers emit for reductions and
    scans): each thread's source lane and its predicate depend on its lane only, computed once per
    batch size; the membermask check is then one look at the lanes outside it (none for -1)."""
    u32 = T.get("u32")
    bval, c, mask = (int(b.constant(o, u32, ins)) for o in ins.operands[2:5])
    bval &= 31
    plans = {}

    def plan(bt):
        lane = np.arange(32, dtype=np.int64)
        j, ok = _source_lane(mode, lane, bval, c)
        n = bt.T // 32
        src = (np.arange(n, dtype=np.int64)[:, None] * 32 + j).reshape(-1)
        outside = None if mask == 0xFFFFFFFF else np.tile(((mask >> lane) & 1) == 0, n)
        got = plans[bt.T] = (src, np.tile(ok, n), outside)
        return got

    def fn(bt, g, full):
        src, ok, outside = plans.get(bt.T) or plan(bt)
        if outside is not None and np.count_nonzero(g & outside):
            check_membermask(bt, g, np.uint32(mask), ins)          # words the fault
        a = ra(bt)
        a = a[src] if np.ndim(a) else np.full(bt.T, a)
        wd(bt, a, g, full)
        if wp is not None:
            wp(bt, ok, g, full)
    return fn


def _vote(ins, b, prog):
    if "sync" not in ins.mods:
        raise unsupported(ins, "vote without .sync")
    mode = next((m for m in ins.mods if m in ("all", "any", "uni", "ballot")), None)
    need(ins, 3)
    wd = b.write(ins.operands[0], T.get("b32") if mode == "ballot" else T.get("pred"), ins)
    ra = b.read(ins.operands[1], T.get("pred"), ins)
    mm = _membermask(b, ins.operands[2], ins)

    def fn(bt, g, full):
        G = _participants(bt, g, mm(bt), ins)
        A = _warps(ra(bt), bt)
        if mode == "ballot":
            out = np.repeat(_bits(A & G), 32)
        elif mode == "all":
            out = np.repeat(~np.any(G & ~A, axis=1), 32)
        elif mode == "any":
            out = np.repeat(np.any(G & A, axis=1), 32)
        else:
            out = np.repeat(~(np.any(G & A, axis=1) & np.any(G & ~A, axis=1)), 32)
        wd(bt, out, g, full)
    return {"fn": fn, "membermask": mm}


def _match(ins, b, prog):
    mode = next((m for m in ins.mods if m in ("any", "all")), None)
    t = T.instr_type(ins.mods, ins.line)
    dst = ins.operands[0]
    d_op, p_op = (dst.value[0], dst.value[1]) if dst.kind == "pair" else (dst, None)
    wd = b.write(d_op, T.get("b32"), ins)
    wp = b.write(p_op, T.get("pred"), ins) if p_op is not None else None
    ra = b.read(ins.operands[1], t, ins)
    mm = _membermask(b, ins.operands[2], ins)

    def fn(bt, g, full):
        check_membermask(bt, g, mm(bt), ins)
        A = _warps(ra(bt), bt)
        G = g.reshape(bt.W, 32)
        eq = (A[:, :, None] == A[:, None, :]) & G[:, None, :]          # [W, lane, other]
        same = _bits(eq.reshape(-1, 32)).reshape(bt.W, 32)
        if mode == "any":
            wd(bt, same.reshape(-1), g, full)
            return
        active = _bits(G)
        allsame = np.all(~G | (A == A[np.arange(bt.W), np.argmax(G, axis=1)][:, None]), axis=1)
        wd(bt, np.repeat(np.where(allsame, active, 0).astype(np.uint32), 32), g, full)
        if wp is not None:
            wp(bt, np.repeat(allsame, 32), g, full)
    return {"fn": fn, "membermask": mm}


def _redux(ins, b, prog):
    op = next((m for m in ins.mods if m in ("add", "min", "max", "and", "or", "xor")), None)
    if op is None:
        raise unsupported(ins, "no operation (.add, .min, .max, .and, .or, .xor)")
    t = T.instr_type(ins.mods, ins.line)
    if t.is_float:
        raise unsupported(ins, "floating-point redux")
    wd = b.write(ins.operands[0], t, ins)
    ra = b.read(ins.operands[1], t, ins)
    mm = _membermask(b, ins.operands[2], ins)
    ident = {"add": 0, "and": np.iinfo(t.dtype).max if t.kind != "s" else -1, "or": 0, "xor": 0,
             "min": np.iinfo(t.dtype).max, "max": np.iinfo(t.dtype).min}[op]
    f = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor}[op]

    def fn(bt, g, full):
        check_membermask(bt, g, mm(bt), ins)
        A = _warps(ra(bt), bt).astype(t.dtype)
        G = g.reshape(bt.W, 32)
        r = f.reduce(np.where(G, A, np.array(ident).astype(t.dtype)), axis=1)
        wd(bt, np.repeat(r.astype(t.dtype), 32), g, full)
    return {"fn": fn, "membermask": mm}


def _activemask(ins, b, prog):
    wd = b.write(ins.operands[0], T.get("b32"), ins)
    return {"fn": lambda bt, g, full: wd(bt, np.repeat(_bits(g.reshape(bt.W, 32)), 32), g, full)}


def _elect(ins, b, prog):
    dst = ins.operands[0]
    d_op, p_op = (dst.value[0], dst.value[1]) if dst.kind == "pair" else (dst, None)
    wd = b.write(d_op, T.get("b32"), ins) if d_op.kind != "sink" else None
    wp = b.write(p_op, T.get("pred"), ins) if p_op is not None else None
    mm = _membermask(b, ins.operands[1], ins)

    def fn(bt, g, full):
        G = _participants(bt, g, mm(bt), ins)
        leader = np.argmax(G, axis=1).astype(np.uint32)
        if wd is not None:
            wd(bt, np.repeat(leader, 32), g, full)
        if wp is not None:
            wp(bt, bt.lane == np.repeat(leader, 32), g, full)
    return {"fn": fn, "membermask": mm}


def _bar_warp(ins, b, prog):
    mm = _membermask(b, ins.operands[0], ins)
    return {"fn": lambda bt, g, full: check_membermask(bt, g, mm(bt), ins), "membermask": mm}


# ---- CTA barriers -------------------------------------------------------------------------------
def _barrier(ins, b, prog):
    if ins.opcode == "bar" and ins.mods and ins.mods[0] == "warp":
        return _bar_warp(ins, b, prog)
    mods = [m for m in ins.mods if m not in ("cta", "aligned")]
    if not mods:
        mods = ["sync"]                       # `bar 0` is bar.sync
    kind = mods[0]
    if kind == "cluster":
        raise unsupported(ins, "cluster barriers: clusters are not modelled, each CTA runs alone")
    if kind not in ("sync", "arrive", "red"):
        raise unsupported(ins)
    need(ins, 3 if kind == "red" else 1)        # [d,] barrier id[, count][, predicate]
    ops = list(ins.operands)
    info = {"mode": kind}
    if kind == "red":
        red = next((m for m in mods if m in ("popc", "and", "or")), None)
        info["red"] = red
        info["dst"] = b.write(ops.pop(0), T.get("u32") if red == "popc" else T.get("pred"), ins)
        info["pred"] = b.read(ops.pop(), T.get("pred"), ins)
    info["id"] = b.read(ops[0], T.get("u32"), ins)
    info["count"] = b.read(ops[1], T.get("u32"), ins) if len(ops) > 1 else None
    if kind == "arrive" and info["count"] is None:
        raise unsupported(ins, "bar.arrive needs a thread count")
    return {"info": info}
