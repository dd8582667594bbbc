"""Bounds and progress of a run: the step limit (max_steps), the wall-clock limit (timeout),
progress by elapsed time, and where the warps are when a run stops before its end (a limit
reached, Ctrl-C).

The scheduler calls Watch.check every CHECK_EVERY steps (one clock read: a step costs tens of
microseconds, so the check is a fraction of a percent of the run). Where the warps are is read
from the executions per PTX line in the last WINDOW steps or more: the lines a spinning warp
runs again and again, or the loop a long kernel is in. With jobs > 1 every worker publishes its
counters (steps, CTAs done, warp-instructions, its most-run line) in a shared array, so that the
limits hold for the run as a whole and the parent can print progress and say where it stopped.
"""
import math
import numbers
import time
from dataclasses import dataclass

import numpy as np

from ..errors import LayoutsimError

MAX_STEPS = 50_000_000     # scheduler steps of one run when max_steps is not given
CHECK_EVERY = 32           # steps between two looks at the clock and the step count
WINDOW = 1024              # steps whose most-run lines say where the warps are
PROGRESS_SECONDS = 2.0     # wall time between two progress calls
TOP_LINES = 3              # PTX lines a stop names
FIELDS = 4                 # per worker in the shared array: steps, CTAs done, warp-instructions, line


class RunLimit(LayoutsimError):
    """The run reached max_steps or timeout: one line with the steps and the lines the warps
    were running. kind: "step_limit" or "time_limit" (faults.KINDS); steps: how many ran."""

    def __init__(self, message, kind="step_limit", steps=0):
        super().__init__(message)
        self.kind, self.steps = kind, int(steps)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run: a KeyboardInterrupt whose message says where the run stopped."""


def max_steps_value(value):
    """max_steps as an int >= 1 (None: MAX_STEPS); anything else refused with one line."""
    if value is None:
        return MAX_STEPS
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise LayoutsimError(f"max_steps={value!r}: give a number of scheduler steps >= 1 (an integer; "
                             f"default {MAX_STEPS})")
    return int(value)


def timeout_value(value):
    """timeout in seconds as a float > 0, or None (no limit); anything else refused."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or value <= 0:
        raise LayoutsimError(f"timeout={value!r}: give seconds of wall time > 0 (or None: no limit)")
    return float(value)


@dataclass(frozen=True)
class Progress:
    """What a progress callback receives (layoutsim.ptx.run(progress=...))."""
    ctas_done: int
    ctas: int
    steps: int
    warp_instructions: int
    seconds: float

    def line(self):
        rate = self.warp_instructions / self.seconds if self.seconds > 0 else 0.0
        return (f"ptx: {self.ctas_done} of {self.ctas} CTAs done, {self.warp_instructions} warp-instructions "
                f"in {self.seconds:.0f} s ({rate:.3g}/s)")


class Watch:
    """The bounds of one run in one process. shared/slot: the counters of every worker of a
    jobs > 1 run (an array of FIELDS int64 per worker) and this worker's index in it."""

    def __init__(self, prog, n_ctas, max_steps=None, timeout=None, progress=None, *, deadline=None,
                 shared=None, slot=0, clock=None):
        self.prog, self.n_ctas = prog, n_ctas
        self.max_steps = max_steps_value(max_steps)
        self.timeout = timeout_value(timeout)
        self.clock = clock or time.monotonic
        self.t0 = self.clock()
        self.deadline = deadline if deadline is not None else (
            self.t0 + self.timeout if self.timeout is not None else None)
        self.progress, self.interval = progress, PROGRESS_SECONDS
        self.next_progress = self.t0 + self.interval
        self.shared, self.slot = shared, slot
        self.base = 0              # steps of the batches finished in this process
        self.ctas_done = 0
        self.costs = None
        self.steps = 0
        self._window = None        # (steps, executions) at the start of the current window
        self._last = None          # the window before it

    # ---- the scheduler's side -------------------------------------------------------------------
    def batch(self, costs):
        """A batch starts, counting into `costs`."""
        self.costs = costs
        if self._window is None:
            self._window = (self.base, costs.executions.copy())

    def batch_done(self, n_ctas, steps):
        self.base += steps
        self.steps = self.base
        self.ctas_done += n_ctas
        self._publish()

    def check(self, n):
        """Before step n (1-based) of the current batch; returns the step of the next check.
        Raises RunLimit at max_steps steps or past the deadline."""
        self.steps = done = self.base + n - 1
        if done - self._window[0] >= WINDOW:
            self._last, self._window = self._window, (done, self.costs.executions.copy())
            self._publish(top=True)
        else:
            self._publish()
        total = self.total_steps()
        if total >= self.max_steps:
            raise RunLimit(self.stop_line(f"stopped at the step limit, {total} steps (max_steps "
                                          f"{self.max_steps}, --max-steps)"), "step_limit", total)
        now = self.clock()
        if self.deadline is not None and now >= self.deadline:
            limit = f"{self.timeout:g} s " if self.timeout is not None else ""
            raise RunLimit(self.stop_line(f"stopped at the {limit}time limit (timeout, --timeout) after "
                                          f"{total} steps"), "time_limit", total)
        if self.progress is not None and now >= self.next_progress:
            self.next_progress = now + self.interval
            self.progress(self.status(now))
        return n + max(1, min(CHECK_EVERY, self.max_steps - total))

    # ---- what is reported ---------------------------------------------------------------------------
    def total_steps(self):
        return self.steps if self.shared is None else self._sum(0)

    def _sum(self, field):
        return int(sum(self.shared[k * FIELDS + field] for k in range(len(self.shared) // FIELDS)))

    def status(self, now=None):
        now = self.clock() if now is None else now
        if self.shared is not None:
            return Progress(self._sum(1), self.n_ctas, self._sum(0), self._sum(2), now - self.t0)
        wi = self.costs.warp_instructions if self.costs is not None else 0
        return Progress(self.ctas_done, self.n_ctas, self.steps, int(wi), now - self.t0)

    def poll(self):
        """The parent of a jobs > 1 run, every POLL_SECONDS: progress from the workers' counters."""
        now = self.clock()
        if self.progress is not None and now >= self.next_progress:
            self.next_progress = now + self.interval
            self.progress(self.status(now))

    def _publish(self, top=False):
        if self.shared is None:
            return
        at = self.slot * FIELDS
        self.shared[at] = self.steps
        self.shared[at + 1] = self.ctas_done
        self.shared[at + 2] = self.costs.warp_instructions if self.costs is not None else 0
        if top:
            sites = self.top_sites(1)
            self.shared[at + 3] = sites[0] if sites else -1

    def worker_sites(self):
        """The parent's view: the lines the workers ran most, most common first."""
        tops = [int(self.shared[k * FIELDS + 3]) for k in range(len(self.shared) // FIELDS)]
        counts = {}
        for t in tops:
            if t >= 0:
                counts[t] = counts.get(t, 0) + 1
        return sorted(counts, key=lambda t: -counts[t])[:TOP_LINES]

    def top_sites(self, k=TOP_LINES):
        """The sites run most in the last window (the whole run when it is shorter)."""
        if self.costs is None:
            return []
        ex = self.costs.executions
        ref = self._last or self._window
        recent = ex - ref[1] if ref is not None else ex
        if not recent.any():
            recent = ex
        order = np.argsort(-recent, kind="stable")[:k]
        # the lines run at least a tenth as often as the most-run one (not a prologue run once)
        return [int(i) for i in order if recent[i] > 0 and 10 * recent[i] >= recent[order[0]]]

    def stop_line(self, why, sites=None):
        """One line: why the run stopped, the CTAs done, the PTX (and CUDA) lines running."""
        sites = self.top_sites() if sites is None else sites
        return f"{why}; {self.ctas_done_total()} of {self.n_ctas} CTAs done; {where(self.prog, sites)}"

    def ctas_done_total(self):
        return self.ctas_done if self.shared is None else self._sum(1)


def where(prog, sites):
    """'the warps were running line 12 (k.cu:7) `bra.uni $L__BB0_1;`, ...' for the given sites."""
    if not sites:
        return "no instruction had run"
    parts = []
    for i in sites:
        s = prog.sites[i]
        cuda = f" ({s.cuda[0].rsplit('/', 1)[-1]}:{s.cuda[1]})" if s.cuda else ""
        parts.append(f"line {s.line}{cuda} `{s.text}`")
    return "the warps were running " + ", ".join(parts)
