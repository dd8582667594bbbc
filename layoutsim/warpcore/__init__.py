"""The one core of warp-collective matrix semantics: gather -> compute -> scatter.

ldmatrix, stmatrix, mma(.sync), wgmma (A from registers or a shared-memory descriptor, B from a
descriptor) and nvcuda::wmma load/store/mma, vendor-neutral, vectorised over a leading batch of
warps (or warpgroups). Only this package knows how an ldmatrix moves bytes, how an mma's operand
words map to matrices and how wgmma reads its descriptor operands; `layoutsim.sim` (the machine
API) and `layoutsim.ptx` (the executor) are adapters over it: they find the registers, check
masks and addresses, raise their faults and charge their costs.

Inputs and outputs are plain numpy arrays: per-lane 32-bit register words uint32
[batch, lanes, words], byte images of shared memory (uint8, indexed by flat byte offsets that
the caller computes from its per-lane addresses), and raw element bits of operand matrices.
Layouts come only from the catalog (FragmentMaps through `layoutsim.packing`, the ldmatrix
`Addressing` of isa/ptx_ldmatrix.py, wgmma descriptors through `layoutsim.smem`); arithmetic
only from `layoutsim.mma` (layoutsim.numerics).

Modules: registers (operand matrices <-> register words), ldmatrix (ldmatrix / stmatrix rows),
mma (mma.sync, AMD WMMA/SWMMAC/MFMA, the D scatter every MMA shares), wgmma (descriptor
operands, scale-d, imm-scale), wmma (nvcuda::wmma element addresses, loads, stores, tiles).
"""
from . import ldmatrix, mma, registers, wgmma, wmma

__all__ = ["ldmatrix", "mma", "registers", "wgmma", "wmma"]
