"""Instruction -> Step: dispatch to the op modules, plus control flow and the shared helpers.

Each op module has OPS = {opcode: compile(ins, b, prog) -> dict of Step fields}; "fn" is
fn(batch, g, full): g the threads that execute (active and guard true), full True when g holds
every live thread (writes may then skip the merge with the old register value).
Unknown instructions are refused at load time with their name and line.
"""
import inspect

import numpy as np

from ..errors import LayoutsimError
from . import lines
from . import types as T
from .module import UnsupportedPtx
from .program import Step

_OPS = None


def ops():
    global _OPS
    if _OPS is None:
        from . import ops_async, ops_cvt, ops_float, ops_half, ops_int, ops_matrix, ops_mem, ops_warp, ops_wgmma
        _OPS = {}
        for m in (ops_int, ops_float, ops_half, ops_cvt, ops_mem, ops_warp, ops_matrix, ops_wgmma, ops_async):
            _OPS.update(m.OPS)
        _OPS.update(CONTROL)
    return _OPS


def compile_step(prog, ins, pc, site):
    step = Step(pc=pc, ins=ins, site=site)
    ins.extra["site"] = site
    if ins.extra.get("hidden"):
        step.info["hidden"] = True
    if ins.guard:
        step.guard = (prog.reg_slot(ins.guard[0], ins), ins.guard[1])
        if prog.reg_types[step.guard[0]].kind != "pred":
            raise LayoutsimError(f"line {ins.line}: guard {ins.guard[0]} is not a predicate")
    comp = ops().get(ins.opcode)
    if comp is None:
        raise UnsupportedPtx(f"{lines.of(ins)}: unsupported instruction {ins.name} ({ins.text})")
    fields = comp(ins, prog.builder, prog)
    for k, v in fields.items():
        if k == "info":
            step.info.update(v)
        else:
            setattr(step, k, v)
    return step


def unsupported(ins, why=""):
    """The refusal of an instruction the executor does not model: its PTX and CUDA line (lines.py)."""
    return UnsupportedPtx(f"{lines.of(ins)}: unsupported instruction {ins.name}"
                          f"{' (' + why + ')' if why else ''}")


def need(ins, n):
    if len(ins.operands) < n:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name} needs {n} operands: {ins.text}")


def exactly(ins, n):
    """Refuse an instruction that has not exactly n operands (naming the count it has)."""
    if len(ins.operands) != n:
        raise LayoutsimError(f"line {ins.line}: {ins.name} takes {n} operand{'s' * (n != 1)}, not "
                             f"{len(ins.operands)}: {ins.text}")


def _arity(fn):
    """The number of arguments fn takes (a numpy ufunc's inputs, a function's positional
    parameters), or None when it takes any number."""
    if getattr(fn, "nin", None) is not None:
        return fn.nin
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)


# ---- small builders for ALU ops -----------------------------------------------------------------
def elementwise(ins, b, fn, src_type, dst_type=None, nsrc=None):
    """d = fn(a, b, ...) with sources read as src_type and the result stored as dst_type. The
    instruction has a destination and exactly the sources fn takes, or, with nsrc, at least nsrc
    (the caller reads the operands after them)."""
    dst_type = dst_type or src_type
    ops_ = ins.operands
    if nsrc is not None:
        n = nsrc
        need(ins, n + 1)
    else:
        n = len(src_type) if isinstance(src_type, (list, tuple)) else _arity(fn)
        n = len(ops_) - 1 if n is None else n
        exactly(ins, n + 1)
    d = b.write(ops_[0], dst_type, ins)
    srcs = [b.read(o, src_type if not isinstance(src_type, (list, tuple)) else src_type[i], ins)
            for i, o in enumerate(ops_[1:1 + n])]
    if n == 1:
        s0, = srcs
        return {"fn": lambda bt, g, full: d(bt, fn(s0(bt)), g, full)}
    if n == 2:
        s0, s1 = srcs
        return {"fn": lambda bt, g, full: d(bt, fn(s0(bt), s1(bt)), g, full)}
    if n == 3:
        s0, s1, s2 = srcs
        return {"fn": lambda bt, g, full: d(bt, fn(s0(bt), s1(bt), s2(bt)), g, full)}
    s = srcs
    return {"fn": lambda bt, g, full: d(bt, fn(*[x(bt) for x in s]), g, full)}


# ---- control flow -------------------------------------------------------------------------------
def _label(prog, ins, name):
    key = ins.extra.get("prefix", "") + name
    if key not in prog.labels:
        raise LayoutsimError(f"line {ins.line}: branch to unknown label {name}")
    return prog.labels[key]


def _bra(ins, b, prog):
    need(ins, 1)
    op = ins.operands[0]
    if op.kind != "sym":
        raise unsupported(ins, "branch target must be a label")
    return {"kind": "bra", "target": _label(prog, ins, op.value)}


def _exit(ins, b, prog):
    return {"kind": "exit"}


def _ret(ins, b, prog):
    end = ins.extra.get("ret_label")
    if end is None:
        return {"kind": "exit"}
    return {"kind": "bra", "target": prog.labels[end]}


def _param_copy(prog, b, ins, dst_key, src_op):
    """A function(batch, g) copying one call argument (a .param variable, register or
    immediate) into the per-thread storage of a callee parameter."""
    off, var = prog.param_vars[dst_key]
    size = var.size
    if src_op.kind == "sym":
        src_off = prog.symbol_address(src_op.value, ins)

        def copy(bt, g):
            t = np.flatnonzero(g)
            base = bt.param_base[t][:, None]
            bt.params[base + off + np.arange(size)] = bt.params[base + src_off + np.arange(size)]
        return copy
    typ = T.get(f"b{min(64, size * 8)}") if size in (1, 2, 4, 8) else None
    if typ is None:
        raise unsupported(ins, f"argument {src_op} for a {size}-byte parameter")
    rd = b.read(src_op, typ, ins)

    def copy(bt, g):
        t = np.flatnonzero(g)
        v = np.broadcast_to(np.asarray(rd(bt)), (bt.T,))[t]
        raw = np.ascontiguousarray(v).view(np.uint8).reshape(len(t), -1)
        bt.params[bt.param_base[t][:, None] + off + np.arange(size)] = raw
    return copy


def _call(ins, b, prog):
    """Copy the arguments into the callee's parameters and fall into its inlined body; threads
    whose guard is false skip the call (target: after the result copy)."""
    callee, cprefix = ins.extra["callee"], ins.extra["cprefix"]
    copies = [_param_copy(prog, b, ins, cprefix + p.name, a) for p, a in zip(callee.params, ins.extra["args"])]

    def fn(bt, g, full):
        for c in copies:
            c(bt, g)
    return {"kind": "call", "fn": fn, "target": prog.labels[ins.extra["end"]] + 1}


def _retcopy(ins, b, prog):
    """At the end of an inlined callee: its results into the caller's .param variables or registers."""
    callee, cprefix = ins.extra["callee"], ins.extra["cprefix"]
    copies = []
    for r, dst in zip(callee.rets, ins.extra["rets"]):
        src_off, var = prog.param_vars[cprefix + r.name]
        if dst.kind == "sym":
            copies.append(("param", src_off, prog.symbol_address(dst.value, ins), var.size))
        elif var.size in (1, 2, 4, 8):
            copies.append(("reg", src_off, b.write(dst, T.get(f"b{var.size * 8}"), ins), var.size))
        else:
            raise unsupported(ins, f"a {var.size}-byte result into a register")

    def fn(bt, g, full):
        t = np.flatnonzero(g)
        base = bt.param_base[t][:, None]
        for kind, src, dst, size in copies:
            raw = bt.params[base + src + np.arange(size)]
            if kind == "param":
                bt.params[base + dst + np.arange(size)] = raw
            else:
                vals = np.zeros(bt.T, np.dtype(f"u{size}"))
                vals[t] = np.ascontiguousarray(raw).view(f"<u{size}").reshape(-1)
                dst(bt, vals, g, False)
    return {"fn": fn}


def _nop(ins, b, prog):
    return {"fn": lambda bt, g, full: None}


def _callret0(ins, b, prog):
    """printf's int result: 0."""
    copies = []
    for op in ins.operands:
        if op.kind == "sym":
            off = prog.symbol_address(op.value, ins)
            copies.append(off)

    def fn(bt, g, full):
        t = np.flatnonzero(g)
        for off in copies:
            bt.params[bt.param_base[t][:, None] + off + np.arange(4)] = 0
    return {"fn": fn}


def _trap(ins, b, prog):
    return {"kind": "trap"}


CONTROL = {"bra": _bra, "exit": _exit, "ret": _ret, "call": _call, "retcopy": _retcopy, "nop": _nop,
           "callret0": _callret0,
           "trap": _trap, "brkpt": _nop, "pmevent": _nop, "nanosleep": _nop}
