"""Instruction -> Step: the row of the instruction table (table.py) binds its handler.

A handler is compile(ins, b, prog) -> dict of Step fields (builders.py); "fn" is fn(batch, g,
full): g the threads that execute (active and guard true), full True when g holds every live
thread (writes may then skip the merge with the old register value). Unknown instructions and
illegal modifier combinations are refused at load time with their name and line (table.row_for).
The row's synchronisation class is the only statement of it: it sets Step.sync ("all" for the
whole-warp collectives, "warpgroup", or the membermask reader the handler returns as
`membermask`) and makes a CTA barrier's step a "bar" step; handlers never set either.
"""
from ..errors import LayoutsimError
from .internal import PtxInternalError
from .step import Step
from .table import BY_OPCODE, row_for
from . import lines

_STEP_SYNC = {"aligned": "all", "warpgroup": "warpgroup"}


def ops():
    """{opcode: its rows} (table.BY_OPCODE): the opcodes the executor dispatches."""
    return BY_OPCODE


def compile_step(prog, ins, pc, site):
    step = Step(pc=pc, ins=ins, site=site)
    ins.extra["site"] = site
    if ins.extra.get("hidden"):
        step.info["hidden"] = True
    if ins.guard:
        step.guard = (prog.reg_slot(ins.guard[0], ins), ins.guard[1])
        if prog.reg_types[step.guard[0]].kind != "pred":
            raise LayoutsimError(f"{lines.of(ins)}: guard {ins.guard[0]} is not a predicate")
    row = row_for(ins)
    fields = row.handler(ins, prog.builder, prog)
    membermask = fields.pop("membermask", None)
    if "sync" in fields or (membermask is None) != (row.sync != "membermask"):
        raise PtxInternalError(f"{lines.of(ins)}: {ins.name}: the handler of a {row.sync} step stated "
                               f"its synchronisation (the instruction table is its only place)")
    for k, v in fields.items():
        if k == "info":
            step.info.update(v)
        else:
            setattr(step, k, v)
    if row.sync == "cta":
        step.kind = "bar"
    step.sync = membermask if row.sync == "membermask" else _STEP_SYNC.get(row.sync)
    return step
