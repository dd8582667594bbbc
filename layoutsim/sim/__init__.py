"""layoutsim.sim: a warp / warpgroup machine that executes fragment loads, stores and MMAs.

    import numpy as np
    from layoutsim.sim import Warp

    w = Warp("sm_90")
    w.global_alloc("x", np.arange(64, dtype=np.uint32))
    w.ld_global("r0", "x", offsets=4 * w.lane)          # ld.global.b32, one word per lane
    w.st_shared(offsets=4 * w.lane, src="r0")           # st.shared.b32, costed by the bank model
    print(w.trace.format())

Registers hold raw bits. What ldmatrix, stmatrix, mma and wgmma do is the warp-collective core's
(`layoutsim.warpcore`, which the PTX executor also runs on: layouts from the catalog, arithmetic
from `layoutsim.mma`, wgmma operands in shared memory through `layoutsim.smem` descriptors); the
machine (machine.py; host.py: snapshots and buffers) names registers, checks masks and addresses, commits or leaves everything as
it was, and traces; shared-memory cost from `layoutsim.banks` (costing.py). See docs/sim.md.
"""
from .machine import Machine, State, Warp, Warpgroup, regs, smem_limit
from .trace import Run, Trace, TraceEntry

__all__ = ["Machine", "Warp", "Warpgroup", "Run", "Trace", "TraceEntry", "State",
           "regs", "smem_limit"]
