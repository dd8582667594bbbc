"""The record of a simulator run: one entry per executed instruction.

Shared-memory instructions carry the bank model's cost (wavefronts, ideal, conflicts; summed
over the warps of a warpgroup, with the per-warp figures beside them); a wgmma reading operands
from shared memory carries its GMMA wavefronts (sim/costing.py: wgmma_cost; no per-warp split);
the others carry None there. A `Run` is what `Machine.run(program)` returns: the program's result and the trace of
the instructions it executed.
"""
from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class TraceEntry:
    index: int                     # position in the machine's trace
    op: str                        # PTX / AMD spelling of what ran ("ld.shared.v4.b32", "ldmatrix.x4.trans", ...)
    instruction: str               # catalog name for catalog instructions, else the op
    active: int                    # threads that took part
    wavefronts: Optional[int] = None   # shared-memory instructions: bank-model wavefronts (all warps)
    ideal: Optional[int] = None
    conflicts: Optional[int] = None
    per_warp: tuple = ()           # ((wavefronts, ideal, conflicts), ...) per warp, shared accesses only
    note: str = ""                 # e.g. "B read from shared memory by descriptor: 4096 bytes = 32 GMMA ..."

    def as_dict(self):
        return {"index": self.index, "op": self.op, "instruction": self.instruction,
                "active": self.active, "wavefronts": self.wavefronts, "ideal": self.ideal,
                "conflicts": self.conflicts,
                "per_warp": [list(w) for w in self.per_warp], "note": self.note}


class Trace(list):
    """A list of TraceEntry with summaries."""

    def shared(self):
        return Trace(e for e in self if e.wavefronts is not None)

    def by_op(self):
        """{op: {"count", "wavefronts", "ideal", "conflicts"}} in first-seen order."""
        out = {}
        for e in self:
            s = out.setdefault(e.op, {"count": 0, "wavefronts": None, "ideal": None, "conflicts": None})
            s["count"] += 1
            if e.wavefronts is not None:
                for k in ("wavefronts", "ideal", "conflicts"):
                    s[k] = (s[k] or 0) + getattr(e, k)
        return out

    def totals(self):
        sh = self.shared()
        return {"instructions": len(self), "shared": len(sh),
                "wavefronts": sum(e.wavefronts for e in sh), "ideal": sum(e.ideal for e in sh),
                "conflicts": sum(e.conflicts for e in sh)}

    def format(self, summary=True):
        """A text table: per op (summary=True) or per instruction."""
        if summary:
            rows = [(op, str(s["count"]), _n(s["wavefronts"]), _n(s["ideal"]), _n(s["conflicts"]))
                    for op, s in self.by_op().items()]
            head = ("op", "count", "wavefronts", "ideal", "conflicts")
        else:
            rows = [(str(e.index), e.op, str(e.active), _n(e.wavefronts), _n(e.ideal), _n(e.conflicts))
                    for e in self]
            head = ("#", "op", "threads", "wavefronts", "ideal", "conflicts")
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
        line = lambda r: "  ".join(c.ljust(w) if i == 0 or (not summary and i == 1) else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(r, widths)))
        return "\n".join([line(head)] + [line(r) for r in rows])

    def as_json(self):
        return [e.as_dict() for e in self]


def _n(v):
    return "-" if v is None else str(v)


@dataclass
class Run:
    result: Any
    trace: Trace = field(default_factory=Trace)
    machine: Any = None

    def __iter__(self):                 # result, trace = machine.run(...)
        return iter((self.result, self.trace))
