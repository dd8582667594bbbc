"""How ldmatrix / stmatrix move an MMA operand between shared memory and registers.

Derived, never written down: register j of `ldmatrix.xN[.trans]` holds 8x8 matrix j of shared
memory (its rows at the addresses lanes `addressing.lanes[j]` give); when the operand's
fragment puts, in register j of every lane, the elements of one 8x8 block of the operand at a
constant offset from where the ldmatrix fragment puts the elements of matrix j, that
ldmatrix loads the operand, matrix j being the block at that offset (its *origin*). Both tables
come from the catalog, so the answer holds exactly when both maps do. gpu_check's end-to-end
kernels and the bank model's tile addresses (`layoutsim.address`) use these plans.
"""
import numpy as np

from .ptx_ldmatrix import COUNTS
from .registry import get

# The block order `block_order` gives ldmatrix.x2/.x4 when no operand is named: that of the
# 16-bit mma.sync A operand the instruction loads whole (the order kernels use to fill A).
BLOCK_ORDER_OF = {4: "mma.m16n8k16.f32.f16.f16.f32", 2: "mma.m16n8k8.f32.f16.f16.f32"}


def move_name(op, count, trans):
    """Catalog name of ldmatrix/stmatrix .x{count}[.trans] (op: "ldmatrix" or "stmatrix")."""
    return f"{op}.x{count}{'.trans' if trans else ''}"


def origins(frag, move, stored="row"):
    """[(row, col)] per register of `move` (an ldmatrix/stmatrix Instruction): where in the
    operand the 8x8 block it carries for `frag` starts; None when it does not carry `frag`.

    stored: "row" if operand element (r, c) lies at memory row r, column c; "col" if at (c, r).
    """
    reg = move.operands["R"].fragment
    if (frag.elem_bits != reg.elem_bits or frag.reg_bits != reg.reg_bits or frag.regs != reg.regs
            or frag.lanes != reg.lanes or frag.slots != reg.slots):
        return None
    f = frag.table.astype(np.int64)                 # [lane, reg, slot, (m, r, c)]
    g = reg.table.astype(np.int64)
    tr, tc = (f[..., 1], f[..., 2]) if stored == "row" else (f[..., 2], f[..., 1])
    orow, ocol = tr - g[..., 1], tc - g[..., 2]      # [lane, reg, slot]
    out = []
    for j in range(reg.regs):
        pts = set(zip(orow[:, j].reshape(-1).tolist(), ocol[:, j].reshape(-1).tolist()))
        if len(pts) != 1 or (g[:, j, :, 0] != j).any():
            return None
        out.append(pts.pop())
    return out


def find(frag, op, stored="row"):
    """(move Instruction, origins) of the ldmatrix (op="ldmatrix") or stmatrix that moves the
    operand `frag` whole, plain before .trans; None when none does."""
    if frag.regs not in COUNTS:
        return None
    for trans in (False, True):
        move = get(move_name(op, frag.regs, trans))
        found = origins(frag, move, stored)
        if found is not None:
            return move, found
    return None


def block_order(count):
    """[(row, 16-byte column)] of the 8x8 b16 blocks ldmatrix/stmatrix.x{count} moves, in
    register order, when no operand is named (BLOCK_ORDER_OF)."""
    if count == 1:
        return [(0, 0)]
    frag = get(BLOCK_ORDER_OF[count]).operand("A").fragment
    _, found = find(frag, "ldmatrix")
    return [(r, c * 2 // 16) for r, c in found]
