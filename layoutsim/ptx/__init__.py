"""layoutsim.ptx: run a kernel's PTX, bit for bit, with per-line shared-memory costs.

    import numpy as np, layoutsim.ptx as ptx
    r = ptx.run(open("k.ptx").read(), "saxpy", grid=4, block=256,
                args=[np.int32(1000), np.float32(2.0), x, y])
    r.buffers[3]                 # y after the launch (same dtype and shape)
    r.shared_wavefronts          # {"ld": ..., "st": ...} as Nsight Compute sums them
    print(r.format())            # the lines that cost the most excess wavefronts
    # a CUtensorMap argument (by value or pointer) over the array argument 0:
    ptx.TensorMapArg(buffer=0, dims=(K, M), box=(64, 64), swizzle="128B")

Modules: syntax (statements, operands), module (the loader), program (linking: calls
inlined, registers numbered, memory placed), compile + ops_* (one module per instruction
family), state (registers and memories of a batch of CTAs), scheduler (SIMT execution,
barriers), access (address spaces), costs (bank and coalescing models), lowering + sass (the
SASS ptxas emits for each PTX line, which costs charge), racecheck, launch (arguments, special
registers), tensormap (CUtensorMap arguments), mbarrier (mbarrier objects), report (Run),
runner (`run`); ops_wgmma and ops_async hold wgmma and TMA/mbarrier. See docs/ptx.md.
"""
from .internal import PtxInternalError
from .module import UnsupportedPtx, load
from .report import InstructionStats, Run
from .tensormap import TensorMapArg
from .runner import run
from .state import PtxFault

__all__ = ["run", "load", "Run", "InstructionStats", "PtxFault", "UnsupportedPtx", "PtxInternalError",
           "TensorMapArg"]
