"""Instruction -> Step: the row of the instruction table (table.py) binds its handler.

A handler is compile(ins, b, prog) -> dict of Step fields (builders.py); "fn" is fn(batch, g,
full): g the threads that execute (active and guard true), full True when g holds every live
thread (writes may then skip the merge with the old register value). Unknown instructions and
illegal modifier combinations are refused at load time with their name and line (table.row_for);
the row's synchronisation class sets Step.sync for the whole-warp and warpgroup collectives and
is checked against the step the handler built.
"""
from ..errors import LayoutsimError
from .internal import PtxInternalError
from .step import Step
from .table import BY_OPCODE, row_for

_SYNC_OF = {"all": "aligned", "warpgroup": "warpgroup"}
_ROW_SYNC = {"aligned": "all", "warpgroup": "warpgroup"}


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
            raise LayoutsimError(f"line {ins.line}: guard {ins.guard[0]} is not a predicate")
    row = row_for(ins)
    fields = row.handler(ins, prog.builder, prog)
    for k, v in fields.items():
        if k == "info":
            step.info.update(v)
        else:
            setattr(step, k, v)
    if step.sync is None and row.sync in _ROW_SYNC:
        step.sync = _ROW_SYNC[row.sync]
    got = _sync_class(step)
    if got != row.sync and step.kind not in ("exit", "trap"):
        raise PtxInternalError(f"line {ins.line}: {ins.name}: the handler built a {got} step, the "
                               f"instruction table says {row.sync}")
    return step


def _sync_class(step):
    if step.kind == "bar":
        return "cta"
    if step.sync is None:
        return "none"
    return _SYNC_OF.get(step.sync, "membermask") if isinstance(step.sync, str) else "membermask"
