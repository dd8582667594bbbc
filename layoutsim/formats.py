"""Element formats: width in bits and kind. (Raw-bit decode/encode lives beside them.)"""
from dataclasses import dataclass

from .errors import choose


@dataclass(frozen=True)
class Format:
    name: str
    bits: int
    kind: str          # "float", "int", "uint", "raw"


FORMATS = {f.name: f for f in (
    Format("f64", 64, "float"), Format("f32", 32, "float"), Format("tf32", 32, "float"),
    Format("f16", 16, "float"), Format("bf16", 16, "float"),
    Format("e4m3", 8, "float"), Format("e5m2", 8, "float"),
    Format("s32", 32, "int"), Format("s8", 8, "int"), Format("u8", 8, "uint"),
    Format("s4", 4, "int"), Format("u4", 4, "uint"),
    Format("b16", 16, "raw"), Format("b8", 8, "raw"), Format("b32", 32, "raw"),
)}


def get_format(name):
    return FORMATS[choose("format", name, tuple(FORMATS))]


def bits(name):
    return get_format(name).bits
