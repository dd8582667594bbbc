"""Calls that are not an inlined copy (program.py): recursion and calls through a function pointer.

Recursion (PTX ISA 9.0 section 9.7.12.5 `call`; recursion is allowed on sm_20 and later): a call
to a function whose copy is already being expanded is a `rcall` step. Each thread has a call
stack per recursive copy: the step pushes the copy's frame (its registers, the .param and .local
variables it and what it inlines declare, and which call site to return to), copies the
arguments and jumps to the copy's first instruction; the copy's `ret` of a thread with a frame
pops it, restores that activation, writes the results to the call site's destinations and
returns after it. A thread deeper than MAX_CALL_DEPTH activations faults (kind "stack_overflow"):
the GPU's call stack is bounded too (cudaLimitStackSize, 1 KiB a thread by default; how many
frames fit depends on the frame ptxas allots, which this bound does not model).

Function pointers (`call (r), %rd, (a), prototype;`, section 9.7.12.5 with a .callprototype): the
`icall` step sends each thread to the inlined copy of the function whose address its register
holds (module.FUNCTION_BASE); an address that is no candidate's faults (kind "invalid_call", as
the GPU's illegal instruction or address).
"""
import numpy as np

from ..errors import LayoutsimError
from . import types as T
from .builders import unsupported
from .state import Fault
from . import lines

MAX_CALL_DEPTH = 1024       # activations of one recursive function a thread may hold


class Frames:
    """The per-thread stack of one recursive copy: depth[t] and, per level, the saved state."""

    def __init__(self, bt, regs, param_bytes, local_bytes):
        self.depth = np.zeros(bt.T, np.int64)
        self.regs, self.pb, self.lb = regs, param_bytes, local_bytes
        self.levels = []

    def push(self, bt, t, site, name):
        lv = self.depth[t]
        if lv.size and int(lv.max()) >= MAX_CALL_DEPTH:
            j = int(t[np.argmax(lv)])
            raise Fault(j, 0, f"call stack overflow: more than {MAX_CALL_DEPTH} nested activations of "
                              f"{name} (the GPU's stack, cudaLimitStackSize, is bounded too)", "stack_overflow")
        for level in np.unique(lv):
            sel = t[lv == level]
            while len(self.levels) <= level:
                self.levels.append({"regs": [np.zeros(bt.T, bt.regs[s].dtype) for s in self.regs],
                                    "params": np.zeros((bt.T, len(self.pb)), np.uint8),
                                    "local": np.zeros((bt.T, len(self.lb)), np.uint8),
                                    "site": np.zeros(bt.T, np.int64)})
            f = self.levels[level]
            for i, s in enumerate(self.regs):
                f["regs"][i][sel] = bt.regs[s][sel]
            f["params"][sel] = bt.params[bt.param_base[sel][:, None] + self.pb]
            f["local"][sel] = bt.local[bt.local_base[sel][:, None] + self.lb]
            f["site"][sel] = site
        self.depth[t] += 1

    def pop(self, bt, t):
        """Restore the threads' previous activation; returns the call site each returns to."""
        self.depth[t] -= 1
        lv = self.depth[t]
        sites = np.zeros(len(t), np.int64)
        for level in np.unique(lv):
            k = lv == level
            sel = t[k]
            f = self.levels[level]
            for i, s in enumerate(self.regs):
                r = bt.regs[s].copy()
                r[sel] = f["regs"][i][sel]
                bt.regs[s] = r
            bt.params[bt.param_base[sel][:, None] + self.pb] = f["params"][sel]
            bt.local[bt.local_base[sel][:, None] + self.lb] = f["local"][sel]
            sites[k] = f["site"][sel]
        return sites


def _frame(prog, cprefix):
    """(register slots, param byte offsets, local byte offsets) of a copy and what it inlines."""
    regs = sorted(s for k, s in prog._slots.items() if k.startswith(cprefix))
    pb = [off + i for k, (off, v) in prog.param_vars.items() if k.startswith(cprefix) for i in range(v.size)]
    lb = []
    for k, off in prog.local_vars.items():
        if k.startswith(cprefix):
            lb += range(off, off + prog.local_sizes[k])
    return regs, np.asarray(sorted(set(pb)), np.int64), np.asarray(sorted(set(lb)), np.int64)


def frames(bt, prog, cprefix):
    st = bt.call_stacks.get(cprefix)
    if st is None:
        st = bt.call_stacks[cprefix] = Frames(bt, *_frame(prog, cprefix))
    return st


def _copy_args(prog, b, ins, cprefix, callee, args):
    from_ops = [arg_copy(prog, b, ins, cprefix + p.name, a) for p, a in zip(callee.params, args)]
    return lambda bt, g: [c(bt, g) for c in from_ops]


def arg_copy(prog, b, ins, key, src):
    """A function(batch, g) copying one call argument (a .param variable, register or immediate)
    into the per-thread storage of the callee parameter `key` (inlined calls and rcall)."""
    off, var = prog.param_vars[key]
    size = var.size
    if src.kind == "sym":
        so = prog.symbol_address(src.value, ins)

        def copy(bt, g):
            t = np.flatnonzero(g)
            base = bt.param_base[t][:, None]
            bt.params[base + off + np.arange(size)] = bt.params[base + so + np.arange(size)]
        return copy
    if size not in (1, 2, 4, 8):
        raise unsupported(ins, f"argument {src} for a {size}-byte parameter")
    rd = b.read(src, T.get(f"b{size * 8}"), ins)

    def copy(bt, g):
        t = np.flatnonzero(g)
        v = np.broadcast_to(np.asarray(rd(bt)), (bt.T,))[t]
        bt.params[bt.param_base[t][:, None] + off + np.arange(size)] = \
            np.ascontiguousarray(v).view(np.uint8).reshape(len(t), -1)
    return copy


def rcall(ins, b, prog):
    """A recursive call: push the copy's frame, copy the arguments, jump to its start."""
    callee, cprefix, site = ins.extra["callee"], ins.extra["cprefix"], ins.extra["site_index"]
    copy = _copy_args(prog, b, ins, cprefix, callee, ins.extra["args"])
    start = prog.labels[ins.extra["start"]]

    def fn(bt, g, full):
        t = np.flatnonzero(g)
        # the argument values first (they may live in the frame about to be saved, never changed by it)
        frames(bt, prog, cprefix).push(bt, t, site, callee.name)
        copy(bt, g)
        return np.full(bt.T, start, np.int64)
    return {"kind": "jump", "fn": fn, "target": prog.labels[ins.extra["resume"]]}


def recursive_ret(ins, b, prog, cprefix, normal):
    """The `ret` of a copy that recursive calls re-enter: a thread with frames returns to its call site."""
    sites = []
    for call in prog.recursion[cprefix]:
        callee = call.extra["callee"]
        writes = [_result_write(prog, b, call, cprefix + r.name, dst)
                  for r, dst in zip(callee.rets, call.extra["rets"])]
        sites.append((prog.labels[call.extra["resume"]], writes))

    def fn(bt, g, full):
        tgt = np.full(bt.T, normal, np.int64)
        st = bt.call_stacks.get(cprefix)
        if st is None:
            return tgt
        t = np.flatnonzero(g & (st.depth > 0))
        if t.size == 0:
            return tgt
        # the results leave the callee's frame before the caller's activation is restored
        saved = {id(w): w[0](bt, t) for _, ws in sites for w in ws}
        where = st.pop(bt, t)
        for i, (resume, ws) in enumerate(sites):
            k = t[where == i]
            if k.size == 0:
                continue
            m = np.zeros(bt.T, bool)
            m[k] = True
            for w in ws:
                w[1](bt, saved[id(w)], t, m)
            tgt[k] = resume
        return tgt
    return fn


def _result_write(prog, b, ins, src_key, dst):
    """(read(bt, t) -> bytes [len(t), size] of the callee's result, write(bt, raw, t, mask))."""
    src, var = prog.param_vars[src_key]
    size = var.size
    idx = src + np.arange(size)

    def read(bt, t):
        return bt.params[bt.param_base[t][:, None] + idx].copy()
    if dst.kind == "sym":
        d = prog.symbol_address(dst.value, ins)

        def write(bt, raw, t, m):
            sel = m[t]
            bt.params[bt.param_base[t[sel]][:, None] + d + np.arange(size)] = raw[sel]
        return read, write
    if size not in (1, 2, 4, 8):
        raise unsupported(ins, f"a {size}-byte result into a register")
    put = b.write(dst, T.get(f"b{size * 8}"), ins)

    def write_reg(bt, raw, t, m):
        vals = np.zeros(bt.T, np.dtype(f"u{size}"))
        vals[t] = np.ascontiguousarray(raw).view(f"<u{size}").reshape(-1)
        put(bt, vals, m, False)
    return read, write_reg


def icall(ins, b, prog):
    """A call through a register: each thread to the copy of the function its address names."""
    cands = ins.extra["candidates"]
    addrs = np.asarray([a for a, _ in cands], np.uint64)
    starts = np.asarray([prog.labels[lab] for lab in ins.extra["labels"]], np.int64)
    rd = b.read(ins.operands[0], T.get("u64"), ins)
    names = ", ".join(n for _, n in cands) or "none"

    def fn(bt, g, full):
        v = np.broadcast_to(np.asarray(rd(bt)), (bt.T,))
        hit = v[:, None] == addrs[None, :] if addrs.size else np.zeros((bt.T, 0), bool)
        bad = g & ~hit.any(1)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise Fault(j, 0, f"indirect call to address {int(v[j]):#x}, which is no function the module "
                              f"takes the address of with this prototype (candidates: {names})", "invalid_call")
        tgt = np.zeros(bt.T, np.int64)
        if addrs.size:
            tgt = starts[np.argmax(hit, axis=1)]
        return tgt
    if not cands:
        raise LayoutsimError(f"{lines.of(ins)}: indirect call ({ins.text}) but the module takes the address "
                             f"of no function with {len(ins.extra['args'])} parameter(s) "
                             f"and {len(ins.extra['rets'])} result(s)")
    return {"kind": "jump", "fn": fn, "target": prog.labels[ins.extra["join"]]}
