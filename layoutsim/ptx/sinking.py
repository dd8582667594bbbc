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

ptxas also sinks a load past a conditional branch when every reader of its value lies in the block
the branch falls through to: the lanes that branch away never issue it. Triton's grouped GEMM
(tutorial 08) loads a group's sizes, tests with two of them whether its tile is in the group, and
reads the third only if so; ptxas 13.0's SASS for sm_90a issues that third `LDG` after the `@P BRA`
(nvdisasm of tests/data/triton_corpus/ptx/tut_grouped_gemm*.ptx.gz), and ncu counts 184 global-load
sectors on the H100 where costing it before the branch gives 204 (tut_grouped_gemm_tma: 36
executions before the branch, 16 after). Such a load (a plain ld.global, nothing
between it and the branch but arithmetic on registers) is held until the first memory access of
the fall-through path runs, and costed for the lanes that run that access. The path is the code the
branch falls through to, through unconditional jumps, up to the next conditional branch, call or
return; every reader of the load must lie on it before the first label another path can reach (a
branch target), and the access is its first unguarded global or
shared ld/st, which every lane on the path issues (tut_grouped_gemm: the path jumps to its inner
loop's header, whose first load is that access; tut_grouped_gemm_tma: a load in the same block).
"""
from .access import space_of

CROSSING = ("bra", "brx", "bar", "barrier", "membar", "fence", "call", "ret", "exit", "mbarrier",
            "cp", "wgmma", "tcgen05", "griddepcontrol")
WRITES = ("st", "atom", "red", "stmatrix", "wmma", "tensormap")
PATH_LIMIT = 4096          # instructions followed from a branch looking for a sunk load's readers


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


def _plain_load(ins, space):
    """A plain ld of `space` into registers (no ordering or volatile semantics ptxas must keep)."""
    return (ins is not None and ins.opcode == "ld" and space_of(ins.mods) == space and
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


def _readers(prog):
    """{register slot: the pcs of the instructions that read it}."""
    out = {}
    for pc, st in enumerate(prog.steps):
        if st.ins is not None:
            for s in set(_reads(prog, st.ins)):
                out.setdefault(s, []).append(pc)
    return out


def _targets(prog):
    """The pcs of labels some instruction names (branch targets); Triton's $L__tmp debug labels are none."""
    named = {o.value for st in prog.steps if st.ins is not None for o in st.ins.operands if o.kind == "sym"}
    return {pc for name, pc in prog.labels.items() if name in named}


def decide(prog):
    """{site of a sunk load: site of the access it is costed at} for the Program `prog`: loads
    sunk into their one predicated reader, then loads sunk past a branch (the module docstring)."""
    readers = _readers(prog)
    targets = _targets(prog)
    out = _into_reader(prog, {s: len(v) for s, v in readers.items()}, targets)
    for site, at in _past_branch(prog, readers, targets).items():
        out.setdefault(site, at)
    return out


def _decide(out, seen, site, target):
    """Record a load's decision; where inlined copies of one site decided differently, none holds."""
    if seen.setdefault(site, target) != target:
        out.pop(site, None)
    elif target is not None:
        out[site] = target


def _past_branch(prog, readers, targets):
    steps = prog.steps
    out, seen = {}, {}
    for pc, st in enumerate(steps):
        # unguarded ld.global only: CUB's select_if (tests/data/cub) has an ld.shared before a branch
        # whose readers all lie on the fall-through path, and ncu counts it for every lane (710
        # wavefronts; held back, 636)
        if not _plain_load(st.ins, "global") or st.ins.guard is not None:
            continue
        dest = set(_writes(prog, st.ins))
        target = None
        j = pc + 1
        while dest and j < len(steps) and j not in targets:       # straight to a guarded branch
            other = steps[j].ins
            if other is None or dest & set(_reads(prog, other)) or dest & set(_writes(prog, other)):
                break
            if other.opcode == "bra":
                if other.guard is not None:
                    target = _fall_through_access(prog, steps, j + 1, dest, readers, targets)
                break
            if other.opcode in CROSSING or other.opcode in WRITES or other.opcode in ("ld", "ldu"):
                break
            j += 1
        _decide(out, seen, st.site, target)
    return out


def _fall_through_access(prog, steps, start, dest, readers, targets):
    """The site of the first memory access on the path the branch falls through to (through
    unconditional jumps, up to the next conditional branch or the end of the thread), where every
    reader of `dest` lies on that path; or None."""
    pcs = set(pc for s in dest for pc in readers.get(s, []))
    j, path, anchor, own = start, set(), None, None
    while pcs and j < len(steps) and j not in path and len(path) < PATH_LIMIT:
        if own is None and j in targets and j != start:     # other paths join here: readers must come before
            own = set(path)
        path.add(j)
        ins = steps[j].ins
        if ins is None:
            j += 1
            continue
        if anchor is None and ins.opcode in ("ld", "st") and ins.guard is None and \
                space_of(ins.mods) in ("global", "shared"):
            anchor = steps[j].site
        if ins.opcode == "bra" and ins.guard is None:                 # bra.uni: follow it
            label = next((o.value for o in ins.operands if o.kind == "sym"), None)
            if label not in prog.labels:
                return None
            j = prog.labels[label]
            continue
        if ins.opcode in ("bra", "brx", "ret", "exit", "call"):
            break
        j += 1
    return anchor if pcs and pcs <= (own if own is not None else path) else None


def _into_reader(prog, readers, targets):
    steps = prog.steps
    out, seen = {}, {}
    for pc, st in enumerate(steps):
        ins = st.ins
        if not _plain_load(ins, "shared"):
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
        _decide(out, seen, st.site, target)
    return out

