"""PTX fundamental types: width, kind, and the numpy dtype an instruction of that type computes in.

PTX ISA 9.0, 5.2.1 'Fundamental Types'. Registers hold raw bits in an unsigned array of the
register's width (bool for .pred); an instruction views them in its own type: .s32 as int32,
.f32 as float32, .f16 as the raw uint16 (half arithmetic goes through layoutsim.ptx.fround).
"""
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import LayoutsimError
from . import lines


@dataclass(frozen=True)
class PtxType:
    name: str          # "s32"
    bits: int
    kind: str          # "b", "u", "s", "f", "pred", "h" (packed half: f16x2/bf16x2), "fp" (8/4-bit
    #                    float), "v" (packed 16-bit integers: u16x2/s16x2)

    @cached_property
    def dtype(self):
        """numpy dtype an instruction of this type computes in (computed once per type: operand
        reads and writes ask on every instruction)."""
        if self.kind == "pred":
            return np.dtype(bool)
        if self.kind == "s":
            return np.dtype(f"int{self.bits}")
        if self.kind == "f" and self.bits in (32, 64):
            return np.dtype(f"float{self.bits}")
        return np.dtype("V16") if self.bits == 128 else np.dtype(f"uint{max(self.bits, 8)}")

    @cached_property
    def storage(self):
        """dtype of a register declared with this type (computed once per type)."""
        if self.kind == "pred":
            return np.dtype(bool)
        return np.dtype("V16") if self.bits == 128 else np.dtype(f"uint{max(self.bits, 8)}")

    @property
    def signed(self):
        return self.kind == "s"

    @property
    def is_float(self):
        return self.kind in ("f", "h", "fp")


_ALL = {}
for _b in (8, 16, 32, 64):
    for _k in "bus":
        _ALL[f"{_k}{_b}"] = PtxType(f"{_k}{_b}", _b, _k)
_ALL["b128"] = PtxType("b128", 128, "b")
_ALL.update({
    "f16": PtxType("f16", 16, "f"), "bf16": PtxType("bf16", 16, "f"), "f32": PtxType("f32", 32, "f"),
    "f64": PtxType("f64", 64, "f"), "tf32": PtxType("tf32", 32, "f"),
    "f16x2": PtxType("f16x2", 32, "h"), "bf16x2": PtxType("bf16x2", 32, "h"),
    "pred": PtxType("pred", 1, "pred"),
    "e4m3": PtxType("e4m3", 8, "fp"), "e5m2": PtxType("e5m2", 8, "fp"),
    "e4m3x2": PtxType("e4m3x2", 16, "h"), "e5m2x2": PtxType("e5m2x2", 16, "h"),
    "s4": PtxType("s4", 4, "s"), "u4": PtxType("u4", 4, "u"),
    "u16x2": PtxType("u16x2", 32, "v"), "s16x2": PtxType("s16x2", 32, "v"),   # integer SIMD
})
TYPES = _ALL


def is_type(name):
    return name in TYPES


def get(name, line=None):
    t = TYPES.get(name)
    if t is None:
        where = f"line {line}: " if line else ""
        raise LayoutsimError(f"{where}unknown PTX type .{name}")
    return t


def instr_type(mods, line=None, default=None):
    """The last modifier that names a type (the instruction type), e.g. ('lo', 's32') -> s32."""
    for m in reversed(mods):
        if m in TYPES:
            return TYPES[m]
    if default is not None:
        return TYPES[default]
    raise LayoutsimError(f"line {line}: no type modifier (as .b32, .s32, .f32) in "
                         f"{'.' + '.'.join(mods) if mods else 'an instruction without modifiers'}")


def types_in(mods):
    """All type modifiers, in order (cvt.f32.s32 -> [f32, s32])."""
    return [TYPES[m] for m in mods if m in TYPES]


def two_types(ins, example):
    """The (first, second) type modifiers of an instruction that takes two (as `example`)."""
    tys = types_in(ins.mods)
    if len(tys) != 2:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name} takes two type modifiers (as {example}), not "
                             f"{len(tys)}: {ins.text}")
    return tys
