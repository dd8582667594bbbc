"""The CUDA runtime's device functions a kernel calls without defining them: `vprintf` (printf),
`__assertfail` (assert), `malloc` and `free`. program.py turns such calls into these steps; the
text is made by printf.py, the heap is malloc.py's.

printf: every thread that executes the call formats its line from its format string (global
memory) and argument buffer (its local memory, or any address), in the executor's order: the
batches in CTA order, the steps in the order the scheduler runs them, and within one step the
threads in CTA, warp, lane order. The GPU leaves the order between warps unspecified (CUDA C++
Programming Guide, 'Formatted Output': output of different threads is not ordered); within one
warp it prints the lanes in order, as here. The result is the number of arguments formatted (the
Guide: printf returns the number of arguments parsed, -1 for a null format).

assert: `__assertfail(message, file, line, function, char size)`; every thread of the step prints
the runtime's line (printf.assertion) and the launch stops with a fault of kind "assert" (the GPU
traps: cudaErrorAssert), the first thread's line its message.

malloc / free: the threads of a step allocate (release) in CTA, warp, lane order from the
launch's device heap (malloc.py); free of a pointer malloc did not return, or of a freed one,
is a fault of kind "invalid_free" (undefined behaviour in CUDA).

cudaGraphSetConditional(handle, value) (CUDA 13.0 cuda_device_runtime_api.h, a `__cudart_builtin__`
the driver links; nvcc emits `call.uni cudaGraphSetConditional, (param0, param1)` with a .b64
handle and a .b32 value): it sets the condition value of the conditional graph node the handle
names, which the graph reads when the kernel's node completes. The executor runs one launch and no
graph: it keeps the value each handle was last set to, in the executor's order, and the Run
reports them (`graph_conditionals`), for the user to see what the graph would branch on. The
runtime calls racing or concurrent calls undefined behaviour: when threads of different CTAs, or
different threads, set one handle the launch says so in a note (the value kept is the last).
"""
import numpy as np

from ..errors import LayoutsimError
from . import access
from . import types as T
from .printf import MAX_STRING, assertion, format_bytes
from .state import Fault
from . import lines

MAX_PRINTED = 64 << 20       # bytes of printf output a launch keeps (the GPU's FIFO is 1 MiB by default)


def _arg_readers(ins, b, prog, sizes):
    """function(batch) -> uint64 array per call argument: a .param variable or a register/immediate."""
    out = []
    for op, size in zip(ins.extra["args"], sizes):
        if op.kind == "sym" and prog.symbol_space(op.value, ins) == "param":
            off = prog.symbol_address(op.value, ins)

            def rd(bt, off=off, size=size):
                raw = bt.params[bt.param_base[:, None] + off + np.arange(size)]
                return np.ascontiguousarray(raw).view(f"<u{size}").reshape(-1).astype(np.uint64)
            out.append(rd)
        else:
            r = b.read(op, T.get(f"u{size * 8}"), ins)
            out.append(lambda bt, r=r: np.broadcast_to(np.asarray(r(bt)).astype(np.uint64), (bt.T,)))
    return out


def _result(ins, b, prog, size=4):
    """A function(batch, values, g, full) storing a call's result (`size` bytes: printf's int,
    malloc's pointer) in the call's destination."""
    rets = ins.extra["rets"]
    if not rets:
        return None
    op = rets[0]
    if op.kind == "sym":
        off = prog.symbol_address(op.value, ins)

        def put(bt, v, g, full):
            t = np.flatnonzero(g)
            bt.params[bt.param_base[t][:, None] + off + np.arange(size)] = \
                v[t].astype(f"<u{size}").view(np.uint8).reshape(-1, size)
        return put
    return b.write(op, T.get(f"b{size * 8}"), ins)


def read_bytes(bt, t, address, n):
    """n bytes at a generic address, as thread t reads them (faults as a load would)."""
    if n == 0:
        return b""
    addr = np.int64(address) + np.arange(n, dtype=np.int64)
    parts = access.locate(bt, "generic", addr, np.full(n, t, np.int64), 1, "printf argument")
    return access.load(bt, parts, 1).reshape(-1).tobytes()


def read_string(bt, t, address, limit=None):
    """The bytes of the NUL-terminated string at a generic address (at most `limit`)."""
    out, n = bytearray(), MAX_STRING if limit is None else min(limit, MAX_STRING)
    while len(out) < n:
        c = read_bytes(bt, t, address + len(out), 1)
        if c == b"\0":
            break
        out += c
    return bytes(out)


def _record(bt, text):
    printed = bt.launch.printed                    # a bytearray
    if len(printed) + len(text) > MAX_PRINTED:
        bt.launch.notes.add(f"printf output beyond {MAX_PRINTED} bytes was dropped")
        return
    printed += text


def vprintf(ins, b, prog):
    if len(ins.extra["args"]) != 2:
        raise LayoutsimError(f"{lines.of(ins)}: vprintf takes 2 arguments (format, argument buffer), "
                             f"not {len(ins.extra['args'])}")
    fmt, buf = _arg_readers(ins, b, prog, (8, 8))
    ret = _result(ins, b, prog)

    def fn(bt, g, full):
        f, a = fmt(bt), buf(bt)
        res = np.zeros(bt.T, np.uint32)
        for t in np.flatnonzero(g):
            t = int(t)
            if f[t] == 0:
                res[t] = np.uint32(0xFFFFFFFF)
                continue
            fmt_bytes = read_string(bt, t, int(f[t]))
            used = []

            def arg(off, n, t=t, base=int(a[t])):
                used.append(off)
                return read_bytes(bt, t, base + off, n)
            _record(bt, format_bytes(fmt_bytes, arg, lambda p, lim, t=t: read_string(bt, t, p, lim)))
            res[t] = len(used)
        if ret is not None:
            ret(bt, res, g, full)
    return {"fn": fn}


def assertfail(ins, b, prog):
    if len(ins.extra["args"]) != 5:
        raise LayoutsimError(f"{lines.of(ins)}: __assertfail takes 5 arguments (message, file, line, "
                             f"function, char size), not {len(ins.extra['args'])}")
    msg, path, line, func, _ = _arg_readers(ins, b, prog, (8, 8, 4, 8, 8))

    def fn(bt, g, full):
        if not g.any():
            return
        m, p, ln, f = msg(bt), path(bt), line(bt), func(bt)
        first = None
        for t in np.flatnonzero(g):
            t = int(t)
            lt = int(t % bt.pad)
            text = assertion(read_string(bt, t, int(m[t])).decode("utf-8", "backslashreplace"),
                             read_string(bt, t, int(p[t])).decode("utf-8", "backslashreplace"),
                             int(ln[t]), read_string(bt, t, int(f[t])).decode("utf-8", "backslashreplace"),
                             bt.launch.cta_coords(int(bt.ctas[t // bt.pad])), bt.launch.thread_coords(lt))
            bt.launch.assertions.append(text)
            first = (t, text) if first is None else first
        raise Fault(first[0], 0, first[1], "assert")
    return {"fn": fn}


def malloc(ins, b, prog):
    if len(ins.extra["args"]) != 1:
        raise LayoutsimError(f"{lines.of(ins)}: malloc takes 1 argument (the size), not {len(ins.extra['args'])}")
    (size,) = _arg_readers(ins, b, prog, (8,))
    ret = _result(ins, b, prog, 8)

    def fn(bt, g, full):
        n = size(bt)
        res = np.zeros(bt.T, np.uint64)
        for t in np.flatnonzero(g):
            res[t] = bt.launch.device_heap.malloc(int(n[t]))
        if ret is not None:
            ret(bt, res, g, full)
    return {"fn": fn}


def free(ins, b, prog):
    if len(ins.extra["args"]) != 1:
        raise LayoutsimError(f"{lines.of(ins)}: free takes 1 argument (the pointer), not {len(ins.extra['args'])}")
    (ptr,) = _arg_readers(ins, b, prog, (8,))

    def fn(bt, g, full):
        p = ptr(bt)
        for t in np.flatnonzero(g):
            if not bt.launch.device_heap.free(int(p[t])):
                raise Fault(int(t), int(p[t]), f"free({int(p[t]):#x}): not a block malloc returned, or one "
                                               f"already freed (undefined behaviour)", "invalid_free")
    return {"fn": fn}


def graph_set_conditional(ins, b, prog):
    if len(ins.extra["args"]) != 2 or ins.extra["rets"]:
        raise LayoutsimError(f"{lines.of(ins)}: cudaGraphSetConditional takes 2 arguments (handle, value) "
                             f"and returns nothing, not {len(ins.extra['args'])} argument(s)")
    handle, value = _arg_readers(ins, b, prog, (8, 4))

    def fn(bt, g, full):
        h, v = handle(bt), value(bt)
        for t in np.flatnonzero(g):
            t = int(t)
            who = (int(bt.ctas[t // bt.pad]), int(t % bt.pad))
            key = int(h[t])
            old = bt.launch.conditionals.get(key)
            if old is not None and old[1] != who:
                bt.launch.notes.add(f"cudaGraphSetConditional: handle {key:#x} set by more than one thread "
                                    f"(racing calls are undefined behaviour; the value kept is the last in "
                                    f"the executor's order)")
            bt.launch.conditionals[key] = [int(v[t]) & 0xFFFFFFFF, who]
    return {"fn": fn}
