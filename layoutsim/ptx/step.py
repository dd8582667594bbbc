"""Step: one compiled instruction of a Program, as the scheduler executes it."""
from dataclasses import dataclass, field

from .syntax import Instr


@dataclass
class Step:
    pc: int
    ins: Instr
    site: int
    kind: str = "op"                 # op, bra, exit, call, bar, trap, jump (fn -> per-thread targets)
    fn: object = None                # fn(batch, g, full) for "op"/"bar" steps
    guard: object = None             # (slot, negated) or None
    target: int = -1                 # bra: where taken threads go; call: where guard-false ones go
    sync: object = None              # warp-collective: function(batch) -> per-thread membermask, or "all"
    info: dict = field(default_factory=dict)
