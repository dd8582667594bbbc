"""Shared-memory (NVIDIA) and LDS (AMD) bank model: how many wavefronts a warp's access takes.

    from layoutsim import banks
    r = banks.analyze("ld.shared.v4.b32", "lane * 16")          # or 32 byte offsets
    r.wavefronts, r.ideal, r.conflicts, r.phases                # 4, 4, 0, (Phase, ...)
    banks.wavefronts("ldmatrix.x4", "(lane % 8) * 128 + (lane // 8) * 16")    # 32
    banks.wavefronts("ds_read_b128", "lane * 16", arch="gfx1201")            # unverified on hardware
    banks.wavefronts_batch("ld.shared.b32", offsets_Nx32)       # numba, > 1e6 accesses/s

    tile = banks.Tile(64, 32, "f16", pad=8)
    offs = banks.fragment_offsets(tile, "ldmatrix.x4", "mma.m16n8k16.f32.f16.f16.f32:A", 16, 16)
    banks.search(128, 64, "f16", reads=["ldmatrix.x4"], writes=["st.shared.v4.b32"])

Wavefronts are what Nsight Compute counts in l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld
/ _op_st. NVIDIA rules: nvidia.py (which phases merge is being measured on an H200:
gpu_check/bank_probe). AMD rules: amd.py, from documents only, unverified on hardware.
numba is imported only by the numba batch engine (batch.py -> _jit.py).

Addresses, swizzles and tiles are layoutsim.address (banks builds on it; it knows nothing of
banks); Tile, Swizzle, XorSwizzle, Expr, lane_offsets, parse_swizzle and fill_offsets are
re-exported here as part of this package's public API, and tiles.py gives fragment_offsets,
block_offsets and matrix_origins for ops given by their spelling.
"""
# The address layer's names, public here too: bank-model users write banks.Tile, banks.Swizzle
# (docs/banks.md); they live in layoutsim.address. The ldmatrix/stmatrix ones take spellings.
from ..address import Expr, Swizzle, Tile, XorSwizzle, fill_offsets, lane_offsets, parse_swizzle
from .batch import ideal_batch, wavefronts_batch
from .model import Phase, Report, analyze, wavefronts
from .nvidia import DEFAULT as DEFAULT_RULES, Rules
from .ops import OpSpec, names as op_names, parse as parse_op
from .search import search
from .tiles import block_offsets, fragment_offsets, matrix_origins

__all__ = ["analyze", "wavefronts", "wavefronts_batch", "ideal_batch", "Report", "Phase", "Rules",
           "DEFAULT_RULES", "Tile", "Swizzle", "XorSwizzle", "Expr", "lane_offsets", "parse_swizzle",
           "fragment_offsets", "block_offsets", "fill_offsets", "matrix_origins", "search",
           "OpSpec", "op_names", "parse_op"]
