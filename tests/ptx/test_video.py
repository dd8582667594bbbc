"""The SIMD video instructions (layoutsim/ptx/ops_video.py) against the PTX ISA 9.0 pseudo-code of
sections 9.7.18.2.1-4 (vadd2 ... vmax2, vset2, vadd4 ... vmax4, vset4), written here line by line
over Python integers, one thread at a time; and the values ptxas 13.0's sm_90 SASS computes for
the forms whose SASS was read (ops_video's docstring)."""
import itertools

import numpy as np
import pytest

import layoutsim.ptx as ptx
from layoutsim.errors import LayoutsimError
from layoutsim.ptx import ops_video as V
from layoutsim.ptx import table

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


# ---- the ISA's pseudo-code (9.7.18.2.1 / .3; vset: .2 / .4), one thread --------------------------
def _extract(a, b, sel, n, signed):
    """extractAndSignExt_n(a, b, sel, type): element i is the sel digit i places from the right."""
    w = 32 // n
    pair = (b << 32) | a
    out = []
    for i in range(n):
        k = int(sel[n - 1 - i])
        v = (pair >> (w * k)) & ((1 << w) - 1)
        if signed and v >= 1 << (w - 1):
            v -= 1 << w
        out.append(v)
    return out


def isa(op, n, dtype, atype, btype, a, b, c, asel=None, bsel=None, mask=None, sat=False, add=False, cmp=None):
    asel = asel or ("10" if n == 2 else "3210")
    bsel = bsel or ("32" if n == 2 else "7654")
    mask = mask or ("10" if n == 2 else "3210")
    w = 32 // n
    va = _extract(a, b, asel, n, atype == "s32")
    vb = _extract(a, b, bsel, n, btype == "s32")
    vc = _extract(c, 0, "10" if n == 2 else "3210", n, False)
    t = []
    for i in range(n):
        if op == "vset":
            x = {"eq": va[i] == vb[i], "ne": va[i] != vb[i], "lt": va[i] < vb[i], "le": va[i] <= vb[i],
                 "gt": va[i] > vb[i], "ge": va[i] >= vb[i]}[cmp]
            t.append(1 if x else 0)
            continue
        if op == "vadd":
            x = va[i] + vb[i]
        elif op == "vsub":
            x = va[i] - vb[i]
        elif op == "vavrg":
            x = (va[i] + vb[i] + 1) >> 1 if va[i] + vb[i] >= 0 else (va[i] + vb[i]) >> 1
        elif op == "vabsdiff":
            x = abs(va[i] - vb[i])
        elif op == "vmin":
            x = min(va[i], vb[i])
        else:
            x = max(va[i], vb[i])
        if sat:
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dtype == "s32" else (0, (1 << w) - 1)
            x = min(max(x, lo), hi)
        t.append(x)
    on = [str(i) in mask for i in range(n)]
    if add:
        d = c
        for i in range(n):
            d += t[i] if on[i] else 0
    else:
        d = 0
        for i in range(n):
            d |= ((t[i] if on[i] else vc[i]) & ((1 << w) - 1)) << (w * i)
    return d & 0xFFFFFFFF


def _kernel(instrs, n):
    """One kernel running every instruction of `instrs` on the same a, b, c (thread i reads word
    i); instruction k's d goes to words k*n .. k*n+n-1 of the output."""
    loads = "".join(f"""ld.param.u64 %rd1, [k_{x}];
    add.s64 %rd5, %rd1, %rd4;
    ld.global.u32 %r{i + 2}, [%rd5];
    """ for i, x in enumerate("abc"))
    stores = "".join(f"""{ins}
    add.s64 %rd5, %rd6, {4 * n * k};
    st.global.u32 [%rd5], %r5;
    """ for k, ins in enumerate(instrs))
    body = f"""mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    {loads}ld.param.u64 %rd1, [k_d];
    add.s64 %rd6, %rd1, %rd4;
    {stores}"""
    return (f"{HEAD}.visible .entry k(.param .u64 k_a, .param .u64 k_b, .param .u64 k_c, .param .u64 k_d)\n{{\n"
            f"    .reg .b32 %r<8>;\n    .reg .b64 %rd<8>;\n    {body}\n    ret;\n}}\n")


def _runs(instrs, a, b, c):
    """[the d words of each instruction]."""
    out = np.zeros(len(a) * len(instrs), np.uint32)
    r = ptx.run(_kernel(instrs, len(a)), "k", 1, len(a), [a, b, c, out])
    return [x.tolist() for x in r.buffers[3].reshape(len(instrs), len(a))]


def _run(instr, a, b, c):
    out = np.zeros(len(a), np.uint32)
    return ptx.run(_kernel([instr], len(a)), "k", 1, len(a), [a, b, c, out])


def _words(rng, n):
    # random words and words of extreme elements (0, 1, the signed limits, all ones per element)
    ext = np.array([0x00000000, 0xFFFFFFFF, 0x7F7F7F7F, 0x80808080, 0x7FFF8000, 0x80007FFF, 0x01FF0180,
                    0xFF017F80], np.uint32)
    return np.concatenate([rng.integers(0, 1 << 32, n - len(ext), dtype=np.uint64).astype(np.uint32), ext])


def _sel(n, rng):
    top = 2 * n
    return "".join(str(int(x)) for x in rng.integers(0, top, n))


FORMS = [(op, n) for n in (2, 4) for op in table.VIDEO_ARITH]


@pytest.mark.parametrize("op,n", FORMS)
def test_every_simd_arithmetic_form_is_the_isa_pseudo_code(op, n):
    rng = np.random.default_rng(sum(map(ord, op)) * n)
    a, b, c = (_words(rng, 64) for _ in range(3))
    masks, p = V.masks(n), "h" if n == 2 else "b"
    instrs, wants = [], []
    for dtype, atype, btype in itertools.product(("u32", "s32"), repeat=3):
        for sat, add in ((False, False), (True, False), (False, True)):
            asel, bsel, mask = _sel(n, rng), _sel(n, rng), masks[int(rng.integers(len(masks)))][1:]
            mods = f"{dtype}.{atype}.{btype}" + (".sat" if sat else "") + (".add" if add else "")
            instrs.append(f"{op}{n}.{mods} %r5.{p}{mask}, %r2.{p}{asel}, %r3.{p}{bsel}, %r4;")
            wants.append([isa(op, n, dtype, atype, btype, int(x), int(y), int(z), asel, bsel, mask, sat, add)
                          for x, y, z in zip(a, b, c)])
            # the default selectors and mask
            instrs.append(f"{op}{n}.{mods} %r5, %r2, %r3, %r4;")
            wants.append([isa(op, n, dtype, atype, btype, int(x), int(y), int(z), sat=sat, add=add)
                          for x, y, z in zip(a, b, c)])
    for instr, got, want in zip(instrs, _runs(instrs, a, b, c), wants):
        assert got == want, instr


@pytest.mark.parametrize("n", (2, 4))
def test_vset_is_the_isa_pseudo_code(n):
    rng = np.random.default_rng(n)
    a, b, c = (_words(rng, 64) for _ in range(3))
    # equal elements too, so .eq/.le/.ge hold somewhere
    b[:16] = a[:16] ^ np.uint32(0x00FF0000)
    p = "h" if n == 2 else "b"
    instrs, wants = [], []
    for atype, btype in itertools.product(("u32", "s32"), repeat=2):
        for cmp in V.VSET_CMP:
            for add in (False, True):
                asel, bsel = _sel(n, rng), _sel(n, rng)
                instrs.append(f"vset{n}.{atype}.{btype}.{cmp}{'.add' if add else ''} %r5, %r2.{p}{asel}, "
                              f"%r3.{p}{bsel}, %r4;")
                wants.append([isa("vset", n, None, atype, btype, int(x), int(y), int(z), asel, bsel, cmp=cmp, add=add)
                              for x, y, z in zip(a, b, c)])
    for instr, got, want in zip(instrs, _runs(instrs, a, b, c), wants):
        assert got == want, instr


def test_values_worked_by_hand_from_the_isa_and_ptxas_sass():
    a = np.array([0x01020304, 0xFF00FF80], np.uint32)
    b = np.array([0x04030201, 0x0000FF7F], np.uint32)
    c = np.array([100, 0x11223344], np.uint32)
    # __usad4 (cuda-samples' stereoDisparity; SASS: one VABSDIFF4.U8.ACC): c + the four |a_i - b_i|
    # = 100 + 3+1+1+3, and 0x11223344 + 1+0+0+255
    assert _run("vabsdiff4.u32.u32.u32.add %r5, %r2, %r3, %r4;", a, b, c).buffers[3].tolist() == [0x6C, 0x11223444]
    # a.b7430 takes bytes 0, 3, 4, 7 of (a, b) (SASS: PRMT 0x7430), a's signed and b's unsigned: |4-1|,
    # |1-2|, |1-3|, |4-4| = 3, 1, 2, 0; .b20 writes elements 0 and 2, c's bytes 1 and 3 stay
    assert _run("vabsdiff4.s32.s32.u32.sat %r5.b20, %r2.b7430, %r3, %r4;", a, b, c).buffers[3][0] == 0x00020003
    # signed saturation: |-128 - 127| = 255 clamps to 0x7f (SASS: ISETP.GT.U32 ..., 0x7f / SEL); the other
    # bytes |-1 - -1|, |0 - 0|, |-1 - 0| = 0, 0, 1
    assert _run("vabsdiff4.s32.s32.s32.sat %r5, %r2, %r3, %r4;", a[1:], b[1:], c[1:]).buffers[3][0] == 0x0100007F
    # vavrg2 rounds a non-negative sum up: (0x0304 + 0x0201 + 1) >> 1 = 0x283; a negative one down:
    # (-1 + -2) >> 1 = -2
    assert _run("vavrg2.s32.s32.s32 %r5, %r2, %r3, %r4;", a[:1], b[:1], c[:1]).buffers[3][0] == 0x02830283
    neg = np.array([0xFFFFFFFF], np.uint32), np.array([0xFFFEFFFE], np.uint32), np.zeros(1, np.uint32)
    assert _run("vavrg2.s32.s32.s32 %r5, %r2, %r3, %r4;", *neg).buffers[3][0] == 0xFFFEFFFE
    # vset4.s32.u32.lt.add: 4 < 1, 3 < 2, 2 < 3, 1 < 4 -> 0 + 0 + 1 + 1 added to c = 100
    assert _run("vset4.s32.u32.lt.add %r5, %r2, %r3, %r4;", a, b, c).buffers[3][0] == 102
    # vsub2.add accumulates signed differences into c with 32-bit wraparound: 0 + (0 - 1) + (0 - 1)
    z = np.zeros(1, np.uint32)
    assert _run("vsub2.s32.s32.s32.add %r5, %r2, %r3, %r4;", z, np.array([0x00010001], np.uint32), z
                ).buffers[3][0] == 0xFFFFFFFE


def test_the_steps_say_documented_in_the_fidelity_line():
    a = np.zeros(32, np.uint32)
    f = _run("vadd2.u32.u32.u32 %r5, %r2, %r3, %r4;", a, a, a).fidelity
    assert f["documented"] == 1 and f["exact"] == f["warp_instructions"]
    assert "9.7.18.2" in f["documented_instructions"][0]["source"]


@pytest.mark.parametrize("instr,words", [
    ("vadd2.s32.s32.s32.sat.add %r5, %r2, %r3, %r4;", [".sat cannot be used with the accumulate .add",
                                                       "PTX ISA 9.7.18.2.1"]),
    ("vadd4.s32.s32.s32 %r5, %r2.h10, %r3, %r4;", ["asel .h10", "name bytes", "9.7.18.2.3"]),
    ("vmin2.u32.u32.u32 %r5, %r2.h104, %r3, %r4;", ["asel .h104", "takes 2 digits of 0..3"]),
    ("vmax4.u32.u32.u32 %r5, %r2.b8210, %r3, %r4;", ["takes 4 digits of 0..7"]),
    ("vsub2.u32.u32.u32 %r5.h01, %r2, %r3, %r4;", ["mask .h01 is not one of .h0, .h1, .h10"]),
    ("vadd2.u32.u32 %r5, %r2, %r3, %r4;", ["vadd2 takes .dtype.atype.btype"]),
    ("vadd2.u16.u32.u32 %r5, %r2, %r3, %r4;", ["each .u32 or .s32"]),
    ("vset2.u32.u32 %r5, %r2, %r3, %r4;", ["vset2 takes one comparison of .eq"]),
    ("vset4.u32.u32.lt.gt %r5, %r2, %r3, %r4;", ["names both .lt and .gt"]),
    ("vadd2.u32.u32.u32.min %r5, %r2, %r3, %r4;", ["vadd2.u32 does not take .min"]),
    ("vabsdiff4.u32.u32.u32 %r5, %r2, %r3;", ["takes 4 operands, not 3"]),
    ("vadd.u32.u32.u32.sat %r5, %r2, %r3;", ["scalar video instruction vadd.sat is not modelled", "9.7.18.1.1",
                                              "emulation of .sat, .min, .max and vmad differs"]),
    ("vmin.s32.s32.s32.max %r5, %r2, %r3, %r4;", ["scalar video instruction vmin.max is not modelled"]),
    ("vmad.s32.s32.s32 %r5, %r2, %r3, %r4;", ["scalar video instruction vmad is not modelled", "9.7.18.1.3"]),
    ("vset.u32.u32.lt.min %r5, %r2, %r3, %r4;", ["vset.min is not modelled"]),
    ("vshl.u32.u32.u32 %r5, %r2, %r3;", ["vshl takes one mode, .clamp or .wrap (PTX ISA 9.7.18.1.2)"]),
    ("vshl.u32.u32.u32.clamp.wrap %r5, %r2, %r3;", ["names both .clamp and .wrap"]),
    ("vshr.u32.u32.s32.wrap %r5, %r2, %r3;", ["vshr takes .dtype.atype.u32"]),
    ("vadd.u32.u32.u32.clamp %r5, %r2, %r3;", ["vadd.u32 does not take .clamp"]),
    ("vset.u32.u32 %r5, %r2, %r3;", ["vset takes one comparison"]),
    ("vset.u32.u32.u32.lt %r5, %r2, %r3;", ["vset takes .atype.btype"]),
    ("vadd.u32.u32.u32 %r5, %r2, %r3, %r4;", ["the operand c needs a secondary operation or a merge"]),
    ("vadd.u32.u32.u32.add %r5, %r2, %r3;", [".add needs the operand c"]),
    ("vadd.u32.u32.u32.add %r5.h1, %r2, %r3, %r4;", ["a secondary operation and a merge d.h1 exclude each other"]),
    ("vsub.u32.u32.u32 %r5.h1, %r2, %r3, %r4.b0;", ["vsub takes no selector on c"]),
])
def test_illegal_or_unmodelled_forms_are_refused_in_one_line(instr, words):
    a = np.zeros(32, np.uint32)
    with pytest.raises(LayoutsimError) as e:
        _run(instr, a, a, a)
    msg = str(e.value)
    assert "\n" not in msg and "line " in msg
    for w in words:
        assert w in msg, (w, msg)


def test_the_pseudo_code_reference_reads_the_selectors_as_the_isa_examples():
    # PTX ISA 9.7.18.2.1's example `vmin2.s32.u32.u32.add r1.h10, r2.h00, r3.h22, r1`: both elements of
    # Va are a's half-word 0 and both of Vb b's half-word 2 (b's low half)
    a, b, c = 0x0000_0005, 0x0000_0003, 10
    assert isa("vmin", 2, "s32", "u32", "u32", a, b, c, "00", "22", "10", add=True) == 10 + 3 + 3


# ---- the scalar forms (9.7.18.1): the pseudo-code's helpers, one thread ------------------------
PARTS = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}


def _part_select(x, signed, part):
    """partSelectSignExtend(x, type, sel)."""
    shift, w = PARTS[part] if part else (0, 32)
    v = (x >> shift) & ((1 << w) - 1)
    return v - (1 << w) if signed and v >> (w - 1) else v


def _opt_merge(dsel, tmp, c):
    """optMerge(dsel, tmp, c): the ISA's switch, case by case, except .h1: sm_90 keeps tmp's own
    high half there (measured on an H100: tests/ptx/test_video_replay.py, 12 scalar d.h1 forms),
    where the ISA writes ((tmp & 0xFFFF) << 16)."""
    if dsel == "h0":
        return (tmp & 0xFFFF) | (0xFFFF0000 & c)
    if dsel == "h1":
        return (tmp & 0xFFFF0000) | (0x0000FFFF & c)
    if dsel == "b0":
        return (tmp & 0xFF) | (0xFFFFFF00 & c)
    if dsel == "b1":
        return ((tmp & 0xFF) << 8) | (0xFFFF00FF & c)
    if dsel == "b2":
        return ((tmp & 0xFF) << 16) | (0xFF00FFFF & c)
    if dsel == "b3":
        return ((tmp & 0xFF) << 24) | (0x00FFFFFF & c)
    return tmp


def isa_scalar(op, atype, btype, a, b, c, asel=None, bsel=None, dsel=None, add=False, mode=None, cmp=None):
    ta = _part_select(a, atype == "s32", asel)
    tb = _part_select(b, btype == "s32", bsel)
    if op in ("vshl", "vshr"):
        if mode == "clamp" and tb > 32:
            tb = 32
        if mode == "wrap":
            tb = tb & 0x1F
    tmp = {"vadd": lambda: ta + tb, "vsub": lambda: ta - tb, "vabsdiff": lambda: abs(ta - tb),
           "vmin": lambda: min(ta, tb), "vmax": lambda: max(ta, tb), "vshl": lambda: ta << tb,
           "vshr": lambda: ta >> tb,
           "vset": lambda: 1 if {"eq": ta == tb, "ne": ta != tb, "lt": ta < tb, "le": ta <= tb,
                                 "gt": ta > tb, "ge": ta >= tb}[cmp] else 0}[op]()
    if add:
        tmp = tmp + c                       # optSecondaryOp(.add, tmp, c)
    tmp = _opt_merge(dsel, tmp, c)
    return tmp & 0xFFFFFFFF                 # the lower 32 bits are written to d


SCALAR_FORMS = ["vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset"]


@pytest.mark.parametrize("op", SCALAR_FORMS)
def test_every_scalar_form_without_sat_min_max_is_the_isa_pseudo_code(op):
    rng = np.random.default_rng(sum(map(ord, op)))
    a, b, c = (_words(rng, 64) for _ in range(3))
    if op in ("vshl", "vshr"):
        b[:40] = np.arange(40)                 # shift counts past 31 and 32 (.clamp, .wrap)
    parts = [None, *PARTS]
    instrs, wants = [], []
    btypes = ("u32",) if op in ("vshl", "vshr") else ("u32", "s32")
    for dtype, atype, btype in itertools.product(("u32", "s32"), ("u32", "s32"), btypes):
        for mode in (("clamp", "wrap") if op in ("vshl", "vshr") else (None,)):
            for cmp in (V.VSET_CMP if op == "vset" else (None,)):
                for kind in ("plain", "add", "merge"):
                    asel, bsel = (parts[int(rng.integers(len(parts)))] for _ in range(2))
                    dsel = [p for p in PARTS][int(rng.integers(6))] if kind == "merge" else None
                    types = f"{atype}.{btype}" if op == "vset" else f"{dtype}.{atype}.{btype}"
                    name = f"{op}.{types}" + (f".{mode}" if mode else "") + (f".{cmp}" if cmp else "") + \
                        (".add" if kind == "add" else "")
                    ops = [f"%r5.{dsel}" if dsel else "%r5", f"%r2.{asel}" if asel else "%r2",
                           f"%r3.{bsel}" if bsel else "%r3"] + (["%r4"] if kind != "plain" else [])
                    instrs.append(f"{name} {', '.join(ops)};")
                    wants.append([isa_scalar(op, atype, btype, int(x), int(y), int(z), asel, bsel, dsel,
                                             kind == "add", mode, cmp) for x, y, z in zip(a, b, c)])
    for instr, got, want in zip(instrs, _runs(instrs, a, b, c), wants):
        assert got == want, instr


def test_scalar_values_read_from_ptxas_sass():
    # the forms whose sm_90 SASS ops_video's docstring reads, on values worked by hand
    a = np.array([0xFFFFFF80, 5, 0x12345678], np.uint32)
    b = np.array([3, 0xFFFFFFFF, 40], np.uint32)
    c = np.array([100, 200, 0xAABBCCDD], np.uint32)
    runs = _runs(["vmin.u32.s32.u32 %r5, %r2, %r3;",                 # -128 vs 3; 5 vs 2^32-1; 0x12345678 vs 40
                  "vshr.u32.s32.u32.clamp %r5, %r2.h1, %r3;",        # -1 >> 3; 0 >> big; 0x1234 >> 32
                  "vabsdiff.u32.s32.u32 %r5.b1, %r2, %r3.b3, %r4;",  # |-128 - 0|, |5 - 255|, 0x12345678 into byte 1
                  "vset.s32.u32.lt %r5, %r2, %r3;",
                  "vabsdiff.u32.u32.u32.add %r5, %r2, %r3, %r4;",
                  "vshl.u32.u32.u32.wrap %r5, %r2, %r3;"], a, b, c)  # 40 wraps to 8
    assert runs == [[0xFFFFFF80, 5, 0x28], [0xFFFFFFFF, 0, 0], [0x8064, 0xFAC8, 0xAABB78DD], [1, 1, 0],
                    [0xFFFFFFE1, 0xC2, 0xBCF0232D], [0xFFFFFC00, 0x80000000, 0x34567800]]
