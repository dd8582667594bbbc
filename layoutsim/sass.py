"""SASS, NVIDIA's machine code: the one place for the spellings of the memory and matrix
instructions ptxas emits, their access widths, the patterns that find them, and the parsers of
`cuobjdump -sass` and `nvdisasm` listings, and the reader of a cubin's sections. The executor (ptx/: lowering, costs, wmma), the bank
model (banks/ops.py) and the gpu_check probes (bank, coalescing, kernel corpus, build) read SASS
only through this module; it imports nothing of layoutsim, so every package may import it.

The spellings are the H200's (sm_90, CUDA 13.0), as its listings committed here show them:
tests/data/banks/bank_corpus.json (`environment.sass`: cuobjdump of the bank probe, one kernel per
shared-memory op), layoutsim/ptx/data/lowering_sm90.json (nvdisasm of the kernel corpus) and
layoutsim/ptx/data/wmma_sm_90.json (cuobjdump of the wmma probe). ldmatrix/stmatrix of one matrix
has no count suffix: `bank_probe_ldmatrix_x1` holds LDSM.16.M88, `bank_probe_stmatrix_x1_trans`
STSM.16.MT88, and the x1 wmma loads of m32n8k16/m8n32k16 s8/u8 LDSM.16.M88.
"""
import re
import struct
from dataclasses import dataclass


@dataclass(frozen=True)
class Opcode:
    name: str            # the SASS opcode, without modifiers
    space: str           # state space or unit: shared, global, local, generic, tma, bulk
    direction: str       # ld, st, atom, red (ld for a copy into shared memory)
    ptx: str             # the PTX instruction it is


# The memory opcodes: every SASS instruction that moves data through a memory pipe, the TMA and
# bulk-copy units' included (UTMALDG/UTMASTG/UTMAREDG, UBLKCP/UBLKRED: cp.async.bulk[.tensor]).
OPCODES = {o.name: o for o in (
    Opcode("LDS", "shared", "ld", "ld.shared"), Opcode("STS", "shared", "st", "st.shared"),
    Opcode("LDSM", "shared", "ld", "ldmatrix"), Opcode("STSM", "shared", "st", "stmatrix"),
    Opcode("LDG", "global", "ld", "ld.global"), Opcode("STG", "global", "st", "st.global"),
    Opcode("LD", "generic", "ld", "ld"), Opcode("ST", "generic", "st", "st"),
    Opcode("LDGSTS", "global", "ld", "cp.async"),
    Opcode("ATOMS", "shared", "atom", "atom.shared"), Opcode("ATOMG", "global", "atom", "atom.global"),
    Opcode("ATOM", "generic", "atom", "atom"),
    Opcode("RED", "global", "red", "red (or an atom whose result is unused)"),
    Opcode("REDG", "global", "red", "red.global"),
    Opcode("LDL", "local", "ld", "ld.local"), Opcode("STL", "local", "st", "st.local"),
    Opcode("UTMALDG", "tma", "ld", "cp.async.bulk.tensor (global -> shared)"),
    Opcode("UTMASTG", "tma", "st", "cp.async.bulk.tensor (shared -> global)"),
    Opcode("UTMAREDG", "tma", "red", "cp.reduce.async.bulk.tensor"),
    Opcode("UBLKCP", "bulk", "ld", "cp.async.bulk"), Opcode("UBLKRED", "bulk", "red", "cp.reduce.async.bulk"))}
# One per-lane access of one width (the others move rows, matrices, tiles or reduce).
PLAIN = ("LDS", "STS", "LDG", "STG", "LD", "ST", "LDGSTS")

TRANSPOSE = "MOVM"           # the register-transposing move (wmma's transposed operands)

# Bytes per lane of a width modifier: LDS.U8, LDG.E.U16, STS.64, LDS.128; none is 4 bytes. The bare
# 8/16/32 are accepted spellings of the bank model's users, never ptxas's.
WIDTHS = {"U8": 1, "S8": 1, "8": 1, "U16": 2, "S16": 2, "16": 2, "32": 4, "64": 8, "128": 16}
# How ptxas spells a shared-memory load or store of each width (bank_corpus.json: LDS.U8, LDS.U16,
# LDS, LDS.64, LDS.128; stores STS.U8, STS.U16, STS, STS.64, STS.128).
_SHARED_SUFFIX = {1: ".U8", 2: ".U16", 4: "", 8: ".64", 16: ".128"}

# ---- patterns --------------------------------------------------------------------------------------
MEMORY = re.compile(r"^(" + "|".join(OPCODES) + r")\b")            # an opcode that moves memory
SHARED = re.compile(r"\b((?:LDS|STS|LDSM|STSM)(?:\.[A-Z0-9]+)*)\b")  # shared-memory ops in a listing line
# global-memory ops in a listing line (longest first: LDGSTS before LDG, ATOMG before ATOM)
GLOBAL = re.compile(r"\b(LDGSTS|LDG|STG|ATOMG|REDG|RED|ATOM)((?:\.[A-Za-z0-9]+)*)")
GLOBAL_BARRIER = "LDGDEPBAR"        # cp.async's barrier: starts like LDG, moves no data
COUNTED = re.compile(r"^(MUFU|HMMA|IMMA)\b")     # besides MEMORY, what the lowering rules sum
MMA = re.compile(r"\b((?:HMMA|IMMA|DMMA)\.[\w.]+)")                 # a tensor-core MMA with its modifiers
MMA_TILE = re.compile(r"^(HMMA|IMMA|DMMA)\.(\d+)(?:x(\d+)x(\d+))?")        # HMMA.16816.F32 -> 16816
MATRIX_RELATED = re.compile(r"\b((?:HMMA|IMMA|DMMA|HGMMA|QGMMA|IGMMA|BMMA|LDSM|STSM|F2FP|HADD2|HFMA2|UTMALDG)"
                            r"(?:\.[\w.]+)?)")
# a load or store with its address operand [..] (the wmma probe's accesses; generic LD/ST where the
# PTX op has no state space)
ACCESS = re.compile(r"\b(LDSM\.[\w.]+|LDS(?:\.[\w]+)?|STS(?:\.[\w]+)?|LDG\.E(?:\.[\w]+)*|STG\.E(?:\.[\w]+)*|"
                    r"LD\.E(?:\.[\w]+)*|ST\.E(?:\.[\w]+)*)\s[^\[]*\[([^\]]*)\]")
_LSU = re.compile(r"^(LDS|STS)(\.(U8|S8|8|U16|S16|16|32|64|128))?$")
_MATRIX = re.compile(r"^(LDSM|STSM)\.16\.(M88|MT88)(\.(1|2|4))?$")


# ---- spellings -------------------------------------------------------------------------------------
def shared(direction, width):
    """The SASS of a per-lane shared-memory access: ("ld", 8) -> "LDS.64", ("st", 1) -> "STS.U8"."""
    return ("LDS" if direction == "ld" else "STS") + _SHARED_SUFFIX[width]


def matrix(direction, count, trans):
    """The SASS of ldmatrix/stmatrix .x{count}[.trans]: LDSM.16.M88.4, STSM.16.MT88.2; one matrix
    has no count (LDSM.16.M88: bank_corpus.json, bank_probe_ldmatrix_x1)."""
    return f"{'LDSM' if direction == 'ld' else 'STSM'}.16.{'MT88' if trans else 'M88'}" + \
        ("" if count == 1 else f".{count}")


def opcode(space, direction):
    """The opcode of a per-lane load or store of `space`: ("global", "ld") -> "LDG"."""
    return next(o.name for o in OPCODES.values() if o.name in PLAIN and (o.space, o.direction) == (space, direction))


def access_prefixes(direction, space):
    """The opcodes a load/store of `space` ("shared", "global") may be spelt with in a listing: its
    space's and the generic one (where the PTX op names no state space): ("LDS", "LD.E")."""
    return opcode(space, direction), opcode("generic", direction) + ".E"


def is_shared_spelling(text):
    """Whether `text` is spelt as a SASS shared-memory op (LDS..., STS..., LDSM..., STSM...)."""
    return text.startswith(("LDS", "STS"))


def ldgsts(width):
    """The executor's name for cp.async's shared-memory side of `width` bytes a lane (LDGSTS.128),
    where no lowering names the SASS (ptxas spells it LDGSTS.E[.BYPASS].128)."""
    return f"LDGSTS.{width * 8}"


def width(sass):
    """Bytes per lane of a plain load/store/LDGSTS from its modifiers (LDS.128, STS.U8, LDG.E: 4)."""
    return next((WIDTHS[m] for m in sass.split(".")[1:] if m in WIDTHS), 4)


def parse_shared(text):
    """("ld"|"st", bytes per lane) of an LDS/STS spelling with nothing but a width (LDS.U8, STS.128),
    or None."""
    m = _LSU.match(text.upper())
    return ("ld" if m.group(1) == "LDS" else "st", WIDTHS[m.group(3) or "32"]) if m else None


def parse_matrix(text):
    """("ld"|"st", matrices, trans) of an LDSM/STSM spelling (LDSM.16.MT88.4; LDSM.16.M88 and the
    users' LDSM.16.M88.1 are one matrix), or None."""
    m = _MATRIX.match(text.upper())
    return ("ld" if m.group(1) == "LDSM" else "st", int(m.group(4) or 1), m.group(2) == "MT88") if m else None


def shared_op(op):
    """(direction, width, matrices, trans) of a shared-memory opcode as a listing spells it, other
    modifiers allowed (LDS.U.128); None for another op or one with two width modifiers."""
    parts = op.split(".")
    got = parse_matrix(op)
    if got:
        return got[0], 16, got[1], got[2]
    if parts[0] not in ("LDS", "STS"):
        return None
    w = [WIDTHS[m] for m in parts[1:] if m in WIDTHS]
    return (OPCODES[parts[0]].direction, w[0] if w else 4, 0, False) if len(w) <= 1 else None


# ---- listings --------------------------------------------------------------------------------------
_FUNCTION = re.compile(r"Function\s*:\s*(\S+)")
_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?);")        # /*0080*/  @P0 LDS.64 R2, [R3] ;
_WORD = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")                    # an encoding word
_NV_INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_NV_FUNCTION = re.compile(r"^\.text\.(\w+):")


def cuobjdump_functions(text):
    """{function: [instruction text, predicate included]} of a `cuobjdump -sass` listing."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = _FUNCTION.search(line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = _INSTRUCTION.search(line)
        if m and cur is not None:
            cur.append(m.group(1).strip())
    return funcs


def cuobjdump_words(text):
    """{function: its code's bytes} of a `cuobjdump -sass` listing: every instruction's two 64-bit
    encoding words, little-endian, in address order (the bytes of its .text section)."""
    words, cur = {}, None
    for line in text.splitlines():
        m = _FUNCTION.search(line)
        if m:
            cur = m.group(1)
            words[cur] = bytearray()
            continue
        if cur is not None:
            for w in _WORD.findall(line):
                words[cur] += int(w, 16).to_bytes(8, "little")
    return {f: bytes(b) for f, b in words.items()}


def nvdisasm_functions(text, source=None):
    """{function: [(line or None, 'OPCODE.MODS', operands)]} of an `nvdisasm -c [-g]` listing in
    program order; line: the line of file `source` that `-g` names before the instruction. An
    instruction predicated @!PT never executes (ptxas padding) and is left out."""
    at = re.compile(rf'//## File "{re.escape(source)}", line (\d+)') if source else None
    funcs, cur, line = {}, None, None
    for text_line in text.splitlines():
        m = _NV_FUNCTION.match(text_line.strip())
        if m:
            cur, line = m.group(1), None
            funcs[cur] = []
            continue
        m = at.search(text_line) if at else None
        if m:
            line = int(m.group(1))
            continue
        m = _NV_INSTRUCTION.search(text_line)
        if m and cur and (m.group(1) or "").strip() != "@!PT":
            funcs[cur].append((line, m.group(2), " ".join(m.group(3).split())))
    return funcs


def address_offset(address):
    """The immediate offset of an address operand ("R2+0x40" -> 64; none: 0)."""
    m = re.search(r"\+(-?0x[0-9a-f]+)", address.replace(" ", ""))
    return int(m.group(1), 16) if m else 0


def cubin_sections(cubin):
    """[(name, sh_type, file offset, size)] of every section of a cubin, a little-endian ELF64
    image (System V gABI, "Sections": e_shoff at 0x28, e_shentsize/e_shnum/e_shstrndx at 0x3A;
    sh_name, sh_type, sh_offset and sh_size are the headers' 1st, 2nd, 5th and 6th fields).
    Raises ValueError for bytes that are not one, or whose headers point outside them."""
    try:
        if cubin[:6] != b"\x7fELF\x02\x01":
            raise ValueError("not a little-endian ELF64 image (a cubin)")
        shoff, = struct.unpack_from("<Q", cubin, 0x28)
        size, count, names = struct.unpack_from("<HHH", cubin, 0x3A)
        if size < 64 or not 0 < count <= 1 << 16 or names >= count or shoff + count * size > len(cubin):
            raise ValueError("a cubin's section headers lie outside it")
        heads = [struct.unpack_from("<IIQQQQ", cubin, shoff + i * size) for i in range(count)]
        table = heads[names][4]
        out = []
        for name_at, kind, _, _, offset, length in heads:
            name = cubin[table + name_at:cubin.index(b"\0", table + name_at)].decode("ascii")
            if kind != 8 and offset + length > len(cubin):           # SHT_NOBITS holds no bytes
                raise ValueError(f"a cubin's section {name} lies outside it")
            out.append((name, kind, offset, length))
        return out
    except (struct.error, UnicodeDecodeError) as e:
        raise ValueError(f"not a readable cubin: {e}") from None
