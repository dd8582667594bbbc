"""The tensor core's collector buffers of tcgen05.mma (PTX ISA 9.x 9.7.16.10 'TensorCore 5th
Generation Matrix Multiply and accumulate Operations', the collector-buffer table of
9.7.16.10.9.1 tcgen05.mma and 9.7.16.10.9.3 tcgen05.mma.ws).

A dense tcgen05.mma may keep its A matrix in collector buffer `a`, a tcgen05.mma.ws its B matrix in
one of the buffers b0..b3 (`.collector::<buffer>::<op>`; none named: `::a::discard`, for .ws
`::b0::discard`):
  fill     the matrix read from memory is kept in the buffer;
  use      the matrix "can be read" from the buffer, which needs a fill still valid;
  lastuse  as use, and the buffer is discarded after;
  discard  the buffer is discarded.
Reuse is opportunistic: the tensor core may reload the matrix from memory even when allowed to
reuse it. So the model computes with the matrix it reads from memory and checks the two agree:
a use/lastuse with no valid fill, or whose memory no longer holds the kept matrix bit for bit
(which of the two the tensor core reads is the hardware's choice), is a fault. The buffers are the
CTA's (TensorMemory.collectors); a fill replaces what the buffer held.
"""
import numpy as np

from .builders import unsupported
from .state import Fault

OPS = ("fill", "use", "lastuse", "discard")
SECTION = {"a": "9.7.16.10.9.1", "b": "9.7.16.10.9.3"}


def usage(ins, ws):
    """(buffer, op) an instruction names (its default when none); a buffer of the other form is refused."""
    named = [m.split("::")[1:] for m in ins.mods if m.startswith("collector::")]
    if not named:
        return ("b0" if ws else "a"), "discard"
    if len(named) > 1:
        raise unsupported(ins, "more than one .collector qualifier")
    buf, op = named[0] if len(named[0]) == 2 else (None, None)
    legal = ("b0", "b1", "b2", "b3") if ws else ("a",)
    if buf not in legal or op not in OPS:
        raise unsupported(ins, f".collector::{'::'.join(named[0])}: tcgen05.mma{'.ws' if ws else ''} takes "
                               f".collector::{{{', '.join(legal)}}}::{{{', '.join(OPS)}}} (PTX ISA "
                               f"{SECTION['b' if ws else 'a']})")
    return buf, op


def apply(tm, ins, t, cta, buf, op, matrix):
    """The matrix (raw bits) the MMA computes with, after the collector operation on buffer `buf`
    of CTA `cta`: `matrix` as read from memory, checked against the buffer on use/lastuse."""
    key = (int(cta), buf)
    which = "A" if buf == "a" else "B"
    if op == "fill":
        tm.collectors[key] = (np.array(matrix, copy=True), ins.line)
    elif op in ("use", "lastuse"):
        held = tm.collectors.get(key)
        if held is None:
            raise Fault(t, 0, f"{ins.name}: .collector::{buf}::{op} needs a previous fill of collector buffer {buf} "
                              f"still valid, and there is none (PTX ISA {SECTION[buf[0]]}: undefined)",
                        "invalid_operand")
        kept, line = held
        if kept.shape != matrix.shape or not np.array_equal(kept, matrix):
            raise Fault(t, 0, f"{ins.name}: .collector::{buf}::{op}: memory no longer holds the {which} matrix "
                              f"collector buffer {buf} was filled with on line {line}; the tensor core may reuse "
                              f"the buffer or reload memory (PTX ISA 9.7.16.10: reuse is opportunistic), so the "
                              f"result is not determined", "invalid_operand")
    if op in ("lastuse", "discard"):
        tm.collectors.pop(key, None)
    return matrix
