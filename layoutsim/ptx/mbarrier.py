"""mbarrier objects of a batch of CTAs (PTX ISA 9.0, 9.7.13.15 'Parallel Synchronization and
Communication Instructions: mbarrier').

An mbarrier is an opaque 64-bit object in shared memory with a phase, an expected arrival count,
the arrivals pending in the current phase and a transaction count (tx-count, bytes). The current
phase completes when its pending arrivals reach zero and its tx-count is zero; then the phase
number advances, and the pending count is reset to the expected count. test_wait/try_wait
.parity P is true once the phase of parity P has completed, i.e. while the current phase's
parity differs from P (the idiom CUTLASS's pipelines rely on: waiting on parity 1 of a fresh
barrier returns at once).

The model keeps the objects beside shared memory, keyed by the barrier's byte in the batch's
shared memory (the 8 bytes themselves are not written: their encoding is the hardware's). An
operation on a barrier that was never initialized (or was invalidated) is a fault, and so is
pushing more arrivals into a phase that waits for its transactions. Arrivals of one step count in
thread order; a phase completed by some of them lets the rest count towards the next.

The arrive token (`state`) holds the phase number the arrival counted in (bits 0-31) and the
pending count after it (bits 32-51, for mbarrier.pending_count). `epoch` counts every change, so
the scheduler can tell whether a waiting thread can have become ready.
"""
import numpy as np

from .state import Fault

MAX_COUNT = (1 << 20) - 1           # mbarrier.init count and tx-count range (PTX ISA 9.7.13.15.1)


class MBarriers:
    def __init__(self):
        self.slot = {}                          # flat shared byte offset -> slot
        self.addr = []                          # slot -> (CTA-relative shared address)
        n = 16
        self.expected = np.zeros(n, np.int64)
        self.pending = np.zeros(n, np.int64)
        self.tx = np.zeros(n, np.int64)
        self.phase = np.zeros(n, np.int64)
        self.valid = np.zeros(n, bool)
        self.epoch = 0
        self.parked = {}                        # pc -> (thread, shared address, flat offset): for errors

    # ---- slots --------------------------------------------------------------------------------
    def _grow(self):
        n = 2 * len(self.valid)
        for name in ("expected", "pending", "tx", "phase", "valid"):
            old = getattr(self, name)
            new = np.zeros(n, old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)

    def slots(self, flat, addr, threads, what, create=False):
        out = np.empty(len(flat), np.int64)
        for k, f in enumerate(flat.tolist()):
            s = self.slot.get(f)
            if s is None and create:
                s = self.slot[f] = len(self.addr)
                self.addr.append(int(addr[k]))
                if s >= len(self.valid):
                    self._grow()
            out[k] = -1 if s is None else s
        if not create:
            bad = (out < 0) | ~self.valid[np.maximum(out, 0)]
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                raise Fault(threads[j], addr[j], f"{what}: no initialized mbarrier at shared address "
                                                 f"{int(addr[j]):#x} (mbarrier.init it first; undefined "
                                                 f"behaviour on the GPU)", "uninitialized_mbarrier", "shared")
        return out

    def describe(self, flat):
        s = self.slot.get(int(flat))
        if s is None or not self.valid[s]:
            return f"an uninitialized mbarrier at shared {self.addr[s] if s is not None else flat:#x}"
        return (f"the mbarrier at shared {self.addr[s]:#x} (phase {int(self.phase[s])}, "
                f"{int(self.pending[s])} of {int(self.expected[s])} arrivals pending, "
                f"tx-count {int(self.tx[s])})")

    # ---- operations ------------------------------------------------------------------------------
    def init(self, flat, addr, counts, threads):
        bad = (counts < 1) | (counts > MAX_COUNT)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise Fault(threads[j], addr[j], f"mbarrier.init count {int(counts[j])}: valid 1..{MAX_COUNT}",
                        "invalid_operand", "shared")
        s = self.slots(flat, addr, threads, "mbarrier.init", create=True)
        self.expected[s] = counts
        self.pending[s] = counts
        self.tx[s] = 0
        self.phase[s] = 0
        self.valid[s] = True
        self.epoch += 1

    def inval(self, flat, addr, threads):
        s = self.slots(flat, addr, threads, "mbarrier.inval")
        self.valid[s] = False
        self.epoch += 1

    def expect_tx(self, s, nbytes, threads, addr):
        np.add.at(self.tx, s, nbytes)
        self._check_tx(s, threads, addr)
        self.epoch += 1

    def complete_tx(self, s, nbytes, threads, addr):
        """Transactions (bytes) landed: tx-count down, and a phase waiting only for them completes."""
        np.subtract.at(self.tx, s, nbytes)
        self._check_tx(s, threads, addr)
        u = np.unique(s)
        done = u[(self.pending[u] == 0) & (self.tx[u] == 0)]
        self.phase[done] += 1
        self.pending[done] = self.expected[done]
        self.epoch += 1

    def _check_tx(self, s, threads, addr):
        bad = np.abs(self.tx[s]) > MAX_COUNT
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise Fault(threads[j], addr[j], f"the mbarrier's tx-count {int(self.tx[s[j]])} left its range "
                                             f"+-{MAX_COUNT} (undefined behaviour)", "mbarrier_overflow", "shared")

    def arrive(self, s, counts, threads, addr, drop=False, no_complete=False):
        """Arrivals (counts[i] by threads[i], in thread order: one that completes the phase lets
        the next count towards the following phase); returns the state tokens."""
        tokens = np.zeros(len(s), np.uint64)
        for k in range(len(s)):
            b, c = int(s[k]), int(counts[k])
            if drop:                          # arrive_drop: the barrier expects c fewer from now on
                self.expected[b] -= c
            left = int(self.pending[b]) - c
            if left < 0 or (left == 0 and no_complete):
                why = "more than the current phase waits for" if left < 0 else \
                    "and .noComplete, but they would complete the phase"
                raise Fault(threads[k], addr[k], f"{c} arrival(s) on the mbarrier at shared {int(addr[k]):#x}, "
                                                 f"{why} ({int(self.pending[b])} pending; undefined behaviour)",
                            "mbarrier_overflow", "shared")
            tokens[k] = (int(self.phase[b]) & 0xFFFFFFFF) | (left << 32)
            if left == 0 and self.tx[b] == 0:
                self.phase[b] += 1
                left = int(self.expected[b])
            self.pending[b] = left
        self.epoch += 1
        return tokens

    def test(self, s, parity=None, tokens=None):
        """Per thread: has the phase of `parity` (test_wait.parity) or of `tokens` completed?"""
        cur = self.phase[s]
        if parity is not None:
            return (cur & 1) != (parity & 1)
        return (cur & 0xFFFFFFFF) != (tokens.astype(np.int64) & 0xFFFFFFFF)
