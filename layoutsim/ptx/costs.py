"""What every executed memory instruction costs, per PTX instruction and in total.

Shared memory: each warp's access goes to the bank model (`layoutsim.banks`, the numba batch
engine; the same rules as `layoutsim banks`), costed as the SASS instruction ptxas emits for
it (lowering.py). A launch's totals are what Nsight Compute sums into
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld / _op_st. Warps whose accesses differ only
by a multiple of 128 bytes have the same banks and the same distinct words, so each distinct
pattern is costed once and counted as often as it occurs.

Global memory: each warp's access goes to `layoutsim.memory` (requests and sectors) when that
model is installed; until then global accesses are executed but not costed, and the run says so.
"""
import numpy as np

from .. import banks
from .state import GLOBAL_BASE

GLOBAL_MODEL_MISSING = ("global memory not costed: the coalescing model (layoutsim.memory) is "
                        "not installed")


_MIX = np.random.default_rng(0x1A7E).integers(1, 1 << 62, 33, dtype=np.int64) | 1


def distinct_patterns(O, M):
    """The distinct warp accesses among O/M [N, 32] up to a shift by a multiple of 128 bytes
    (which keeps every bank and every distinct word), with how often each occurs. Rows are
    grouped by a 64-bit hash and each group is checked to hold identical rows."""
    big = np.iinfo(np.int64).max
    base = np.where(M, O, big).min(axis=1, keepdims=True)
    base = np.where(base == big, 0, base) // 128 * 128
    Z = np.where(M, O - base, 0)
    lanes = np.packbits(M, axis=1, bitorder="little").view("<u4").reshape(-1).astype(np.int64)
    h = (Z * _MIX[:32]).sum(axis=1) + lanes * _MIX[32]
    _, first, inv, counts = np.unique(h, return_index=True, return_inverse=True, return_counts=True)
    if not (np.array_equal(Z, Z[first[inv]]) and np.array_equal(M, M[first[inv]])):
        key = np.concatenate([Z, M.astype(np.int64)], axis=1)          # a hash collision: exact
        uniq, counts = np.unique(key, axis=0, return_counts=True)
        return uniq[:, :32], uniq[:, 32:].astype(bool), counts
    return Z[first], M[first], counts


_WIDTH = {1: "u8", 2: "u16", 4: "b32", 8: "v2.b32", 16: "v4.b32"}


def global_op(kind, nbytes, path=""):
    """The PTX spelling the coalescing model costs a per-lane global access of nbytes by: kind ld
    or st; path "nc" for the read-only path (ld.global.nc)."""
    return f"{kind}.global{'.' + path if path else ''}.{_WIDTH[nbytes]}"


class Costs:
    def __init__(self, prog, arch):
        n = len(prog.sites)
        self.arch = arch
        self.executions = np.zeros(n, np.int64)
        self.wavefronts = np.zeros(n, np.int64)
        self.ideal = np.zeros(n, np.int64)
        self.kind = [None] * n            # "ld", "st", "ldgsts", "atom" for shared accesses
        self.sass = [None] * n            # the SASS op(s) costed
        self.requests = np.zeros(n, np.int64)
        self.sectors = np.zeros(n, np.int64)
        self.global_kind = [None] * n
        self.global_costed = None         # True/False once a global access was seen
        self.warp_instructions = 0
        self._memory = None

    # ---- shared memory ------------------------------------------------------------------------
    def shared(self, site, op, kind, offsets, threads, sass=None):
        """One per-lane access (ld/st/atom .shared) by the given threads: offsets are
        CTA-relative byte addresses, threads batch thread indices."""
        if len(threads) == 0:
            return
        warp, lane = threads // 32, threads % 32
        uw, inv = np.unique(warp, return_inverse=True)
        O = np.zeros((len(uw), 32), np.int64)
        M = np.zeros((len(uw), 32), bool)
        O[inv, lane] = offsets
        M[inv, lane] = True
        self.shared_rows(site, op, kind, O, M, sass)

    def shared_rows(self, site, op, kind, O, M, sass=None):
        """Warp accesses [N, 32] offsets and active lanes (matrix ops: the row-address lanes)."""
        if O.shape[0] == 0:
            return
        Zu, Mu, counts = distinct_patterns(O, M)
        wf = banks.wavefronts_batch(op, Zu, self.arch, active=Mu)
        ideal = banks.ideal_batch(op, Zu, self.arch, active=Mu)
        self.wavefronts[site] += int((wf * counts).sum())
        self.ideal[site] += int((ideal * counts).sum())
        self.kind[site] = kind
        if sass:
            self.sass[site] = sass

    def add_shared(self, site, kind, sass, wavefronts, ideal):
        """Costs computed elsewhere (wmma accesses costed once per distinct pattern)."""
        self.wavefronts[site] += wavefronts
        self.ideal[site] += ideal
        self.kind[site] = kind
        self.sass[site] = sass

    # ---- global memory --------------------------------------------------------------------------
    def global_(self, site, op, kind, addresses, threads):
        """One per-lane global access (generic addresses) by the given threads; costed by
        layoutsim.memory when it is installed. op: its PTX spelling (global_op)."""
        model = self._global_model()
        if model is None:
            self.global_costed = False
            return
        warp, lane = threads // 32, threads % 32
        uw, inv = np.unique(warp, return_inverse=True)
        O = np.zeros((len(uw), 32), np.int64)
        M = np.zeros((len(uw), 32), bool)
        O[inv, lane] = np.asarray(addresses, np.int64) - GLOBAL_BASE   # offsets in the heap
        M[inv, lane] = True
        res = model(op, O, active=M, arch=self.arch)
        self.requests[site] += int(np.sum(res["requests"]))
        self.sectors[site] += int(np.sum(res["sectors"]))
        self.global_kind[site] = kind
        self.global_costed = True

    def _global_model(self):
        """The plug-in point for the coalescing model: `layoutsim.memory.coalesce_batch(op,
        offsets[N, 32], active=[N, 32], arch=) -> {"requests": int64[N], "sectors": int64[N], ...}`
        (offsets from a 256-byte aligned base: the heap's start)."""
        if self._memory is None:
            try:
                from .. import memory
                self._memory = getattr(memory, "coalesce_batch", None) or False
            except ImportError:
                self._memory = False
        return self._memory or None

    # ---- totals ---------------------------------------------------------------------------------
    def shared_totals(self):
        out = {"ld": 0, "st": 0}
        for k, w in zip(self.kind, self.wavefronts):
            if k in out:
                out[k] += int(w)
        return out

    def merge(self, other):
        self.executions += other.executions
        self.wavefronts += other.wavefronts
        self.ideal += other.ideal
        self.requests += other.requests
        self.sectors += other.sectors
        self.warp_instructions += other.warp_instructions
        for i, k in enumerate(other.kind):
            self.kind[i] = self.kind[i] or k
            self.sass[i] = self.sass[i] or other.sass[i]
            self.global_kind[i] = self.global_kind[i] or other.global_kind[i]
        if other.global_costed is not None:
            self.global_costed = bool(self.global_costed) or other.global_costed \
                if self.global_costed is not None else other.global_costed
