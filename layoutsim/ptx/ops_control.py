"""Control flow and the instructions that do nothing the model can see: bra, exit, ret, the
inlined call's argument and result copies, trap, nop-like hints (PTX ISA 9.7.13)."""
import numpy as np

from ..errors import LayoutsimError
from . import types as T
from .builders import need, unsupported
from .ops_calls import arg_copy, recursive_ret
from . import lines


def _label(prog, ins, name):
    key = ins.extra.get("prefix", "") + name
    if key not in prog.labels:
        raise LayoutsimError(f"{lines.of(ins)}: branch to unknown label {name}")
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
    prefix = ins.extra.get("prefix", "")
    if prefix in prog.recursion:            # a copy recursive calls re-enter: a per-thread return
        return {"kind": "jump", "fn": recursive_ret(ins, b, prog, prefix, prog.labels[end])}
    return {"kind": "bra", "target": prog.labels[end]}


def _call(ins, b, prog):
    """Copy the arguments into the callee's parameters and fall into its inlined body; threads
    whose guard is false skip the call (target: after the result copy)."""
    callee, cprefix = ins.extra["callee"], ins.extra["cprefix"]
    copies = [arg_copy(prog, b, ins, cprefix + p.name, a) for p, a in zip(callee.params, ins.extra["args"])]

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


def _trap(ins, b, prog):
    return {"kind": "trap"}


def griddepcontrol(ins, b, prog):
    """griddepcontrol.launch_dependents / .wait (PTX ISA 9.0, 9.7.13 'griddepcontrol'; CUDA's
    programmatic dependent launch): launch_dependents lets grids that depend on this one start
    early, wait blocks until the prerequisite grids have completed and their memory is visible.
    The executor runs one launch: no dependent grid to start, no prerequisite grid in flight, so
    wait returns at once and neither changes any state (what the GPU does for a launch without
    programmatic dependencies)."""
    return {"fn": lambda bt, g, full: None}
