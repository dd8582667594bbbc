"""The video instructions the H200 run measures (PTX ISA 9.0 section 9.7.18) and the PTX that runs
them, made the same way by the measurement (measure.py) and the replay (tests/ptx/test_video_replay.py).

Three kernels, each one warp of 32 threads reading a[t], b[t], c[t] and writing each instruction's
d to out[k * 32 + t]:
- k_simd: every SIMD form (9.7.18.2): vadd2 ... vmax4 for each .dtype.atype.btype with no
  modifier, .sat and .add, each once with the default selectors and once with random selectors
  and mask; vset2/vset4 for each .atype.btype and comparison, with and without .add. The
  executor models these (layoutsim/ptx/ops_video.py): the replay compares every word.
- k_scalar: the scalar forms (9.7.18.1) the executor models: vadd, vsub, vabsdiff, vmin, vmax,
  vshl, vshr, vset plain, with the secondary .add and with the subword merge (d.dsel); the replay
  compares every word;
- k_scalar_refused: those with .sat and the secondary .min/.max, and vmad with .po, .shr7/.shr15,
  .sat and negated operands. The executor refuses these; the data is for their model (ptxas
  emulates them with integer SASS that is not the ISA's pseudo-code: see ops_video's docstring).
The inputs: 8 words of extreme elements and 24 random words per operand (SEED).
"""
import itertools

import numpy as np

SEED = 9718
THREADS = 32
TYPES = ("u32", "s32")
ARITH = ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax")
CMP = ("eq", "ne", "lt", "le", "gt", "ge")
SCALAR = ("vadd", "vsub", "vabsdiff", "vmin", "vmax")
PARTS = ("b0", "b1", "b2", "b3", "h0", "h1")
EXTREME = (0x00000000, 0xFFFFFFFF, 0x7F7F7F7F, 0x80808080, 0x7FFF8000, 0x80007FFF, 0x01FF0180, 0xFF017F80)


def inputs():
    """(a, b, c): uint32 arrays of THREADS words."""
    rng = np.random.default_rng(SEED)
    out = []
    for k in range(3):
        r = rng.integers(0, 1 << 32, THREADS - len(EXTREME), dtype=np.uint64).astype(np.uint32)
        out.append(np.concatenate([np.roll(np.array(EXTREME, np.uint32), k), r]))
    # small values too, where shifts and the secondary operations' comparisons are interesting
    out[1][8:12] = [0, 1, 31, 33]
    return tuple(out)


def _masks(n):
    return ["".join(str(i) for i in range(n - 1, -1, -1) if m >> i & 1) for m in range(1, 1 << n)]


def simd_forms():
    rng = np.random.default_rng(SEED)
    out = []
    for n in (2, 4):
        p, top = ("h", 4) if n == 2 else ("b", 8)
        sel = lambda: "".join(str(int(x)) for x in rng.integers(0, top, n))   # noqa: E731
        masks = _masks(n)
        for op in ARITH:
            for d, a, b in itertools.product(TYPES, repeat=3):
                for mod in ("", ".sat", ".add"):
                    form = f"{op}{n}.{d}.{a}.{b}{mod}"
                    out.append(f"{form} %r5, %r2, %r3, %r4;")
                    m = masks[int(rng.integers(len(masks)))]
                    out.append(f"{form} %r5.{p}{m}, %r2.{p}{sel()}, %r3.{p}{sel()}, %r4;")
        for a, b in itertools.product(TYPES, repeat=2):
            for cmp in CMP:
                for mod in ("", ".add"):
                    form = f"vset{n}.{a}.{b}.{cmp}{mod}"
                    out.append(f"{form} %r5, %r2, %r3, %r4;")
                    m = masks[int(rng.integers(len(masks)))]
                    out.append(f"{form} %r5.{p}{m}, %r2.{p}{sel()}, %r3.{p}{sel()}, %r4;")
    return out


def scalar_forms():
    rng = np.random.default_rng(SEED + 1)
    part = lambda: PARTS[int(rng.integers(len(PARTS)))]                       # noqa: E731
    out = []
    for op in SCALAR:
        for d, a, b in itertools.product(TYPES, repeat=3):
            for sat in ("", ".sat"):
                f = f"{op}.{d}.{a}.{b}{sat}"
                out.append(f"{f} %r5, %r2, %r3;")
                out.append(f"{f} %r5, %r2.{part()}, %r3.{part()};")
                for op2 in ("add", "min", "max"):
                    out.append(f"{f}.{op2} %r5, %r2, %r3, %r4;")
                out.append(f"{f} %r5.{part()}, %r2.{part()}, %r3.{part()}, %r4;")
    for op in ("vshl", "vshr"):
        for d, a in itertools.product(TYPES, repeat=2):
            for mode in ("clamp", "wrap"):
                for sat in ("", ".sat"):
                    f = f"{op}.{d}.{a}.u32{sat}.{mode}"
                    out.append(f"{f} %r5, %r2, %r3;")
                    out.append(f"{f} %r5, %r2.{part()}, %r3.{part()};")
                    for op2 in ("add", "min", "max"):
                        out.append(f"{f}.{op2} %r5, %r2, %r3, %r4;")
                    out.append(f"{f} %r5.{part()}, %r2, %r3, %r4;")
    for a, b in itertools.product(TYPES, repeat=2):
        for cmp in CMP:
            f = f"vset.{a}.{b}.{cmp}"
            out.append(f"{f} %r5, %r2, %r3;")
            out.append(f"{f} %r5, %r2.{part()}, %r3.{part()};")
            for op2 in ("add", "min", "max"):
                out.append(f"{f}.{op2} %r5, %r2, %r3, %r4;")
            out.append(f"{f} %r5.{part()}, %r2, %r3, %r4;")
    # vmad: the combinations 9.7.18.1.3 lists (negations), .po, the scales, .sat
    for d, a, b in itertools.product(TYPES, repeat=3):
        for extra in ("", ".sat", ".shr7", ".shr15", ".sat.shr15"):
            f = f"vmad.{d}.{a}.{b}{extra}"
            out.append(f"{f} %r5, %r2, %r3, %r4;")
            out.append(f"{f} %r5, %r2.{part()}, %r3.{part()}, %r4;")
            out.append(f"{f} %r5, -%r2, %r3, %r4;")
            out.append(f"{f} %r5, %r2, %r3, -%r4;")
        out.append(f"vmad.{d}.{a}.{b}.po %r5, %r2, %r3, %r4;")
    return out


def modelled(ins):
    """Whether the executor models an instruction of these kernels (ops_video: every SIMD form; the
    scalar ones without .sat, .min, .max, and no vmad)."""
    name = ins.split()[0].split(".")
    return name[0][-1] in "24" or (name[0] != "vmad" and not {"sat", "min", "max"} & set(name[1:]))


KERNELS = {"k_simd": simd_forms,
           "k_scalar": lambda: [x for x in scalar_forms() if modelled(x)],
           "k_scalar_refused": lambda: [x for x in scalar_forms() if not modelled(x)]}


def kernel(name, forms):
    body = "".join(f"\t{ins}\n\tst.global.u32 [%rd6+{4 * THREADS * k}], %r5;\n" for k, ins in enumerate(forms))
    return f""".visible .entry {name}(.param .u64 p_a, .param .u64 p_b, .param .u64 p_c, .param .u64 p_out)
{{
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<8>;
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd4, %r1, 4;
\tld.param.u64 %rd1, [p_a];
\tcvta.to.global.u64 %rd1, %rd1;
\tadd.s64 %rd5, %rd1, %rd4;
\tld.global.u32 %r2, [%rd5];
\tld.param.u64 %rd1, [p_b];
\tcvta.to.global.u64 %rd1, %rd1;
\tadd.s64 %rd5, %rd1, %rd4;
\tld.global.u32 %r3, [%rd5];
\tld.param.u64 %rd1, [p_c];
\tcvta.to.global.u64 %rd1, %rd1;
\tadd.s64 %rd5, %rd1, %rd4;
\tld.global.u32 %r4, [%rd5];
\tld.param.u64 %rd1, [p_out];
\tcvta.to.global.u64 %rd1, %rd1;
\tadd.s64 %rd6, %rd1, %rd4;
{body}\tret;
}}
"""


def ptx(name):
    """The PTX module (sm_90) of one kernel."""
    return ".version 8.0\n.target sm_90\n.address_size 64\n\n" + kernel(name, KERNELS[name]())
