"""Shared-memory operand layouts of Hopper: wgmma matrix descriptors, swizzle modes, TMA boxes.

    from layoutsim import smem
    d = smem.Descriptor(start=0x400, lbo=16, sbo=1024, swizzle="128B")
    hex(d.encode())                                        # the 64-bit value wgmma takes
    smem.Descriptor.decode(0x4000004000010040)             # ... and back
    a = smem.operand_addresses("wgmma.m64n128k16.f32.f16.f16", "A", d)   # int64 [64, 16]
    b = smem.operand_addresses("wgmma.m64n128k16.f32.f16.f16", "B", d, trans=True)  # [16, 128]
    t = smem.TensorMap(box=(64, 128), elem_bytes=2, swizzle="128B")
    smem.box_addresses(t, 0x400)                           # int64 [128, 64]: where each element lands
    smem.problems("wgmma.m64n128k16.f32.f16.f16", "A", d, tma=t, tma_dst=0x400)   # [] = sound

The API (stable; the simulator and the PTX executor use it):
  Descriptor(start, lbo, sbo, swizzle, base_offset)  bytes and a mode name; .encode(), .decode(v),
      .of(v) (Descriptor or raw value), .dense(start, mn, k, elem_bits, swizzle, major) for the
      canonical tile, .fields()
  operand_addresses(instr, operand, desc, trans=False)   shared-window byte address of every
      element: (M, K) for A, (K, N) for B; desc is the raw 64-bit value or a Descriptor (or an
      array of values: one address table per value)
  addresses(desc, mn, k, elem_bits, major)               the same for any mn x k tile
  TensorMap(box, elem_bytes, swizzle)                    a tiled tensor map's shared-memory side
  box_addresses(tmap, dst, smem_bytes=None)              where each box element lands, [*box[::-1]];
      raises (box_fault's line) when a byte would land outside shared memory (default: sm_90's
      per-block maximum, banks/nvidia.py SMEM_KIB)
  box_fault(tmap, dst, smem_bytes=None)                  that line, or None
  operand_fault(instr, operand, desc, trans, smem_bytes)  the line of a descriptor that reads outside
      shared memory, or None (the simulator raises it; `desc check` and `render --desc` give it)
  box_coords(tmap, coords)                               the global coordinates each comes from
  check_coords(tmap, coords), coords_problem(tmap, coords)   the innermost coordinate on 16 bytes
  consistency(tmap, dst, instr, operand, desc, trans)    elements where a TMA tile and a
      descriptor disagree
  problems(instr, operand, desc, ...) -> [Problem]       what `layoutsim desc check` reports
  MODES, mode(name)                                      the four swizzle modes (swizzle.py)
  status(), tma.status(); CONFIRMED, tma.CONFIRMED        the readings in use and their H200 corpora

For the PTX executor:
  wgmma.mma_async ... descA/descB: addr = operand_addresses(instr, "A"|"B", desc_value, trans)
      (trans = imm-trans-a/-b), then the operand's raw bits are smem[addr[..., None] + range(e)];
      an address outside shared memory is a fault (the simulator's Machine.wgmma does exactly this).
  cp.async.bulk.tensor.Nd.shared::cluster.global [dst], [tmap, {c0, c1, ...}]: with
      t = TensorMap(boxDim, element bytes, swizzle) of the tensor map, check_coords(t, coords)
      (the H200 faults otherwise); the global element at box_coords(t, coords)[:, i2, i1, i0]
      (outermost coordinate first) lands at shared byte box_addresses(t, dst, smem_bytes=the
      CTA's shared-memory size)[i2, i1, i0] (it raises the fault's line when the box would land
      outside); dst must be 128-byte aligned; the global tensor's
      strides and out-of-bounds fill are the executor's (they are the tensor map's global side).
  Both readings are measured on the H200 (tests/data/descriptors/), so nothing here is a guess
  about the hardware; bank costs of wgmma reads are sim/costing.wgmma_cost.

"""
from . import tma
from .check import Problem, problems, unused_fields
from .descriptor import (CONFIRMED, DOCUMENTED, Descriptor, Reading, addresses, candidate_readings,
                         operand_addresses, operand_fault, operand_geometry, shared_limit, status)
from .swizzle import MODES, Mode, for_cute, mode
from .tma import (TensorMap, TmaReading, box_addresses, box_coords, box_fault, check_coords, consistency,
                  coords_problem)

__all__ = ["tma", "Descriptor", "Reading", "DOCUMENTED", "CONFIRMED", "status", "candidate_readings", "addresses",
           "operand_addresses", "operand_fault", "operand_geometry", "shared_limit", "TensorMap", "TmaReading",
           "box_addresses", "box_coords", "box_fault",
           "check_coords", "coords_problem", "consistency", "Problem", "problems", "unused_fields", "MODES", "Mode",
           "mode", "for_cute"]
