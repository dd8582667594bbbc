"""The video instructions (PTX ISA 9.0 section 9.7.18). The SIMD forms (9.7.18.2): vadd2, vsub2,
vavrg2, vabsdiff2, vmin2, vmax2 (9.7.18.2.1), vset2 (9.7.18.2.2), and the byte forms vadd4 ...
vmax4 (9.7.18.2.3) and vset4 (9.7.18.2.4), with their saturation, element selectors and both
secondary operations.

    vop2.dtype.atype.btype{.sat}  d{.mask}, a{.asel}, b{.bsel}, c;    (SIMD merge)
    vop2.dtype.atype.btype.add    d{.mask}, a{.asel}, b{.bsel}, c;    (accumulate)
    vset2.atype.btype.cmp{.add}   d{.mask}, a{.asel}, b{.bsel}, c;

Every formula is the ISA's pseudo-code over numpy arrays (n = 2 half-words or 4 bytes):
- the sources: a and b together are 2n elements (a's are 0..n-1, b's n..2n-1); `.asel`/`.bsel`
  names, one digit per element from the highest down (`.h10`, `.b7430`: element 0 is the last
  digit), which of them form Va and Vb, each sign- or zero-extended by its type (`.atype`,
  `.btype`); the defaults are a's and b's own elements (`.h10`/`.h32`, `.b3210`/`.b7654`);
- t[i] = Va[i] + Vb[i], Va[i] - Vb[i], |Va[i] - Vb[i]|, MIN, MAX, or for vavrg
  (Va[i] + Vb[i] + 1) >> 1 when the sum is >= 0 and (Va[i] + Vb[i]) >> 1 otherwise (arithmetic
  shift); vset: 1 where compare(Va[i], Vb[i]) holds, else 0;
- `.sat` clamps t[i] to the destination element's range (S16/U16, S8/U8, by `.dtype`); it cannot
  be used with `.add`;
- `.mask` (`.h0`, `.h1`, `.h10`; `.b0` ... `.b3210`, default all elements) selects the elements;
  `.add`: d = c + the sum of the selected t[i] (32-bit wraparound); otherwise d's selected
  element i is t[i] (its low 16 or 8 bits) and the others are c's.

What ptxas 13.0 emits for sm_90 agrees with this reading: `vabsdiff4.u32.u32.u32.add` is one
`VABSDIFF4.U8.ACC`; `vabsdiff4.s32.s32.u32.sat d.b20, a.b7430, b, c` takes a.b7430 with
`PRMT 0x7430` (element 0 = byte 0, element 3 = byte 7), sign-extends a's bytes and zero-extends
b's, clamps |Va - Vb| to 0x7f and merges bytes 1 and 3 of c (`PRMT 0x7250`); vavrg2 adds 1 to a
sum >= 0 before `SHF.R.S32.HI 0x1`; vset4.s32.u32.lt.add compares the extended values as signed
32-bit integers and adds the 0/1 results to c.

The scalar video instructions (9.7.18.1.1 vadd, vsub, vabsdiff, vmin, vmax; 9.7.18.1.2 vshl, vshr;
9.7.18.1.4 vset) run where their result is the low bits of the pseudo-code's exact intermediate:
no `.sat`, the secondary operation `.add` or none, or the subword merge `d.dsel`:
    ta = partSelectSignExtend(a, atype, asel); tb = likewise (vshl/vshr: .u32, then .clamp to 32 or
    .wrap to tb & 0x1f); tmp = ta + tb, ta - tb, |ta - tb|, MIN, MAX, ta << tb, ta >> tb (arithmetic
    for a signed ta), vset: compare(ta, tb) ? 1 : 0; d = tmp + c (.add), optMerge(dsel, tmp, c), or tmp.
Any emulation that gets the intermediate right gives these bits, and what ptxas 13.0 emits for
sm_90 does (read for vmin.u32.s32.u32, vshr.u32.s32.u32.clamp a.h1, vabsdiff.u32.s32.u32 d.b1 with
b.b3, vset.s32.u32.lt, vabsdiff.u32.u32.u32.add: 64-bit compares and shifts of the extended values,
PRMT merges). `.sat`, `.min`/`.max` and vmad (9.7.18.1.3) are refused: sm_90 has no scalar video
unit, and ptxas 13.0's integer emulation of them is not the pseudo-code's arithmetic on .s34
intermediates (`vadd.u32.u32.u32.max` compares the 32-bit sum,
sign-extended, with c as unsigned 64-bit values: the carry out of the sum is lost;
`vadd.u32.u32.u32.sat` keeps the wrapped sum where the ISA clamps to U32_MAX; `vsub.u32.s32.u32.sat
d.h1` gives 0xffff for a negative difference where the ISA clamps to 0), so the ISA text alone does
not give what the GPU computes. The SIMD forms' SASS computes each element exactly in 32 bits and
saturates with I2I.U16.S32.SAT (vadd2/vsub2.u32.sat), as the pseudo-code says.
"""
import re

import numpy as np

from ..errors import LayoutsimError
from . import lines
from . import types as T
from .builders import exactly, unsupported
from .syntax import Operand
# the forms, their sections and modifiers: rows of the instruction table
from .table import VIDEO_SCALAR_SECTION as SCALAR_SECTION, VIDEO_SECTION as SECTION
from .table import VSET_CMP, VSET_SECTION as SET_SECTION

# what the fidelity line says of every SIMD video step (fidelity.py "documented"): until an H200
# run of gpu_check/video_probe confirms it, the model rests on the ISA and ptxas's SASS
DOCUMENTED = "PTX ISA 9.0 {} pseudo-code and ptxas 13.0's sm_90 SASS (ops_video.py); not measured on a GPU"
_SEL = re.compile(r"^(%[\w$]+)\.([hb])(\d+)$")


def masks(n):
    """The legal `.mask` spellings of the n-element forms (9.7.18.2.1, 9.7.18.2.3): every non-empty
    set of elements, digits from the highest down."""
    p = "h" if n == 2 else "b"
    return tuple(p + "".join(str(i) for i in range(n - 1, -1, -1) if m >> i & 1) for m in range(1, 1 << n))


def _split(op, ins, n, what):
    """(the operand without its selector suffix, the digits of the suffix or None)."""
    if op.kind != "reg":
        return op, None
    m = _SEL.match(op.value)
    if m is None:
        return op, None
    kind = "h" if n == 2 else "b"
    if m.group(2) != kind:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode} {what} .{m.group(2)}{m.group(3)}: the "
                             f"{n}-element forms name {'half-words .h' if n == 2 else 'bytes .b'}"
                             f"… (PTX ISA {SECTION[n]})")
    return Operand("reg", m.group(1), op.neg), m.group(3)


def selector(digits, n, default, ins, what):
    """The 2n-element indices of Va (Vb): element i is the digit i places from the right."""
    digits = default if digits is None else digits
    top = 2 * n
    if len(digits) != n or any(int(c) >= top for c in digits):
        raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode} {what} .{'h' if n == 2 else 'b'}{digits}: "
                             f"takes {n} digits of 0..{top - 1} (PTX ISA {SECTION[n]})")
    return [int(c) for c in reversed(digits)]


def mask_bits(digits, n, ins):
    """Which elements `.mask` selects (a bool per element)."""
    if digits is None:
        return [True] * n
    if ("h" if n == 2 else "b") + digits not in masks(n):
        raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode} mask .{'h' if n == 2 else 'b'}{digits} is not "
                             f"one of {', '.join('.' + m for m in masks(n))} (PTX ISA {SECTION[n]})")
    return [str(i) in digits for i in range(n)]


def elements(a, b, sel, n, signed):
    """Va (Vb): int64 [threads, n] of the selected elements of the pair (a, b), extended."""
    w = 32 // n
    pair = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
    out = np.stack([((pair >> np.uint64(w * s)) & np.uint64((1 << w) - 1)).astype(np.int64) for s in sel], -1)
    if signed:
        out = np.where(out >= 1 << (w - 1), out - (1 << w), out)
    return out


def operate(op, va, vb):
    """t[i] of the primary operation (9.7.18.2.1: the pseudo-code's switch)."""
    if op == "vadd":
        return va + vb
    if op == "vsub":
        return va - vb
    if op == "vavrg":
        s = va + vb
        return np.where(s >= 0, (s + 1) >> 1, s >> 1)
    if op == "vabsdiff":
        return np.abs(va - vb)
    if op == "vmin":
        return np.minimum(va, vb)
    return np.maximum(va, vb)


def compare(cmp, va, vb):
    return {"eq": va == vb, "ne": va != vb, "lt": va < vb, "le": va <= vb,
            "gt": va > vb, "ge": va >= vb}[cmp].astype(np.int64)


def saturate(t, n, signed):
    w = 32 // n
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return np.clip(t, lo, hi)


def combine(t, c, mask, add, n):
    """d from t [threads, n], c (uint32) and the mask: the accumulate or the SIMD merge."""
    c = np.asarray(c).astype(np.int64)
    w = 32 // n
    if add:
        d = c + sum(t[..., i] for i in range(n) if mask[i])
    else:
        d = np.zeros(np.broadcast(t[..., 0], c).shape, np.int64)
        for i in range(n):
            part = t[..., i] if mask[i] else c >> (w * i)
            d = d | ((part & ((1 << w) - 1)) << (w * i))
    return (d & 0xFFFFFFFF).astype(np.uint32)


def _form(ins, set_form):
    n = int(ins.opcode[-1])
    tys = T.types_in(ins.mods)
    want = 2 if set_form else 3
    if len(tys) != want or any(t.name not in ("u32", "s32") for t in tys):
        spell = ".atype.btype" if set_form else ".dtype.atype.btype"
        raise unsupported(ins, f"{ins.opcode} takes {spell}, each .u32 or .s32 (PTX ISA "
                               f"{(SET_SECTION if set_form else SECTION)[n]})")
    return n, tys


def _operands(ins, n):
    exactly(ins, 4)
    d, c = ins.operands[0], ins.operands[3]
    d, dmask = _split(d, ins, n, "mask")
    a, asel = _split(ins.operands[1], ins, n, "asel")
    b, bsel = _split(ins.operands[2], ins, n, "bsel")
    c, csel = _split(c, ins, n, "c")
    if csel is not None:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode} takes no selector on c (PTX ISA {SECTION[n]})")
    sa = selector(asel, n, "10" if n == 2 else "3210", ins, "asel")
    sb = selector(bsel, n, "32" if n == 2 else "7654", ins, "bsel")
    return d, a, b, c, sa, sb, mask_bits(dmask, n, ins)


def _step(ins, b, d, a, bop, c, compute, section):
    u32 = T.get("u32")
    put = b.write(d, u32, ins)
    ra, rb, rc = (b.read(o, u32, ins) for o in (a, bop, c))

    def fn(bt, g, full):
        x, y, z = (np.broadcast_to(np.asarray(r(bt)), (bt.T,)) for r in (ra, rb, rc))
        put(bt, compute(x, y, z), g, full)
    return {"fn": fn, "info": {"documented": DOCUMENTED.format(section)}}


def simd(ins, b, prog):
    """vadd2 ... vmax4 (9.7.18.2.1, 9.7.18.2.3)."""
    n, (dt, at, bt_) = _form(ins, False)
    op = ins.opcode[:-1]
    add, sat = "add" in ins.mods, "sat" in ins.mods
    if add and sat:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode}: .sat cannot be used with the accumulate .add "
                             f"(PTX ISA {SECTION[n]})")
    d, a, bop, c, sa, sb, mask = _operands(ins, n)

    def compute(x, y, z):
        t = operate(op, elements(x, y, sa, n, at.signed), elements(x, y, sb, n, bt_.signed))
        if sat:
            t = saturate(t, n, dt.signed)
        return combine(t, z, mask, add, n)
    return _step(ins, b, d, a, bop, c, compute, SECTION[n])


def vset(ins, b, prog):
    """vset2 / vset4 (9.7.18.2.2, 9.7.18.2.4): the comparison is unsigned 0/1 per element."""
    n, (at, bt_) = _form(ins, True)
    cmps = [m for m in ins.mods if m in VSET_CMP]
    if len(cmps) != 1:
        raise unsupported(ins, f"{ins.opcode} takes one comparison of {', '.join('.' + c for c in VSET_CMP)} "
                               f"(PTX ISA {SET_SECTION[n]})")
    cmp, add = cmps[0], "add" in ins.mods
    d, a, bop, c, sa, sb, mask = _operands(ins, n)

    def compute(x, y, z):
        t = compare(cmp, elements(x, y, sa, n, at.signed), elements(x, y, sb, n, bt_.signed))
        return combine(t, z, mask, add, n)
    return _step(ins, b, d, a, bop, c, compute, SET_SECTION[n])


# ---- the scalar forms (9.7.18.1) ----------------------------------------------------------------
_PART = re.compile(r"^(%[\w$]+)\.(b[0-3]|h[01])$")
PART = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}


def _part(op):
    """(the operand without a .b0-.b3/.h0/.h1 suffix, the part or None)."""
    m = _PART.match(op.value) if op.kind == "reg" else None
    return (op, None) if m is None else (Operand("reg", m.group(1), op.neg), m.group(2))


def part_extend(x, signed, part):
    """partSelectSignExtend (9.7.18.1): int64 of the byte, half-word or word, sign- or zero-extended."""
    x = np.asarray(x).astype(np.int64) & 0xFFFFFFFF
    shift, w = PART[part] if part else (0, 32)
    v = (x >> shift) & ((1 << w) - 1)
    return np.where(v >= 1 << (w - 1), v - (1 << w), v) if signed else v


def merge(dsel, tmp, c):
    """optMerge (9.7.18.1): the part dsel of d is tmp's low bits, the rest is c's. Except d.h1:
    sm_90 keeps tmp's own high half there (d = tmp & 0xffff0000 | c & 0xffff), where the ISA's
    pseudo-code shifts tmp's low half up; measured on an H100 (tests/data/video, 11 scalar
    forms with d.h1 whose tmp's halves differ), while d.b1, d.b2 and d.b3 shift as the ISA says."""
    shift, w = PART[dsel]
    m = ((1 << w) - 1) << shift
    moved = 0 if dsel == "h1" else shift
    return ((np.asarray(tmp).astype(np.int64) << moved) & m) | (np.asarray(c).astype(np.int64) & (0xFFFFFFFF ^ m))


def scalar_op(op, ta, tb, mode=None, cmp=None):
    """tmp's low 32 bits (int64) of the primary operation: the pseudo-code's switch over exact values
    (vshl: low 32 bits of ta << tb, tb <= 32)."""
    if op == "vset":
        return compare(cmp, ta, tb)
    if op in ("vshl", "vshr"):
        tb = np.minimum(tb, 32) if mode == "clamp" else tb & 0x1F
        if op == "vshl":
            return ((ta & 0xFFFFFFFF) << tb) & 0xFFFFFFFF
        return ta >> tb
    return operate(op, ta, tb)


def scalar(ins, b, prog):
    """vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr, vset (9.7.18.1) without .sat/.min/.max; vmad
    and those modifiers are refused (the module's docstring says why)."""
    op, sec = ins.opcode, SCALAR_SECTION[ins.opcode]
    odd = [m for m in ("sat", "min", "max") if m in ins.mods]
    if op == "vmad" or odd:
        what = "vmad" if op == "vmad" else f"{op}.{odd[0]}"
        raise unsupported(ins, f"the scalar video instruction {what} is not modelled (PTX ISA {sec}): sm_90 has no "
                               f"video unit and ptxas's emulation of .sat, .min, .max and vmad differs from the "
                               f"ISA's pseudo-code")
    tys = T.types_in(ins.mods)
    want = {"vset": 2}.get(op, 3)
    if len(tys) != want or any(t.name not in ("u32", "s32") for t in tys) or \
            (op in ("vshl", "vshr") and tys[2].name != "u32"):
        spell = {"vset": ".atype.btype", "vshl": ".dtype.atype.u32", "vshr": ".dtype.atype.u32"}.get(op, ".dtype.atype.btype")
        raise unsupported(ins, f"{op} takes {spell}, each .u32 or .s32 (PTX ISA {sec})")
    at, bt_ = tys[-2:]
    modes = [m for m in ins.mods if m in ("clamp", "wrap")]
    cmps = [m for m in ins.mods if m in VSET_CMP]
    if op in ("vshl", "vshr") and len(modes) != 1:
        raise unsupported(ins, f"{op} takes one mode, .clamp or .wrap (PTX ISA {sec})")
    if (op == "vset") != (len(cmps) == 1) or len(cmps) > 1:
        raise unsupported(ins, f"{op} takes {'one comparison of ' + ', '.join('.' + c for c in VSET_CMP) if op == 'vset' else 'no comparison'} (PTX ISA {sec})")
    add = "add" in ins.mods
    ops_ = ins.operands
    if len(ops_) not in (3, 4):
        exactly(ins, 4)
    d, dsel = _part(ops_[0])
    a, asel = _part(ops_[1])
    bop, bsel = _part(ops_[2])
    if len(ops_) == 3 and (add or dsel):
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: {'.add' if add else 'd.' + dsel} needs the operand c "
                             f"(PTX ISA {sec})")
    if len(ops_) == 4 and not (add or dsel):
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: the operand c needs a secondary operation or a merge "
                             f"d.dsel (PTX ISA {sec})")
    if add and dsel:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: a secondary operation and a merge d.{dsel} exclude "
                             f"each other (PTX ISA {sec})")
    mode, cmp = (modes or [None])[0], (cmps or [None])[0]
    c = ops_[3] if len(ops_) == 4 else Operand("imm", 0)
    if _part(c)[1] is not None:
        raise LayoutsimError(f"{lines.of(ins)}: {op} takes no selector on c (PTX ISA {sec})")

    def compute(x, y, z):
        tmp = scalar_op(op, part_extend(x, at.signed, asel), part_extend(y, bt_.signed, bsel), mode, cmp)
        if add:
            tmp = tmp + (np.asarray(z).astype(np.int64) & 0xFFFFFFFF)
        elif dsel:
            tmp = merge(dsel, tmp, z)
        return (tmp & 0xFFFFFFFF).astype(np.uint32)
    return _step(ins, b, d, a, bop, c, compute, sec)
