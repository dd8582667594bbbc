"""Memory instructions: ld/ldu/st of every state space and vector width, atom/red, cp.async with
commit/wait groups and zero-fill, and the ones with no effect on the model's state (fences,
prefetches, cache policies). PTX ISA 9.0, 9.7.9.8-9.7.9.19, 9.7.9.25, 9.7.13.4-6.

The model executes memory operations in program order at the instruction that issues them:
fences and .volatile/.relaxed/.acquire semantics change nothing here. cp.async is the
exception: its shared-memory write lands when a cp.async.wait_group/wait_all of the issuing
thread covers its group (or its cp.async.mbarrier.arrive), so a kernel that reads the tile too
early reads stale data, as the GPU may. The bulk copies (cp.async.bulk*, TMA) are ops_async.py's.
"""
import numpy as np

from .. import sass as SASS
from ..errors import LayoutsimError
from . import fround as F
from . import types as T
from .access import load, locate, space_of, store
from .builders import exactly, need, unsupported
from .events import Access
from .mbarrier_operand import remote_completion
from .ops_half import decode, half_format, lanes, minmax_bits
from .state import GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW, Fault, gather, scatter
from . import lines

VEC = {"v2": 2, "v4": 4, "v8": 8}


def _vec(mods):
    return next((VEC[m] for m in mods if m in VEC), 1)


def _raw(t):
    return t.storage if t.bits == 128 else np.dtype(f"<u{max(1, t.bits // 8)}")


def _addresses(addr, bt, thr):
    a = np.asarray(addr(bt))
    if not a.ndim:
        return np.full(len(thr), int(a), np.int64)
    return a if len(thr) == len(a) else a[thr]      # every thread: thr is 0 .. T-1 (a is a new array)


def _lanes(v, thr):
    """The values of the threads thr: a register's array read at thr (the array itself when thr
    is every thread; a register's array is never changed in place), an immediate repeated."""
    if not np.ndim(v):
        return np.full(len(thr), v)
    return v if len(thr) == len(v) else v[thr]


def _emit(bt, ins, parts, op, nbytes, vec):
    """Tell the batch's observers (events.py) what an ld/st did, one record per state space."""
    effect = "read" if op == "ld" else "write"
    path = "nc" if (ins.opcode == "ldu" or "nc" in ins.mods) else ""
    for sp, views, flat, thr, rel in parts:
        bt.events.access(Access(op, sp, ins.extra["site"], nbytes, thr, rel, flat, effect, vec, path=path,
                                target=flat // bt.S if sp == "shared::cluster" else None))


def _kparam(prog, ins, sym, space):
    """Whether an ld/st.param names the kernel's parameters: by the parameter's symbol, or by a
    register in the kernel's own body (not an inlined .func): PTX ISA 9.0 section 5.1.6.1, an
    entry's `mov.u64 %rd, param` takes the parameter's .param address, which ld.param reads
    (nvcc reads a large by-value struct such as CUTLASS's Params this way)."""
    if space != "param":
        return False
    if sym is None:
        return not ins.extra.get("prefix")
    return prog.symbol_space(sym, ins) == "kparam"


def _shape(ins):
    """(state space, element type, vector count, bytes per thread) of an ld/st."""
    need(ins, 2)
    t = T.instr_type(ins.mods, ins.line)
    vec = _vec(ins.mods)
    if t.bits == 128 and vec > 1:              # .b128: 16 opaque bytes, to or from a .b128 register
        raise unsupported(ins, "vectors of .b128")
    return space_of(ins.mods), t, vec, vec * max(1, t.bits // 8)


def _ld(ins, b, prog):
    space, t, vec, nbytes = _shape(ins)
    dsts = b.elems(ins.operands[0], ins, vec if vec > 1 else None)
    writers = [b.write(d, t, ins) for d in dsts]
    addr, sym = b.address(ins.operands[1], ins)
    kparam = _kparam(prog, ins, sym, space)
    raw = _raw(t)
    name = ins.name

    def fn(bt, g, full):
        thr = g.nonzero()[0]
        if len(thr) == 0:
            return
        parts = locate(bt, space, _addresses(addr, bt, thr), thr, nbytes, name, kparam)
        data = load(bt, parts, nbytes)
        vals = np.ascontiguousarray(data).view(raw).reshape(len(thr), vec)
        every = len(thr) == bt.T                # thr is 0 .. T-1
        for j, w in enumerate(writers):
            if every:
                out = np.ascontiguousarray(vals[:, j])
            else:
                out = np.zeros(bt.T, raw)
                out[thr] = vals[:, j]
            w(bt, out, g, full)
        _emit(bt, ins, parts, "ld", nbytes, vec)
    return {"fn": fn}


def _st(ins, b, prog):
    space, t, vec, nbytes = _shape(ins)
    done = _remote_completion(ins, b, space, 3)
    addr, sym = b.address(ins.operands[0], ins)
    srcs = [b.read(o, T.get(f"b{max(8, t.bits)}") if t.kind != "pred" else t, ins)
            for o in b.elems(ins.operands[1], ins, vec if vec > 1 else None)]
    raw = _raw(t)
    if space == "param" and _kparam(prog, ins, sym, space):
        raise unsupported(ins, "stores to kernel parameters")
    name = ins.name

    def fn(bt, g, full):
        thr = g.nonzero()[0]
        if len(thr) == 0:
            return
        parts = locate(bt, space, _addresses(addr, bt, thr), thr, nbytes, name)
        cols = [_lanes(s(bt), thr).astype(raw) for s in srcs]
        data = (cols[0] if len(cols) == 1 else np.stack(cols, axis=1)).view(np.uint8).reshape(len(thr), nbytes)
        store(bt, parts, data, thr)
        _emit(bt, ins, parts, "st", nbytes, vec)
        if done:
            done(bt, *_destinations(bt, parts), nbytes)
    return {"fn": fn}


def _remote_completion(ins, b, space, operands):
    """st.async / red.async: the function completing their bytes on their mbarrier operand (the
    last), or None for the other forms."""
    if "async" not in ins.mods:
        return None
    if space != "shared::cluster" or "mbarrier::complete_tx::bytes" not in ins.mods:
        raise unsupported(ins, f"{ins.opcode}.async needs .shared::cluster and .mbarrier::complete_tx::bytes "
                               f"(PTX ISA 9.7.9.12, 9.7.13.6)")
    exactly(ins, operands)
    return remote_completion(ins, b, ins.operands[-1])


def _destinations(bt, parts):
    """(threads, the batch CTA each one's access lands in) of located shared accesses."""
    thr = np.concatenate([p[3] for p in parts])
    cta = np.concatenate([p[2] // bt.S for p in parts])
    order = np.argsort(thr, kind="stable")        # the mbarrier operand is read for sorted threads
    return thr[order], cta[order]


# ---- atomics ------------------------------------------------------------------------------------
ATOM_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")


def _atom_fn(op, t, space):
    """f(old, b, c) -> new for raw-typed arrays of type t."""
    if t.name in ("f16", "bf16", "f16x2", "bf16x2"):
        fmt = half_format(t)
        if op in ("min", "max"):         # atom/red .min/.max of halves: min/max.f16's (ops_half)
            f = lanes(lambda x, y: minmax_bits(x, y, fmt, op == "min"), t)
            return lambda old, v, c: f(old, v)
        if op != "add":
            raise LayoutsimError(f"atom .{op} of .{t.name}: the PTX ISA has only .add, .min, .max, .exch and .cas "
                                 f"of half types")

        def hadd(x, y):
            return F.round_to(F.sum_odd(decode(x, fmt), decode(y, fmt)), fmt, "rn")
        f = lanes(hadd, t)
        return lambda old, v, c: f(old, v)
    if t.name in ("f32", "f64"):
        fl = np.float32 if t.bits == 32 else np.float64
        ftz = space == "global" and t.bits == 32   # CUDA guide: global f32 atomicAdd is FTZ

        def fadd(old, v, c):
            x, y = old.view(fl).astype(np.float64), np.asarray(v).view(fl).astype(np.float64)
            if t.bits == 64:
                return (x + y).view(np.uint64)
            return F.round_to(x + y if not ftz else F.flush(x, "f32") + F.flush(y, "f32"), "f32", "rn", ftz)

        def fminmax(old, v, c):
            x, y = old.view(fl), np.asarray(v).view(fl)
            r = (np.fmin if op == "min" else np.fmax)(x, y)
            return r.astype(fl).view(old.dtype)
        if op == "add":
            return fadd
        if op in ("min", "max"):
            return fminmax
        if op != "exch":
            raise ValueError(op)
    dt = t.dtype if t.kind in ("s", "u") else np.dtype(f"u{t.bits // 8}")

    def v_(x):
        return np.asarray(x).view(dt) if np.asarray(x).dtype.itemsize == dt.itemsize else np.asarray(x).astype(dt)
    fns = {
        "add": lambda o, v, c: (o.view(dt) + v_(v)).view(o.dtype),
        "min": lambda o, v, c: np.minimum(o.view(dt), v_(v)).view(o.dtype),
        "max": lambda o, v, c: np.maximum(o.view(dt), v_(v)).view(o.dtype),
        "and": lambda o, v, c: o & v_(v).view(o.dtype), "or": lambda o, v, c: o | v_(v).view(o.dtype),
        "xor": lambda o, v, c: o ^ v_(v).view(o.dtype), "exch": lambda o, v, c: v_(v).view(o.dtype),
        "inc": lambda o, v, c: np.where(o >= v_(v).view(o.dtype), 0, o + 1).astype(o.dtype),
        "dec": lambda o, v, c: np.where((o == 0) | (o > v_(v).view(o.dtype)), v_(v).view(o.dtype),
                                        o - 1).astype(o.dtype),
        "cas": lambda o, v, c: np.where(o == v_(v).view(o.dtype), v_(c).view(o.dtype), o),
    }
    return fns[op]


def _atomic(ins, b, prog):
    """atom / red: read-modify-write, serialized in thread order where addresses repeat."""
    has_dst = ins.opcode == "atom"
    if "async" in ins.mods and has_dst:
        raise unsupported(ins, "atom.async (the PTX ISA has red.async only)")
    if any(m in VEC for m in ins.mods):
        raise unsupported(ins, "vector atomics")
    space = space_of(ins.mods)
    op = next((m for m in ins.mods if m in ATOM_OPS), None)
    if op is None:
        raise unsupported(ins, "no atomic operation")
    t = T.instr_type(ins.mods, ins.line)
    if t.bits == 128:
        raise unsupported(ins, f"{ins.opcode} of .b128 (the model moves .b128 values, it does not compute on them)")
    if t.name in ("f16", "bf16", "f16x2", "bf16x2") and op not in ("add", "min", "max"):
        raise unsupported(ins, f"{ins.opcode}.{op} of .{t.name} (the PTX ISA has .add, .min and .max of half types)")
    nb = max(1, t.bits // 8)
    done = _remote_completion(ins, b, space, 3)
    need(ins, has_dst + 2 + (op == "cas"))      # [d,] address, b[, c] (and maybe a cache policy)
    ops_ = list(ins.operands)
    dst = b.write(ops_.pop(0), T.get(f"b{t.bits}"), ins) if has_dst else None
    addr, _ = b.address(ops_[0], ins)
    rb = b.read(ops_[1], T.get(f"b{t.bits}"), ins)
    rc = b.read(ops_[2], T.get(f"b{t.bits}"), ins) if op == "cas" else None
    raw = _raw(t)

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return
        parts = locate(bt, space, _addresses(addr, bt, thr), thr, nb, ins.name)
        bv = np.broadcast_to(np.asarray(rb(bt)), (bt.T,))
        cv = np.broadcast_to(np.asarray(rc(bt)), (bt.T,)) if rc else bv
        old_all = np.zeros(bt.T, raw)
        for sp, views, flat, pthr, rel in parts:
            f = _atom_fn(op, t, sp)
            w = views[nb]
            for sel in serial_rounds(flat, pthr):
                cur = w[flat[sel] // nb].astype(raw)
                new = f(cur, bv[pthr[sel]].astype(raw), cv[pthr[sel]].astype(raw))
                w[flat[sel] // nb] = np.asarray(new).astype(raw)
                old_all[pthr[sel]] = cur
            bt.events.access(Access(ins.opcode, sp, ins.extra["site"], nb, pthr, rel, flat, "atomic",
                                    mods=ins.mods, target=flat // bt.S if sp == "shared::cluster" else None))
        if done:
            done(bt, *_destinations(bt, parts), nb)
        if dst is not None:
            dst(bt, old_all, g, full)
    return {"fn": fn}


def serial_rounds(keys, ties):
    """Index arrays of `keys` in rounds, each key at most once per round and its repeats in the order
    of `ties`: read-modify-writes of one address (atomics, bulk reductions) run one after another."""
    keys = np.asarray(keys)
    if not keys.size:
        return []
    order = np.lexsort((ties, keys))
    sk = keys[order]
    start = np.r_[True, sk[1:] != sk[:-1]]
    rank = np.arange(len(order)) - np.flatnonzero(start)[np.cumsum(start) - 1]
    return [order[rank == r] for r in range(int(rank.max()) + 1)]


# ---- cp.async ------------------------------------------------------------------------------------
class AsyncCopies:
    """Per-batch pending cp.async copies and each thread's open group number."""

    def __init__(self, T_):
        self.open = np.zeros(T_, np.int64)
        self.pending = []            # dicts: flat, data, threads, group, site

    def wait(self, bt, thr, keep):
        """Complete the copies of threads `thr` from groups older than their newest `keep`."""
        limit = np.full(bt.T, -1, np.int64)
        limit[thr] = self.open[thr] - keep
        still = []
        for e in self.pending:
            done = e["group"] < limit[e["threads"]]
            n = np.count_nonzero(done)
            if not n:                          # none of it lands yet: kept as it is
                still.append(e)
                continue
            every = n == done.size
            flat, data, threads = (e["flat"], e["data"], e["threads"]) if every else \
                (e["flat"][done], e["data"][done], e["threads"][done])
            scatter(bt.smem_v, flat, data)
            bt.events.access(Access("cp.async", "shared", e["site"], data.shape[1], threads, None, flat, "write",
                                    issued=False))
            if not every:
                keep_ = ~done
                still.append({k: (v[keep_] if isinstance(v, np.ndarray) else v) for k, v in e.items()})
        self.pending = still


def async_groups(bt):
    if bt.async_groups is None:
        bt.async_groups = AsyncCopies(bt.T)
    return bt.async_groups


def _cp_async(ins, b, prog):
    if not ins.mods or ins.mods[0] != "async":
        raise unsupported(ins)
    sub = ins.mods[1] if len(ins.mods) > 1 else ""
    if sub == "commit_group":
        return {"fn": lambda bt, g, full: np.add.at(async_groups(bt).open, np.flatnonzero(g), 1)}
    if sub in ("wait_group", "wait_all"):
        n = 0 if sub == "wait_all" else ins.operands[0].value
        if sub == "wait_group" and (ins.operands[0].kind != "imm" or len(ins.operands) != 1 or n < 0):
            raise LayoutsimError(f"{lines.of(ins)}: {ins.name} takes one operand, the number of groups "
                                 f"left pending (an integer >= 0): {ins.text}")

        def wait(bt, g, full):
            a = async_groups(bt)
            thr = np.flatnonzero(g)
            if sub == "wait_all":
                a.open[thr] += 1
            a.wait(bt, thr, n)
        return {"fn": wait}
    need(ins, 3)
    dst, _ = b.address(ins.operands[0], ins)
    src, _ = b.address(ins.operands[1], ins)
    size = ins.operands[2].value
    if size not in (4, 8, 16):
        raise unsupported(ins, f"cp-size {size}")
    extra = ins.operands[3] if len(ins.operands) > 3 else None
    ignore = srcsize = None
    cache = "cg" if "cg" in ins.mods else "ca"
    if extra is not None and extra.kind == "reg" and b.rtype(extra, ins).kind == "pred":
        ignore = b.read(extra, T.get("pred"), ins)
    elif extra is not None:
        srcsize = b.read(extra, T.get("u32"), ins)
    name, site, sass = ins.name, ins.extra["site"], SASS.ldgsts(size)

    def fn(bt, g, full):
        thr = g.nonzero()[0]
        if len(thr) == 0:
            return
        n_src = None                               # every thread reads its cp-size bytes
        if srcsize is not None:
            n_src = _lanes(srcsize(bt), thr).astype(np.int64)
            if np.count_nonzero(n_src > size):
                j = int(np.flatnonzero(n_src > size)[0])
                raise Fault(thr[j], 0, f"src-size {int(n_src[j])} exceeds cp-size {size}", "invalid_operand")
        if ignore is not None:
            n_src = np.where(_lanes(ignore(bt), thr), 0, size if n_src is None else n_src)
        dparts = locate(bt, "shared", _addresses(dst, bt, thr), thr, size, name)
        reads = None if n_src is None else n_src > 0
        nr = len(thr) if reads is None else np.count_nonzero(reads)
        every = nr == len(thr)                     # each thread reads (the common case: no masking)
        data = None if every else np.zeros((len(thr), size), np.uint8)
        if nr:
            sthr, n = (thr, n_src) if every else (thr[reads], n_src[reads])
            sa = _addresses(src, bt, sthr)
            if srcsize is None:                    # every byte: aligned words of the heap
                got = load(bt, locate(bt, "global", sa, sthr, size, name), size)
            else:                                  # only the first src-size bytes are read
                if np.count_nonzero(sa % size):
                    j = int(np.flatnonzero(sa % size)[0])
                    raise Fault(sthr[j], sa[j], f"address {int(sa[j]):#x} is not {size}-byte aligned, as "
                                f"{name} needs: the GPU faults (misaligned address)", "misaligned", "global")
                off = bt.heap.check(sa, 1, sthr)
                bt.heap.check(sa + n - 1, 1, sthr)
                if not np.count_nonzero(n != size):     # whole words (both ends checked above)
                    got = gather(bt.heap.v, off, size)
                else:
                    k = np.arange(size)
                    take = k[None, :] < n[:, None]
                    got = np.zeros((len(sthr), size), np.uint8)
                    got[take] = bt.heap.data[(off[:, None] + k)[take]]
            if every:
                data = got
            else:
                data[reads] = got
            bt.events.access(Access("cp.async", "global", site, size, sthr, sa, path=cache))
        _pend(bt, thr, dparts, data)

    def _pend(bt, thr, dparts, data):
        a = async_groups(bt)
        a.pending.append({"flat": dparts[0][2], "data": data, "threads": thr,
                          "group": a.open[thr].copy(), "site": site})
        bt.events.access(Access("cp.async", "shared", site, size, thr, dparts[0][4], dparts[0][2],
                                "write", lands=False, path=cache, sass=sass))
    return {"fn": fn}


# ---- no state change -----------------------------------------------------------------------------
def _noop(ins, b, prog):
    return {"fn": lambda bt, g, full: None}


def _createpolicy(ins, b, prog):
    w = b.write(ins.operands[0], T.get("b64"), ins)
    return {"fn": lambda bt, g, full: w(bt, np.uint64(0), g, full)}


def _isspacep(ins, b, prog):
    space = space_of(ins.mods)
    if space not in ("shared", "local", "global", "const", "param"):
        raise unsupported(ins, "a state space to test: .global, .shared, .local, .const or .param")
    exactly(ins, 2)
    w = b.write(ins.operands[0], T.get("pred"), ins)
    r = b.read(ins.operands[1], T.get("u64"), ins)

    def fn(bt, g, full):
        a = np.asarray(r(bt)).astype(np.int64)
        win = a & ~np.int64(WINDOW - 1)
        res = {"shared": win == SHARED_WINDOW, "local": win == LOCAL_WINDOW,
               "global": (a >= GLOBAL_BASE), "const": (a >= GLOBAL_BASE),
               "param": win == PARAM_WINDOW}[space]
        w(bt, res, g, full)
    return {"fn": fn}


atom_fn = _atom_fn          # the read-modify-write arithmetic ops_reduce.py's integer reductions share
