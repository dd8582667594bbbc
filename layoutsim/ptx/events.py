"""Handlers compute; observers account: the executor's event bus.

A handler (ops_mem, ops_async, ops_matrix, ops_wgmma) moves the bytes and then tells the batch's
bus what it did: one `Access` record per warp-batch execution of a memory instruction (never one
per thread), and a sync event where synchronization the observers track happens. It never calls
an observer and never knows which ones listen. The runner subscribes them when it makes a batch
(runner._run_ctas):

    costs.Costs          the bank and coalescing models, per PTX line
    samples.Samples      the hotspot samples: the first warp executions of each memory line, as
                         the cost models saw them (their `costed` events, below)
    racecheck.RaceCheck  shared-memory hazards between warps (--racecheck)
    initcheck.InitCheck  reads of shared memory never written (--initcheck)

and a test or a trace subscribes anything with an `on_access(record)`, `on_sync(kind, ctas)`,
`on_costed(...)` and/or `on_mma(record)` method the same way (`bt.events.subscribe(obj)`).
`costed` is the one event an observer emits: Costs tells what a model made of an access (its op
spelling, the per-warp offsets and lanes, the model's counts), so a sample shows what was costed
without a second copy of how an access is named.

What a record holds is what happened, in the handler's terms: which instruction class, which
state space, how many bytes per access, which threads, which addresses. How a model spells the
access (`ld.shared.b32`, `ld.global.nc.v4.b32`) is the observer's business (costs.py, from the
one width table in layoutsim/access.py).

`mma` tells what a tensor-core MMA computed (an `Mma` record: its operands and D, raw bits), for
a test that checks each MMA against another model (`ptx.run(..., record_mmas=True)` keeps them in
`Run.mmas` through `MmaLog`). A handler builds the record only while something listens
(`Events.mma_observed`): an unobserved run pays one attribute test per MMA.
"""
from dataclasses import dataclass

import numpy as np

# the instruction classes a record's `op` names
OPS = ("ld", "st", "atom", "red", "cp.async", "ldmatrix", "stmatrix", "wmma.load", "wmma.store",
       "wgmma", "tma", "bulk", "tensormap")
EFFECTS = ("read", "write", "atomic")       # what the access does to the bytes
SYNCS = ("bar", "mbarrier", "async")        # a CTA barrier completed; an mbarrier wait; the async proxy ran


@dataclass(slots=True)            # not frozen: its __init__ would take 3 us of every memory step
class Access:
    """One warp-batch execution of a memory instruction (or the landing of a deferred copy). A
    record is never changed once emitted: observers read it, and one that needs another makes it
    (costs._subset).

    threads [n]: the batch thread of each access (the executing threads; for ldmatrix/stmatrix
    the row-address lanes, for wmma each warp's first thread, for wgmma/TMA/bulk the issuing
    thread), each making `per_thread` accesses (wmma: one per matrix element); addresses: each
    access's address in its space (CTA-relative offset for shared memory, generic address for
    global; for shared::cluster the offset in the target CTA's shared memory), or None; flat
    [n * per_thread, ...]: the byte offsets of each access's starts in the batch's shared array
    (shared and shared::cluster), each `width` bytes long."""
    op: str                       # OPS
    space: str                    # shared, shared::cluster, global, local, param, kparam, const
    site: int                     # the PTX instruction: Program.sites index
    width: int                    # bytes per access (per lane; per row for ldmatrix, per element for wmma)
    threads: np.ndarray
    addresses: np.ndarray = None
    flat: np.ndarray = None
    effect: str = "read"          # EFFECTS
    vector: int = 1               # vector count (ld/st .v2/.v4), matrices (ldmatrix .x1/.x2/.x4)
    trans: bool = False           # ldmatrix/stmatrix .trans
    proxy: str = "generic"        # "async": TMA, bulk copies, wgmma operand reads
    issued: bool = True           # the instruction executes now (costed); False: a deferred copy lands
    lands: bool = True            # the bytes move now (checked); False: a cp.async, landing at its wait
    path: str = ""                # the load path: "nc" (ld.global.nc, ldu); cp.async: "ca" or "cg"
    mods: tuple = ()              # the PTX modifiers (atom/red: the coalescing model names the op by them)
    sass: str = None              # the SASS it is costed as, when the handler knows it (LDSM, LDGSTS)
    detail: object = None         # what an op class's own cost model needs (wmma: WmmaPattern)
    per_thread: int = 1           # accesses each of `threads` makes (wmma: the elements of its warp)
    target: np.ndarray = None     # space shared::cluster (DSMEM): the batch CTA index each access lands in

    def mask(self, n_threads):
        """The executing-thread mask over the batch's n_threads threads."""
        m = np.zeros(n_threads, bool)
        m[np.asarray(self.threads).reshape(-1)] = True
        return m

    def access_threads(self):
        """[n * per_thread]: the thread of each access."""
        t = np.asarray(self.threads).reshape(-1)
        return np.repeat(t, self.per_thread) if self.per_thread != 1 else t

    def byte_rows(self):
        """[n * per_thread, k] flat byte indices each access touches (k = width times its starts)."""
        n = len(self.threads) * self.per_thread
        f = np.asarray(self.flat, np.int64).reshape(n, -1)
        return (f[..., None] + np.arange(self.width)).reshape(n, -1)


@dataclass(frozen=True, slots=True)
class WmmaPattern:
    """A wmma load/store's whole-warp pattern: what its cost needs beside the addresses."""
    use: str                    # a, b, c, d
    layout: str                 # row, col
    shape: str                  # m16n16k16, ...
    typ: str                    # f16, f32, ...
    frag: object                # the operand's FragmentMap
    positions: np.ndarray       # WM.element_positions(frag)
    strides: np.ndarray         # [n] each warp's stride (elements)
    warp_threads: np.ndarray    # [n, 32] each warp's batch threads


@dataclass(frozen=True, slots=True)
class Mma:
    """One tensor-core MMA as executed (tcgen05.mma), raw bits: a [M, K], b [K, N], c [M, N] in D's
    format (zeros where enable-input-d was false; a 16-bit D: uint16), d [M, N] as computed (uint32,
    a 16-bit D in the low half; before disable-output-lane picks the cells it writes), the negate
    bits of the instruction descriptor (a and b are the operands before them), and the raw scale
    matrices [M, K / block], [K / block, N] of a block-scaled kind."""
    site: int                     # the PTX instruction: Program.sites index
    thread: int                   # the issuing batch thread
    ctas: tuple                   # the launch's linear ids of the CTA(s) whose TMEM takes D (a pair: 2)
    taddr: int                    # D's tensor-memory address (lane << 16 | column)
    name: str                     # the catalog entry (tcgen05.mma.cta_group::1.kind::f16.m128n256k16)
    types: str                    # "d.a.b[.scale]", as layoutsim.mma takes them
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    neg_a: bool = False
    neg_b: bool = False
    scale_a: np.ndarray = None
    scale_b: np.ndarray = None
    scale_d: int = 0              # scale-input-d: c enters as c * 2^-scale_d (layoutsim.numerics.scale_d)


class MmaLog(list):
    """An observer that keeps every Mma record (ptx.run(..., record_mmas=True): Run.mmas)."""

    def on_mma(self, record):
        self.append(record)


class Events:
    """The bus of one batch: observers subscribe, handlers emit."""
    __slots__ = ("_on_access", "_on_sync", "_on_costed", "_on_mma")

    def __init__(self, *observers):
        self._on_access = []
        self._on_sync = []
        self._on_costed = []
        self._on_mma = []
        for o in observers:
            self.subscribe(o)

    def subscribe(self, observer):
        """Add an observer: its on_access(record), on_sync(kind, ctas), on_costed(...) and
        on_mma(record), whichever it has."""
        if observer is None:
            return
        if hasattr(observer, "on_access"):
            self._on_access.append(observer.on_access)
        if hasattr(observer, "on_sync"):
            self._on_sync.append(observer.on_sync)
        if hasattr(observer, "on_costed"):
            self._on_costed.append(observer.on_costed)
        if hasattr(observer, "on_mma"):
            self._on_mma.append(observer.on_mma)

    @property
    def mma_observed(self):
        """Whether anything listens to `mma` (a handler builds no record otherwise)."""
        return bool(self._on_mma)

    def mma(self, record):
        """A tensor-core MMA ran (an Mma record)."""
        for f in self._on_mma:
            f(record)

    def access(self, record):
        for f in self._on_access:
            f(record)

    def sync(self, kind, ctas=None):
        """kind "bar": the batch CTAs `ctas` completed a barrier; "mbarrier": a thread waited on an
        mbarrier phase; "async": an async-proxy copy or operand read ran."""
        for f in self._on_sync:
            f(kind, ctas)

    def costed(self, site, space, op, O, M, warps, counts=None):
        """A cost model costed warp accesses of `site` (costs.py): O, M [N, 32] offsets (shared:
        CTA-relative; global: generic addresses) and active lanes of the batch warps `warps`, op
        the model's spelling, counts {name: int[N]} what it counted per warp (global: the
        coalescing model's requests, sectors, ideal_sectors; shared: the bank model's wavefronts
        and ideal)."""
        for f in self._on_costed:
            f(site, space, op, O, M, warps, counts)
