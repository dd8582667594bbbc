"""Make sin/cos.approx reach MUFU.SIN/COS with any input: patch the FMUL.RZ multiplier to 1.0.

On sm_90, ptxas lowers sin.approx.f32 x (and cos, with or without .ftz) to
    FMUL.RZ t, x, 0.15915493667125701904      (1/(2 pi) as f32, 0x3e22f983, the instruction's
    MUFU.SIN r, t                              32-bit immediate: bytes 4..7 of its 16)
so MUFU.SIN alone is only reachable through that product. This replaces the immediate by 1.0f in
every .text section of a cubin (nothing else: each occurrence must sit at byte 4 of a 16-byte
instruction), giving a module in which sin/cos.approx(t) = MUFU(RZ(t * 1)) = MUFU(t).
"""
import struct

from layoutsim import sass as SASS

TWO_PI_INV = struct.pack("<f", 0.15915493667125701904)
ONE = struct.pack("<f", 1.0)


def text_sections(elf):
    """[(name, file offset, size)] of the .text.* sections of an ELF64 little-endian image
    (layoutsim/sass.py reads the headers; ValueError for bytes that are not one)."""
    return [(name, off, size) for name, _, off, size in SASS.cubin_sections(elf) if name.startswith(".text.")]


def patch_sincos(cubin):
    """(patched bytes, [(section, offset in section)]) with every FMUL immediate 1/(2 pi) -> 1.0."""
    data = bytearray(cubin)
    hits = []
    for name, off, size in text_sections(cubin):
        start = 0
        while True:
            i = cubin.find(TWO_PI_INV, off + start, off + size)
            if i < 0:
                break
            rel = i - off
            if rel % 16 != 4:
                raise ValueError(f"{name}+{rel:#x}: 0x3e22f983 outside an instruction's immediate field")
            data[i:i + 4] = ONE
            hits.append((name, rel))
            start = rel + 4
    return bytes(data), hits
