"""Make sin/cos.approx reach MUFU.SIN/COS with any input: patch the FMUL.RZ multiplier to 1.0.

On sm_90, ptxas lowers sin.approx.f32 x (and cos, with or without .ftz) to
    FMUL.RZ t, x, 0.15915493667125701904      (1/(2 pi) as f32, 0x3e22f983, the instruction's
    MUFU.SIN r, t                              32-bit immediate: bytes 4..7 of its 16)
so MUFU.SIN alone is only reachable through that product. This replaces the immediate by 1.0f in
every .text section of a cubin (nothing else: each occurrence must sit at byte 4 of a 16-byte
instruction), giving a module in which sin/cos.approx(t) = MUFU(RZ(t * 1)) = MUFU(t).
"""
import struct

TWO_PI_INV = struct.pack("<f", 0.15915493667125701904)
ONE = struct.pack("<f", 1.0)


def text_sections(elf):
    """[(name, file offset, size)] of the .text.* sections of an ELF64 little-endian image."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not a little-endian ELF64 image (a cubin)")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    names = elf[strtab[4]:strtab[4] + strtab[5]]
    out = []
    for h in heads:
        name = names[h[0]:names.index(b"\0", h[0])].decode()
        if name.startswith(".text."):
            out.append((name, h[4], h[5]))
    return out


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
