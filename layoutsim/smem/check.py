"""`layoutsim desc check`: what goes wrong in practice with a wgmma descriptor, one Problem each.

Every rule here is a consequence of descriptor.py / tma.py (the model), not a new fact:
  fault      an element outside shared memory (the launch would fault)
  duplicate  two elements at one address (an LBO/SBO of 0 or too small: the tile overlaps itself)
  units      an LBO/SBO that is 16x the dense tile's stride: bytes written into a 16-byte-unit field
  alignment  a swizzled tile whose first row is not on its repeat boundary (1024/512/256 bytes)
  base       a base offset that does not match the start address (PTX ISA 9.7.15.5.1.2.2)
  reserved   bits set outside the descriptor's fields
  overlap    two operands sharing bytes
  tma        a TMA swizzle, or the bytes a TMA box lands on, that differ from what the descriptor reads
  fault      (field tma_coords) a TMA box whose innermost coordinate is not on 16 bytes (tma.COORD_ALIGN)
  fault      (field tma_dst) a TMA box that would land outside shared memory (tma.box_fault)
"""
from dataclasses import asdict, dataclass

import numpy as np

from .descriptor import Descriptor, operand_addresses, operand_fault, operand_geometry, shared_limit


@dataclass(frozen=True)
class Problem:
    kind: str
    field: str
    message: str

    def to_json(self):
        return asdict(self)


def _label(op, mn, k):
    return f"A[{mn}][{k}]" if op == "A" else f"B[{k}][{mn}]"


def problems(instr, operand, desc, trans=False, smem_bytes=None, tma=None, tma_dst=0, tma_at=(0, 0),
             other=None, other_trans=False, tma_coords=None):
    """Problems of reading `operand` of wgmma `instr` through `desc` ([] when the tile is sound).

    smem_bytes  shared memory the block has (default: the sm_90 per-block maximum)
    tma         a tma.TensorMap that fills the tile at shared address tma_dst (operand (0,0) at
                box position tma_at = (inner, outer)), from global coordinates tma_coords
                (innermost first; None: not checked)
    other       the other operand's descriptor (A's when checking B and so on), for overlaps"""
    d = Descriptor.of(desc)
    ins, op, mn_n, k_n, w, major = operand_geometry(instr, operand, trans)
    e = w // 8
    addr = operand_addresses(ins, op, d, trans)
    grid = addr if op == "A" else addr.T                        # [mn, k]
    out = []
    m = d.mode
    if d.reserved:
        out.append(Problem("reserved", "reserved", f"bits {_bits(d.reserved)} are set; they are outside every "
                           f"descriptor field (PTX ISA 9.7.15.5.1.2.2)"))
    fault = operand_fault(ins, op, d, trans, smem_bytes, addr)
    if fault:
        r, c = map(int, np.argwhere(grid + e > shared_limit(smem_bytes)[0])[0])
        out.append(Problem("fault", _culprit(d, major, r, c), fault))
    flat = grid.reshape(-1)
    uniq, counts = np.unique(flat, return_counts=True)
    if len(uniq) < flat.size:
        dup = int(uniq[np.argmax(counts > 1)])
        who = [_label(op, *map(int, divmod(int(i), k_n))) for i in np.flatnonzero(flat == dup)[:2]]
        out.append(Problem("duplicate", "lbo/sbo", f"{flat.size - len(uniq)} elements share an address with "
                           f"another ({who[0]} and {who[1]} both at {dup:#x}): an LBO or SBO of 0 or too "
                           f"small makes the tile overlap itself"))
    dense = Descriptor.dense(0, mn_n, k_n, w, m.name, major)
    used = _used_strides(m, major)
    for name in used:
        v, ref = getattr(d, name), getattr(dense, name)
        if ref and v == 16 * ref:
            out.append(Problem("units", name, f"{name.upper()} = {v} bytes is 16 x the dense tile's {ref}: the "
                               f"field holds bytes >> 4, so write {ref >> 4} (= {ref} bytes), not {ref}"))
    if m.bits:
        row = d.start - d.start % 128
        expect = (row >> 7) & 7 if row % m.repeat else 0
        if row % m.repeat and d.base_offset == 0:
            out.append(Problem("alignment", "start", f"the tile's first row at {row:#x} is not on a "
                               f"{m.repeat}-byte boundary, where the {m.name} pattern repeats: align the tile to "
                               f"{m.repeat} bytes, or set base_offset = {expect} if the data was swizzled from "
                               f"{row:#x} (a TMA copy swizzles by address and needs base_offset 0)"))
        elif d.base_offset != expect:
            out.append(Problem("base", "base_offset", f"base_offset = {d.base_offset}, but a tile whose first row "
                               f"is at {row:#x} has base offset {expect} ((start >> 7) & 7 when not on a "
                               f"{m.repeat}-byte boundary, else 0)"))
    elif d.base_offset:
        out.append(Problem("base", "base_offset", f"base_offset = {d.base_offset} in no-swizzle mode: PTX defines "
                           f"the base offset for the swizzled modes only"))
    if other is not None:
        oop = "B" if op == "A" else "A"
        oaddr = operand_addresses(ins, oop, Descriptor.of(other), other_trans)
        mine = set((addr[..., None] + np.arange(e)).reshape(-1).tolist())
        ow = operand_geometry(ins, oop, other_trans)[4] // 8
        theirs = set((oaddr[..., None] + np.arange(ow)).reshape(-1).tolist())
        both = sorted(mine & theirs)
        if both:
            out.append(Problem("overlap", "start", f"operands {op} and {oop} share {len(both)} bytes "
                               f"(first at {both[0]:#x})"))
    if tma is not None:
        out += _tma_problems(tma, tma_dst, ins, op, d, trans, tma_at, tma_coords, smem_bytes)
    return out


def _tma_problems(tma, dst, ins, op, d, trans, at, coords, smem_bytes):
    from .tma import box_fault, consistency, coords_problem
    out = []
    why = coords_problem(tma, coords) if coords is not None else None
    if why:
        out.append(Problem("fault", "tma_coords", why))
    outside = box_fault(tma, dst, smem_bytes)
    if outside:
        out.append(Problem("fault", "tma_dst", outside))
    if tma.swizzle != d.swizzle:
        out.append(Problem("tma", "swizzle", f"the tensor map swizzles {tma.swizzle}, the descriptor reads "
                           f"{d.swizzle}"))
    if outside:                    # the copy faults: where its bytes would land is moot
        return out
    bad = consistency(tma, dst, ins, op, d, trans, at, smem_bytes)
    if bad:
        mn, k, da, ta = bad[0]
        where = f"lands at {ta:#x}" if ta is not None else "is outside the box"
        out.append(Problem("tma", "layout", f"{len(bad)} elements differ between the TMA box and the descriptor: "
                           f"{_label(op, mn, k)} is read at {da:#x} but {where}"))
    return out


def _used_strides(m, major):
    """The strides the documented reading uses (LBO is unused for swizzled K-major)."""
    return ("sbo",) if (major == "K" and m.bits) else ("lbo", "sbo")


def _culprit(d, major, r, c):
    return "start" if (r, c) == (0, 0) else "lbo/sbo"


def _bits(v):
    bits = [i for i in range(64) if v >> i & 1]
    return ", ".join(map(str, bits[:8])) + (" ..." if len(bits) > 8 else "")


def unused_fields(desc, instr, operand, trans=False):
    """Notes on fields the documented reading ignores for this operand (not problems)."""
    d = Descriptor.of(desc)
    _, _, _, _, _, major = operand_geometry(instr, operand, trans)
    notes = []
    if major == "K" and d.mode.bits and d.lbo not in (0, 16):
        notes.append(f"LBO = {d.lbo} is not used by a swizzled K-major operand (PTX: 'not used, assumed 1'; "
                     f"CuTe writes 1)")
    return notes

