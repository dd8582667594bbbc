"""The sm_100 (tcgen05.mma) shared-memory matrix descriptor: the 64-bit value, and where each
element of an operand lies, through the sm_90 reading (descriptor.py) where the two agree.

The value (PTX ISA 9.x (v9.2) 9.7.16.4.1 'Shared memory descriptor'; the same fields, by an
independent implementation, in CUTLASS 4.2 cute/arch/mma_sm100_desc.hpp `UMMA::SmemDescriptor`):
  bits  0-13  start address              (addr & 0x3FFFF) >> 4     (as sm_90)
  bits 16-29  leading dimension byte offset >> 4                   (as sm_90)
  bits 32-45  stride dimension byte offset >> 4                    (as sm_90)
  bits 46-48  a fixed constant 0b001 (CuTe: a 2-bit `version_` = 1 at bits 46-47)
  bits 49-51  matrix base offset                                   (as sm_90)
  bit  52     leading-dimension stride mode: 0 relative byte offset, 1 absolute address
  bits 61-63  swizzle mode: 0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B
              (sm_90 kept a 2-bit mode at bits 62-63: 0 none, 1 128B, 2 64B, 3 32B)
The canonical layouts the strides describe are the wgmma ones (PTX ISA 9.7.16.3.1 'Shared Memory
Matrix Layouts' gives the same K-/MN-major atoms), so element addresses are descriptor.addresses
of the equivalent sm_90 Descriptor. Not modelled, each refused in one line: the 128B-with-32B-atom
swizzle (mode 1), the absolute-address stride mode (bit 52 = 1), and the reserved mode codes.
Nothing here was measured: there is no Blackwell GPU here; the fields are the ISA's, checked
against CuTe's bit fields in tests/smem/test_umma.py.
"""
from dataclasses import dataclass

from ..errors import LayoutsimError
from .descriptor import FIELD, Descriptor, addresses

VERSION = 1                                      # bits 46-48 = 0b001
SWIZZLE = {0: "none", 2: "128B", 4: "64B", 6: "32B"}      # bits 61-63 -> the sm_90 mode of that name
BASE32B = 1                                      # 128B swizzle with 32B atomicity
CODE = {v: k for k, v in SWIZZLE.items()}
SOURCE = ("PTX ISA 9.x 9.7.16.4.1 'Shared memory descriptor' (= CUTLASS 4.2 "
          "cute/arch/mma_sm100_desc.hpp UMMA::SmemDescriptor); not measured: no Blackwell GPU here")
_USED = FIELD | (FIELD << 16) | (FIELD << 32) | (7 << 46) | (7 << 49) | (1 << 52) | (7 << 61)


@dataclass(frozen=True)
class UmmaDescriptor:
    """An sm_100 matrix descriptor in bytes: start, lbo, sbo (as Descriptor), swizzle (none, 32B,
    64B, 128B), base_offset (0-7); `version`, `lbo_mode` and `reserved` as the value holds them."""
    start: int
    lbo: int = 0
    sbo: int = 0
    swizzle: str = "none"
    base_offset: int = 0
    version: int = VERSION
    lbo_mode: int = 0
    reserved: int = 0

    def __post_init__(self):
        self.sm90()                               # checks start/lbo/sbo/swizzle/base_offset

    def sm90(self):
        """The sm_90 Descriptor that puts every element at the same address."""
        return Descriptor(self.start, self.lbo, self.sbo, self.swizzle, self.base_offset)

    def encode(self):
        return ((self.start >> 4) | ((self.lbo >> 4) << 16) | ((self.sbo >> 4) << 32)
                | (self.version << 46) | (self.base_offset << 49) | (self.lbo_mode << 52)
                | (CODE[self.swizzle] << 61) | self.reserved)

    @classmethod
    def decode(cls, value):
        v = int(value)
        if v < 0 or v >> 64:
            raise LayoutsimError(f"sm_100 descriptor {v:#x} is not a 64-bit value")
        code = (v >> 61) & 7
        return cls(start=(v & FIELD) << 4, lbo=((v >> 16) & FIELD) << 4, sbo=((v >> 32) & FIELD) << 4,
                   swizzle=SWIZZLE.get(code, f"code {code}"), base_offset=(v >> 49) & 7,
                   version=(v >> 46) & 7, lbo_mode=(v >> 52) & 1, reserved=v & ~_USED)

    def __str__(self):
        return (f"UmmaDescriptor(start={self.start:#x}, lbo={self.lbo}, sbo={self.sbo}, swizzle={self.swizzle}"
                f"{f', base_offset={self.base_offset}' if self.base_offset else ''}) = {self.encode():#018x}")


def problem(value):
    """One line saying why the executor cannot read an operand through this sm_100 descriptor
    value (a field the ISA leaves undefined, or a mode not modelled), or None."""
    v = int(value)
    code = (v >> 61) & 7
    if (v >> 46) & 7 != VERSION:
        return (f"sm_100 descriptor {v:#018x}: bits 46-48 are {(v >> 46) & 7:#05b}, not the fixed 0b001 "
                f"(PTX ISA 9.7.16.4.1; an sm_90 wgmma descriptor?)")
    if code == BASE32B:
        return (f"sm_100 descriptor {v:#018x}: swizzle mode 1 (128B with 32B atomicity) is not modelled "
                f"(PTX ISA 9.7.16.4.1)")
    if code not in SWIZZLE:
        return f"sm_100 descriptor {v:#018x}: swizzle code {code} is reserved (valid 0, 1, 2, 4, 6)"
    if (v >> 52) & 1:
        return (f"sm_100 descriptor {v:#018x}: the absolute-address leading-dimension mode (bit 52) "
                f"is not modelled")
    return None


def element_addresses(value, mn, k, elem_bits, major="K"):
    """Shared-window byte address of element (mn, k) of an mn x k operand read through the sm_100
    descriptor `value`: int64 [mn, k]; a value `problem` names is refused (LayoutsimError)."""
    why = problem(value)
    if why:
        raise LayoutsimError(why)
    return addresses(UmmaDescriptor.decode(value).sm90(), mn, k, elem_bits, major)
