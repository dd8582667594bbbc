"""Where a warp's addresses come from: expressions in `lane`, swizzles, tiles, fragment moves.

    from layoutsim import address
    address.lane_offsets("(lane % 8) * 144 + (lane // 8) * 16")      # int64[32]
    address.Expr("row * stride + lane * 4")(lane=..., row=3, stride=144)
    tile = address.Tile(64, 32, "f16", pad=8, swizzle=address.parse_swizzle("3,3,3"))
    tile.offset(row, col)                                           # byte offsets, arrays broadcast
    address.fill_offsets(tile, 16)                                  # the 128-bit stores that fill it

  expr.py     the expression language (whitelisted `ast`, numpy over the lanes, 2**48 bound)
  swizzle.py  CuTe Swizzle<B,M,S>, a general XorSwizzle, parse_swizzle
  tile.py     Tile (pitch, padding, swizzle, base) and the row-wise accesses that fill it
  blocks.py   ldmatrix/stmatrix row addresses over a tile (an mma fragment, 8x8 blocks), for an
              op parsed by layoutsim.banks.parse_op; layoutsim.banks's functions of the same
              names take the op's spelling

This is the floor that the bank model (banks/), global coalescing (memory/), wgmma descriptors
and TMA (smem/), the simulator and the PTX executor build on: it imports none of them
(tests/test_structure_address.py checks it).
"""
from .blocks import block_offsets, block_offsets_array, fragment_offsets, matrix_origins
from .expr import LANES, MAX_ABS, MAX_VARIABLES, Expr, lane_offsets, parse_variables
from .swizzle import Swizzle, XorSwizzle, parse_swizzle
from .tile import Tile, fill_count, fill_offsets, fill_offsets_array, largest_shared_memory

__all__ = ["Expr", "lane_offsets", "parse_variables", "MAX_ABS", "MAX_VARIABLES", "LANES",
           "Swizzle", "XorSwizzle", "parse_swizzle", "Tile", "fill_offsets", "fill_offsets_array",
           "fill_count", "largest_shared_memory", "fragment_offsets", "block_offsets",
           "block_offsets_array", "matrix_origins"]
