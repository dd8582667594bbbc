"""What the descriptors group measures: the probe kernels, the descriptors each runs with, the
TMA boxes. Everything is deterministic (one seed) and recorded with the results.

Shared memory of a wgmma probe (relative to the dynamic base the kernel reports, 1024-aligned):
  [0, ID_BYTES)                   element ids (ids.py), read by the operand under test
  [ONEHOT_AT, ONEHOT_AT + 2 KiB)  the one-hot B of the SS probes, K-major, no swizzle
Descriptors are drawn so that under every candidate reading (layoutsim.smem.candidate_readings)
every element read lies inside the id region: no probe can fault, and a reading that is wrong
still names ids, so the corpus can tell the readings apart.
"""
from dataclasses import dataclass

import numpy as np

from layoutsim import smem
from layoutsim.smem.descriptor import _USED

from .kernels import Probe

SMEM_BYTES = smem.shared_limit()[0]     # the sm_90 per-block dynamic maximum (banks/nvidia.py SMEM_KIB)
BASE = 0x400                            # where it starts in the shared window: sm_90 reserves the first
                                        # 1 KiB (the probes' SASS: UMOV 0x400; the kernels check it)
ONEHOT_AT = SMEM_BYTES - 2048
ID_BYTES = ONEHOT_AT
SEED = 20261201
RANDOM_PER_PROBE = 40                   # 18 probes: 720 random descriptors
RESERVED_PER_PROBE = 4                  # unused bits set (run last: a fault there costs nothing else)

# (wgmma, operand under test, transpose): every input type, A and B, K- and MN-major.
A_SHAPE = {"f16": "wgmma.m64n16k16.f32.f16.f16", "bf16": "wgmma.m64n16k16.f32.bf16.bf16",
           "tf32": "wgmma.m64n8k8.f32.tf32.tf32", "e4m3": "wgmma.m64n32k32.f32.e4m3.e4m3",
           "e5m2": "wgmma.m64n32k32.f32.e5m2.e5m2", "s8": "wgmma.m64n32k32.s32.s8.s8",
           "u8": "wgmma.m64n32k32.s32.u8.u8"}
B_SHAPE = {"f16": "wgmma.m64n128k16.f32.f16.f16", "bf16": "wgmma.m64n128k16.f32.bf16.bf16",
           "tf32": "wgmma.m64n128k8.f32.tf32.tf32", "e4m3": "wgmma.m64n128k32.f32.e4m3.e4m3",
           "e5m2": "wgmma.m64n128k32.f32.e5m2.e5m2", "s8": "wgmma.m64n128k32.s32.s8.s8",
           "u8": "wgmma.m64n128k32.s32.u8.u8"}


def probes():
    out = []
    for under, table in (("A", A_SHAPE), ("B", B_SHAPE)):
        for fmt, entry in table.items():
            for trans in ((False, True) if fmt in ("f16", "bf16") else (False,)):
                out.append(Probe(entry, under, trans))
    return out


@dataclass
class Case:
    desc: int            # the tested descriptor, absolute start (64-bit value)
    kind: str            # canonical / random / reserved
    note: str = ""


def onehot_descriptor(probe, base):
    """The fixed descriptor of the one-hot B of an SS probe (K-major, no swizzle, dense)."""
    M, N, K = probe.instr.shape
    return smem.Descriptor.dense(base + ONEHOT_AT, N, K, probe.elem_bits)


def _extent(probe):
    ins = probe.instr
    M, N, K = ins.shape
    return (M if probe.under == "A" else N), K


def span(probe, values, readings):
    """(lowest, highest end) byte address each descriptor (1-D array) reaches under any reading."""
    mn, k = _extent(probe)
    major = "MN" if probe.trans else "K"
    e = probe.elem_bits // 8
    values = np.asarray(values, np.uint64)
    lo = np.full(len(values), np.iinfo(np.int64).max)
    hi = np.full(len(values), np.iinfo(np.int64).min)
    for r in readings:
        a = smem.addresses(values, mn, k, probe.elem_bits, major, r).reshape(len(values), -1)
        lo = np.minimum(lo, a.min(axis=1))
        hi = np.maximum(hi, a.max(axis=1) + e)
    return lo, hi


def fits(probe, values, base, readings):
    lo, hi = span(probe, values, readings)
    return (lo >= base) & (hi <= base + ID_BYTES)


def canonical_cases(probe, base):
    """Each swizzle mode's dense CuTe tile at aligned starts, with the k-advances inside a row
    (K-major) or by 8-row groups (MN-major) that real GEMM loops make, and the base offset the
    PTX ISA prescribes for a tile that starts off its repeat boundary."""
    mn, k = _extent(probe)
    major = "MN" if probe.trans else "K"
    out = []
    for name, m in smem.MODES.items():
        tile = smem.Descriptor.dense(0, mn, k, probe.elem_bits, name, major)
        at = base + 8 * 1024 + 4096 * len(out)
        at -= at % 1024
        steps = [0]
        if major == "K" and m.bits:
            steps = [32 * j for j in range(m.chunks // 2)]           # K advance inside the row
        for s in steps:
            d = smem.Descriptor(at + s, tile.lbo, tile.sbo, name)
            out.append(Case(d.encode(), "canonical", f"{name} {major}-major dense, start +{s}"))
        if m.bits:                                                # off the repeat boundary by 3 rows
            d = smem.Descriptor(at + 384, tile.lbo, tile.sbo, name, base_offset=3)
            out.append(Case(d.encode(), "canonical", f"{name} {major}-major at +384 with base_offset 3"))
            d = smem.Descriptor(at + 384, tile.lbo, tile.sbo, name)
            out.append(Case(d.encode(), "canonical", f"{name} {major}-major at +384, base_offset 0"))
    return out


def _stride(rng, m):
    r = rng.random()
    if r < 0.1:
        return 0
    if r < 0.35:
        return int(rng.choice([16, 128, 256, 8 * m.span, 16 * m.span, 2048]))
    if r < 0.9:
        return int(rng.integers(0, 2048 // 16)) * 16
    return int(rng.integers(0, 16384 // 16)) * 16


def _reserved_bits(rng):
    """Random bits among the unused ones above the fields (46-48, 52-61): at least one."""
    spare = [b for b in range(46, 62) if not (_USED >> b) & 1]
    pick = rng.random(len(spare)) < 0.3
    pick[int(rng.integers(0, len(spare)))] = True
    return sum(1 << b for b, p in zip(spare, pick) if p)


def random_cases(probe, base, rng, n, readings, reserved=False):
    """Descriptors drawn anywhere legal: any start (aligned to the pattern or not), LBO/SBO
    from 0 up, any base offset; drawn again until every candidate reading stays in the id region."""
    out = []
    names = list(smem.MODES)
    for _ in range(50):
        batch = []
        for _ in range(4 * n):
            m = smem.MODES[names[int(rng.integers(0, 4))]]
            if rng.random() < 0.4:
                start = base + int(rng.integers(0, ID_BYTES // m.repeat)) * m.repeat + 16 * int(rng.integers(0, 8))
            else:
                start = base + 16 * int(rng.integers(0, ID_BYTES // 16))
            bo = 0 if rng.random() < 0.4 else int(rng.integers(1, 8))
            value = smem.Descriptor(start, _stride(rng, m), _stride(rng, m), m.name, bo).encode()
            batch.append(value | (_reserved_bits(rng) if reserved else 0))
        ok = fits(probe, np.array(batch, np.uint64), base, readings)
        out += [Case(v, "reserved" if reserved else "random") for v, f in zip(batch, ok) if f]
        if len(out) >= n:
            return out[:n]
    raise RuntimeError(f"{probe.name}: could not draw {n} in-range descriptors")


def cases(probe, base, seed=SEED):
    readings = smem.candidate_readings()
    rng = np.random.default_rng([seed, len(probe.name), sum(map(ord, probe.name))])
    safe = canonical_cases(probe, base) + random_cases(probe, base, rng, RANDOM_PER_PROBE, readings)
    risky = random_cases(probe, base, rng, RESERVED_PER_PROBE, readings, reserved=True)
    inside = fits(probe, np.array([c.desc for c in safe], np.uint64), base, readings)
    if not inside.all():
        bad = safe[int(np.flatnonzero(~inside)[0])]
        raise AssertionError(f"{probe.name}: case {bad.note or bad.desc} leaves the id region")
    return safe, risky


# ---- TMA ---------------------------------------------------------------------------------
# The measured boxes keep the innermost coordinate, in bytes, on 16 (layoutsim.smem.tma.COORD_ALIGN:
# the H200 faults otherwise, "an illegal instruction was encountered"). The boxes that break it
# (COORD_PROBES, coord_probe=True) run in their own phase, last, behind an aligned control, so
# the rule is measured without costing the other boxes anything.
COORD_ALIGN = smem.tma.COORD_ALIGN
# The first box of the plan is the one the counters run loaded (2-D, 64 x 2 B rows of 128 B, no
# swizzle, at (0, 0) of a tensor of exactly its size): if it faults too, the fault is systematic.
SANITY_BOX = ((64, 64), 2, "none", 0, (0, 0), (64, 64))
# (box, element bytes, swizzle, dst, coords, global dims): an aligned control first, then
# innermost byte offsets 3, 8 and 4: the first is the first box of the second run, as it was.
COORD_PROBES = (((16, 8), 1, "none", 0, (16, 2), (32, 13)),
                ((16, 8), 1, "none", 0, (3, 2), (32, 13)),
                ((8, 8), 2, "none", 0, (4, 1), (16, 9)),
                ((32, 8), 4, "128B", 0, (1, 1), (40, 9)))


@dataclass
class TmaCase:
    box: tuple           # innermost first
    elem_bytes: int
    swizzle: str
    dst: int             # offset from the region start (multiple of 128)
    coords: tuple        # box origin in the global tensor
    gdims: tuple         # global tensor dims, innermost first
    coord_probe: bool = False   # one of COORD_PROBES (the "tma-coords" phase)

    @property
    def inner_aligned(self):
        return self.coords[0] * self.elem_bytes % COORD_ALIGN == 0


def tma_cases(seed=SEED):
    """The sanity box, then every swizzle mode x element size x box shapes (2-D and 3-D, inner
    rows narrower than the span, odd row counts), at destinations on and off the 1024-byte
    boundary, innermost coordinates on 16 bytes; then COORD_PROBES."""
    rng = np.random.default_rng([seed, 7])
    out = [TmaCase(*SANITY_BOX)]
    for name, m in smem.MODES.items():
        for e in (1, 2, 4):
            inners = sorted({16, min(32, m.span) if m.bits else 32, m.span if m.bits else 64,
                             128 if not m.bits else m.span})
            for inner in inners:
                if m.bits and inner > m.span:
                    continue
                b0, step = inner // e, COORD_ALIGN // e
                for rows, depth, dst in ((8, 1, 0), (13, 1, 128), (64, 1, 384), (5, 3, 640), (16, 2, 1024 + 256)):
                    box = (b0, rows) if depth == 1 else (b0, rows, depth)
                    spare = int(rng.integers(0, 4))                          # 16-byte steps beside the box
                    gd = (b0 + spare * step,) + tuple(int(b + rng.integers(1, 9)) for b in box[1:])
                    co = (int(rng.integers(0, spare + 1)) * step,) + tuple(
                        int(rng.integers(0, g - b + 1)) for g, b in zip(gd[1:], box[1:]))
                    out.append(TmaCase(box, e, name, dst, co, gd))
    out += [TmaCase(*c, coord_probe=True) for c in COORD_PROBES]
    return out
