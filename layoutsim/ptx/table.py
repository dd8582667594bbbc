"""The executor's instruction table: one row per PTX instruction form, in the style of GPGPU-Sim's
opcodes.def. compile.py binds every step from its row; nothing else decides which family serves
an instruction.

A row is (opcode, type class, handler, ...):
- `types`: the type class of the instruction type (the last type modifier, types.instr_type)
  this row serves: "int" (.b/.u/.s/.pred/.u16x2...), "float" (.f32/.f64 and the other non-half
  floats but the 8-bit ones), "half" (.f16/.bf16/.f16x2/.bf16x2) or "any". An opcode
  served by several families (add, mul, abs, min...) has one row per class; an instruction
  without a type modifier goes to the opcode's first row (whose handler names the missing type).
- `needs`: the leading modifiers that select the form (cp.async.bulk, wgmma.mma_async).
- `mods`: the legal modifiers other than the type, the state space and the vector width (None:
  the handler decodes them); one outside the set is refused with the ISA's wording and section.
  `patterns`: regular expressions a legal modifier may match instead (mma shapes, .1d-.5d).
  `only`: {modifier: the types it applies to} (add.sat applies to .s32 only). `one_of`: groups
  of modifiers of which an instruction names at most one (the ISA's `{.a, .b}` choices: one
  rounding mode, one cache operator, one scope). `requires`: {modifier: the modifiers one of
  which must come with it} (ld.relaxed names a scope, ld.nc the .global space). Every row has
  its modifier set; a handler still refuses the legal forms it does not model.
- `spaces`: the state spaces the form may name (memory instructions; None: not a memory form);
  `vectors`: the vector widths it may name (.v2/.v4/.v8; the handler refuses what it does not
  model, as vector atomics).
- `sync`: the synchronisation class: "none", "aligned" (the whole warp, .sync.aligned),
  "membermask" (the threads a mask names), "warpgroup" (four warps), "cta" (a CTA barrier).
  This is the only place that states it: compile.py sets Step.sync (and a CTA barrier's "bar"
  kind) from it; a handler returns no sync, only a membermask collective's `membermask` reader.
- `section`: the PTX ISA 9.0 section.

Adding an instruction is one row here and one handler in its family's module (see
docs/dev/adding-an-instruction.md). The table is consulted at compile time only.
"""
import importlib
import re
from dataclasses import dataclass
from functools import lru_cache

from ..errors import LayoutsimError
from . import lines
from . import types as T
from .builders import unsupported
from .tensormap import FIELDS as TENSORMAP_FIELDS


class _Family:
    """An op family module (ops_*.py) as the rows name it: `I._add` is ("ops_int", "_add"), which
    Row.handler imports the first time an instruction binds it. So `import layoutsim.ptx` loads no
    family and a run only its kernel's (ops_tcgen05 alone brings the tcgen05 catalog, ~9 ms of every
    `ptx run` when imported here eagerly). The rows' data (modifiers, sections) is the table's own."""

    def __init__(self, module):
        self.module = module

    def __getattr__(self, name):
        if name.startswith("__"):            # copy, pickle and friends probe dunders: not handlers
            raise AttributeError(name)
        return (self.module, name)


A, CA, CLC, K, S = (_Family(m) for m in ("ops_async", "ops_calls", "ops_clc", "ops_cluster", "ops_sys"))
TC, TX5, C, V = (_Family(m) for m in ("ops_tcgen05", "ops_tcgen05_extra", "ops_control", "ops_cvt"))
F, H, I, PR, X = (_Family(m) for m in ("ops_float", "ops_half", "ops_int", "ops_prmt", "ops_matrix"))
M, RD, TX, VI = (_Family(m) for m in ("ops_mem", "ops_reduce", "ops_texture", "ops_video"))
W, G = _Family("ops_warp"), _Family("ops_wgmma")


@lru_cache(maxsize=None)
def _bound(ref):
    """The handler function a row names: (family module, function name)."""
    module, name = ref
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)


CLASSES = ("int", "float", "half", "any")
SYNC = ("none", "aligned", "membermask", "warpgroup", "cta")
SPACES = ("global", "shared", "local", "const", "param")


@dataclass(frozen=True)
class Row:
    opcode: str
    types: str
    ref: object                      # (family module, handler function), see _Family; or the handler
    section: str = ""
    needs: tuple = ()
    mods: frozenset = None
    only: tuple = ()                 # ((modifier, types it applies to), ...)
    spaces: frozenset = None
    vectors: tuple = None            # the vector widths a memory form takes (.v2, .v4, .v8)
    sync: str = "none"
    operands: tuple = None           # the operand counts the form takes (None: the handler checks)
    patterns: tuple = ()             # regular expressions a legal modifier may match (shapes, .1d)
    one_of: tuple = ()               # (group, ...): at most one modifier of each group
    requires: tuple = ()             # ((modifier, (one of these must come with it)), ...)

    @property
    def key(self):
        return (self.opcode, self.types, self.needs)

    @property
    def handler(self):
        return self.ref if callable(self.ref) else _bound(self.ref)


HALF = ("f16", "bf16", "f16x2", "bf16x2")


def type_class(t):
    """The family class of an instruction type (see the module docstring); the 8-bit floats
    (.e4m3, .e5m2x2, ...) are "fp8", which no arithmetic row serves (cvt takes them)."""
    if t.name in HALF:
        return "half"
    if t.kind in ("h", "fp"):
        return "fp8"
    return "float" if t.is_float else "int"


def _r(opcode, types, handler, section, **kw):
    for k in ("mods", "spaces"):
        if kw.get(k) is not None:
            kw[k] = frozenset(kw[k])
    kw["only"] = tuple(kw.get("only", {}).items())
    kw["requires"] = tuple((m, tuple(v)) for m, v in kw.get("requires", {}).items())
    kw["one_of"] = tuple(tuple(g) for g in kw.get("one_of", ()))
    kw["patterns"] = tuple(re.compile(x) for x in kw.get("patterns", ()))
    if isinstance(kw.get("operands"), int):
        kw["operands"] = (kw["operands"],)
    return Row(opcode, types, handler, section, **kw)


RND = ("rn", "rz", "rm", "rp")
VECTORS = ("v2", "v4", "v8")
F32_ONLY = {"ftz": ("f32",), "sat": ("f32",)}                  # .ftz and .sat: not on .f64
F32_MINMAX = {"ftz": ("f32",), "NaN": ("f32",), "xorsign": ("f32",), "abs": ("f32",)}
MUL_MODE = ("hi", "lo", "wide")
# compare and select (9.7.6): the comparison, the boolean combining it with a predicate
CMP = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
       "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
BOOLOP = ("and", "or", "xor")
SETP = dict(mods=CMP + BOOLOP + ("ftz",), one_of=(CMP, BOOLOP), only={"ftz": ("f32", "f16", "f16x2")})
# conversions (9.7.9.21): integer and float rounding, saturation, the packed forms' .relu/.satfinite
IRND, FRND = ("rni", "rzi", "rmi", "rpi"), ("rn", "rna", "rz", "rm", "rp", "rs")
# memory consistency (8.4, 9.7.9.8-10, 9.7.13.5-6): semantics, scope, cache operators and hints
SCOPES = ("cta", "cluster", "gpu", "sys")
L1_EVICT = ("L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last", "L1::no_allocate")
L2_EVICT = ("L2::evict_normal", "L2::evict_first", "L2::evict_last")
PREFETCH_SIZE = ("L2::64B", "L2::128B", "L2::256B")
LD_COP, ST_COP = ("ca", "cg", "cs", "lu", "cv"), ("wb", "cg", "cs", "wt")


def _memory(sems, cop):
    """ld/st: one semantics (.weak/.volatile/.relaxed/.acquire|.release, with .mmio), one scope
    (which .relaxed/.acquire/.release name), a cache operator or eviction priorities (9.7.9.8)."""
    return dict(mods=sems + ("mmio",) + SCOPES + cop + L1_EVICT + L2_EVICT + ("L2::cache_hint",) + PREFETCH_SIZE,
                one_of=(sems, SCOPES, cop + L1_EVICT, cop + L2_EVICT, PREFETCH_SIZE),
                requires={**{m: SCOPES for m in sems[2:]}, **{s: sems[2:] for s in SCOPES}, "mmio": ("relaxed",)})


ATOM_OPS = ("and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max")
ATOM_SEMS = ("relaxed", "acquire", "release", "acq_rel")
LD = _memory(("weak", "volatile", "relaxed", "acquire"), LD_COP)
LD["mods"] += ("nc",)
LD["requires"]["nc"] = ("global",)
ST = _memory(("weak", "volatile", "relaxed", "release"), ST_COP)
ASYNC_REMOTE = ("async", "mbarrier::complete_tx::bytes")     # st.async, red.async: legal (the handlers refuse them)
ST["mods"] += ASYNC_REMOTE
# the matrix forms (9.7.14, 9.7.15): shapes are m<M>n<N>k<K> (the handler looks the form up)
SHAPE = (r"m\d+n\d+(k\d+)?",)
MMA_TYPES = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "ue8m0", "ue4m3", "tf32", "s4", "u4", "b1")
# warp and CTA collectives (9.7.9.6, 9.7.13)
SHFL, VOTE = ("up", "down", "bfly", "idx"), ("all", "any", "uni", "ballot")
REDUX = ("add", "min", "max", "and", "or", "xor")
BAR = dict(mods=("cta", "sync", "arrive", "red", "popc", "and", "or", "aligned"),
           one_of=(("sync", "arrive", "red"), ("popc", "and", "or")),
           requires={m: ("red",) for m in ("popc", "and", "or")})
MBARRIER = ("init", "inval", "expect_tx", "complete_tx", "arrive", "arrive_drop", "test_wait", "try_wait",
            "pending_count")
# fences (9.7.13.4): semantics, scope, the proxy forms
FENCE = ("sc", "acq_rel", "acquire", "release", "relaxed") + SCOPES + (
    "proxy", "alias", "async", "async::generic", "generic::async", "tensormap::generic", "global", "shared",
    "shared::cta", "shared::cluster", "mbarrier_init", "op_restrict", "sync_restrict::shared::cta",
    "sync_restrict::shared::cluster")

# the video instructions (9.7.18; ops_video.py runs them): the SIMD forms (9.7.18.2) and the scalar ones
# (9.7.18.1), their sections, the modifiers of each scalar form beside its types (9.7.18.1.1-4 syntax)
# and the groups of which a form names at most one
VIDEO_ARITH = ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax")
VIDEO_SIMD = tuple(f"{op}{n}" for n in (2, 4) for op in VIDEO_ARITH)
VIDEO_SET = ("vset2", "vset4")
VIDEO_SCALAR = ("vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset")
VSET_CMP = ("eq", "ne", "lt", "le", "gt", "ge")
VIDEO_SECTION = {2: "9.7.18.2.1", 4: "9.7.18.2.3"}
VSET_SECTION = {2: "9.7.18.2.2", 4: "9.7.18.2.4"}
VIDEO_OP2 = ("add", "min", "max")
VIDEO_SCALAR_MODS = {
    **{op: (("sat",) + VIDEO_OP2, (VIDEO_OP2,)) for op in ("vadd", "vsub", "vabsdiff", "vmin", "vmax")},
    **{op: (("sat", "clamp", "wrap") + VIDEO_OP2, (VIDEO_OP2, ("clamp", "wrap"))) for op in ("vshl", "vshr")},
    "vmad": (("sat", "po", "shr7", "shr15"), (("shr7", "shr15"),)),
    "vset": (VSET_CMP + VIDEO_OP2, (VSET_CMP, VIDEO_OP2))}
VIDEO_SCALAR_SECTION = {"vadd": "9.7.18.1.1", "vsub": "9.7.18.1.1", "vabsdiff": "9.7.18.1.1", "vmin": "9.7.18.1.1",
                        "vmax": "9.7.18.1.1", "vshl": "9.7.18.1.2", "vshr": "9.7.18.1.2", "vmad": "9.7.18.1.3",
                        "vset": "9.7.18.1.4"}
# the reductions of cp.reduce.async.bulk (9.7.9.25.4.2; ops_reduce.py runs them)
REDOPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")

ROWS = [
    # ---- integer arithmetic (9.7.1) and extended precision (9.7.2) --------------------------------
    _r("add", "int", I._add, "9.7.1.1", mods=("sat", "cc"), only={"sat": ("s32",),
                                                                   "cc": ("u32", "s32", "u64", "s64")}),
    _r("add", "float", F.float_arith, "9.7.3.3", mods=RND + ("ftz", "sat"), only=F32_ONLY, operands=3),
    _r("add", "half", H.half_arith, "9.7.4.1", mods=RND + ("ftz", "sat", "relu")),
    _r("sub", "int", I._sub, "9.7.1.2", mods=("sat", "cc"), only={"sat": ("s32",),
                                                                   "cc": ("u32", "s32", "u64", "s64")}),
    _r("sub", "float", F.float_arith, "9.7.3.4", mods=RND + ("ftz", "sat"), only=F32_ONLY, operands=3),
    _r("sub", "half", H.half_arith, "9.7.4.2", mods=RND + ("ftz", "sat", "relu")),
    _r("mul", "int", I._mul, "9.7.1.3", mods=MUL_MODE),
    _r("mul", "float", F.float_arith, "9.7.3.5", mods=RND + ("ftz", "sat"), only=F32_ONLY, operands=3),
    _r("mul", "half", H.half_arith, "9.7.4.3", mods=RND + ("ftz", "sat", "relu")),
    _r("mad", "int", I._mad, "9.7.1.4", mods=MUL_MODE + ("sat", "cc"), only={"sat": ("s32",)}),
    _r("mad", "float", F.float_arith, "9.7.3.7", mods=RND + ("ftz", "sat"), only=F32_ONLY, operands=4),
    _r("mad", "half", H.half_arith, "9.7.4.4", mods=RND + ("ftz", "sat", "relu", "oob")),
    _r("fma", "float", F.float_arith, "9.7.3.6", mods=RND + ("ftz", "sat"), only=F32_ONLY, operands=4),
    _r("fma", "half", H.half_arith, "9.7.4.4", mods=RND + ("ftz", "sat", "relu", "oob")),
    _r("addc", "any", I._carry_op, "9.7.2.2", mods=("cc",)),
    _r("subc", "any", I._carry_op, "9.7.2.4", mods=("cc",)),
    _r("madc", "any", I._carry_op, "9.7.2.6", mods=MUL_MODE + ("cc",)),
    _r("mul24", "any", I._mul24, "9.7.1.5", mods=("hi", "lo")),
    _r("mad24", "any", I._mul24, "9.7.1.6", mods=("hi", "lo", "sat")),
    _r("sad", "any", I._sad, "9.7.1.7", mods=(), operands=4),
    _r("div", "int", I._divrem, "9.7.1.8", mods=(), operands=3),
    _r("div", "float", F.float_arith, "9.7.3.8", mods=RND + ("ftz", "approx", "full"),
       only={"ftz": ("f32",), "full": ("f32",)}, operands=3),
    _r("div", "half", H.half_arith, "9.7.4", mods=RND + ("ftz", "approx", "full")),
    _r("rem", "any", I._divrem, "9.7.1.9", mods=(), operands=3),
    _r("abs", "int", I._abs, "9.7.1.10", mods=(), operands=2),
    _r("abs", "float", F.float_unary, "9.7.3.9", mods=("ftz",), only={"ftz": ("f32",)}, operands=2),
    _r("abs", "half", H.half_unary, "9.7.4.6", mods=("ftz",), operands=2),
    _r("neg", "int", I._neg, "9.7.1.11", mods=(), operands=2),
    _r("neg", "float", F.float_unary, "9.7.3.10", mods=("ftz",), only={"ftz": ("f32",)}, operands=2),
    _r("neg", "half", H.half_unary, "9.7.4.5", mods=("ftz",), operands=2),
    _r("min", "int", I._minmax, "9.7.1.12", mods=("relu",), only={"relu": ("s32", "s16x2")}),
    _r("min", "float", F.float_minmax, "9.7.3.11", mods=("ftz", "NaN", "xorsign", "abs"), only=F32_MINMAX),
    _r("min", "half", H.half_minmax, "9.7.4.7", mods=("ftz", "NaN", "xorsign", "abs", "relu")),
    _r("max", "int", I._minmax, "9.7.1.13", mods=("relu",), only={"relu": ("s32", "s16x2")}),
    _r("max", "float", F.float_minmax, "9.7.3.12", mods=("ftz", "NaN", "xorsign", "abs"), only=F32_MINMAX),
    _r("max", "half", H.half_minmax, "9.7.4.8", mods=("ftz", "NaN", "xorsign", "abs", "relu")),
    _r("popc", "any", I._popc, "9.7.1.14", mods=(), operands=2),
    _r("clz", "any", I._clz, "9.7.1.15", mods=(), operands=2),
    _r("bfind", "any", I._bfind, "9.7.1.16", mods=("shiftamt",), operands=2),
    _r("brev", "any", I._brev, "9.7.1.18", mods=(), operands=2),
    _r("bfe", "any", I._bfe, "9.7.1.19", mods=(), operands=4),
    _r("bfi", "any", I._bfi, "9.7.1.20", mods=(), operands=5),
    _r("bmsk", "any", I.bmsk, "9.7.1.22", mods=("clamp", "wrap"), operands=3),
    _r("dp4a", "any", I._dp, "9.7.1.23", mods=(), operands=4),
    _r("dp2a", "any", I._dp, "9.7.1.24", mods=("lo", "hi"), operands=4),
    # ---- logic and shift (9.7.8), compare and select (9.7.6), prmt (9.7.9.7) ----------------------
    _r("shl", "any", I._shift, "9.7.8.7", mods=(), operands=3),
    _r("shr", "any", I._shift, "9.7.8.8", mods=(), operands=3),
    _r("shf", "any", I._shf, "9.7.8.9", mods=("l", "r", "clamp", "wrap"), operands=4),
    _r("and", "any", I._logic, "9.7.8.1", mods=(), operands=3),
    _r("or", "any", I._logic, "9.7.8.2", mods=(), operands=3),
    _r("xor", "any", I._logic, "9.7.8.3", mods=(), operands=3),
    _r("not", "any", I._logic, "9.7.8.4", mods=(), operands=2),
    _r("cnot", "any", I._logic, "9.7.8.5", mods=(), operands=2),
    _r("lop3", "any", I._lop3, "9.7.8.6", mods=("and", "or"), one_of=(("and", "or"),)),
    _r("prmt", "any", PR.prmt, "9.7.9.7", mods=("f4e", "b4e", "rc8", "ecl", "ecr", "rc16"),
       one_of=(("f4e", "b4e", "rc8", "ecl", "ecr", "rc16"),), operands=4),
    _r("setp", "any", I._setp, "9.7.6.2", **SETP),       # the comparison per type: ops_float.float_compare
    _r("set", "any", I._setp, "9.7.6.1", **SETP),
    _r("selp", "any", I._selp, "9.7.6.3", mods=(), operands=4),
    _r("slct", "any", I._slct, "9.7.6.4", mods=("ftz",), operands=4),
    # ---- floating point (9.7.3) and half precision (9.7.4) ---------------------------------------
    _r("testp", "any", F._testp, "9.7.3.1", operands=2,
       mods=("finite", "infinite", "number", "notanumber", "normal", "subnormal"),
       one_of=(("finite", "infinite", "number", "notanumber", "normal", "subnormal"),)),
    _r("copysign", "any", F._copysign, "9.7.3.2", mods=(), operands=3),
    _r("rcp", "float", F._rcp, "9.7.3.13", mods=RND + ("approx", "ftz"), operands=2),
    _r("rcp", "half", H.half_approx, "9.7.3.13", mods=RND + ("approx", "ftz")),
    _r("sqrt", "float", F._sqrt, "9.7.3.15", mods=RND + ("approx", "ftz"), operands=2),
    _r("sqrt", "half", H.half_approx, "9.7.3.15", mods=RND + ("approx", "ftz")),
    *[r for op, sec in (("rsqrt", "9.7.3.16"), ("sin", "9.7.3.18"), ("cos", "9.7.3.19"),
                        ("lg2", "9.7.3.20"), ("ex2", "9.7.3.21"), ("tanh", "9.7.3.22"))
      for r in (_r(op, "float", F.approx, sec, mods=("approx", "ftz"), operands=2),
              _r(op, "half", H.half_approx, sec, mods=("approx", "ftz")))],
    # ---- data movement and conversion (9.7.9) ----------------------------------------------------
    _r("mov", "any", V._mov, "9.7.9.1", mods=(), operands=2),
    _r("cvt", "any", V._cvt, "9.7.9.21", mods=IRND + FRND + ("ftz", "sat", "relu", "satfinite"),
       one_of=(IRND + FRND, ("sat", "satfinite"))),
    _r("cvta", "any", V._cvta, "9.7.9.20", spaces=SPACES, mods=("to",), operands=2),
    _r("ld", "any", M._ld, "9.7.9.8", spaces=SPACES, vectors=VECTORS, operands=(2, 3), **LD),
    _r("ldu", "any", M._ld, "9.7.9.9", spaces=("global",), vectors=VECTORS, mods=(), operands=2),
    _r("st", "any", M._st, "9.7.9.10", spaces=("global", "shared", "local", "param"), vectors=VECTORS,
       operands=(2, 3), **ST),
    _r("atom", "any", M._atomic, "9.7.13.5", spaces=("global", "shared"), vectors=VECTORS,
       mods=ATOM_SEMS + SCOPES + ATOM_OPS + ("noftz", "L2::cache_hint"), operands=(3, 4, 5),
       one_of=(ATOM_SEMS, SCOPES, ATOM_OPS)),
    _r("red", "any", M._atomic, "9.7.13.6", spaces=("global", "shared"), vectors=VECTORS,
       mods=("relaxed", "release") + SCOPES + ATOM_OPS[:3] + ATOM_OPS[5:] + ("noftz", "L2::cache_hint")
       + ASYNC_REMOTE,
       one_of=(("relaxed", "release"), SCOPES, ATOM_OPS), operands=(2, 3)),
    _r("cp", "any", M._cp_async, "9.7.9.25", spaces=("global", "shared"),
       mods=("async", "ca", "cg", "L2::cache_hint", "commit_group", "wait_group", "wait_all") + PREFETCH_SIZE,
       one_of=(("ca", "cg"), PREFETCH_SIZE)),
    _r("cp", "any", A.cp_bulk, "9.7.9.25", needs=("async", "bulk"), spaces=("global", "shared"),
       mods=("tensor", "prefetch", "L2", "commit_group", "wait_group", "read", "mbarrier::complete_tx::bytes",
             "bulk_group", "multicast::cluster", "L2::cache_hint", "ignore_oob", "tile", "im2col", "im2col::w",
             "im2col::w::128", "im2col_no_offs", "tile::gather4", "tile::scatter4", "cta_group::1", "cta_group::2", "cp_mask"),
       patterns=(r"[1-5]d",)),
    _r("cp", "any", RD.cp_reduce, "9.7.9.25.4.2", needs=("reduce", "async", "bulk"), spaces=("global", "shared"),
       mods=("tensor", "bulk_group", "mbarrier::complete_tx::bytes", "L2::cache_hint", "tile", "im2col_no_offs",
             "noftz") + REDOPS, patterns=(r"[1-5]d",), one_of=(REDOPS,), operands=(2, 3, 4)),
    _r("cp", "any", A.cp_async_arrive, "9.7.9.25", needs=("async", "mbarrier"), spaces=("shared",),
       mods=("arrive", "noinc"), operands=1),
    _r("prefetch", "any", M._noop, "9.7.9.15", spaces=("global", "local", "const", "param"),
       mods=("L1", "L2", "L2::evict_last", "L2::evict_normal", "tensormap"), operands=1),
    _r("prefetchu", "any", M._noop, "9.7.9.15", mods=("L1",), operands=1),
    _r("applypriority", "any", M._noop, "9.7.9.16", spaces=("global",), mods=("L2::evict_normal",)),
    _r("discard", "any", M._noop, "9.7.9.17", spaces=("global",), mods=("L2",)),
    _r("createpolicy", "any", M._createpolicy, "9.7.9.18",
       mods=("fractional", "range", "cvt", "L2") + tuple(f"L2::{p}" for p in (
           "evict_last", "evict_normal", "evict_first", "evict_unchanged", "primary_priority",
           "secondary_priority"))),
    _r("isspacep", "any", M._isspacep, "9.7.9.19", spaces=SPACES, mods=(), operands=2),
    _r("fence", "any", M._noop, "9.7.13.4", mods=FENCE),
    _r("membar", "any", M._noop, "9.7.13.4", mods=("cta", "gl", "sys", "proxy", "alias"), operands=0),
    # ---- warp and CTA collectives (9.7.13) -------------------------------------------------------
    _r("shfl", "any", W._shfl, "9.7.9.6", sync="membermask", mods=("sync",) + SHFL, one_of=(SHFL,)),
    _r("vote", "any", W._vote, "9.7.13.10", sync="membermask", mods=("sync",) + VOTE, one_of=(VOTE,)),
    _r("match", "any", W._match, "9.7.13.11", sync="membermask", mods=("sync", "any", "all"),
       one_of=(("any", "all"),)),
    _r("redux", "any", W._redux, "9.7.13.13", sync="membermask", mods=("sync",) + REDUX + ("abs", "NaN"),
       one_of=(REDUX,)),
    _r("elect", "any", W._elect, "9.7.13.14", sync="membermask", mods=("sync",), operands=2),
    _r("activemask", "any", W._activemask, "9.7.13.12", mods=(), operands=1),
    _r("bar", "any", W._barrier, "9.7.13.1", sync="cta", **BAR),
    _r("bar", "any", W._barrier, "9.7.13.2", needs=("warp",), sync="membermask", mods=("sync",), operands=1),
    _r("barrier", "any", W._barrier, "9.7.13.1", sync="cta", **BAR),
    _r("mbarrier", "any", A._mbarrier, "9.7.13.15", spaces=("shared",), mods=MBARRIER + ("noComplete", "parity",
       "expect_tx") + ("relaxed", "acquire", "release") + SCOPES,
       one_of=(MBARRIER[:2] + MBARRIER[3:], ("relaxed", "acquire", "release"), SCOPES)),
    _r("setmaxnreg", "any", A._setmaxnreg, "9.7.19.5", sync="aligned", mods=("inc", "dec", "sync", "aligned"),
       one_of=(("inc", "dec"),), operands=1),
    # ---- matrix (9.7.14: wmma, mma, ldmatrix, stmatrix; 9.7.15: wgmma) ---------------------------
    _r("ldmatrix", "any", X._ldmatrix, "9.7.14.5.15", spaces=("shared",), sync="aligned", operands=2,
       mods=("sync", "aligned", "x1", "x2", "x4", "trans", "b8x16", "b6x16_p32", "b4x16_p64"), patterns=SHAPE,
       one_of=(("x1", "x2", "x4"),)),
    _r("stmatrix", "any", X._ldmatrix, "9.7.14.5.16", spaces=("shared",), sync="aligned", operands=2,
       mods=("sync", "aligned", "x1", "x2", "x4", "trans"), patterns=SHAPE, one_of=(("x1", "x2", "x4"),)),
    _r("movmatrix", "any", X._movmatrix, "9.7.14.5.17", sync="aligned", operands=2, patterns=SHAPE,
       mods=("sync", "aligned", "trans")),
    _r("mma", "any", X._mma, "9.7.14.5.14", sync="aligned", patterns=SHAPE + (r"kind::\w+", r"scale_vec::\w+"),
       mods=("sync", "aligned", "row", "col", "satfinite", "xor", "popc", "and", "sp", "sp::ordered_metadata",
             "block_scale") + RND + MMA_TYPES),
    _r("wmma", "any", X._wmma, "9.7.14.4", spaces=SPACES, sync="aligned", patterns=SHAPE,
       mods=("load", "store", "mma", "a", "b", "c", "d", "sync", "aligned", "row", "col", "satfinite", "xor", "popc",
             "and") + RND + MMA_TYPES),
    *[_r("wgmma", "any", G._wgmma, "9.7.15.6", needs=(sub,), sync="aligned", mods=("sync", "aligned"),
         operands=(1,) if sub == "wait_group" else (0,))
      for sub in ("fence", "commit_group", "wait_group")],
    _r("wgmma", "any", G._wgmma, "9.7.15.5.2", needs=("mma_async",), sync="warpgroup", patterns=SHAPE,
       mods=("sync", "aligned", "satfinite", "sp", "and", "popc") + MMA_TYPES),
    # ---- tensor maps built by the kernel (issue 25: Triton's tl.make_tensor_descriptor) -----------
    _r("tensormap", "any", A.tensormap_replace, "9.7.9.29", needs=("replace",), spaces=("global", "shared"),
       mods=("tile", "b1024") + tuple(TENSORMAP_FIELDS)),
    _r("tensormap", "any", A.tensormap_cp_fenceproxy, "9.7.13.4", needs=("cp_fenceproxy",), sync="aligned",
       spaces=("global", "shared"), mods=("tensormap::generic", "release", "sync", "aligned") + SCOPES,
       one_of=(SCOPES,), operands=3),
    # ---- thread-block clusters (issue 24; ops_cluster.py, cluster.py) ----------------------------
    _r("barrier", "any", K.barrier_cluster, "9.7.13.3", needs=("cluster",),
       mods=("arrive", "wait", "relaxed", "release", "acquire", "aligned"), operands=0),
    _r("mapa", "any", K.mapa, "9.7.9.23", spaces=("shared",), operands=3),
    _r("getctarank", "any", K.getctarank, "9.7.9.24", spaces=("shared",), operands=2),
    # ---- tcgen05 and tensor memory (issue 27, sm_100a; ops_tcgen05.py, tmem.py): PTX ISA 9.x 9.7.16 --
    _r("tcgen05", "any", TC.alloc, "9.7.16.7.1", needs=("alloc",), sync="aligned", spaces=("shared",),
       mods=("cta_group::1", "cta_group::2", "sync", "aligned"), one_of=(("cta_group::1", "cta_group::2"),),
       operands=2),
    _r("tcgen05", "any", TC.dealloc, "9.7.16.7.1", needs=("dealloc",), sync="aligned",
       mods=("cta_group::1", "cta_group::2", "sync", "aligned"), one_of=(("cta_group::1", "cta_group::2"),),
       operands=2),
    _r("tcgen05", "any", TC.relinquish, "9.7.16.7.1", needs=("relinquish_alloc_permit",), sync="aligned",
       mods=("cta_group::1", "cta_group::2", "sync", "aligned"), one_of=(("cta_group::1", "cta_group::2"),),
       operands=0),
    *[_r("tcgen05", "any", TC.ldst, f"9.7.16 tcgen05.{op}", needs=(op,), sync="aligned",
         mods=("sync", "aligned", pk), patterns=(r"(32x32b|16x64b|16x128b|16x256b|16x32bx2)", r"x\d+"),
         operands=(2, 3)) for op, pk in (("ld", "pack::16b"), ("st", "unpack::16b"))],
    *[_r("tcgen05", "any", TC.sync_only, "9.7.16 tcgen05.wait", needs=(w,), sync="aligned", mods=("sync", "aligned"),
         operands=0) for w in ("wait::ld", "wait::st")],
    *[_r("tcgen05", "any", TC.sync_only, "9.7.16 tcgen05.fence", needs=(f,), mods=(), operands=0)
      for f in ("fence::before_thread_sync", "fence::after_thread_sync")],
    _r("tcgen05", "any", TC.mma, "9.7.16 tcgen05.mma", needs=("mma",), operands=(5, 6, 7, 8),
       mods=("cta_group::1", "cta_group::2", "ws", "sp", "block_scale", "ashift"),
       patterns=(r"kind::\w+", r"scale_vec::\w+", r"block(16|32)", r"collector::\w+::\w+"),
       one_of=(("cta_group::1", "cta_group::2"),)),
    _r("tcgen05", "any", TC.commit, "9.7.16 tcgen05.commit", needs=("commit",), spaces=("shared",),
       mods=("cta_group::1", "cta_group::2", "mbarrier::arrive::one", "multicast::cluster"),
       one_of=(("cta_group::1", "cta_group::2"),), operands=(1, 2)),
    _r("tcgen05", "any", TX5.cp, "9.7.16.9.2", needs=("cp",), operands=2,
       mods=("cta_group::1", "cta_group::2", "128x256b", "4x256b", "128x128b", "64x128b", "32x128b", "warpx2::02_13",
             "warpx2::01_23", "warpx4", "b8x16", "b6x16_p32", "b4x16_p64"),
       one_of=(("cta_group::1", "cta_group::2"), ("128x256b", "4x256b", "128x128b", "64x128b", "32x128b"))),
    # ---- tcgen05.shift, tcgen05.mma.ws (issue 27; ops_tcgen05_extra.py, collector.py) ---------------
    _r("tcgen05", "any", TX5.shift, "9.7.16.9.3", needs=("shift",), mods=("cta_group::1", "cta_group::2", "down"),
       one_of=(("cta_group::1", "cta_group::2"),), requires={"shift": ("down",)}, operands=1),
    _r("tcgen05", "any", TX5.mma_ws, "9.7.16.10.9.3", needs=("mma", "ws"), operands=(5, 6, 7),
       mods=("cta_group::1", "sp"), patterns=(r"kind::\w+", r"collector::\w+::\w+"), requires={"ws": ("cta_group::1",)}),
    # ---- cluster launch control (issue 27, sm_100; ops_clc.py) ----------------------------------------
    _r("clusterlaunchcontrol", "any", CLC.try_cancel, "9.7.13.17", needs=("try_cancel",), spaces=("shared",),
       mods=("async", "mbarrier::complete_tx::bytes", "multicast::cluster::all"),
       requires={"try_cancel": ("mbarrier::complete_tx::bytes",)}, operands=2),
    _r("clusterlaunchcontrol", "any", CLC.query_cancel, "9.7.13.18", needs=("query_cancel",), operands=2,
       mods=("is_canceled", "get_first_ctaid", "get_first_ctaid::x", "get_first_ctaid::y", "get_first_ctaid::z",
             "v4")),
    # ---- textures (9.7.10) and surfaces (9.7.11) through texture/surface objects (issue 24) -------
    _r("tex", "any", TX.tex, "9.7.10.3"),
    _r("tld4", "any", TX.tld4, "9.7.10.4"),
    _r("txq", "any", TX.query, "9.7.10.5"),
    _r("suld", "any", TX.suld, "9.7.11.1"),
    _r("sust", "any", TX.sust, "9.7.11.2"),
    _r("suq", "any", TX.query, "9.7.11.4"),
    # ---- control flow (9.7.12) and miscellaneous (9.7.19) ----------------------------------------
    _r("bra", "any", C._bra, "9.7.12.2", mods=("uni",)),
    _r("exit", "any", C._exit, "9.7.12.7", mods=(), operands=0),
    _r("ret", "any", C._ret, "9.7.12.6", mods=("uni",), operands=0),
    _r("call", "any", C._call, "9.7.12.5", mods=("uni",)),
    _r("trap", "any", C._trap, "9.7.19.2", mods=(), operands=0),
    _r("brkpt", "any", C._nop, "9.7.19.1", mods=(), operands=0),
    _r("pmevent", "any", C._nop, "9.7.19.4", mods=("mask",), operands=1),
    _r("nanosleep", "any", C._nop, "9.7.19.3", mods=(), operands=1),
    _r("nop", "any", C._nop, "", mods=(), operands=0),
    # the linker's steps of an inlined call (program.py), no PTX of their own
    _r("retcopy", "any", C._retcopy, ""),
    # ---- issue 24 (constructs real kernels use): calls that are not inlined copies, the runtime's
    # printf/assert, griddepcontrol; the linker's steps first (program.py), no PTX of their own
    _r("rcall", "any", CA.rcall, "9.7.12.5"),
    _r("icall", "any", CA.icall, "9.7.12.5"),
    _r("vprintf", "any", S.vprintf, ""),
    _r("assertfail", "any", S.assertfail, ""),
    _r("griddepcontrol", "any", C.griddepcontrol, "9.7.13", mods=("launch_dependents", "wait"), operands=0),
    # ---- issue 24: the device heap's malloc/free (linker steps of `call malloc` / `call free`)
    _r("malloc", "any", S.malloc, ""),
    _r("free", "any", S.free, ""),
    # ---- issue 24: cudaGraphSetConditional from device code (a linker step of its call, ops_sys.py)
    _r("graph_set_conditional", "any", S.graph_set_conditional, ""),
    # ---- issue 24: the video instructions (9.7.18, ops_video.py): the SIMD forms (9.7.18.2) and the
    # scalar ones (9.7.18.1; the handler refuses .sat, .min, .max and vmad with the reason)
    *[_r(op, "any", VI.simd, VIDEO_SECTION[int(op[-1])], mods=("sat", "add"), operands=4) for op in VIDEO_SIMD],
    *[_r(op, "any", VI.vset, VSET_SECTION[int(op[-1])], mods=VSET_CMP + ("add",), one_of=(VSET_CMP,),
         operands=4) for op in VIDEO_SET],
    *[_r(op, "any", VI.scalar, VIDEO_SCALAR_SECTION[op], operands=(3, 4), mods=VIDEO_SCALAR_MODS[op][0],
         one_of=VIDEO_SCALAR_MODS[op][1]) for op in VIDEO_SCALAR],
]


def _index(rows):
    """{opcode: [rows, the forms with the longest `needs` first]}; a form in two rows is refused."""
    out, seen = {}, set()
    for r in rows:
        if r.key in seen:
            raise AssertionError(f"instruction table: {r.opcode} {r.types} {r.needs} has two rows")
        if r.types not in CLASSES or r.sync not in SYNC:
            raise AssertionError(f"instruction table: {r.opcode}: type class {r.types!r} / sync {r.sync!r}")
        seen.add(r.key)
        out.setdefault(r.opcode, []).append(r)
    for forms in out.values():
        forms.sort(key=lambda r: -len(r.needs))
    return out


BY_OPCODE = _index(ROWS)
LINKER_STEPS = ("retcopy", "rcall", "icall", "vprintf", "assertfail", "malloc", "free", "graph_set_conditional")


def opcodes():
    """The opcodes PTX may spell (less the linker's own steps)."""
    return sorted(set(BY_OPCODE) - set(LINKER_STEPS))


def row_for(ins):
    """The row of an instruction, its modifiers checked; refused (one line) when none serves it."""
    forms = BY_OPCODE.get(ins.opcode)
    if forms is None:
        raise unsupported(ins, ins.text)
    mods = tuple(ins.mods)
    forms = [r for r in forms if mods[:len(r.needs)] == r.needs]
    if forms and forms[0].needs:
        forms = [r for r in forms if r.needs == forms[0].needs]
    if not forms:
        raise unsupported(ins)
    tys = T.types_in(mods)
    if not tys or forms[0].types == "any":
        row = forms[0]
    else:
        t = tys[-1]
        cls = type_class(t)
        row = next((r for r in forms if r.types == cls), None)
        if row is None:
            served = ", ".join(r.types for r in forms)
            raise unsupported(ins, f"type .{t.name}: {ins.opcode} takes {served} types "
                                   f"(PTX ISA {forms[0].section})")
    _check(row, ins, tys)
    return row


def _dotted(names):
    return ", ".join(f".{x}" for x in names)


def _placed(row, m):
    """A state space or vector width the row's own checks judge (spaces, vectors)."""
    return ((row.spaces is not None and m.split("::")[0] in SPACES)
            or (row.vectors is not None and re.fullmatch(r"v\d+", m) is not None))


def _check(row, ins, tys):
    if row.mods is not None:
        typenames = {t.name for t in tys}
        for m in ins.mods[len(row.needs):]:
            if m in typenames or m in row.mods or _placed(row, m) or any(p.fullmatch(m) for p in row.patterns):
                continue
            legal = _dotted(sorted(row.mods)) or "no modifier"
            raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode}{'.' + tys[-1].name if tys else ''} "
                                 f"does not take .{m} (PTX ISA {row.section}: {ins.opcode} takes "
                                 f"{legal} beside its type)")
        for m, applies in row.only:
            if m in ins.mods and tys and tys[-1].name not in applies:
                raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode}.{tys[-1].name} does not take .{m} "
                                     f"(PTX ISA {row.section}: {ins.opcode}.{m} applies to "
                                     f"{'/'.join('.' + a for a in applies)} only)")
        for group in row.one_of:
            named = [m for m in ins.mods if m in group]
            if len(named) > 1:
                raise LayoutsimError(f"{lines.of(ins)}: {ins.name} names both .{named[0]} and .{named[1]} "
                                     f"(PTX ISA {row.section}: {ins.opcode} takes at most one of {_dotted(group)})")
        present = set(ins.mods) | {m.split("::")[0] for m in ins.mods}
        for m, alts in row.requires:
            if m in present and not present & set(alts):
                need = f"one of {_dotted(alts)}" if len(alts) > 1 else f".{alts[0]}"
                raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: .{m} needs {need} "
                                     f"(PTX ISA {row.section})")
    if row.operands is not None and len(ins.operands) not in row.operands:
        ns = row.operands
        n = (f"{ns[0]} to {ns[-1]}" if len(ns) > 2 and ns == tuple(range(ns[0], ns[-1] + 1))
             else " or ".join(map(str, ns)))
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name} takes {n} operand{'s' * (row.operands != (1,))}, "
                             f"not {len(ins.operands)}: {ins.text}")
    if row.vectors is not None:
        bad = [m for m in ins.mods if re.fullmatch(r"v\d+", m) and m not in row.vectors]
        if bad:
            raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode} does not take .{bad[0]} (PTX ISA {row.section}: "
                                 f"{ins.opcode} takes the vectors {', '.join('.' + v for v in row.vectors)})")
    if row.spaces is not None:
        named = {m.split("::")[0] for m in ins.mods} & set(SPACES)
        bad = sorted(named - row.spaces)
        if bad:
            raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode} does not take the state space .{bad[0]} "
                                 f"(PTX ISA {row.section}: {ins.opcode} takes "
                                 f"{', '.join('.' + s for s in sorted(row.spaces))})")
