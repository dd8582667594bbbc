"""The record of a fault: one dict of facts that the exception (`PtxFault.fault`), the partial
Run (`Run.fault`) and `layoutsim ptx run --json` (its `fault` object) share, and the one-line
message made of the same facts.

    {"kind": one of KINDS, "message": the one line, "thread": [x, y, z], "cta": [x, y, z],
     "warp": warp in the CTA, "lane", "ptx_line", "ptx": the instruction's text,
     "cuda": {"file", "line"} or None, "address": int or None (space-relative: a shared or local
     offset, a generic address for global), "space": "global" | "shared" | "local" | "kparam" |
     "param" | "texture" | "surface" | None, "buffer": {"space", "name", "arg", "start", "bytes", "offset"} or None}

A deadlock adds "waits": one record per waiting instruction ({"wait", "threads", "ptx_line",
"ptx", "cuda", "thread", "cta", "warp", "lane"} and, for an mbarrier, "mbarrier"); its thread,
CTA and line are those of the first wait.
"""
import re

from . import lines
from .state import GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW, PtxFault

KINDS = {
    "out_of_bounds": "an access outside its global buffer, the CTA's shared memory, the thread's local "
                     "memory or the parameters",
    "misaligned": "an address not aligned to the access's size (or to what a TMA, bulk copy or tensor map "
                  "needs)",
    "deadlock": "threads wait at a barrier, a warp-synchronous instruction or an mbarrier that no other "
                "thread can release",
    "read_only": "a store to a kernel parameter",
    "trap": "a trap instruction executed",
    "invalid_address": "an address in a state space the instruction cannot use (an mbarrier outside shared "
                       "memory, wmma from local memory)",
    "invalid_tensor_map": "a tensor-map address that holds no tensor map",
    "invalid_texture": "a texture or surface handle that names no object of the launch, or a fetch its "
                       "texture or surface does not serve (geometry, result type, access size)",
    "tma_coordinates": "TMA box coordinates the GPU refuses",
    "uninitialized_mbarrier": "an mbarrier used before mbarrier.init (or after mbarrier.inval)",
    "mbarrier_overflow": "more arrivals than the phase waits for, or a tx-count out of range",
    "invalid_operand": "an operand value the instruction does not allow (an mbarrier count, a src-size)",
    "not_uniform": "threads of a warp or warpgroup give different values where PTX needs one",
    "partial_warpgroup": "a warpgroup instruction that not every thread of the warpgroup executes",
    "partial_warp": "an .aligned warp-collective instruction (mma.sync, ldmatrix, wmma, ...) that not every "
                    "lane of the warp executes",
    "membermask": "a thread executes a .sync instruction whose membermask does not name it",
    "step_limit": "the run reached max_steps (--max-steps) before every CTA ended (watch.RunLimit)",
    "time_limit": "the run reached its timeout (--timeout) before every CTA ended (watch.RunLimit)",
    "cluster_barrier": "barrier.cluster used against its rules (a second arrive before the wait, a wait "
                       "with no arrive)",
    "assert": "a device assert failed (__assertfail: the GPU traps, cudaErrorAssert); the message is the line "
              "the CUDA runtime prints",
    "stack_overflow": "more nested activations of a recursive function than the executor's call stack holds",
    "invalid_call": "a call through a function pointer that holds no function's address",
    "invalid_free": "free of a pointer that in-kernel malloc did not return, or of a block already freed",
    "tensor_memory": "tcgen05 against tensor memory's rules: an alloc column count outside 32..512 or not a "
                     "power of 2, an alloc after relinquish_alloc_permit or with no free columns, a dealloc, "
                     "tcgen05.ld/st/mma of columns not allocated, a TMEM lane outside the warp's 32-lane slab",
    "fault": "any other fault",
}

_WINDOWS = ((SHARED_WINDOW, "shared"), (LOCAL_WINDOW, "local"), (PARAM_WINDOW, "kparam"))


class Deadlock(PtxFault):
    """Threads wait where no other thread can release them (fault kind "deadlock")."""


def _cuda(cuda):
    return {"file": cuda[0], "line": cuda[1]} if cuda else None


def position(bt, t):
    """{"thread", "cta", "warp", "lane"} of batch thread t."""
    lt = int(t % bt.pad)
    return {"thread": list(bt.launch.thread_coords(lt)),
            "cta": list(bt.launch.cta_coords(int(bt.ctas[t // bt.pad]))), "warp": lt // 32, "lane": lt % 32}


def _space(f):
    """(space, address) of a Fault: None, None when it names no address."""
    if f.space is not None:
        return f.space, f.address
    if f.address == 0:
        return None, None
    for base, sp in _WINDOWS:
        if f.address & ~(WINDOW - 1) == base:
            return sp, f.address - base
    return "global", f.address


def buffer(bt, space, address):
    """Which memory the address is in (or, for global memory, the buffer closest to it)."""
    if space == "global":
        k = bt.heap.nearest(address)
        if k is None:
            return None
        name = bt.heap.names[k]
        arg = re.match(r"argument (\d+)", name)
        start = GLOBAL_BASE + bt.heap.starts[k]
        return {"space": "global", "name": name, "arg": int(arg.group(1)) if arg else None, "start": start,
                "bytes": bt.heap.sizes[k], "offset": address - start}
    if space == "tmem":                      # lane << 16 | column (tmem.py)
        return {"space": "tmem", "name": f"TMEM lane {address >> 16} column {address & 0xFFFF}",
                "arg": None, "start": 0, "bytes": None, "offset": address}
    sizes = {"shared": ("the CTA's shared memory", bt.smem_size),
             "local": ("the thread's local memory", bt.prog.local_size),
             "kparam": ("the kernel parameters", len(bt.launch.kparams)),
             "param": ("the call parameters", bt.prog.param_size)}
    if space not in sizes:
        return None
    name, size = sizes[space]
    return {"space": space, "name": name, "arg": None, "start": 0, "bytes": size, "offset": address}


def _buffer_text(b):
    if b["space"] == "tmem":
        return b["name"]
    arg = f", --arg {b['arg']}" if b["arg"] is not None else ""
    return f"{b['offset']:+d} bytes from the start of {b['name']} ({b['bytes']} bytes{arg})"


def of_fault(bt, step, f):
    """The PtxFault of a Fault an instruction raised at step `step`."""
    ins = step.ins
    site = bt.prog.sites[step.site]
    space, address = _space(f)
    buf = buffer(bt, space, address) if space is not None else None
    msg = f"{lines.at(ins.line, site.cuda)}: {ins.text}: {bt.where(f.thread)}: {f.what}"
    if buf is not None and buf["name"] not in f.what:
        msg += f" (the address is {_buffer_text(buf)})"
    rec = {"kind": f.kind, "message": msg, **position(bt, f.thread), "ptx_line": ins.line, "ptx": ins.text,
           "cuda": _cuda(site.cuda), "address": address, "space": space, "buffer": buf}
    return PtxFault(msg, fault=rec)


def deadlock(bt, waits):
    """The Deadlock of waits [(kind, step, mask of waiting threads, example thread, what or None)]:
    kind "barrier", "warp-synchronous instruction" or "mbarrier" (what: the mbarrier's state)."""
    parts, recs = [], []
    for kind, step, mask, t, what in waits:
        ins, cuda = step.ins, bt.prog.sites[step.site].cuda
        n = int(mask.sum())
        line = f"{lines.at(ins.line, cuda)} ({ins.text})"
        if kind != "mbarrier" and step.sync in ("all", "warpgroup"):
            line += " (.aligned: every lane of the warp must execute this same instruction; PTX ISA)"
        if kind == "mbarrier":
            parts.append(f"{n} thread(s) spin on {what} at {line}, e.g. {bt.where(t)}")
        else:
            parts.append(f"{n} thread(s) wait at the {kind} on {line}, e.g. {bt.where(t)}")
        rec = {"wait": kind, "threads": n, "ptx_line": ins.line, "ptx": ins.text, "cuda": _cuda(cuda),
               **position(bt, t)}
        if what is not None:
            rec["mbarrier"] = what
        recs.append(rec)
    msg = "deadlock: " + "; ".join(parts) + " and no other thread can reach it"
    first = recs[0] if recs else {}
    rec = {"kind": "deadlock", "message": msg,
           **{k: first.get(k) for k in ("thread", "cta", "warp", "lane", "ptx_line", "ptx", "cuda")},
           "address": None, "space": None, "buffer": None, "waits": recs}
    return Deadlock(msg, fault=rec)
