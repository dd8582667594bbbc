"""The ldmatrix/stmatrix row addresses over a tile: the fragment an mma operand needs, or 8x8 blocks.

Derived from the catalog's fragment tables (`layoutsim.isa.moves`): which 8x8 memory matrix
each register of the move holds, and which lanes give its 8 row addresses. The op is given
parsed: an object with name, vendor, matrices (1, 2, 4; 0 for a per-lane access), trans,
catalog and address_lanes(), as `layoutsim.banks.parse_op` returns; `layoutsim.banks`'s
functions of the same names take the op's spelling ('ldmatrix.x4', 'LDSM.16.M88.4').
"""
import numpy as np

from ..errors import LayoutsimError
from .expr import LANES, MAX_ABS, int64_values
from .tile import offset_lists


def _fragment(name):
    from ..isa.registry import get
    if not isinstance(name, str) or ":" not in name:
        given = repr(name) if isinstance(name, str) else f"a {type(name).__name__}"
        raise LayoutsimError(f"fragment {given}: write INSTRUCTION:OPERAND, e.g. "
                             f"mma.m16n8k16.f32.f16.f16.f32:A")
    inst, operand = name.rsplit(":", 1)
    ins = get(inst.strip())
    return ins, ins.operand(operand.strip())


def _matrix_spec(spec):
    """`spec` itself, after refusing what is not an NVIDIA ldmatrix/stmatrix."""
    if isinstance(spec, str) or not hasattr(spec, "is_matrix"):
        given = repr(spec) if isinstance(spec, str) else f"a {type(spec).__name__}"
        raise LayoutsimError(f"op {given}: give it parsed (layoutsim.banks.parse_op), or call the "
                             f"layoutsim.banks function of the same name, which reads spellings")
    if spec.vendor == "amd":
        raise LayoutsimError(f"{spec.name} is an AMD LDS op: fragments and 8x8 blocks are moved by "
                             f"NVIDIA's ldmatrix/stmatrix; for {spec.name} give --fill (the row-wise "
                             f"accesses of a tile) or --addr")
    if not spec.is_matrix:
        raise LayoutsimError(f"{spec.name} is not ldmatrix/stmatrix; fragments are loaded with "
                             f"ldmatrix.x1/x2/x4[.trans] and stored with stmatrix")
    return spec


def matrix_origins(op, fragment, stored="row"):
    """[(row, col)] of each 8x8 memory matrix of `op` when it moves operand `fragment`, relative
    to the operand's (0, 0); derived from the two catalog tables (`layoutsim.isa.moves`).

    stored: "row" if operand element (r, c) lies at tile (r, c); "col" if it lies at (c, r).
    """
    from ..isa import moves
    from ..isa.registry import get
    spec = _matrix_spec(op)
    ins, opnd = _fragment(fragment)
    frag = opnd.fragment
    reg = get(spec.catalog).operand("R").fragment
    if frag.elem_bits != 16:
        raise LayoutsimError(f"operand {opnd.name} of {ins.name} has {frag.elem_bits}-bit elements; "
                             f"ldmatrix/stmatrix move b16 elements")
    if frag.regs != reg.regs or frag.lanes != reg.lanes:
        raise LayoutsimError(f"{spec.name} moves {reg.regs} registers per lane; operand {opnd.name} of "
                             f"{ins.name} has {frag.regs}: use {spec.name.split('.')[0]}.x{frag.regs}"
                             f"{'.trans' if spec.trans else ''}")
    if stored not in ("row", "col"):
        raise LayoutsimError(f"stored {stored!r}; valid: row (element (r,c) at tile (r,c)), col (at (c,r))")
    found = moves.origins(frag, get(spec.catalog), stored)
    if found is None:
        other = spec.name.replace(".trans", "") if spec.trans else spec.name + ".trans"
        raise LayoutsimError(f"{spec.name} cannot move operand {opnd.name} of {ins.name} stored "
                             f"{stored}-major: its registers do not each hold one 8x8 block in "
                             f"{'transposed' if spec.trans else 'plain'} order (try {other}"
                             f"{' or stored=' + ('col' if stored == 'row' else 'row')})")
    return found


def fragment_offsets(tile, op, fragment, row=0, col=0, stored="row"):
    """Per-lane byte offsets (None for lanes whose address is ignored) of the ldmatrix/stmatrix
    that moves `fragment` (e.g. 'mma.m16n8k16.f32.f16.f16.f32:A') at tile position (row, col)."""
    spec = _matrix_spec(op)
    if tile.elem_bytes != 2:
        raise LayoutsimError(f"ldmatrix/stmatrix move 16-bit elements; the tile holds {tile.dtype}")
    origins = matrix_origins(op, fragment, stored)
    return _row_offsets(tile, spec, [(row + r, col + c) for r, c in origins])


def block_offsets(tile, op, row=0, col=0):
    """Per-lane offsets of ldmatrix/stmatrix.xN moving N blocks of 8 rows x 16 bytes at
    (row, col), in the order of the mma.sync A fragment they load (`isa.moves.block_order`):
    x4 (row, col), (row + 8, col), (row, col + w), (row + 8, col + w); x2 (row, col),
    (row + 8, col); w = 16 bytes of elements."""
    return offset_lists(block_offsets_array(tile, op, [(row, col)]))[0]


def block_offsets_array(tile, op, positions):
    """block_offsets for many (row, col) positions at once: int64[K, 32], -1 where no address."""
    from ..isa.moves import block_order
    spec = _matrix_spec(op)
    w = 16 // tile.elem_bytes
    origins = [(r, w * c16) for r, c16 in block_order(spec.matrices)]
    pos = int64_values(positions, "block position", MAX_ABS).reshape(-1, 2)
    return _row_offsets_many(tile, spec, pos[:, None, :] + np.asarray(origins)[None, :, :])


def _row_offsets(tile, spec, origins):
    origins = int64_values(origins, "matrix position", MAX_ABS)[None]
    return offset_lists(_row_offsets_many(tile, spec, origins))[0]


def _row_offsets_many(tile, spec, origins):
    """origins int[K, matrices, 2] -> int64[K, 32] offsets (-1 where no address is used)."""
    lanes = np.asarray(spec.address_lanes())                        # [matrices, 8]
    rows = origins[:, :, 0, None] + np.arange(8)                    # [K, matrices, 8]
    cols = np.broadcast_to(origins[:, :, 1, None], rows.shape)
    offs = tile.vector_offsets(rows, cols, 16, what="matrix row")
    full = np.full((origins.shape[0], LANES), -1, np.int64)
    full[:, lanes.reshape(-1)] = offs.reshape(origins.shape[0], -1)
    return full

