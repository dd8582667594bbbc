"""The helpers every instruction family's handlers share: refusals with the line, operand counts,
the elementwise builder of ALU steps, and the measured SFU models.

A handler is compile(ins, b, prog) -> dict of Step fields; "fn" is fn(batch, g, full): g the
threads that execute (active and guard true), full True when g holds every live thread (writes
may then skip the merge with the old register value). Handlers import these from here, never
from each other's modules' private names (table.py binds them; compile.py builds the steps).
"""
import inspect

from ..errors import LayoutsimError
from ..numerics import sfu, sfu_div
from . import lines
from .module import UnsupportedPtx


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
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name} takes {n} operand{'s' * (n != 1)}, not "
                             f"{len(ins.operands)}: {ins.text}")


def arity(fn):
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
        n = len(src_type) if isinstance(src_type, (list, tuple)) else arity(fn)
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


def sfu_model(name, exact_only=True):
    """A function raw bits -> raw bits for this PTX instruction from layoutsim.numerics.sfu (the
    MUFU behaviour measured on the H200), or None where nothing was measured; exact_only=False
    also gives the best model not proven exact (its .exact is False)."""
    return sfu.model(name, exact_only)


def division_model(name):
    """bits, bits -> bits for div.approx/div.full.f32 (layoutsim.numerics.sfu_div: the SASS
    sequence ptxas emits around the proven MUFU.RCP model), or None for other divisions."""
    return sfu_div.model(name)
