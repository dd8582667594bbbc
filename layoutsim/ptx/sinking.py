"""Where ptxas sinks a shared-memory load: behind the early exit of the lanes that do not use it.

A plain ld.shared whose value only one later instruction of the same straight-line block reads,
that instruction predicated, a global memory access, and followed by nothing but the kernel's
`ret` (Triton's reductions end so: every thread loads the reduced value from shared memory, and
`@%p st.global` writes it from a few lanes), is emitted by ptxas as `@!P EXIT; LDS; STG`: the LDS
runs in the lanes whose guard holds, and a warp with none of them does not issue it. ncu counts it
so (tests/data/triton_corpus, measured with ncu on an H100: flaggems_sum_1 94 and flaggems_sum_2 2
shared-load wavefronts, where costing every lane's load gives 235 and 5; fla_l2norm_fwd 4, not 16).
Where more code follows the reader, ptxas keeps the LDS in place and predicates only the store
(flaggems_layer_norm_bwd_wb: of its two such loads, the one before the final `ret` moves, the
other does not; its SASS shows `LDS; @P0 STG` there and `@!P0 EXIT; LDS; STG` at the end, and ncu
counts 99). Costs (costs.py) holds such a load back and costs it for the lanes that run its reader.

Nothing may stand between the load and its reader that the load would have to cross: a label (a
branch target), a branch, a barrier or fence, a call, or a write to shared or generic memory.
"""
from .access import space_of

CROSSING = ("bra", "brx", "bar", "barrier", "membar", "fence", "call", "ret", "exit", "mbarrier",
            "cp", "wgmma", "tcgen05", "griddepcontrol")
WRITES = ("st", "atom", "red", "stmatrix", "wmma", "tensormap")


def _slots(prog, ops, ins):
    """The register slots an operand list reads (address bases and vector members included)."""
    out = []
    for o in ops:
        if o is None:
            continue
        if o.kind == "reg":
            try:
                out.append(prog.reg_slot(o.value, ins))
            except Exception:       # noqa: BLE001 - special registers (%tid.x...) have no slot
                pass
        elif o.kind == "addr" and o.base is not None:
            out += _slots(prog, [o.base], ins)
        elif o.kind in ("vec", "pair", "list"):
            out += _slots(prog, o.value, ins)
    return out


def _reads(prog, ins):
    srcs = list(ins.operands[1:]) if ins.opcode not in WRITES else list(ins.operands)
    if ins.guard is not None:
        try:
            return _slots(prog, srcs, ins) + [prog.reg_slot(ins.guard[0], ins)]
        except Exception:           # noqa: BLE001
            pass
    return _slots(prog, srcs, ins)


def _writes(prog, ins):
    if not ins.operands or ins.opcode in WRITES:
        return []
    return _slots(prog, [ins.operands[0]], ins)


def _plain_shared_load(ins):
    return (ins is not None and ins.opcode == "ld" and space_of(ins.mods) == "shared" and
            not {"volatile", "relaxed", "acquire", "mmio"} & set(ins.mods) and
            ins.operands and ins.operands[0].kind in ("reg", "vec"))


def _then_returns(steps, pc):
    """Whether the step at pc ends the kernel: an unguarded ret or exit (a branch target or not),
    or the end of the body."""
    st = steps[pc] if pc < len(steps) else None
    if st is None or st.ins is None:
        return True
    if st.ins.guard is not None:
        return False
    # an inlined function's ret returns to its caller (program.py), the entry's ends the thread
    return st.ins.opcode == "exit" or (st.ins.opcode == "ret" and st.ins.extra.get("ret_label") is None)


def decide(prog):
    """{site of a sunk ld.shared: site of its one reader} for the Program `prog`."""
    steps = prog.steps
    readers = {}                                  # slot -> how many instructions read it
    for st in steps:
        if st.ins is not None:
            for s in set(_reads(prog, st.ins)):
                readers[s] = readers.get(s, 0) + 1
    # labels some instruction names (a branch target); Triton's $L__tmp debug labels are none
    named = {o.value for st in steps if st.ins is not None for o in st.ins.operands if o.kind == "sym"}
    targets = {pc for name, pc in prog.labels.items() if name in named}
    out, seen = {}, {}
    for pc, st in enumerate(steps):
        ins = st.ins
        if not _plain_shared_load(ins):
            continue
        dest = set(_writes(prog, ins))
        if not dest or any(readers.get(s, 0) != 1 for s in dest):
            continue
        use = None
        j = pc + 1
        while j < len(steps) and j not in targets:
            other = steps[j].ins
            if other is None or other.opcode in CROSSING or \
                    (other.opcode in WRITES and space_of(other.mods) in ("shared", "shared::cluster", "generic")):
                break
            if dest & set(_reads(prog, other)):
                use = other
                j_use = j
                break
            if dest & set(_writes(prog, other)):
                break
            j += 1
        ok = (use is not None and use.guard is not None and use.opcode in ("st", "ld", "atom", "red") and
              space_of(use.mods) == "global" and _then_returns(steps, j_use + 1))
        target = steps[j_use].site if ok else None
        if seen.setdefault(st.site, target) != target:     # an inlined copy decided otherwise
            out.pop(st.site, None)
            continue
        if target is not None:
            out[st.site] = target
    return out

