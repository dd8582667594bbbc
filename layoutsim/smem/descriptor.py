"""wgmma matrix descriptors: the 64-bit value, and the shared-memory byte of every operand element.

The value (PTX ISA 9.7.15.5.1.2.2 'Matrix Descriptor Format'):
  bits  0-13  start address:             (addr & 0x3FFFF) >> 4
  bits 16-29  leading dimension byte offset (LBO) >> 4
  bits 32-45  stride dimension byte offset (SBO) >> 4
  bits 49-51  matrix base offset (0-7)
  bits 62-63  swizzle mode: 0 none, 1 128B, 2 64B, 3 32B
Every other bit is unused; `Descriptor.reserved` keeps whatever a value carries there.

Where element (mn, k) of an operand lives (mn = m for A, n for B; e-byte elements, T = 16/e
elements per 16-byte chunk, W = span/16 chunks per swizzled row), in CuTe's canonical forms
(cute/atom/mma_traits_sm90_gmma.hpp, make_gmma_desc, in uint128_t units), before the swizzle:

  K-major  none      (mn%8)*16    + (mn//8)*SBO + (k//T)*LBO + (k%T)*e
  K-major  W-swizzle (mn%8)*16W   + (mn//8)*SBO + (k//T)*16  + (k%T)*e        (LBO unused)
  MN-major none      (k%8)*16     + (k//8)*LBO  + (mn//T)*SBO + (mn%T)*e
  MN-major W-swizzle (k%8)*16W    + (k//8)*SBO  + (mn//T%W)*16 + (mn//(TW))*LBO + (mn%T)*e

plus the start address, and then the swizzle XOR of the mode (swizzle.py) on the shared-window
address. PTX ISA 9.7.16.3.1 (the tcgen05 strides, the same canonical layouts) says the same in
words: for K-major swizzled layouts LBO is "not used, assumed to be 1"; for MN-major it is the
stride between 8-column groups (none) or between groups of swizzle-width/16 rows (swizzled).

The readings that differ between projects are parameters of a `Reading`, so the GPU
measurement (gpu_check.descriptors) can test them side by side; `DOCUMENTED` is the reading of
the current PTX ISA and CuTe, and the H200 corpus confirmed it (`CONFIRMED`: of the 28
candidate readings only DOCUMENTED explains all 1028 measured descriptors):
  strides      "atom" (above) | "core-matrix": the PTX ISA <= 8.4 words, LBO = the K distance
               and SBO = the M/N distance between 8x16-byte core matrices in every mode
  base_offset  how bits 49-51 move the pattern: "subtract" (PTX: base offset = (pattern start
               >> 7) & 7, i.e. the pattern starts 128*base bytes past a repeat boundary), "add",
               "xor" or "ignored"
  base_offset_32B  True: valid for every swizzled mode (PTX ISA); False: 128B and 64B only
               (CuTe mma_sm90_desc.hpp comment)
  anchor       "absolute": the XOR reads shared-window address bits (CuTe's `Swizzle o smem_ptr`)
               | "start": the pattern starts at the descriptor's start address
"""
from dataclasses import asdict, dataclass
from itertools import product

import numpy as np

from ..cite import corpus
from ..errors import LayoutsimError, choose
from .swizzle import BY_DESC_CODE, MODES, mode

FIELD = (1 << 14) - 1
BYTES_MAX = FIELD << 4            # start, LBO and SBO in bytes: multiples of 16 in 0..BYTES_MAX
ADDRESS_BITS = 18                 # matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4
_USED = FIELD | (FIELD << 16) | (FIELD << 32) | (7 << 49) | (3 << 62)
MAJORS = ("K", "MN")


class Choices:
    """A reading: one choice per disputed question (a frozen dataclass), and its JSON."""

    def to_json(self):
        return asdict(self)


def reading_status(reading, confirmed):
    """One line: a reading in use and what stands behind it."""
    src = f"confirmed on {confirmed}" if confirmed else "from the PTX ISA and CuTe; not yet confirmed on a GPU"
    return f"{reading.label()} ({src})"


@dataclass(frozen=True)
class Reading(Choices):
    strides: str = "atom"
    base_offset: str = "subtract"
    base_offset_32B: bool = True
    anchor: str = "absolute"

    def __post_init__(self):
        choose("strides reading", self.strides, ("atom", "core-matrix"))
        choose("base-offset reading", self.base_offset, ("subtract", "add", "xor", "ignored"))
        choose("anchor reading", self.anchor, ("absolute", "start"))

    def label(self):
        return (f"strides={self.strides} base_offset={self.base_offset}"
                f"{'' if self.base_offset_32B else '(128B/64B only)'} anchor={self.anchor}")


DOCUMENTED = Reading()
# Where DOCUMENTED was confirmed on a GPU: the corpus and the GPU, driver and date it was measured
# on ("" = not yet: only the vendor documents above stand behind it). 1028 descriptors (canonical,
# random, unused bits set) on 18 probes, 0 of 2,202,624 operand addresses differ, and of the 28
# candidate_readings() only DOCUMENTED explains them all. (The TMA reading has its own corpus:
# tma.CONFIRMED.)
CONFIRMED = ("NVIDIA H200, driver 580.159.04, CUDA 13.0, 2026-12-01 "
             f"({corpus('descriptors_sm_90.npz', 'Shared-memory operands')})")


def status():
    """One line: the reading the model uses and what stands behind it."""
    return reading_status(DOCUMENTED, CONFIRMED)


def candidate_readings():
    """Every distinct combination of the readings above (the GPU corpus must single one out; with
    the base offset ignored, whether 32B honours it makes no difference)."""
    return [Reading(s, b, b32, a) for s, b, b32, a in
            product(("atom", "core-matrix"), ("subtract", "add", "xor", "ignored"), (True, False),
                    ("absolute", "start")) if b32 or b != "ignored"]


def _field(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise LayoutsimError(f"descriptor {name}={value!r}: must be an integer number of bytes")
    v = int(value)
    if v < 0 or v % 16 or v > BYTES_MAX:
        raise LayoutsimError(f"descriptor {name}={v}: must be a multiple of 16 in 0..{BYTES_MAX} bytes "
                             f"(the descriptor keeps bits 4-17 in a 14-bit field)")
    return v


@dataclass(frozen=True)
class Descriptor:
    """A wgmma matrix descriptor in bytes: start (shared-window address), lbo, sbo, the swizzle
    mode name (none, 32B, 64B, 128B; an int is taken as the descriptor's own code: 1 = 128B),
    base_offset (0-7) and `reserved` (the unused bits of a raw value, kept for round trips)."""
    start: int
    lbo: int = 0
    sbo: int = 0
    swizzle: str = "none"
    base_offset: int = 0
    reserved: int = 0

    def __post_init__(self):
        for name in ("start", "lbo", "sbo"):
            object.__setattr__(self, name, _field(name, getattr(self, name)))
        sw = self.swizzle
        if isinstance(sw, (int, np.integer)) and not isinstance(sw, bool):
            if int(sw) not in BY_DESC_CODE:
                raise LayoutsimError(f"descriptor swizzle code {sw}: valid 0 (none), 1 (128B), 2 (64B), 3 (32B)")
            sw = BY_DESC_CODE[int(sw)]
        object.__setattr__(self, "swizzle", mode(sw).name)
        bo = self.base_offset
        if isinstance(bo, bool) or not isinstance(bo, (int, np.integer)) or not 0 <= int(bo) <= 7:
            raise LayoutsimError(f"descriptor base_offset={bo!r}: a 3-bit field, 0..7")
        object.__setattr__(self, "base_offset", int(bo))
        if int(self.reserved) & _USED or int(self.reserved) < 0 or int(self.reserved) >> 64:
            raise LayoutsimError(f"descriptor reserved={self.reserved:#x}: only the unused bits "
                                 f"(14-15, 30-31, 46-48, 52-61) may be set there")
        object.__setattr__(self, "reserved", int(self.reserved))

    @property
    def mode(self):
        return MODES[self.swizzle]

    # ---- the 64-bit value -----------------------------------------------------------------
    def encode(self):
        return ((self.start >> 4) | ((self.lbo >> 4) << 16) | ((self.sbo >> 4) << 32)
                | (self.base_offset << 49) | (self.mode.desc_code << 62) | self.reserved)

    @classmethod
    def decode(cls, value):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise LayoutsimError(f"descriptor {value!r} is not an integer")
        v = int(value)
        if v < 0 or v >> 64:
            raise LayoutsimError(f"descriptor {v:#x} is not a 64-bit value")
        return cls(start=(v & FIELD) << 4, lbo=((v >> 16) & FIELD) << 4, sbo=((v >> 32) & FIELD) << 4,
                   swizzle=BY_DESC_CODE[(v >> 62) & 3], base_offset=(v >> 49) & 7, reserved=v & ~_USED)

    @classmethod
    def of(cls, value):
        """A Descriptor from a Descriptor or a raw 64-bit value."""
        if isinstance(value, cls):
            return value
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return cls.decode(value)
        raise LayoutsimError(f"wgmma shared-memory operand {value!r}: give a layoutsim.smem.Descriptor "
                             f"or a 64-bit descriptor value")

    @classmethod
    def dense(cls, start, mn, k, elem_bits, swizzle="none", major="K", pad_bytes=0):
        """The descriptor of a dense mn x k tile in CuTe's canonical layout of `swizzle` and `major`
        (tile_to_shape of the layout atom, M/N first; `pad_bytes` more between 8-row groups of a
        K-major tile or between 8-k groups of an MN-major one)."""
        m = mode(swizzle)
        major = _major(major)
        e = _elem_bytes(elem_bits)
        per = 16 // e
        if major == "K":
            if m.bits == 0:
                return cls(start, lbo=128, sbo=128 * (-(-k // per)) + pad_bytes, swizzle=m.name)
            return cls(start, lbo=16, sbo=8 * m.span + pad_bytes, swizzle=m.name)
        atoms = -(-mn // (per * m.chunks))              # MN extent in atoms of W chunks
        if m.bits == 0:
            return cls(start, lbo=128 * atoms + pad_bytes, sbo=128, swizzle=m.name)
        return cls(start, lbo=8 * m.span, sbo=8 * m.span * atoms + pad_bytes, swizzle=m.name)

    def fields(self):
        """{field: {raw, bytes}} as the value holds them (raw = the 14-bit field / 3-bit / 2-bit)."""
        return {"start": {"raw": self.start >> 4, "bytes": self.start},
                "lbo": {"raw": self.lbo >> 4, "bytes": self.lbo},
                "sbo": {"raw": self.sbo >> 4, "bytes": self.sbo},
                "base_offset": {"raw": self.base_offset},
                "swizzle": {"raw": self.mode.desc_code, "name": self.swizzle},
                "reserved": {"raw": self.reserved}}

    def __str__(self):
        extra = f", base_offset={self.base_offset}" if self.base_offset else ""
        extra += f", reserved={self.reserved:#x}" if self.reserved else ""
        return (f"Descriptor(start={self.start:#x}, lbo={self.lbo}, sbo={self.sbo}, "
                f"swizzle={self.swizzle}{extra}) = {self.encode():#018x}")


def _major(major):
    m = str(major).upper().replace("-MAJOR", "")
    return choose("major-ness", m, MAJORS)


def _elem_bytes(elem_bits):
    if elem_bits not in (8, 16, 32):
        raise LayoutsimError(f"{elem_bits}-bit elements: wgmma operands have 8, 16 or 32-bit elements")
    return elem_bits // 8


def _fields(desc):
    """(start, lbo, sbo, base offset, swizzle code) int64 arrays [n], and whether one was given."""
    if isinstance(desc, Descriptor) or (np.ndim(desc) == 0 and not isinstance(desc, np.ndarray)):
        v = np.array([Descriptor.of(desc).encode()], dtype=np.uint64)
        single = True
    else:
        v = np.asarray(desc)
        if v.dtype.kind not in "ui" or v.ndim != 1 or (v.dtype.kind == "i" and (v < 0).any()):
            raise LayoutsimError("descriptors: give one value, a Descriptor, or a 1-D array of 64-bit values")
        v = v.astype(np.uint64)
        single = False
    f = np.uint64(FIELD)
    start = ((v & f) << np.uint64(4)).astype(np.int64)
    lbo = (((v >> np.uint64(16)) & f) << np.uint64(4)).astype(np.int64)
    sbo = (((v >> np.uint64(32)) & f) << np.uint64(4)).astype(np.int64)
    bo = ((v >> np.uint64(49)) & np.uint64(7)).astype(np.int64)
    code = (v >> np.uint64(62)).astype(np.int64)
    return start, lbo, sbo, bo, code, single


def addresses(desc, mn, k, elem_bits, major="K", reading=DOCUMENTED):
    """Shared-window byte address of element (mn, k) of an mn x k operand tile read through
    `desc`: int64 [mn, k] for one descriptor (a Descriptor or a raw value), [n, mn, k] for a
    1-D array of n raw values."""
    start, lbo, sbo, bo, code, single = _fields(desc)
    major = _major(major)
    e = _elem_bytes(elem_bits)
    per = 16 // e
    r = np.arange(mn, dtype=np.int64)[None, :, None]
    c = np.arange(k, dtype=np.int64)[None, None, :]
    col = lambda x: x[:, None, None]                          # noqa: E731 - per-descriptor column
    out = np.empty((len(start), mn, k), np.int64)
    core = reading.strides == "core-matrix"
    for dcode, m in BY_DESC_CODE.items():
        sel = np.flatnonzero(code == dcode)
        if not len(sel):
            continue
        L, S, W = col(lbo[sel]), col(sbo[sel]), m.chunks
        if major == "K":
            kc = (c // per) * (L if (m.bits == 0 or core) else 16)
            lin = (r % 8) * 16 * W + (r // 8) * S + kc + (c % per) * e
        elif m.bits == 0:
            lin = (c % 8) * 16 + (c // 8) * L + (r // per) * S + (r % per) * e
        else:
            mn_atoms, k_groups = (S, L) if core else (L, S)
            lin = (c % 8) * 16 * W + (c // 8) * k_groups + (r // per % W) * 16 + (r // (per * W)) * mn_atoms \
                + (r % per) * e
        lin = lin + col(start[sel])
        used = m.bits and (m.name != "32B" or reading.base_offset_32B)
        b = col(bo[sel]) if used else 0
        anchor = col(start[sel]) if reading.anchor == "start" else 0
        if reading.base_offset == "xor":       # the phase bits XOR the base offset
            out[sel] = m.apply(lin ^ (b << 7), anchor) ^ (b << 7)
        else:
            shift = {"subtract": 128, "add": -128}.get(reading.base_offset, 0)
            out[sel] = m.apply(lin, anchor + shift * b)       # the pattern starts 128*base later
    return out[0] if single else out


def _instruction(instr):
    from ..isa.instruction import Instruction
    from ..isa.registry import get
    ins = instr if isinstance(instr, Instruction) else get(str(instr))
    if ins.family != "wgmma":
        raise LayoutsimError(f"{ins.name} is not a wgmma instruction: only wgmma reads operands "
                             f"through a matrix descriptor")
    return ins


def operand_geometry(instr, operand, trans=False):
    """(instruction, 'A'|'B', mn extent, k extent, element bits, major) of one wgmma operand."""
    from ..formats import bits
    ins = _instruction(instr)
    op = choose("wgmma shared-memory operand", str(operand).upper(), ("A", "B"))
    fmt = ins.formats[op.lower()]
    w = bits(fmt)
    if trans and w != 16:
        raise LayoutsimError(f"{ins.name}: {op} is {fmt}; the transpose flag (MN-major) exists only for "
                             f".f16/.bf16 operands (PTX ISA 9.7.15.5.2: imm-trans-a/b)")
    M, N, K = ins.shape
    return ins, op, (M if op == "A" else N), K, w, ("MN" if trans else "K")


def operand_addresses(instr, operand, desc, trans=False, reading=DOCUMENTED):
    """Shared-window byte address of every element of a wgmma operand read through `desc`:
    int64 (M, K) for A, (K, N) for B. `desc` is the 64-bit value the kernel passes (or a
    Descriptor; a 1-D array of values gives [n, ...]); `trans` is imm-trans-a/-b (MN-major,
    16-bit types only)."""
    ins, op, mn, k, w, major = operand_geometry(instr, operand, trans)
    a = addresses(desc, mn, k, w, major, reading)
    return a if op == "A" else np.ascontiguousarray(np.swapaxes(a, -1, -2))


def shared_limit(smem_bytes=None):
    """(bytes, what they are) of the shared memory an operand or a TMA box must lie in:
    `smem_bytes`, or the sm_90 per-block maximum (the one place: banks/nvidia.py SMEM_KIB)."""
    if smem_bytes is None:
        from ..banks.nvidia import smem_limit
        n = smem_limit("sm_90")[0]
        return n, f"{n} bytes per block on sm_90"
    from ..errors import integer
    n = integer(smem_bytes, "smem_bytes (shared memory of the block, in bytes)", 1)
    return n, f"{n} bytes"


def operand_fault(instr, operand, desc, trans=False, smem_bytes=None, addresses=None):
    """One line saying why reading `operand` of wgmma `instr` through `desc` would fault (an
    element outside the first `smem_bytes` of the shared window; default: the sm_90 per-block
    maximum), or None. `addresses`: operand_addresses' result, when the caller has it. The
    simulator, `desc check` and `render --desc` all give this line."""
    ins, op, _, _, w, _ = operand_geometry(instr, operand, trans)
    d = Descriptor.of(desc)
    addr = operand_addresses(ins, op, d, trans) if addresses is None else np.asarray(addresses)
    limit, what = shared_limit(smem_bytes)
    bad = (addr < 0) | (addr + w // 8 > limit)
    if not bad.any():
        return None
    r, c = map(int, np.argwhere(bad)[0])
    return (f"{ins.name}: {op} descriptor {d} puts {op}[{r}][{c}] at address {int(addr[r, c]):#x}, outside "
            f"shared memory ({what}: 0..{limit - 1:#x}; {int(bad.sum())} of {bad.size} elements outside): "
            f"the hardware would fault")
