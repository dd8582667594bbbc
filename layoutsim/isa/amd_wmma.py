"""AMD WMMA / SWMMAC fragments: RDNA3 (gfx11) and RDNA4 (gfx12), wave32 and wave64.

Sources
  gfx11: AMD "RDNA3" Instruction Set Architecture Reference Guide, 7.9 "Wave Matrix Multiply
         Accumulate (WMMA)"; AMD matrix instruction calculator (ROCm/amd_matrix_instruction_calculator,
         InstCalcGfx11); GPUOpen "How to accelerate AI applications on RDNA 3 using WMMA" sample.
  gfx12: AMD "RDNA4" Instruction Set Architecture Reference Guide (doc 70651), chapter 7,
         "Wave Matrix Multiply Accumulate (WMMA)" and its sparse (SWMMAC) part; the calculator
         (InstCalcGfx12); LLVM VOP3PInstructions.td (WMMA/SWMMAC profiles: register counts, the
         wave64 split, index_key widths); clang BuiltinsAMDGPU.def (builtin names and vector sizes).
No AMD GPU is available here: nothing in this module has been run on AMD hardware.

Formulas
  Each layout is a formula over the lane and the element number v inside the lane: element v
  lives in VGPR v // p, bits (v % p)*w .. (v % p)*w + w-1 (p elements of w bits packed per VGPR),
  exactly as the calculator prints them. The formulas are written for wave32 (LAYOUTS_GFX12,
  LAYOUTS_GFX11); wave64 is derived:
  * gfx12: wave64 keeps the first half of the wave32 registers in lanes 0-31 and moves the
    second half to lanes 32-63 (LLVM: "wave32: lane n has 8 matrix elements; wave64: lane n has
    first 4, lane n+32 has other 4"). An operand of a single VGPR cannot be split: lanes 32-63
    hold nothing (v_wmma_i32_16x16x16_iu4 A/B and v_swmmac_i32_16x16x32_iu4 A/IDX in wave64).
  * gfx11: A/B are held by lanes 0-15 and repeated in every further group of 16 lanes
    (replication 2 in wave32, 4 in wave64); C/D row = (wave/16)*v + lane//16, col = lane%16.

Register names (per VGPR and slot, shared by all lanes): "v3" for a 32-bit element, "v0[15:0]" /
"v0[31:16]" for 16-bit halves, "v1[7:0]".."v1[31:24]" for bytes, "v0[3:0]".."v0[31:28]" for
nibbles. vN is the N-th VGPR of the operand's register block (SRC0 for A, SRC1 for B, SRC2 for C
or the sparsity index, VDST for D), the calculator's "vN.[hi:lo]" without the dot.

Names
  canonical  "<mnemonic>.w32.gfx12", "<mnemonic>.w64.gfx11"; gfx11 OPSEL variants
             "<mnemonic>.opsel1.w32.gfx11"
  aliases    the plain mnemonic (needs --arch: gfx11 and gfx12 lay it out differently; wave32 is
             the default, wave=64 picks wave64), "<mnemonic>.w64", "<mnemonic>.gfx12", and the
             clang builtins: __builtin_amdgcn_wmma_<...>_w32_gfx12 / _w64_gfx12 (gfx12 WMMA),
             __builtin_amdgcn_swmmac_<...>_w32 / _w64 (gfx12 SWMMAC), __builtin_amdgcn_wmma_<...>_w32
             / _w64 and _tied_w32 / _tied_w64 (gfx11).

OPSEL (gfx11 16-bit outputs: v_wmma_f16_16x16x16_f16, v_wmma_bf16_16x16x16_bf16)
  C and D use one 16-bit half of each VGPR: OPSEL[2] (assembly op_sel:[0,0,1], the builtins' last
  bool argument) picks the upper half. Each such VGPR is modelled with 2 slots, the one not
  selected holding -1 (unused). The default entries are opsel=0 (options {"opsel": 0}); the
  entries with ".opsel1" in their name (alias "<mnemonic>.opsel1", "<mnemonic>.opsel1.w64") use
  the upper half. `build(mnemonic, "gfx11", wave, opsel=1)` gives the same Instruction.

SWMMAC (gfx12 sparse A)
  A is 2:4 structured-sparse along K and stored compressed: operand A is the 16 x K/2 matrix of
  kept values. Compressed column c belongs to group g = c // 2 of the four logical columns
  4g..4g+3. Operand IDX (SRC2, one VGPR) holds one 4-bit field per (row, group): bits [1:0] give
  the position (0-3 inside the group) of the value in compressed column 2g, bits [3:2] that of
  column 2g+1 (calculator: "if the first two entries ... hold A[0][2] and A[0][3] ... the first two
  entries of the compression index would store 2 and 3"). Field n of a lane describes A elements
  2n and 2n+1 of the same lane. The used fields take 2 bits per A element of a lane; the rest of
  the VGPR holds further index sets, selected by index_key (assembly index_key:N, encoded in
  OPSEL). The catalog models index_key 0 (options {"index_key": 0});
  `build(mnemonic, "gfx12", wave, index_key=k)` gives set k. The accumulator is D itself
  (D = A*B + D); operand C is listed with D's layout.
"""
import numpy as np

from ..archs import GFX11, GFX12
from ..errors import LayoutsimError
from ..formats import AMD_FP8, bits
from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .registry import Entry

SOURCE = {
    "gfx11": "AMD 'RDNA3' Instruction Set Architecture Reference Guide, 7.9 'Wave Matrix Multiply "
             "Accumulate (WMMA)'; AMD matrix instruction calculator (InstCalcGfx11)",
    "gfx12": "AMD 'RDNA4' Instruction Set Architecture Reference Guide (70651), chapter 7 'Wave Matrix "
             "Multiply Accumulate (WMMA)' incl. sparse SWMMAC; AMD matrix instruction calculator "
             "(InstCalcGfx12); LLVM VOP3PInstructions.td WMMA/SWMMAC profiles",
}
CONFIRMED = ("not run on AMD hardware: layout from AMD's ISA guide, cross-checked with AMD's matrix "
             "instruction calculator (no AMD GPU available here)")
ARCHS = {"gfx11": GFX11, "gfx12": GFX12}

# AMD type token -> layoutsim format. iu8/iu4: NEG[0]/NEG[1] = 0 reads A/B unsigned (zext), 1 signed
# (LLVM VOP3PInstructions.td); the catalog shows the default encoding. fp8/bf8 on gfx12 are OCP
# E4M3/E5M2 (formats.AMD_FP8; calculator: "FP8 (OCP 4-bit exponent, 3-bit mantissa ...)").
FORMAT = {"f16": "f16", "bf16": "bf16", "f32": "f32", "i32": "s32", "iu8": "u8", "iu4": "u4",
          **AMD_FP8["gfx12"]}

WMMA_GFX11 = ("v_wmma_f32_16x16x16_f16", "v_wmma_f32_16x16x16_bf16", "v_wmma_f16_16x16x16_f16",
              "v_wmma_bf16_16x16x16_bf16", "v_wmma_i32_16x16x16_iu8", "v_wmma_i32_16x16x16_iu4")
WMMA_GFX12 = WMMA_GFX11 + ("v_wmma_i32_16x16x32_iu4",) + tuple(
    f"v_wmma_f32_16x16x16_{a}_{b}" for a in ("fp8", "bf8") for b in ("fp8", "bf8"))
SWMMAC_GFX12 = ("v_swmmac_f32_16x16x32_f16", "v_swmmac_f32_16x16x32_bf16", "v_swmmac_f16_16x16x32_f16",
                "v_swmmac_bf16_16x16x32_bf16", "v_swmmac_i32_16x16x32_iu8", "v_swmmac_i32_16x16x32_iu4",
                "v_swmmac_i32_16x16x64_iu4") + tuple(
    f"v_swmmac_f32_16x16x32_{a}_{b}" for a in ("fp8", "bf8") for b in ("fp8", "bf8"))
MNEMONICS = {"gfx11": WMMA_GFX11, "gfx12": WMMA_GFX12 + SWMMAC_GFX12}

# ---- the layouts -------------------------------------------------------------------------------
# formula(lane, v) -> (i, k) for A/B (i = row of A / column of B, k along K; for SWMMAC A, k is the
# compressed column) and (row, col) for C/D. Wave32; wave64 is derived (module docstring).
# gfx12 keys: ("AB", element bits, K extent held) / "CD".
LAYOUTS_GFX12 = {
    # 16-bit, K=16 (WMMA A/B; SWMMAC A over its 16 compressed columns). ISA numbering: lanes 0-15
    # hold k 0-3 and 8-11, lanes 16-31 k 4-7 and 12-15.
    ("AB", 16, 16): lambda l, v: (l & 15, 8 * (v >> 2) + 4 * (l >> 4) + (v & 3)),
    ("AB", 16, 32): lambda l, v: (l & 15, 16 * (v >> 3) + 8 * (l >> 4) + (v & 7)),   # SWMMAC B
    ("AB", 8, 16): lambda l, v: (l & 15, 8 * (l >> 4) + v),     # WMMA A/B, SWMMAC A (compressed)
    ("AB", 8, 32): lambda l, v: (l & 15, 16 * (l >> 4) + v),    # SWMMAC B
    ("AB", 4, 16): lambda l, v: (l & 15, 8 * (l >> 4) + v),     # iu4 x16 A/B, SWMMAC x32 A
    ("AB", 4, 32): lambda l, v: (l & 15, 16 * (l >> 4) + v),    # iu4 x32 A/B, SWMMAC B, SWMMAC x64 A
    ("AB", 4, 64): lambda l, v: (l & 15, 32 * (l >> 4) + v),    # SWMMAC x64 B
    "CD": lambda l, v: (8 * (l >> 4) + v, l & 15),
}
# gfx11: formula(lane, v, wave).
LAYOUTS_GFX11 = {
    "AB": lambda l, v, wave: (l & 15, v),                                # lanes 16+ repeat 0-15
    "CD": lambda l, v, wave: ((wave // 16) * v + (l >> 4), l & 15),
}


def parse(mnemonic):
    """v_wmma_f32_16x16x16_fp8_bf8 -> ("wmma", d, a, b, (M, N, K))."""
    parts = mnemonic.split("_")
    family, d, dims, ins = parts[1], parts[2], parts[3], parts[4:]
    return family, d, ins[0], ins[-1], tuple(int(x) for x in dims.split("x"))


def _reg_names(regs, slots, w):
    if slots == 1:
        return tuple(f"v{r}" for r in range(regs))
    return tuple(f"v{r}[{s * w + w - 1}:{s * w}]" for r in range(regs) for s in range(slots))


def _map(lanes, regs, slots, w, shape, fn):
    """FragmentMap from fn(lane, reg, slot) -> (used, i, j) over broadcast index arrays."""
    lane, reg, slot = np.meshgrid(np.arange(lanes), np.arange(regs), np.arange(slots), indexing="ij")
    used, i, j = (np.broadcast_to(np.asarray(x), lane.shape) for x in fn(lane, reg, slot))
    table = np.stack([np.zeros(lane.shape, np.int64), i, j], axis=-1).astype(np.int16)
    table[~used] = -1
    return FragmentMap(table=table, shape=(1, *shape), elem_bits=w, names=_reg_names(regs, slots, w))


def _lane_elements(gen, role, w, extent, wave):
    """(n, formula(lane, v) -> (used, i, k)) for one operand of one wave size: n elements per lane."""
    n = 16 * extent // 32                          # elements per lane in wave32
    if gen == "gfx11":
        f = LAYOUTS_GFX11[role]
        n = 16 * extent // (wave if role == "CD" else 16)
        return n, lambda l, v: (True, *f(l, v, wave))
    f = LAYOUTS_GFX12["CD" if role == "CD" else ("AB", w, extent)]
    if wave == 32:
        return n, lambda l, v: (True, *f(l, v))
    regs32 = n * w // 32
    if regs32 == 1:                                # one VGPR cannot be split: lanes 32-63 idle
        return n, lambda l, v: (l < 32, *f(l & 31, v))
    h = n // 2                                     # second half of the registers -> lanes 32-63
    return h, lambda l, v: (True, *f(l & 31, v + h * (l >> 5)))


def _wmma_operand(gen, name, fmt, shape, wave, opsel=0, role="input"):
    """Operand A (rows x K), B (K x cols), C or D (rows x cols) of one wave size."""
    w = bits(fmt)
    slots = 32 // w
    if name in "CD":
        n, f = _lane_elements(gen, "CD", w, shape[1], wave)
        if gen == "gfx11" and w == 16:             # one half of each VGPR, chosen by OPSEL[2]
            fn = lambda l, r, s: (lambda u, i, j: (u & (s == opsel), i, j))(*f(l, r))
            return Operand(name, fmt, _map(wave, n, 2, 16, shape, fn), role)
        fn = lambda l, r, s: f(l, r * slots + s)
        return Operand(name, fmt, _map(wave, n // slots, slots, w, shape, fn), role)
    n, f = _lane_elements(gen, "AB", w, shape[1] if name == "A" else shape[0], wave)
    if name == "A":
        fn = lambda l, r, s: f(l, r * slots + s)
    else:                                          # B is K x N: (i, k) -> row k, col i
        fn = lambda l, r, s: (lambda u, i, k: (u, k, i))(*f(l, r * slots + s))
    return Operand(name, fmt, _map(wave, n // slots, slots, w, shape, fn), role)


def _index_operand(a_fmt, compressed, wave, index_key):
    """SWMMAC sparsity index: 4-bit field n of a lane = groups of A elements 2n, 2n+1 of that lane."""
    w = bits(a_fmt)
    n, f = _lane_elements("gfx12", "AB", w, compressed, wave)
    fields = n // 2                                # 4-bit fields per index set
    sets = 8 // fields
    if not 0 <= index_key < sets:
        raise LayoutsimError(f"index_key {index_key} out of range: this instruction has index sets "
                             f"0-{sets - 1} in wave{wave}")

    def fn(l, r, s):
        field = s - index_key * fields
        ok = (field >= 0) & (field < fields)
        used, i, c = f(l, np.clip(2 * field, 0, n - 1))
        return used & ok, i, c // 2
    return Operand("IDX", "u4", _map(wave, 1, 8, 4, (16, compressed // 2), fn), "input")


def _notes(gen, family, d, a, b, wave, k, opsel):
    out = []
    ab16 = bits(FORMAT[a]) == 16
    if gen == "gfx12" and ab16:
        out.append("K numbering follows the RDNA4 ISA guide and AMD's matrix instruction calculator: "
                   "16-bit A/B element v of a lane (v = 2*vgpr + half) holds k = 8*(v>>2) + 4*(lane>>4) + (v&3)"
                   + (" (for SWMMAC: A's compressed column; B holds k = 16*(v>>3) + 8*(lane>>4) + (v&7))"
                      if family == "swmmac" else "")
                   + ". Several libraries (and AMD's GPUOpen RDNA4 sample) load k = 8*(lane>>4) + v instead; "
                   "A and B are permuted alike, so both give identical products, but register contents differ.")
    if gen == "gfx12" and wave == 64:
        out.append("wave64 holds the wave32 layout's first half of the VGPRs in lanes 0-31 and the second "
                   "half in lanes 32-63.")
        if family == "wmma" and a == "iu4" and k == 16:
            out.append("wave64: A and B fit one VGPR of lanes 0-31; lanes 32-63 are ignored (-1 here).")
        if family == "swmmac" and a == "iu4" and k == 32:
            out.append("wave64: A and IDX use lanes 0-31 only; B uses all 64 lanes.")
    if gen == "gfx11":
        out.append(f"A and B: lanes 0-15 hold the data and lanes {'16-31' if wave == 32 else '16-31, 32-47, 48-63'} "
                   "hold it again (RDNA3 replication; every copy is listed as a holder).")
        if bits(FORMAT[d]) == 16:
            out.append(f"C/D use the {'upper' if opsel else 'lower'} 16 bits of each VGPR (OPSEL[2]={opsel}, "
                       "op_sel:[0,0,1] selects the upper half; LLVM's _tied builtins tie D to C, so the other "
                   "half keeps C's value); "
                       f"the other half is marked unused. The {'plain' if opsel else '.opsel1'} entry models "
                       f"OPSEL[2]={0 if opsel else 1}.")
    if a == "iu8" or a == "iu4":
        out.append(f"{a}: NEG[0]/NEG[1] (the builtins' signedness arguments) = 1 read A/B as signed; "
                   f"formats show the default encoding, unsigned.")
    if a in ("fp8", "bf8"):
        out.append("fp8 = OCP E4M3 (e4m3), bf8 = OCP E5M2 (e5m2).")
    if family == "swmmac":
        out.append("A is 2:4 sparse along K and stored compressed (operand A is 16 x K/2). Compressed column c "
                   "belongs to group g = c//2 of logical columns 4g..4g+3; IDX[row][g] is a 4-bit field whose bits "
                   "[1:0] give the position (0-3) in the group of compressed column 2g and bits [3:2] that of "
                   "column 2g+1, so the 2-bit indices pick which 2 of every 4 K values are kept. IDX field n of a "
                   "lane describes A elements 2n and 2n+1 of the same lane.")
        out.append("index_key (index_key:N, in OPSEL) selects which set of fields in the IDX VGPR is read; this "
                   "map shows index_key 0, the other sets sit above it (amd_wmma.build(..., index_key=N)).")
        out.append("SWMMAC accumulates in place, D = A*B + D: C is the D registers.")
    return tuple(out)


def build(mnemonic, gen, wave=32, opsel=0, index_key=0):
    """The Instruction for one mnemonic on gfx11/gfx12, wave32/64, gfx11 OPSEL[2] and SWMMAC index_key."""
    family, d, a, b, (m, n, k) = parse(mnemonic)
    if mnemonic not in MNEMONICS.get(gen, ()):
        raise LayoutsimError(f"{mnemonic} does not exist on {gen}")
    fa, fb, fd = FORMAT[a], FORMAT[b], FORMAT[d]
    sparse = family == "swmmac"
    ka = k // 2 if sparse else k
    opsel = opsel if gen == "gfx11" and bits(fd) == 16 else 0
    ops = {"A": _wmma_operand(gen, "A", fa, (m, ka), wave),
           "B": _wmma_operand(gen, "B", fb, (k, n), wave),
           "C": _wmma_operand(gen, "C", fd, (m, n), wave, opsel),
           "D": _wmma_operand(gen, "D", fd, (m, n), wave, opsel, role="output")}
    options = {}
    if gen == "gfx11" and bits(fd) == 16:
        options["opsel"] = opsel
    if sparse:
        ops["IDX"] = _index_operand(fa, ka, wave, index_key)
        options["index_key"] = index_key
    if a.startswith("iu"):
        options.update(signed_a=False, signed_b=False, clamp=False)
    name, aliases = _names(mnemonic, gen, wave, opsel)
    return Instruction(name=name, family=family, vendor="amd", threads=wave, operands=ops, shape=(m, n, k),
                       archs=ARCHS[gen], aliases=aliases, formats={"a": fa, "b": fb, "c": fd, "d": fd},
                       source=SOURCE[gen], confirmed=CONFIRMED,
                       notes=_notes(gen, family, d, a, b, wave, k, opsel), options=options,
                       mnemonic=mnemonic, builtin=builtins(mnemonic, gen, wave)[0])


def builtins(mnemonic, gen, wave):
    """clang builtin spellings (BuiltinsAMDGPU.def) of one mnemonic, generation and wave size."""
    family = parse(mnemonic)[0]
    rest = mnemonic.split("_", 2)[2]
    if gen == "gfx12":
        return (f"__builtin_amdgcn_{family}_{rest}_w{wave}" + ("_gfx12" if family == "wmma" else ""),)
    out = (f"__builtin_amdgcn_wmma_{rest}_w{wave}",)
    if bits(FORMAT[parse(mnemonic)[1]]) == 16:
        out += (f"__builtin_amdgcn_wmma_{rest}_tied_w{wave}",)
    return out


def _names(mnemonic, gen, wave, opsel):
    w = f"w{wave}"
    if opsel:
        return (f"{mnemonic}.opsel1.{w}.{gen}",
                (f"{mnemonic}.opsel1", f"{mnemonic}.opsel1.{w}", f"{mnemonic}.{w}.opsel1",
                 f"{mnemonic}.opsel1.{gen}", f"{mnemonic}.{w}.{gen}.opsel1"))
    aliases = (mnemonic, f"{mnemonic}.{w}", f"{mnemonic}.{gen}") + builtins(mnemonic, gen, wave)
    if gen == "gfx11" and bits(FORMAT[parse(mnemonic)[1]]) == 16:
        aliases += (f"{mnemonic}.opsel0", f"{mnemonic}.opsel0.{w}", f"{mnemonic}.{w}.opsel0")
    return f"{mnemonic}.{w}.{gen}", aliases


def _variants():
    """(mnemonic, gen, wave, opsel) of every catalog entry."""
    out = []
    for gen in ("gfx12", "gfx11"):
        for mnemonic in MNEMONICS[gen]:
            d = parse(mnemonic)[1]
            for wave in (32, 64):
                out.append((mnemonic, gen, wave, 0))
                if gen == "gfx11" and bits(FORMAT[d]) == 16:
                    out.append((mnemonic, gen, wave, 1))
    return out


def entries():
    out = []
    for mnemonic, gen, wave, opsel in _variants():
        family, d, a, b, (m, n, k) = parse(mnemonic)
        name, aliases = _names(mnemonic, gen, wave, opsel)
        fa, fb, fd = FORMAT[a], FORMAT[b], FORMAT[d]
        extra = ", A 2:4 sparse + IDX" if family == "swmmac" else ""
        extra += ", OPSEL[2]=1 (upper halves)" if opsel else ""
        out.append(Entry(name=name, family=family, vendor="amd", archs=ARCHS[gen],
                         build=lambda mn=mnemonic, g=gen, wv=wave, o=opsel: build(mn, g, wv, o),
                         aliases=aliases, wave=wave,
                         summary=f"{m}x{n}x{k} D.{fd} = A.{fa} x B.{fb} + C.{fd}, wave{wave}, {gen}{extra}"))
    return out
