"""AMD CDNA MFMA fragments: gfx908 (CDNA1), gfx90a (CDNA2), gfx942 (CDNA3), gfx950 (CDNA4); wave64.

Sources
  gfx908/gfx90a/gfx942: AMD matrix instruction calculator (ROCm/amd_matrix_instruction_calculator),
      which prints the CDNA1-3 ISA guides' register maps; every entry below (all operands, every
      CBSZ/ABID and BLGP setting) is checked against its output, stored in
      tests/data/isa/amd_mfma_calculator.npz (generator: tests/isa/gen_mfma_reference.py).
  gfx950: the calculator has no CDNA4; the instruction list and register counts are LLVM's
      (VOP3PInstructions.td, gfx950 MAI; clang BuiltinsAMDGPU.def), the layouts AMD's rocjitsu
      simulator (ROCm/rocm-systems, rocjitsu isa/arch/amdgpu/shared/mma_common.h input_loc and
      mfma_scale_f8f6f4_input_loc: the formulas below plus "byte-or-wider elements use the chunked
      16-element lane layout" once a lane holds more than 16 of them).
No AMD GPU is available here: nothing in this module has been run on AMD hardware.

Formulas (rocjitsu input_loc / output_loc_32 state the same; the calculator agrees entry by entry)
  A (M x K per block, B blocks) and B (K x N): a lane holds e = K*dim*B/64 consecutive k of one
  row (A) or column (B): element (block b, i, k) sits in lane dim*b + i + dim*B*(k // e), as
  element v = k % e of that lane (VGPR v // p, slot v % p, p elements per VGPR; f64: VGPR pair v).
  gfx950, 8-bit elements, e > 16: k runs in chunks of 16 over the G = 64/(dim*B) lane groups
  first: chunk c = k // 16 sits in lane group c % G as elements v = (c // G)*16 + k % 16.
  C/D (32-bit): row group t = b*(M/4) + i//4 of 4 rows; lane N*(t % (64/N)) + j, VGPR
  4*(t // (64/N)) + i % 4. f64 C/D: lane 16*(i % 4) + N*b + j, VGPR pair i // 4.

Modifiers (CDNA ISA guides; calculator --cbsz/--abid/--blgp)
  CBSZ/ABID (A): block b reads its A from block (b >> CBSZ << CBSZ) | ABID: one block is
  broadcast to 2**CBSZ blocks. BLGP (B): lane l reads B from lane g(l): 1 = lanes 0-31 to
  32-63, 2 = 32-63 to 0-31, 3 = rotate by 16 (l reads l+16), 4-7 = lanes 16(BLGP-4)..+15 to
  all. On gfx942 the f64 MFMAs take BLGP as NEG bits (no layout change), on gfx950 the
  f8f6f4 MFMAs take CBSZ/BLGP as A/B formats (0 fp8, 1 bf8, 2 fp6, 3 bf6, 4 fp4): layoutsim
  models those as the operand format (build(..., cbsz=F, blgp=G)).
  A modified operand is a FragmentMap built from its holders: one register feeds every block
  it is broadcast to (`layoutsim query ... --lane` lists them all).

Names: canonical = LLVM's current (gfx942) spelling; aliases: the gfx908/gfx90a spelling
(v_mfma_f32_32x32x1f32, ..._1k) and the clang builtin (__builtin_amdgcn_mfma_...).
Modifiers in assembly syntax follow the name: "v_mfma_f32_4x4x4_16b_f16 cbsz:2 abid:1 blgp:3".
"""
import numpy as np

from ..archs import CDNA
from ..errors import LayoutsimError
from ..formats import amd_fp8, bits
from ..fragment import FragmentMap
from .instruction import Instruction, Operand
from .registry import Entry

SOURCE = {
    "calc": "AMD matrix instruction calculator (ROCm/amd_matrix_instruction_calculator, CDNA1-3), "
            "i.e. the CDNA ISA guides' MFMA register maps",
    "gfx950": "LLVM VOP3PInstructions.td (gfx950 MAI) and clang BuiltinsAMDGPU.def (names, register "
              "counts); AMD rocjitsu mma_common.h input_loc/output_loc_32 (layout); the calculator "
              "has no CDNA4",
}
CONFIRMED = "not run on AMD hardware: no AMD GPU available here"
TYPES = {"f32": "f32", "xf32": "f32", "f16": "f16", "bf16": "bf16", "i8": "s8", "f64": "f64",
         "i32": "s32"}
FP8 = ("fp8", "bf8")          # formats per arch: formats.AMD_FP8 (FNUZ on gfx942, OCP on gfx950)
F8F6F4 = ("e4m3", "e5m2", "e2m3", "e3m2", "e2m1")       # gfx950 CBSZ/BLGP 0-4

# (canonical mnemonic, gfx908/gfx90a spelling or "", blocks, archs)
_ALL, _90A, _942 = CDNA, CDNA[1:], CDNA[2:]
_OLD = ("gfx908", "gfx90a")
TABLE = (
    ("v_mfma_f32_32x32x1_2b_f32", "v_mfma_f32_32x32x1f32", 2, _ALL),
    ("v_mfma_f32_16x16x1_4b_f32", "v_mfma_f32_16x16x1f32", 4, _ALL),
    ("v_mfma_f32_4x4x1_16b_f32", "v_mfma_f32_4x4x1f32", 16, _ALL),
    ("v_mfma_f32_32x32x2_f32", "v_mfma_f32_32x32x2f32", 1, _ALL),
    ("v_mfma_f32_16x16x4_f32", "v_mfma_f32_16x16x4f32", 1, _ALL),
    ("v_mfma_f32_32x32x4_2b_f16", "v_mfma_f32_32x32x4f16", 2, _ALL),
    ("v_mfma_f32_16x16x4_4b_f16", "v_mfma_f32_16x16x4f16", 4, _ALL),
    ("v_mfma_f32_4x4x4_16b_f16", "v_mfma_f32_4x4x4f16", 16, _ALL),
    ("v_mfma_f32_32x32x8_f16", "v_mfma_f32_32x32x8f16", 1, _ALL),
    ("v_mfma_f32_16x16x16_f16", "v_mfma_f32_16x16x16f16", 1, _ALL),
    ("v_mfma_i32_32x32x4_2b_i8", "v_mfma_i32_32x32x4i8", 2, _ALL),
    ("v_mfma_i32_16x16x4_4b_i8", "v_mfma_i32_16x16x4i8", 4, _ALL),
    ("v_mfma_i32_4x4x4_16b_i8", "v_mfma_i32_4x4x4i8", 16, _ALL),
    ("v_mfma_i32_32x32x8i8", "", 1, _OLD),
    ("v_mfma_i32_16x16x16i8", "", 1, _OLD),
    ("v_mfma_f32_32x32x2bf16", "", 2, _OLD),
    ("v_mfma_f32_16x16x2bf16", "", 4, _OLD),
    ("v_mfma_f32_4x4x2bf16", "", 16, _OLD),
    ("v_mfma_f32_32x32x4bf16", "", 1, _OLD),
    ("v_mfma_f32_16x16x8bf16", "", 1, _OLD),
    ("v_mfma_f32_32x32x4_2b_bf16", "v_mfma_f32_32x32x4bf16_1k", 2, _90A),
    ("v_mfma_f32_16x16x4_4b_bf16", "v_mfma_f32_16x16x4bf16_1k", 4, _90A),
    ("v_mfma_f32_4x4x4_16b_bf16", "v_mfma_f32_4x4x4bf16_1k", 16, _90A),
    ("v_mfma_f32_32x32x8_bf16", "v_mfma_f32_32x32x8bf16_1k", 1, _90A),
    ("v_mfma_f32_16x16x16_bf16", "v_mfma_f32_16x16x16bf16_1k", 1, _90A),
    ("v_mfma_f64_16x16x4_f64", "v_mfma_f64_16x16x4f64", 1, _90A),
    ("v_mfma_f64_4x4x4_4b_f64", "v_mfma_f64_4x4x4f64", 4, _90A),
    ("v_mfma_f32_16x16x8_xf32", "", 1, ("gfx942",)),
    ("v_mfma_f32_32x32x4_xf32", "", 1, ("gfx942",)),
    ("v_mfma_i32_32x32x16_i8", "", 1, _942),
    ("v_mfma_i32_16x16x32_i8", "", 1, _942),
) + tuple((f"v_mfma_f32_{s}_{a}_{b}", "", 1, _942) for s in ("16x16x32", "32x32x16")
          for a in ("bf8", "fp8") for b in ("bf8", "fp8")) + (
    ("v_mfma_f32_16x16x32_f16", "", 1, ("gfx950",)),
    ("v_mfma_f32_32x32x16_f16", "", 1, ("gfx950",)),
    ("v_mfma_f32_16x16x32_bf16", "", 1, ("gfx950",)),
    ("v_mfma_f32_32x32x16_bf16", "", 1, ("gfx950",)),
    ("v_mfma_i32_16x16x64_i8", "", 1, ("gfx950",)),
    ("v_mfma_i32_32x32x32_i8", "", 1, ("gfx950",)),
    ("v_mfma_f32_16x16x128_f8f6f4", "", 1, ("gfx950",)),
    ("v_mfma_f32_32x32x64_f8f6f4", "", 1, ("gfx950",)),
    ("v_mfma_scale_f32_16x16x128_f8f6f4", "", 1, ("gfx950",)),
    ("v_mfma_scale_f32_32x32x64_f8f6f4", "", 1, ("gfx950",)),
)
BY_NAME = {row[0]: row for row in TABLE}


def parse(mnemonic):
    """v_mfma_f32_32x32x4_2b_f16 -> (d, a, b, (M, N, K)); old spellings too (..._32x32x4f16)."""
    parts = mnemonic.split("_")
    parts = parts[3:] if parts[2] == "scale" else parts[2:]
    d, dims = parts[0], parts[1]
    rest = [r for r in parts[2:] if r != "1k" and not (r.endswith("b") and r[:-1].isdigit())]
    m, n, k = dims.split("x")
    if not rest:                                   # gfx908/gfx90a: type glued to K (x4bf16)
        t = next(t for t in ("bf16", "f16", "f32", "f64", "i8") if k.endswith(t))
        return d, t, t, (int(m), int(n), int(k[:-len(t)]))
    return d, rest[0], rest[-1], (int(m), int(n), int(k))


def _formats(mnemonic, cbsz, blgp, arch):
    d, a, b, _ = parse(mnemonic)
    if a == "f8f6f4":
        return F8F6F4[cbsz], F8F6F4[blgp], "f32"
    fmt = lambda t: amd_fp8(t, arch) if t in FP8 else TYPES[t]     # noqa: E731
    return fmt(a), fmt(b), TYPES[d]


def format_archs(mnemonic, arch=None):
    """The archs of an MFMA on which its operands have the formats they have on `arch` (on its
    first arch when None or not one of them): all its archs, except for the fp8/bf8 forms, which
    gfx942 reads as FNUZ and gfx950 as OCP formats under the same mnemonic (formats.AMD_FP8)."""
    archs = BY_NAME[mnemonic][3]
    if not set(parse(mnemonic)[1:3]) & set(FP8):
        return archs
    key = lambda a: (amd_fp8("fp8", a), amd_fp8("bf8", a))          # noqa: E731
    ref = key(arch if arch in archs else archs[0])
    return tuple(a for a in archs if key(a) == ref)


def _format_note(mnemonic, where):
    """Why the other archs of an fp8/bf8 MFMA are refused by this Instruction (arch_note)."""
    others = [a for a in BY_NAME[mnemonic][3] if a not in where]
    if not others:
        return ""
    fa, fb, _ = _formats(mnemonic, 0, 0, others[0])
    return (f"this form has the {'/'.join(where)} operand formats; on {'/'.join(others)} the same "
            f"mnemonic reads A {fa}, B {fb} (give arch {others[0]})")


# ---- the layouts -------------------------------------------------------------------------------
def _input(dim, K, blocks, w, chunked):
    """formula(b, i, k) -> (lane, element v of the lane) for A (dim = M) or B (dim = N)."""
    e = K * dim * blocks // 64                     # elements of one row/column per lane
    groups = 64 // (dim * blocks)
    if chunked and w == 8 and e > 16:             # gfx950 fp8: 16-k chunks over lane groups
        return lambda b, i, k: (dim * b + i + dim * blocks * ((k // 16) % groups),
                                (k // 16 // groups) * 16 + k % 16), e
    return lambda b, i, k: (dim * b + i + dim * blocks * (k // e), k % e), e


def _output(M, N, blocks, w):
    """formula(b, i, j) -> (lane, VGPR or 64-bit register) of C/D."""
    if w == 64:
        return lambda b, i, j: (16 * (i % 4) + N * b + j, i // 4)
    lg = 64 // N
    return lambda b, i, j: (N * ((b * (M // 4) + i // 4) % lg) + j,
                            4 * ((b * (M // 4) + i // 4) // lg) + i % 4)


def _names(regs, slots, w, reg_bits):
    if reg_bits == 64:
        return tuple(f"v[{2 * r}:{2 * r + 1}]" for r in range(regs))
    if reg_bits > 32:                              # fp6: one wide register of 6-bit slots
        return tuple(f"v[0:{reg_bits // 32 - 1}][{s * w + w - 1}:{s * w}]" for s in range(slots))
    if slots == 1:
        return tuple(f"v{r}" for r in range(regs))
    return tuple(f"v{r}[{s * w + w - 1}:{s * w}]" for r in range(regs) for s in range(slots))


def _holders_map(holders, lanes, regs, slots, w, reg_bits, shape):
    """FragmentMap from holders [blocks, rows, cols, (lane, reg, slot)]."""
    return FragmentMap.from_holders(holders, lanes, regs, slots, w, shape, reg_bits=reg_bits,
                                    names=_names(regs, slots, w, reg_bits))


def _grid(*shape):
    return np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")


def _operand_holders(kind, mnemonic, w, cbsz=0, abid=0, blgp=0):
    """(holders [blocks, rows, cols, 3], regs, slots, reg_bits, shape) of one operand."""
    row = BY_NAME[mnemonic]
    _, _, _, (M, N, K) = parse(mnemonic)
    blocks = row[2]
    gfx950 = row[3] == ("gfx950",)
    if kind in "AB":
        dim = M if kind == "A" else N
        f, e = _input(dim, K, blocks, w, gfx950)
        b, i, k = _grid(blocks, dim, K)
        if kind == "A":
            b = (b >> cbsz << cbsz) | abid         # CBSZ/ABID: the broadcast block's data
        lane, v = f(b, i, k)
        if kind == "B":
            lane = _blgp(lane, blgp)
        if w * e in (192,):                        # fp6: e elements in one 192-bit register
            reg_bits, regs, slots, reg, slot = 192, 1, e, np.zeros_like(v), v
        elif w == 64:
            reg_bits, regs, slots, reg, slot = 64, e, 1, v, np.zeros_like(v)
        else:
            p = 32 // w
            reg_bits, regs, slots, reg, slot = 32, max(e // p, 1), p, v // p, v % p
        h = np.stack([lane, reg, slot], -1)
        if kind == "B":                            # B is K x N: [b, j, k] -> [b, k, j]
            h = h.transpose(0, 2, 1, 3)
        shape = (blocks, dim, K) if kind == "A" else (blocks, K, dim)
        return h, regs, slots, reg_bits, shape
    f = _output(M, N, blocks, w)
    b, i, j = _grid(blocks, M, N)
    lane, reg = f(b, i, j)
    regs = M * N * blocks // 64
    return (np.stack([lane, reg, np.zeros_like(reg)], -1), regs, 1, w, (blocks, M, N))


def _blgp(lane, blgp):
    """The lane B is read from under BLGP (CDNA ISA guides, 'BLGP')."""
    if blgp == 0:
        return lane
    src = {1: lambda l: l % 32, 2: lambda l: 32 + l % 32, 3: lambda l: (l + 16) % 64}.get(
        blgp, lambda l: 16 * (blgp - 4) + l % 16)
    # BLGP says which physical lane each lane position reads: invert it on the holders
    inv = np.array([src(l) for l in range(64)])
    return inv[lane]


def build(mnemonic, cbsz=0, abid=0, blgp=0, arch=None):
    """The Instruction for one MFMA with its CBSZ/ABID/BLGP fields (gfx950 f8f6f4: formats);
    `arch` decides which fields exist where that differs (BLGP: see supports)."""
    if mnemonic not in BY_NAME:
        raise LayoutsimError(f"unknown MFMA {mnemonic!r}")
    row = BY_NAME[mnemonic]
    d, a, b, (m, n, k) = parse(mnemonic)
    blocks, archs = row[2], row[3]
    f8f6f4 = a == "f8f6f4"
    _check_modifiers(mnemonic, blocks, archs, f8f6f4, cbsz, abid, blgp, arch)
    where = format_archs(mnemonic, arch)          # the archs that read these operand formats
    fa, fb, fd = _formats(mnemonic, cbsz, blgp, where[0])
    layout_a = (0, 0) if f8f6f4 else (cbsz, abid)
    layout_b = blgp if supports(mnemonic, arch)[1] else 0   # f64: NEG bits; f8f6f4: B's format
    ops = {}
    for name, fmt in (("A", fa), ("B", fb), ("C", fd), ("D", fd)):
        w = bits(fmt)
        h, regs, slots, reg_bits, shape = _operand_holders(
            "C" if name == "D" else name, mnemonic, w, *layout_a, layout_b)
        ops[name] = Operand(name, fmt, _holders_map(h, 64, regs, slots, w, reg_bits, shape),
                            "output" if name == "D" else "input")
    options = {"cbsz": cbsz, "abid": abid, "blgp": blgp} if (cbsz or abid or blgp) else {}
    return Instruction(name=mnemonic, family="mfma", vendor="amd", threads=64, operands=ops,
                       shape=(m, n, k), archs=where, aliases=_aliases(mnemonic),
                       formats={"a": fa, "b": fb, "c": fd, "d": fd},
                       source=SOURCE["gfx950" if where == ("gfx950",) else "calc"],
                       confirmed=CONFIRMED, notes=_notes(mnemonic, blocks, where, fa, fb, cbsz,
                                                         abid, blgp), options=options,
                       mnemonic=mnemonic, builtin=builtin(mnemonic),
                       arch_note=_format_note(mnemonic, where))


def supports(mnemonic, arch=None):
    """(CBSZ/ABID, BLGP lane patterns) this MFMA takes on `arch` (None: on any of its archs), as
    the calculator's 'Register modifiers' say: CBSZ/ABID on multi-block forms; BLGP on every
    f32/f16/bf16/i8 form of gfx908/gfx90a, but on gfx942 only on the multi-block forms and the
    f32 ones (gfx950 assumed as gfx942). f64 BLGP is NEG bits (gfx942/gfx950), not a pattern."""
    d, a, _, _ = parse(mnemonic)
    row = BY_NAME[mnemonic]
    blocks, archs = row[2], row[3]
    pattern_types = ("f32", "f16", "bf16", "i8")
    old_arch = (arch in ("gfx908", "gfx90a")) if arch else bool(set(archs) & {"gfx908", "gfx90a"})
    pattern = a in pattern_types and (old_arch or blocks > 1 or a == "f32")
    return blocks > 1 and d != "f64", pattern


def _check_modifiers(mnemonic, blocks, archs, f8f6f4, cbsz, abid, blgp, arch=None):
    if f8f6f4:
        for name, v in (("cbsz", cbsz), ("blgp", blgp)):
            if not 0 <= v < len(F8F6F4):
                raise LayoutsimError(f"{mnemonic}: {name}:{v} is not a format; 0-4 select "
                                     f"{', '.join(F8F6F4)}")
        if abid:
            raise LayoutsimError(f"{mnemonic}: abid must be 0 (CBSZ selects A's format here)")
        return
    broadcast, pattern = supports(mnemonic, arch)
    top = blocks.bit_length() - 1 if broadcast else 0
    if not 0 <= cbsz <= top:
        raise LayoutsimError(f"{mnemonic}: cbsz:{cbsz} out of range: cbsz 0-{top}"
                             + ("" if broadcast else " (no CBSZ/ABID on this MFMA)"))
    if not 0 <= abid < (1 << cbsz):
        raise LayoutsimError(f"{mnemonic}: abid:{abid} out of range; with cbsz:{cbsz} abid is "
                             f"0-{(1 << cbsz) - 1}")
    neg = parse(mnemonic)[0] == "f64" and arch not in ("gfx908", "gfx90a")   # NEG bits
    if not 0 <= blgp <= (7 if pattern or neg else 0):
        where = f" on {arch}" if arch else ""
        raise LayoutsimError(f"{mnemonic}: blgp:{blgp} out of range: " + (
            "blgp 0-7" if pattern or neg else f"blgp 0 (no BLGP on this MFMA{where})"))


def builtin(mnemonic):
    """The clang builtin (BuiltinsAMDGPU.def): the gfx908/gfx90a spelling where one exists. The
    unscaled f8f6f4 MFMAs have none: LLVM selects them for the scaled builtin when both scale
    operands are the constant 0 (clang-22 output; the scaled form needs other scales)."""
    if "f8f6f4" in mnemonic:
        return mnemonic.replace("v_mfma_scale_", "v_mfma_").replace(
            "v_mfma_", "__builtin_amdgcn_mfma_scale_", 1)
    return (BY_NAME[mnemonic][1] or mnemonic).replace("v_mfma_", "__builtin_amdgcn_mfma_", 1)


def bf16_pairs(mnemonic):
    """Whether a bf16 MFMA is one of gfx908's original forms (v_mfma_f32_32x32x4bf16, LLVM's
    plain bf16) rather than the "_1k" forms gfx90a added (v_mfma_f32_32x32x8_bf16, LLVM
    bf16_1k), which MMA-Sim models with four products per step instead of two."""
    old = BY_NAME[mnemonic][1]
    return parse(mnemonic)[1] == "bf16" and not old.endswith("_1k") and "_bf16" not in mnemonic


def disassembly_name(mnemonic, arch):
    """The mnemonic llvm-objdump prints for this MFMA on `arch`: the gfx908/gfx90a spelling
    there (v_mfma_f32_32x32x1f32), the current one on gfx942/gfx950 (LLVM VOP3PInstructions.td)."""
    old = BY_NAME[mnemonic][1]
    return old if old and arch in ("gfx908", "gfx90a") else mnemonic


def _aliases(mnemonic):
    """The gfx908/gfx90a spelling and the builtin, where the builtin names this MFMA alone."""
    old = BY_NAME[mnemonic][1]
    own = not ("f8f6f4" in mnemonic and "_scale_" not in mnemonic)
    return ((old,) if old else ()) + ((builtin(mnemonic),) if own else ())


def _notes(mnemonic, blocks, archs, fa, fb, cbsz, abid, blgp):
    out = []
    if blocks > 1:
        out.append(f"{blocks} independent blocks (matrix index = block): D[b] = A[b] x B[b] + C[b].")
    if cbsz and "f8f6f4" not in mnemonic:
        out.append(f"cbsz:{cbsz} abid:{abid}: block b reads the A data of block "
                   f"(b >> {cbsz} << {cbsz}) | {abid}; other lanes' A registers are not read.")
    if blgp and "f8f6f4" not in mnemonic:
        if parse(mnemonic)[0] == "f64":
            out.append("f64: BLGP holds NEG bits (negate A, B, C) on gfx942/gfx950, not a lane "
                       "pattern; the layout is unchanged (gfx90a has no BLGP for f64).")
        else:
            out.append(f"blgp:{blgp}: B is read from other lanes (CDNA ISA, BLGP pattern {blgp}).")
    if "f8f6f4" in mnemonic:
        out.append(f"CBSZ / BLGP select the A / B formats (0 fp8, 1 bf8, 2 fp6, 3 bf6, 4 fp4): "
                   f"A {fa}, B {fb} here; fp6 packs 32 elements in 6 VGPRs (one 192-bit register "
                   f"here), fp4 in 4.")
    if "_scale_" in mnemonic:
        out.append("scale operands (one E8M0 scale per 32 k of each row of A / column of B, "
                   "VGPRs after the block) are not modelled in this map.")
    if set(parse(mnemonic)[1:3]) & set(FP8):
        out.append(f"fp8/bf8 on {'/'.join(archs)}: A {fa}, B {fb}. gfx942 reads the FNUZ formats "
                   f"(bias 8/16, no Inf, 0x80 = NaN), gfx950 the OCP E4M3FN/E5M2 ones, under the same "
                   f"mnemonic (AMD's CDNA3/CDNA4 matrix core blog; LLVM AMDGPUToROCDL.cpp; "
                   f"layoutsim/formats.py AMD_FP8).")
    if archs == ("gfx950",):
        out.append("gfx950 (CDNA4): no calculator support; layout from AMD's rocjitsu simulator "
                   "source and LLVM register counts.")
    return tuple(out)


def modifiers(text):
    """{"cbsz": 2, ...} from assembly modifiers "cbsz:2 abid:1 blgp:3" (one-line error otherwise)."""
    out = {}
    for tok in text.split():
        key, _, val = tok.partition(":")
        if key not in ("cbsz", "abid", "blgp") or not val.isdigit():
            raise LayoutsimError(f"unknown MFMA modifier {tok!r}; valid: cbsz:N abid:N blgp:N")
        out[key] = int(val)
    return out


def entries():
    out = []
    for mnemonic, _, blocks, archs in TABLE:
        d, a, b, (m, n, k) = parse(mnemonic)
        per_arch = format_archs(mnemonic) != archs              # fp8/bf8: FNUZ or OCP by arch
        fa, fb, fd = (a, b, TYPES[d]) if per_arch else _formats(mnemonic, 0, 0, archs[0])
        blk = f", {blocks} blocks" if blocks > 1 else ""
        fp8 = ("; fp8/bf8: " + ", ".join(f"{x} {'/'.join(_formats(mnemonic, 0, 0, x)[:2])}" for x in archs)
               if per_arch else "")
        out.append(Entry(name=mnemonic, family="mfma", vendor="amd", archs=archs,
                         build=lambda mn=mnemonic: build(mn), aliases=_aliases(mnemonic), wave=64,
                         variant=(lambda arch, mn=mnemonic: build(mn, arch=arch)) if per_arch else None,
                         modified=lambda arch, mods, mn=mnemonic: build(mn, arch=arch, **modifiers(mods)),
                         summary=f"{m}x{n}x{k} D.{fd} = A.{fa} x B.{fb} + C.{fd}, wave64{blk}, "
                                 f"{'/'.join(archs)}{fp8}"))
    return out
