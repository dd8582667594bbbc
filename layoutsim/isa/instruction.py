"""Instruction and Operand: one catalog entry, as the rest of layoutsim consumes it."""
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..archs import NVIDIA, nvidia_at_least
from ..errors import LayoutsimError
from ..fragment import FragmentMap


@dataclass(frozen=True)
class Operand:
    name: str                 # "A", "B", "C", "D", "E" (sparsity metadata), or "R" for ldmatrix/stmatrix registers
    fmt: str                  # element format name ("f16", "f32", "s8", "b16", ...)
    fragment: FragmentMap
    role: str = "input"       # "input" or "output"

    # numpy-facing conveniences: the table, the inverse and the queries
    @property
    def table(self) -> np.ndarray:
        return self.fragment.table

    @property
    def holders(self) -> np.ndarray:
        return self.fragment.holders

    def lane(self, lane):
        return self.fragment.lane_entries(lane)

    def who_holds(self, row, col, matrix=0):
        return self.fragment.who_holds(row, col, matrix)


@dataclass(frozen=True)
class Addressing:
    """ldmatrix/stmatrix: lane `lanes[m, r]` supplies the 16-byte row address of row r of matrix m."""
    lanes: np.ndarray          # int [matrices, 8]
    row_bytes: int = 16


@dataclass(frozen=True)
class Instruction:
    name: str                          # canonical (full vendor spelling)
    family: str                        # mma, ldmatrix, stmatrix, wgmma, wmma, swmmac
    vendor: str                        # nvidia / amd
    threads: int                       # 32, 64 (wave64) or 128 (warpgroup)
    operands: dict                     # name -> Operand, in vendor order
    shape: tuple = ()                  # (M, N, K) for MMAs, () for data movement
    archs: tuple = ()                  # every arch the catalog has this map for
    aliases: tuple = ()
    formats: dict = field(default_factory=dict)   # role -> format name (a, b, c, d)
    addressing: Optional[Addressing] = None
    source: str = ""                   # document section the layout comes from
    confirmed: str = "not yet run on a GPU"   # or "confirmed on <GPU> (<report>)"
    notes: tuple = ()                  # facts a user must see beside the map
    options: dict = field(default_factory=dict)   # e.g. {"satfinite": True, "opsel": 0}
    arch_specific: bool = False        # exists only on arch-specific targets (archs.compile_target)
    mnemonic: str = ""                 # AMD: the ISA mnemonic a disassembly shows
    builtin: str = ""                  # AMD: the clang builtin that emits it
    arch_note: str = ""                # when `archs` are not "where it exists" (a map measured on
                                       # one GPU): why other archs are refused

    @property
    def min_arch(self):
        return self.archs[0] if self.archs else None

    def operand(self, name):
        key = str(name).upper()
        if key not in self.operands:
            raise LayoutsimError(f"{self.name} has no operand {name!r}; its operands are "
                                 f"{', '.join(self.operands)}")
        return self.operands[key]

    def check_arch(self, arch):
        if arch is None or arch in self.archs:
            return
        if self.arch_note:
            raise LayoutsimError(f"{self.name}: no map for {arch} in the catalog: {self.arch_note}")
        if self.vendor == "nvidia" and arch in NVIDIA and self.archs and self.archs[0] in NVIDIA \
                and not nvidia_at_least(arch, self.archs[0]):
            raise LayoutsimError(f"{self.name} is not available on {arch}: it was introduced with {self.archs[0]}")
        where = (f"{self.archs[0]} and later" if self.vendor == "nvidia" and len(self.archs) > 1
                 else ", ".join(self.archs))
        raise LayoutsimError(f"{self.name} is not available on {arch}: it is an {'AMD' if self.vendor == 'amd' else 'NVIDIA'} "
                             f"instruction of {where}")


def nvidia_from(minimum, only=None):
    """Every NVIDIA arch from `minimum` on (or exactly `only`)."""
    if only:
        return tuple(only)
    return tuple(a for a in NVIDIA if nvidia_at_least(a, minimum))
