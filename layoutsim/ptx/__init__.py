"""layoutsim.ptx: run a kernel's PTX, bit for bit, with per-line shared-memory costs.

    import numpy as np, layoutsim.ptx as ptx
    r = ptx.run(open("k.ptx").read(), "saxpy", grid=4, block=256,
                args=[np.int32(1000), np.float32(2.0), x, y])
    r.buffers[3]                 # y after the launch (same dtype and shape)
    r.shared_wavefronts          # {"ld": ..., "st": ...} as Nsight Compute sums them
    print(r.format())            # the lines that cost the most excess wavefronts / sectors
    r.accesses(198)              # the lanes and addresses of PTX line 198's first warp executions
    ptx.run(..., initcheck=True).initcheck     # reads of never-written shared memory
    # a fault raises PtxFault: .fault is its record (kind, thread, CTA, line, address, buffer)
    text = ptx.compile_cu("k.cu", arch="sm_90", flags=["-std=c++17"])   # PTX with -lineinfo
    # a CUtensorMap argument (by value or pointer) over the array argument 0:
    ptx.TensorMapArg(buffer=0, dims=(K, M), box=(64, 64), swizzle="128B")
    # a cudaTextureObject_t / cudaSurfaceObject_t argument over an array of its own:
    ptx.TextureArg(img, filter="linear", address="border", normalized=True); ptx.SurfaceArg(out_img)

Modules: syntax (statements, operands), module (the loader), program (linking: calls
inlined, registers numbered, memory placed), table (the instruction table: one row per form,
its family's handler, legal modifiers, state spaces, sync class; docs/dev/adding-an-instruction.md),
compile (a step from its row), ops_* (one module per instruction family; shared helpers in
builders), step (Step), state (registers and memories of a batch of CTAs), scheduler (SIMT
execution, barriers), access (address spaces), events (handlers compute, observers account: each
memory instruction's execution is an Access record on the batch's bus, and these subscribe to it:
costs + costs_wmma (bank and coalescing models), samples (the lanes of each memory line's
first executions, as costs costed them: its `costed` events), racecheck, initcheck), lowering +
sass (the SASS ptxas emits for each PTX line, which costs charge), faults (the record of a fault), launch
(arguments, special registers), tensormap (CUtensorMap arguments), texture and surface
(texture/surface object arguments, the sampler; ops_texture runs tex/tld4/suld/sust/txq/suq), mbarrier (mbarrier
objects), report (Run), runner (`run`), nvcc
(`compile_cu`: a .cu to PTX with line info, safely); ops_wgmma and ops_async hold wgmma and TMA/mbarrier.
The matrix handlers (ops_matrix: ldmatrix, stmatrix, mma, wmma; ops_wgmma) are adapters over
layoutsim.warpcore, the warp-collective core layoutsim.sim shares: they check lanes and
addresses, raise faults and charge costs; the core moves the bytes and computes.
See docs/ptx.md.
"""
from .internal import PtxInternalError
from .module import UnsupportedPtx, load
from .report import InstructionStats, Run
from .surface import SurfaceArg
from .launch import StructArg
from .tensormap import TensorMapArg
from .texture import TextureArg
from .runner import run
from .state import PtxFault

__all__ = ["run", "compile_cu", "load", "Run", "InstructionStats", "PtxFault", "UnsupportedPtx",
           "PtxInternalError", "TensorMapArg", "TextureArg", "SurfaceArg", "StructArg"]


def __getattr__(name):
    """compile_cu, imported when first asked for: nvcc.py brings subprocess (~4 ms), which a run
    of a .ptx whose lowering is cached never needs."""
    if name == "compile_cu":
        from .nvcc import compile_cu
        return compile_cu
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
