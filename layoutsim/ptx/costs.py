"""What every executed memory instruction costs, per PTX instruction and in total: an observer of
the access records the handlers emit (events.py; Costs.on_access), subscribed by the runner.

Each access is costed as the SASS ptxas emits for its PTX line (sass.py, from the lowering of
lowering.py): a PTX memory instruction with no memory SASS costs nothing, an atom ptxas emits as
RED is costed and counted as a reduction. Without a lowering every PTX memory instruction is
costed as written, and the run says so.

Shared memory: each warp's access goes to the bank model (`layoutsim.banks`, the numba batch
engine; the same rules as `layoutsim banks`). A launch's totals are what Nsight Compute sums into
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld / _op_st. Warps whose accesses differ only by a
multiple of 128 bytes have the same banks and the same distinct words, so each distinct pattern
is costed once and counted as often as it occurs.

Global memory: each warp's access goes to the coalescing model (`layoutsim.memory.coalesce_batch`:
requests and sectors), counted under the Nsight Compute op its SASS lands in
(`GlobalOp.metric_op`: l1tex__t_requests/sectors_pipe_lsu_mem_global_op_ld/st/atom/red).
"""
from dataclasses import fields
from functools import lru_cache

import numpy as np

from .. import banks
from .. import sass as SASS
from ..access import WIDTH_NAME, op_name
from ..memory import coalesce_batch, parse_op
from . import sass as S
from .access import space_of
from .events import Access
from .state import GLOBAL_BASE

METRIC_OPS = ("ld", "st", "atom", "red")     # the ncu ops global accesses are counted under


def _odd_multipliers(seed, n):
    """n odd 62-bit multipliers for distinct_patterns' row hash: SplitMix64's outputs from `seed`
    (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", OOPSLA 2014), in plain
    Python so that importing the costs does not load numpy.random (~9 ms). Any odd multipliers
    do: every group the hash makes is checked to hold identical rows."""
    out, x, m64 = [], seed, (1 << 64) - 1
    for _ in range(n):
        x = (x + 0x9E3779B97F4A7C15) & m64
        z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & m64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m64
        out.append(((z ^ (z >> 31)) >> 2) | 1)
    return np.array(out, dtype=np.int64)


_MIX = _odd_multipliers(0x1A7E, 33)


FEW_ROWS = 64       # below this many rows grouping costs more than looking each row up (memo_rows)


def distinct_patterns(O, M):
    """The distinct warp accesses among O/M [N, 32] up to a shift by a multiple of 128 bytes
    (which keeps every bank and every distinct word), with how often each occurs. Rows are
    grouped by a 64-bit hash and each group is checked to hold identical rows. Fewer than
    FEW_ROWS rows are returned shifted but not grouped (each once): every caller sums counts
    per row, and memo_rows looks a repeated row up once costed. Returns (Z, M, counts, inv):
    inv [N], the pattern of each row."""
    if M.all():                  # every lane active (whole warps): no masking
        Z = O - O.min(axis=1, keepdims=True) // 128 * 128
    else:
        big = np.iinfo(np.int64).max
        base = np.where(M, O, big).min(axis=1, keepdims=True)
        base = np.where(base == big, 0, base) // 128 * 128
        Z = np.where(M, O - base, 0)
    if Z.shape[0] < FEW_ROWS:
        return Z, M, np.ones(Z.shape[0], np.int64), np.arange(Z.shape[0])
    lanes = np.packbits(M, axis=1, bitorder="little").view("<u4").reshape(-1).astype(np.int64)
    h = (Z * _MIX[:32]).sum(axis=1) + lanes * _MIX[32]
    _, first, inv, counts = np.unique(h, return_index=True, return_inverse=True, return_counts=True)
    if not (np.array_equal(Z, Z[first[inv]]) and np.array_equal(M, M[first[inv]])):
        key = np.concatenate([Z, M.astype(np.int64)], axis=1)          # a hash collision: exact
        uniq, inv, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        return uniq[:, :32], uniq[:, 32:].astype(bool), counts, inv.reshape(-1)
    return Z[first], M[first], counts, inv.reshape(-1)


def warp_rows(threads, offsets):
    """(warps [n], offsets int64 [n, 32], active lanes bool [n, 32]) of per-thread accesses: one
    row per batch warp that has any, in increasing order. Threads in increasing order (what the
    handlers pass: np.flatnonzero of a mask) are grouped without a sort."""
    threads = np.asarray(threads)
    t = threads.reshape(-1, 32) if threads.size and threads.size % 32 == 0 else None
    if t is not None and not (t[:, 0] & 31).any() and (t[:, 31] - t[:, 0] == 31).all() and \
            (threads.size == 32 or (threads[1:] > threads[:-1]).all()):
        # whole warps in order (what a full batch gives): the rows are the accesses as they are
        return t[:, 0] >> 5, np.asarray(offsets, np.int64).reshape(-1, 32), np.ones(t.shape, bool)
    warp = threads >> 5
    if threads.size and (threads.size == 1 or (threads[1:] > threads[:-1]).all()):
        first = np.empty(warp.size, bool)
        first[0] = True
        np.not_equal(warp[1:], warp[:-1], out=first[1:])
        uw, inv = warp[first], np.cumsum(first) - 1
    else:
        uw, inv = np.unique(warp, return_inverse=True)
    O = np.zeros((len(uw), 32), np.int64)
    M = np.zeros((len(uw), 32), bool)
    O[inv, threads & 31] = offsets
    M[inv, threads & 31] = True
    return uw, O, M


_MEMO = {}               # (model, op, arch) -> {pattern bytes: its counts}
MEMO_MAX = 1 << 16       # patterns kept per (model, op, arch); a full table starts again
_BLOCKS = {}             # ((model, op, arch), the block's bytes) -> memo_rows' result for a whole block
BLOCK_ROWS = 16          # blocks of at most this many rows are kept whole (keys of at most 4.2 KB)
BLOCKS_MAX = 4096        # whole blocks kept; a full table starts again


def memo_rows(key, Z, M, compute):
    """Counts of distinct warp accesses Z/M [N, 32] (offsets of the active lanes, 0 elsewhere,
    as distinct_patterns gives them): a tuple of int64[N] arrays, compute(Z, M)'s, for the rows
    not costed before under `key`, looked up for the others. The bank and coalescing models are
    functions of (op, arch, pattern) alone, so a pattern costed once, in this launch or an
    earlier one, is not recosted: a GEMM's k loop repeats the same few patterns every iteration."""
    memo = _MEMO.setdefault(key, {})
    lanes = np.packbits(M, axis=1, bitorder="little").view("<u4").reshape(-1).astype(np.int64)
    block = None
    if Z.shape[0] <= BLOCK_ROWS:          # a small step's whole block, as it recurs (a k loop's)
        block = Z.tobytes() + lanes.tobytes()
        got = _BLOCKS.get((key, block))
        if got is not None:
            return got
    keys = [k.tobytes() for k in np.concatenate([Z, lanes[:, None]], axis=1)]
    new = [i for i, k in enumerate(keys) if k not in memo]
    if new:
        if len(memo) + len(new) > MEMO_MAX:
            memo.clear()
        got = compute(Z[new], M[new])
        for j, i in enumerate(new):
            memo[keys[i]] = tuple(int(v[j]) for v in got)
    out = tuple(np.array(v, np.int64) for v in zip(*(memo[k] for k in keys)))
    if block is not None:
        if len(_BLOCKS) >= BLOCKS_MAX:
            _BLOCKS.clear()
        for v in out:
            v.flags.writeable = False         # shared by every later step with this block
        _BLOCKS[(key, block)] = out
    return out


# A step's whole costing (its rows, counts and totals) kept by its program, line, threads and
# addresses: a k loop issues the same shared-memory access pattern every iteration, and a kernel
# launched again (a test suite's, a benchmark's) the same accesses as before. Steps of at most
# STEP_THREADS threads (keys of at most 16 KiB), at most STEPS_MAX of them in all, whatever the
# program (a full table starts again).
STEP_THREADS = 1024
STEPS_MAX = 512
_STEPS = {}              # (Program.identity, arch, the step's key) -> what the step did (Costs._replay)


def _step_key(what, threads, offsets):
    """The key of a step's costing, or None for a step too large to keep."""
    threads, offsets = np.asarray(threads), np.asarray(offsets)
    if threads.size > STEP_THREADS or offsets.shape != threads.shape:
        return None
    return what + (threads.dtype.str, threads.tobytes(), offsets.dtype.str, offsets.tobytes())


DSMEM_NOTE = ("distributed shared memory (.shared::cluster, another CTA's shared memory): counted as its "
              "own class, not costed (no model of the SM-to-SM network) and not in the shared wavefront totals")


class Costs:
    def __init__(self, prog, arch):
        n = len(prog.sites)
        self.arch = arch
        self.lowered = prog.lowered           # sass.Lowered: the SASS of each PTX line, or none known
        self._line = [s.line for s in prog.sites]
        self.executions = np.zeros(n, np.int64)
        self.wavefronts = np.zeros(n, np.int64)
        self.ideal = np.zeros(n, np.int64)
        self.kind = [None] * n            # "ld", "st", "ldgsts", "atom" for shared accesses
        self.sass = [None] * n            # the SASS op(s) costed
        self.requests = np.zeros(n, np.int64)
        self.sectors = np.zeros(n, np.int64)
        self.ideal_sectors = np.zeros(n, np.int64)     # what the bytes asked for need (memory/nvidia.py)
        self.global_kind = [None] * n     # the ncu op the global accesses are counted under
        self.notes = {}                   # site -> what its SASS says about its cost
        self.warp_instructions = 0
        self.dsmem = np.zeros(n, np.int64)    # shared::cluster accesses (per thread) of each line: not costed
        self.st_part = np.zeros(n, np.int64)  # a line that both loads and stores (kind "ld+st"): its store wavefronts
        self.sunk = prog.sunk                 # sunk ld site -> the site it is costed at (sinking.py)
        self.held = {}                        # reader site -> [the held loads' records] (on_access)
        self._steps = _STEPS                  # _step_key -> what the step did (_replay)
        self._program = (prog.identity, arch)     # what a kept step's key starts with
        self._costed = {}                     # (site, nbytes) -> _lowered's answer for a costed site

    def begin(self, bt):
        """The batch whose accesses come next (what it costs goes on its bus as `costed` events)."""
        self.batch = bt
        return self

    def __getstate__(self):               # a worker process sends its costs back, not its batch
        return dict(self.__dict__, batch=None, _steps={}, _program=None, held={})

    def _replay(self, done):
        """Do again what a kept step did: its costed events, totals and marks."""
        for site, space, op, O, M, warps, counts, sums, marks in done:
            self.batch.events.costed(site, space, op, O, M, warps, counts)
            for name, v in sums:
                getattr(self, name)[site] += v
            for name, v in marks:
                getattr(self, name)[site] = v

    def _keep(self, key, done):
        if key is not None:
            if len(self._steps) >= STEPS_MAX:
                self._steps.clear()
            self._steps[key] = done

    # ---- the observer: every access the handlers emit (events.py) -------------------------------
    def on_access(self, rec):
        """Cost an issued shared or global access by its instruction class: the bank model for
        shared ld/st/atom/cp.async/ldmatrix/stmatrix, the coalescing model for global ones, the
        GMMA unit for wgmma operands, wmma's SASS plan (costs_wmma); TMA and bulk copies (the TMA
        unit, not the LSU) and deferred landings cost nothing."""
        if not rec.issued:
            return
        if self.sunk:
            if rec.site in self.sunk and rec.op == "ld" and rec.space in ("shared", "global"):
                self._hold(rec)
                return
            if rec.site in self.held:
                self._release(rec)
        self._cost(rec)

    def _hold(self, rec):
        """A load ptxas sinks into its reader (sinking.py): kept until the reader runs. Its threads
        leave any earlier hold of the same load (they passed the reader with its guard false)."""
        use = self.sunk[rec.site]
        kept = [_subset(h, ~_among(h.threads, rec.threads)) if h.site == rec.site else h
                for h in self.held.get(use, [])]
        self.held[use] = [h for h in kept if h is not None] + [rec]
        self.notes[rec.site] = (f"ptxas sinks this load to line {self._line[use]}: costed for the lanes that "
                                f"run that line")

    def _release(self, rec):
        """The reader of held loads ran in rec.threads: those lanes' loads are costed now."""
        rest = []
        for h in self.held.pop(rec.site):
            inside = _among(h.threads, rec.threads)
            n = np.count_nonzero(inside)
            if n:
                self._cost(h if n == inside.size else _subset(h, inside))
            if n < inside.size:
                rest.append(_subset(h, ~inside))
        if rest:
            self.held[rec.site] = rest

    def _cost(self, rec):
        op, space = rec.op, rec.space
        if op in ("wmma.load", "wmma.store"):
            if space in ("shared", "global"):
                from . import costs_wmma      # (wmma's SASS plan, layoutsim.warpcore: for a wmma only)
                costs_wmma.cost(self, rec)
        elif op == "wgmma":                  # one operand of each warpgroup: flat[0] its elements
            from ..sim.costing import wgmma_cost       # (layoutsim.sim: imported for a wgmma only)
            self.add_gmma(rec.site, wgmma_cost(rec.flat[0].size * rec.width)[0] * len(rec.threads))
        elif space == "shared":
            if op in ("ldmatrix", "stmatrix"):
                name = f"{op}.x{rec.vector}{'.trans' if rec.trans else ''}"
                self.shared(rec.site, name, "ld" if op == "ldmatrix" else "st", rec.addresses, rec.threads,
                            rec.sass)
            elif op in ("ld", "st", "atom", "red", "cp.async"):
                kind = {"cp.async": "ldgsts", "red": "atom"}.get(op, op)    # the banks see an atomic as its store
                self.shared(rec.site, op_name("ld" if op == "ld" else "st", "shared", rec.width), kind,
                            rec.addresses, rec.threads, rec.sass, rec.width if op in ("ld", "st") else None)
            elif op == "tensormap":
                self.tensormap(rec)
        elif space == "shared::cluster":     # DSMEM: its own class, no bank or network model
            self.dsmem[rec.site] += len(rec.threads) * rec.per_thread
            self.notes[rec.site] = DSMEM_NOTE
        elif space == "global":
            if op in ("ld", "st") and rec.width in WIDTH_NAME:
                self.global_(rec.site, op_name(op, "global", rec.width, rec.path), op, rec.addresses,
                             rec.threads)
            elif op in ("atom", "red"):
                name = ".".join([op, "global"] + [m for m in rec.mods if space_of((m,)) == "generic"])
                self.global_(rec.site, name, "atom", rec.addresses, rec.threads)
            elif op == "cp.async":
                self.global_(rec.site, f"cp.async.{rec.path}.shared.global.{rec.width}", "ldgsts",
                             rec.addresses, rec.threads)

    # ---- what runs ------------------------------------------------------------------------------
    def _lowered(self, site, nbytes=None):
        """(costed, memory SASS or None) of a site: not costed when ptxas emits no memory
        instruction for its line. nbytes: the per-lane width of a plain ld/st, to say so when the
        SASS moves another width (sass_width says how it is costed then). A costed site's answer
        is kept (its note and SASS are set once, at the first call)."""
        got = self._costed.get((site, nbytes))
        if got is not None:
            return got
        ms = self.lowered.memory_sass(self._line[site]) if self.lowered is not None else None
        if ms == ():
            self.notes[site] = "ptxas emits no memory instruction for this line: executed, not costed"
            return False, ms
        if ms and nbytes and site not in self.notes:
            other = _other_widths(tuple(ms), nbytes)
            if other:
                w, pieces = sass_width(ms, nbytes)
                how = ("costed as the PTX access" if w == nbytes else
                       f"merged with its neighbours: costed as one {w}-byte access at the {w}-byte aligned address"
                       if pieces == 1 else f"split: costed as {pieces} {w}-byte accesses")
                self.notes[site] = f"ptxas emits {', '.join(other)} for this {nbytes}-byte access: {how}"
        if ms and self.sass[site] is None:
            self.sass[site] = " ".join(dict.fromkeys(ms))
        got = self._costed[(site, nbytes)] = (True, ms)
        return got

    # ---- shared memory ------------------------------------------------------------------------
    def shared(self, site, op, kind, offsets, threads, sass=None, nbytes=None):
        """One per-lane access (ld/st/atom .shared) by the given threads: offsets are
        CTA-relative byte addresses, threads batch thread indices; nbytes: a plain ld/st's width
        (to note a SASS of another width)."""
        if len(threads) == 0:
            return
        costed, ms = self._lowered(site, nbytes)
        if not costed:
            return
        key = _step_key(self._program + ("shared", site, op, kind, sass, nbytes), threads, offsets)
        if key in self._steps:
            return self._replay(self._steps[key])
        uw, O, M = warp_rows(threads, offsets)
        w, pieces = sass_width(ms, nbytes)
        if w != nbytes:                      # what ptxas emitted: one wider access, or several narrower
            op, O = op_name(op.split(".")[0], "shared", w), O - O % w if pieces == 1 else O
        done = []
        for j in range(pieces):
            self.shared_rows(site, op, kind, O + j * w if j else O, M, sass, uw, done)
        self._keep(key, done)

    def shared_rows(self, site, op, kind, O, M, sass=None, warps=None, done=None):
        """Warp accesses [N, 32] offsets and active lanes (matrix ops: the row-address lanes) of
        the batch warps `warps` (None: not known); done: a list that gets what this did (_replay)."""
        if O.shape[0] == 0 or not self._lowered(site)[0]:
            return
        Zu, Mu, counts, inv = distinct_patterns(O, M)
        wf, ideal = memo_rows(("banks", op, self.arch), Zu, Mu, lambda Z, A: (
            banks.wavefronts_batch(op, Z, self.arch, active=A), banks.ideal_batch(op, Z, self.arch, active=A)))
        # each row's counts are its pattern's (a shift by 128 bytes keeps every bank)
        step = (site, "shared", op, O, M, warps, {"wavefronts": wf[inv], "ideal": ideal[inv]},
                (("wavefronts", int((wf * counts).sum())), ("ideal", int((ideal * counts).sum()))),
                (("kind", kind),) + ((("sass", sass),) if sass else ()))
        self._replay([step])
        if done is not None:
            done.append(step)

    def tensormap(self, rec):
        """tensormap.replace on a map in shared memory, and tensormap.cp_fenceproxy's read of it: ptxas
        rewrites the map's words in place and reads them back, with the LDS and STS its SASS shows for
        the line (a field narrower than its word is read, merged and written back; tests/data/
        triton_corpus, flaggems_mm_hopper_tma: 12 LDS and 14 STS per map, as ncu counts). Each is one access per lane at the map's address: lanes replacing one
        map are a broadcast. Without the SASS the line is not costed, and says so."""
        costed, ms = self._lowered(rec.site)
        if not costed:
            return
        if ms is None:
            self.notes[rec.site] = "tensormap.replace: how ptxas rewrites the map is not known (no SASS): not costed"
            return
        # the step's sums, kept as a shared step's costing is (_replay): a function of the lanes'
        # addresses and the SASS alone
        key = _step_key(self._program + ("tensormap", rec.site), rec.threads, rec.addresses)
        sums = self._steps.get(key) if key is not None else None
        if sums is None:
            sums = [0, 0, 0]                  # wavefronts, ideal, of them the stores'
            uw, O, M = warp_rows(rec.threads, rec.addresses)
            Zu, Mu, counts, inv = distinct_patterns(O, M)
            for m in ms:
                parsed = SASS.parse_shared(m)
                if parsed is None:
                    continue
                direction, w = parsed
                op = op_name(direction, "shared", w)
                wf, ideal = memo_rows(("banks", op, self.arch), Zu - Zu % w, Mu, lambda Z, A: (
                    banks.wavefronts_batch(op, Z, self.arch, active=A), banks.ideal_batch(op, Z, self.arch, active=A)))
                n, i = int((wf * counts).sum()), int((ideal * counts).sum())
                sums[0] += n
                sums[1] += i
                if direction == "st":
                    sums[2] += n
            self._keep(key, sums)
        self.wavefronts[rec.site] += sums[0]
        self.ideal[rec.site] += sums[1]
        self.st_part[rec.site] += sums[2]
        self.kind[rec.site] = "ld+st"
        self.sass[rec.site] = " ".join(dict.fromkeys(ms))

    def add_shared(self, site, kind, sass, wavefronts, ideal):
        """Costs computed elsewhere (wmma accesses costed once per distinct pattern)."""
        if not self._lowered(site)[0]:
            return
        self.wavefronts[site] += wavefronts
        self.ideal[site] += ideal
        self.kind[site] = kind
        self.sass[site] = sass

    def add_gmma(self, site, wavefronts):
        """wgmma's shared operand reads (ops_wgmma): the GMMA unit's, costed by their size, kind
        "gmma", outside the ld/st totals; whatever ptxas emits at the line (HGMMA is no LSU op)."""
        self.wavefronts[site] += wavefronts
        self.ideal[site] += wavefronts
        self.kind[site] = "gmma"

    # ---- global memory --------------------------------------------------------------------------
    def global_(self, site, op, kind, addresses, threads):
        """One per-lane global access (generic addresses) by the given threads, costed by
        layoutsim.memory. op: its spelling in memory.ops (global_op); kind: what the caller's PTX
        instruction is (ld, st, atom, ldgsts); the counter it lands in is the metric_op of the op
        its SASS is (sass.global_op)."""
        if len(threads) == 0:
            return
        spec = _parse(op)
        costed, ms = self._lowered(site, spec.width if spec.kind in ("ld", "st") else None)
        if not costed:
            return
        nbytes = spec.width if spec.kind in ("ld", "st") else None
        key = _step_key(self._program + ("global", site, op, kind), threads, addresses)
        if key in self._steps:
            return self._replay(self._steps[key])
        spec = _parse(S.global_op(op, ms))
        # offsets from the heap's 256-byte aligned start
        uw, O, M = warp_rows(threads, np.asarray(addresses, np.int64) - GLOBAL_BASE)
        w, pieces = sass_width(ms, nbytes)
        if w != nbytes:                      # what ptxas emitted: one wider access, or several narrower
            spec = _parse(spec.name[:-len(WIDTH_NAME[nbytes])] + WIDTH_NAME[w])
            O = O - O % w if pieces == 1 else O
        done = []
        for j in range(pieces):
            self._global_rows(site, spec, O + j * w if j else O, M, uw, done)
        self._keep(key, done)

    def _global_rows(self, site, spec, O, M, uw, done):
        # distinct up to shifts by multiples of 128 bytes, which keep every request, sector and
        # ideal sector (whole lines move together; tests/ptx/test_costs_memo.py checks it); the
        # counts of each row are its pattern's
        Zu, Mu, _, inv = distinct_patterns(O, M)
        fields = ("requests", "sectors", "ideal_sectors")
        res = dict(zip(fields, (v[inv] for v in memo_rows(("coalesce", spec.name, self.arch), Zu, Mu, lambda Z, A: [
            coalesce_batch(spec.name, Z, active=A, arch=self.arch)[k] for k in fields]))))
        step = (site, "global", spec.name, O + GLOBAL_BASE, M, uw, res,
                tuple((f, int(np.sum(res[f]))) for f in fields), (("global_kind", spec.metric_op),))
        self._replay([step])
        done.append(step)

    # ---- totals ---------------------------------------------------------------------------------
    def shared_totals(self):
        out = {"ld": 0, "st": 0}
        for k, w, st in zip(self.kind, self.wavefronts, self.st_part):
            if k in out:
                out[k] += int(w)
            elif k == "ld+st":
                out["ld"] += int(w - st)
                out["st"] += int(st)
        return out

    def global_totals(self, scale=int):
        """{"requests", "sectors", "ideal_sectors", and per ncu op (ld, st, atom, red) {"requests",
        "sectors"} (what ncu counts)}, or None when no global access was costed."""
        if not any(self.global_kind):
            return None
        out = {"requests": scale(self.requests.sum()), "sectors": scale(self.sectors.sum()),
               "ideal_sectors": scale(self.ideal_sectors.sum())}
        by = {}
        for i, k in enumerate(self.global_kind):
            if k is not None:
                by.setdefault(k, []).append(i)
        for op in METRIC_OPS:
            sel = np.array(by.get(op, []), np.int64)
            out[op] = {"requests": scale(self.requests[sel].sum()), "sectors": scale(self.sectors[sel].sum())}
        return out

    def merge(self, other):
        self.executions += other.executions
        self.wavefronts += other.wavefronts
        self.ideal += other.ideal
        self.requests += other.requests
        self.sectors += other.sectors
        self.ideal_sectors += other.ideal_sectors
        self.st_part += other.st_part
        self.warp_instructions += other.warp_instructions
        for i, k in enumerate(other.kind):
            self.kind[i] = self.kind[i] or k
            self.sass[i] = self.sass[i] or other.sass[i]
            self.global_kind[i] = self.global_kind[i] or other.global_kind[i]
        for site, note in other.notes.items():
            self.notes.setdefault(site, note)


def _among(a, b):
    """np.isin(a, b) for thread indices (non-negative ints), in a few calls: one a mask over the
    threads, read at a (the same lanes, the common case, with no mask at all)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape == b.shape and np.array_equal(a, b):
        return np.ones(a.shape, bool)
    if not a.size or not b.size:
        return np.zeros(a.shape, bool)
    mask = np.zeros(max(int(a.max()), int(b.max())) + 1, bool)
    mask[b] = True
    return mask[a]


def _subset(rec, sel):
    """The access record of the lanes sel (a bool mask over rec.threads) of rec, or None if none."""
    if not sel.any():
        return None
    pick = lambda a: None if a is None else np.asarray(a)[sel]      # noqa: E731
    # dataclasses.replace, without its look at the fields each call
    kw = {f: getattr(rec, f) for f in _ACCESS_FIELDS}
    kw.update(threads=np.asarray(rec.threads)[sel], addresses=pick(rec.addresses), flat=pick(rec.flat))
    return type(rec)(**kw)


_ACCESS_FIELDS = tuple(f.name for f in fields(Access))


def sass_width(ms, nbytes):
    """(bytes per lane, accesses) the SASS `ms` of a line moves a plain nbytes-wide ld/st in:
    (nbytes, 1) as written; (W, 1) when every plain access ptxas emitted there is W > nbytes
    bytes wide (it merged the line's access with its neighbours' into one vector access, attributed
    to this line, at the W-aligned address, the neighbours' lines emitting none); (W, nbytes / W)
    when it emitted exactly that many W-byte accesses (it split the access)."""
    if not ms or not nbytes:
        return nbytes, 1
    plain = [m for m in ms if m.split(".")[0] in SASS.PLAIN and m.split(".")[0] != "LDGSTS"]
    widths = {SASS.width(m) for m in plain}
    if len(widths) != 1:
        return nbytes, 1
    w = widths.pop()
    if w > nbytes and w % nbytes == 0 and w in WIDTH_NAME:
        return w, 1
    if w < nbytes and nbytes % w == 0 and len(plain) == nbytes // w:
        return w, nbytes // w
    return nbytes, 1


@lru_cache(maxsize=4096)
def _other_widths(ms, nbytes):
    """The plain memory SASS among ms that moves another width than nbytes, sorted."""
    return tuple(sorted({m for m in ms if m.split(".")[0] in SASS.PLAIN and SASS.width(m) != nbytes}))


@lru_cache(maxsize=None)
def _parse(op):
    return parse_op(op)
