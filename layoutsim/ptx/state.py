"""Execution state of a batch of CTAs: registers, memories, address spaces, faults.

Threads are numbered CTA-major (CTA, then warp, then lane): thread t of the batch is lane
t % 32 of warp t // 32, and CTA t // threads_per_cta. Every register is one numpy array over
those threads holding raw bits (unsigned of the register's width, bool for predicates); arrays
are never changed in place (a write makes a new array), so two registers may share one.

Address spaces (generic addresses are 64-bit; the windows are this model's choice, like the
hardware's they are opaque to a correct kernel):
  global   GLOBAL_BASE + offset into one flat heap holding every buffer, 512-byte aligned with
           guard gaps between them (an access must lie inside one buffer, else it faults)
  shared   offsets 0 .. shared size - 1 of the thread's CTA; generic SHARED_WINDOW + offset
  local    per-thread offsets 0 .. local size - 1; generic LOCAL_WINDOW + offset
  const    .const variables live in the global heap (their .const address is the heap address)
  param    kernel parameters (uniform) and the .param variables of call blocks (per thread);
           generic PARAM_WINDOW + offset for a kernel parameter (cvta.param: the address of a
           __grid_constant__ parameter such as a CUtensorMap), read-only
"""
from bisect import bisect_right

import numpy as np

from ..errors import LayoutsimError
from .events import Events

GLOBAL_BASE = 0x7F00_0000_0000
SHARED_WINDOW = 0x7E00_0000_0000
LOCAL_WINDOW = 0x7D00_0000_0000
PARAM_WINDOW = 0x7C00_0000_0000
WINDOW = 1 << 32
BUFFER_ALIGN = 512
GUARD = 512


class PtxFault(LayoutsimError):
    """The launch would fault on the GPU: names the thread, the PTX line and the address.
    `.fault` is the same facts as a dict (faults.py: kind, message, thread, cta, warp, lane,
    ptx_line, ptx, cuda, address, space, buffer); `.run` holds the Run with the buffers as they
    were when the faulting instruction was reached (nothing of it committed)."""

    def __init__(self, msg, run=None, fault=None, **info):
        super().__init__(msg)
        self.run = run
        self.fault = fault if fault is not None else {"kind": "fault", "message": str(msg), **info}

    @property
    def info(self):
        """The fault record (its former name)."""
        return self.fault


class Fault(Exception):
    """Raised by an instruction on its first bad thread; the scheduler adds line and position.
    kind: what faults.KINDS names it; space: the state space `address` is in (None: global, or
    no address)."""

    def __init__(self, thread, address, what, kind="fault", space=None):
        super().__init__(what)
        self.thread, self.address, self.what = int(thread), int(address), what
        self.kind, self.space = kind, space


class Heap:
    """Global memory: every buffer and .global/.const variable in one flat byte array."""

    def __init__(self):
        self.starts, self.sizes, self.names = [], [], []
        self.data = np.zeros(0, np.uint8)
        self._end = GUARD

    def alloc(self, nbytes, name, align=BUFFER_ALIGN):
        start = -(-self._end // align) * align
        self.starts.append(start)
        self.sizes.append(int(nbytes))
        self.names.append(name)
        self._end = start + int(nbytes) + GUARD
        return GLOBAL_BASE + start

    @property
    def extent(self):
        """Bytes the array will have once finished (every buffer at its alignment, with guards)."""
        return self._end

    def copy(self):
        h = Heap()
        h.starts, h.sizes, h.names, h._end = list(self.starts), list(self.sizes), list(self.names), self._end
        return h

    def finish(self):
        """Allocate the byte array once every buffer is known."""
        total = -(-self._end // 16) * 16
        self.data = np.zeros(total, np.uint8)
        self._starts = np.asarray(self.starts, np.int64)
        self._ends = self._starts + np.asarray(self.sizes, np.int64)
        self._end_list = self._ends.tolist()            # Python ints: check's common case reads them
        self.views()

    def views(self):
        self.v = word_views(self.data)

    def write(self, address, raw):
        off = address - GLOBAL_BASE
        self.data[off:off + raw.size] = raw

    def read(self, address, n):
        off = address - GLOBAL_BASE
        return self.data[off:off + n]

    def check(self, addr, nb, threads):
        """addr: int64 generic addresses of the given threads; raise Fault on the first access
        not inside one buffer."""
        off = addr - GLOBAL_BASE
        if off.size == 0:
            return off
        if not self.starts:                   # no buffer at all: the first access faults
            raise Fault(threads[0], addr[0], self.describe(int(addr[0]), nb))
        lo, hi = int(off.min()), int(off.max())
        i = bisect_right(self.starts, lo) - 1            # the buffer the lowest address is in, if any
        if i >= 0 and hi + nb <= self._end_list[i]:
            return off
        k = np.searchsorted(self._starts, off, "right") - 1
        kk = np.maximum(k, 0)
        bad = (k < 0) | (off < self._starts[kk]) | (off + nb > self._ends[kk])
        if not np.count_nonzero(bad):         # each thread inside a buffer, the warp across several
            return off
        j = int(np.flatnonzero(bad)[0])
        raise Fault(threads[j], addr[j], self.describe(int(addr[j]), nb), "out_of_bounds", "global")

    def nearest(self, address):
        """The index of the buffer holding the generic address, or else the closest one (None
        when there is none)."""
        off = address - GLOBAL_BASE
        if not self.starts:
            return None
        return int(np.argmin([abs(off - s) if off < s else max(0, off - (s + z)) for s, z in
                              zip(self.starts, self.sizes)]))

    def describe(self, address, nb):
        off = address - GLOBAL_BASE
        k = self.nearest(address)
        if k is None:
            return f"address {address:#x} is not in any global buffer (none allocated)"
        s, z = self.starts[k], self.sizes[k]
        rel = off - s
        return (f"address {address:#x} ({nb} bytes) is outside global memory: {rel:+d} bytes from "
                f"the start of {self.names[k]} ({z} bytes)")

    def owner(self, address):
        off = address - GLOBAL_BASE
        k = int(np.searchsorted(self._starts, off, "right")) - 1
        return k if k >= 0 and off < self._ends[k] else None


def word_views(a):
    """The memory `a` (uint8) viewed as 1, 2, 4, 8 and (when its size allows) 16-byte items."""
    v = {1: a, 2: a.view(np.uint16), 4: a.view(np.uint32), 8: a.view(np.uint64)}
    if a.size % 16 == 0:
        v[16] = a.view("V16")
    return v


def _sixteen(views, off, nbytes):
    """Whether 16-byte accesses at `off` are whole items of the 16-byte view (one fancy index
    instead of two 8-byte words each)."""
    return nbytes == 16 and 16 in views and not np.count_nonzero(off & 15)


def gather(views, off, nbytes):
    """Bytes [n, nbytes] at byte offsets `off` (aligned to their width) of a memory, as uint8."""
    if _sixteen(views, off, nbytes):
        return views[16][off >> 4].view(np.uint8).reshape(-1, 16)
    unit = 8 if nbytes % 8 == 0 else (4 if nbytes % 4 == 0 else (2 if nbytes % 2 == 0 else 1))
    if nbytes // unit == 1:
        w = views[unit][off // unit]
        return w.view(np.uint8).reshape(-1, nbytes)
    idx = (off // unit)[:, None] + np.arange(nbytes // unit)
    return np.ascontiguousarray(views[unit][idx]).view(np.uint8).reshape(-1, nbytes)


def scatter(views, off, data):
    """Write bytes data [n, nbytes] (uint8) at byte offsets `off`; later threads win on overlap."""
    nbytes = data.shape[1]
    if _sixteen(views, off, nbytes):
        views[16][off >> 4] = np.ascontiguousarray(data).view("V16").reshape(-1)
        return
    unit = 8 if nbytes % 8 == 0 else (4 if nbytes % 4 == 0 else (2 if nbytes % 2 == 0 else 1))
    words = np.ascontiguousarray(data).view(f"<u{unit}") if unit > 1 else data
    if nbytes // unit == 1:
        views[unit][off // unit] = words.reshape(-1)
    else:
        idx = (off // unit)[:, None] + np.arange(nbytes // unit)
        views[unit][idx] = words


_REGISTER_PLANS = {}       # id(a program's register types) -> (the types, [(storage, count)], the order of the rows)


def _zero_registers(types, n):
    """One zeroed array of n values per register, each its own memory: the rows of one block per
    storage type (one allocation per type, not per register)."""
    plan = _REGISTER_PLANS.get(id(types))
    if plan is None or plan[0] is not types or len(plan[2]) != len(types):
        by = {}
        for i, t in enumerate(types):
            by.setdefault(t.storage, []).append(i)
        rows = [i for idx in by.values() for i in idx]          # register of each row, blocks in order
        where = [0] * len(types)
        for j, i in enumerate(rows):
            where[i] = j
        if len(_REGISTER_PLANS) > 64:
            _REGISTER_PLANS.clear()
        plan = _REGISTER_PLANS[id(types)] = (types, [(st, len(idx)) for st, idx in by.items()], where)
    rows = [row for st, k in plan[1] for row in np.zeros((k, n), st)]
    return [rows[j] for j in plan[2]]


class Batch:
    """The state of one batch of CTAs executing together."""

    def __init__(self, prog, launch, ctas):
        self.prog, self.launch = prog, launch
        self.ctas = np.asarray(ctas, np.int64)          # linear CTA ids in this batch
        tpc = launch.threads_per_cta
        self.tpc = tpc
        self.wpc = -(-tpc // 32)                        # warps per CTA (last one may be partial)
        self.pad = self.wpc * 32                        # thread slots per CTA (whole warps)
        self.n_cta = len(self.ctas)
        self.cluster_size = launch.cluster.size         # whole clusters, in rank order (cluster.order)
        assert self.n_cta % self.cluster_size == 0
        self.T = self.n_cta * self.pad
        self.W = self.n_cta * self.wpc
        t = np.arange(self.T, dtype=np.int64)
        self.cta_index = t // self.pad                  # 0 .. n_cta-1 within the batch
        local_tid = t % self.pad
        self.exists = local_tid < tpc                   # padding lanes of a partial last warp
        self.lane = (t % 32).astype(np.uint32)
        self.local_tid = local_tid
        self.live = self.exists.copy()
        self.regs = _zero_registers(prog.reg_types, self.T)
        # shared memory: one window of prog.smem_size bytes per CTA
        S = max(16, -(-prog.smem_size(launch.shared_bytes) // 16) * 16)
        self.smem_size = prog.smem_size(launch.shared_bytes)
        self.S = S
        self.smem = np.zeros(self.n_cta * S, np.uint8)
        self.smem_v = word_views(self.smem)
        self.smem_base = self.cta_index * S
        for off, raw in prog.shared_init:
            for c in range(self.n_cta):
                self.smem[c * S + off:c * S + off + raw.size] = raw
        # local memory and per-thread .param storage
        self.L = max(16, -(-prog.local_size // 16) * 16)
        self.local = np.zeros(self.T * self.L, np.uint8)
        self.local_v = word_views(self.local)
        self.local_base = t * self.L
        self.P = max(16, -(-prog.param_size // 16) * 16)
        self.params = np.zeros(self.T * self.P, np.uint8)
        self.params_v = word_views(self.params)
        self.param_base = t * self.P
        self.special = launch.special_registers(self)
        self.carry = np.zeros(self.T, np.uint64)        # the CC.CF flag of add.cc / addc
        self.call_stacks = {}                           # recursive copies' per-thread frames (ops_calls)
        self.async_groups = None                        # cp.async bookkeeping (ops_mem)
        self.mbarriers = None                           # mbarrier objects (mbarrier.py)
        self.cluster_barrier = None                     # barrier.cluster phases (ops_cluster.py)
        self.tmem = None                                # tensor memory of the CTAs (tmem.py, ops_tcgen05.py)
        self.clc_failed = np.zeros(self.n_cta, bool)    # CTAs that saw a try_cancel fail (ops_clc.py)
        self.events = Events()                          # the observers' bus (events.py): the runner subscribes them
        self.every_warp = None                          # collective.whole_warps' (warps, threads) of every warp
        self.fast = True                                # the handlers' fast paths on (scheduler.reference() turns them off)
        self.heap = launch.heap
        # warp-instructions each warp has issued (the scheduler counts them), when the clocks are read
        self.issued = np.zeros(self.W, np.int64) if prog.reads_clock else None

    def clock(self, name):
        """%clock64 and %globaltimer of every thread: the warp-instructions its warp has issued
        so far, the reading one included (deterministic, not GPU cycles or
        nanoseconds); %clock and %globaltimer_lo are the low 32 bits, %globaltimer_hi the high.
        A batch starts with its CTAs: the count starts at 0 when the CTA does."""
        n = self.issued[np.arange(self.T) // 32].astype(np.uint64)
        if name == "%globaltimer_hi":
            return (n >> np.uint64(32)).astype(np.uint32)
        return n.astype(np.uint32) if name in ("%clock", "%globaltimer_lo") else n

    def where(self, t):
        """'CTA (x,y,z) thread (x,y,z) (warp w, lane l)' of batch thread t."""
        cta = int(self.ctas[t // self.pad])
        lt = int(t % self.pad)
        return f"CTA {self.launch.cta_coords(cta)} thread {self.launch.thread_coords(lt)} " \
               f"(warp {lt // 32}, lane {lt % 32})"


def coords(dims, i):
    """(x, y, z) of linear id i (ints or arrays) in a 3-D shape, x fastest: a CTA in the grid, a
    thread in its block."""
    dx, dy, _ = dims
    return (i % dx, (i // dx) % dy, i // (dx * dy))
