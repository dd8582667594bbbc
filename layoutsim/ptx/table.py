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
- `mods`: the legal modifiers other than the type (None: the handler decodes them); one outside
  the set is refused with the ISA's wording (`why`, the section). `only`: {modifier: the types
  it applies to} (add.sat applies to .s32 only).
- `spaces`: the state spaces the form may name (memory instructions; None: not a memory form);
  `vectors`: the vector widths it may name (.v2/.v4/.v8; the handler refuses what it does not
  model, as vector atomics).
- `sync`: the synchronisation class: "none", "aligned" (the whole warp, .sync.aligned),
  "membermask" (the threads a mask names), "warpgroup" (four warps), "cta" (a CTA barrier).
  compile.py sets Step.sync from it and checks the handler's step agrees.
- `section`: the PTX ISA 9.0 section.

Adding an instruction is one row here and one handler in its family's module (see
docs/dev/adding-an-instruction.md). The table is consulted at compile time only.
"""
import re
from dataclasses import dataclass

from ..errors import LayoutsimError
from . import lines
from . import ops_async as A
from . import ops_calls as CA
from . import ops_cluster as K
from . import ops_sys as S
from . import ops_control as C
from . import ops_cvt as V
from . import ops_float as F
from . import ops_half as H
from . import ops_int as I
from . import ops_matrix as X
from . import ops_mem as M
from . import ops_texture as TX
from . import ops_warp as W
from . import ops_wgmma as G
from . import types as T
from .builders import unsupported

CLASSES = ("int", "float", "half", "any")
SYNC = ("none", "aligned", "membermask", "warpgroup", "cta")
SPACES = ("global", "shared", "local", "const", "param")


@dataclass(frozen=True)
class Row:
    opcode: str
    types: str
    handler: object
    section: str = ""
    needs: tuple = ()
    mods: frozenset = None
    only: tuple = ()                 # ((modifier, types it applies to), ...)
    spaces: frozenset = None
    vectors: tuple = None            # the vector widths a memory form takes (.v2, .v4, .v8)
    sync: str = "none"
    operands: tuple = None           # the operand counts the form takes (None: the handler checks)

    @property
    def key(self):
        return (self.opcode, self.types, self.needs)


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
    if isinstance(kw.get("operands"), int):
        kw["operands"] = (kw["operands"],)
    return Row(opcode, types, handler, section, **kw)


RND = ("rn", "rz", "rm", "rp")
VECTORS = ("v2", "v4", "v8")
F32_ONLY = {"ftz": ("f32",), "sat": ("f32",)}                  # .ftz and .sat: not on .f64
F32_MINMAX = {"ftz": ("f32",), "NaN": ("f32",), "xorsign": ("f32",), "abs": ("f32",)}
MUL_MODE = ("hi", "lo", "wide")

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
    _r("mad", "half", H.half_arith, "9.7.4.4"),
    _r("fma", "float", F.float_arith, "9.7.3.6", mods=RND + ("ftz", "sat"), only=F32_ONLY, operands=4),
    _r("fma", "half", H.half_arith, "9.7.4.4"),
    _r("addc", "any", I._carry_op, "9.7.2.2", mods=("cc",)),
    _r("subc", "any", I._carry_op, "9.7.2.4", mods=("cc",)),
    _r("madc", "any", I._carry_op, "9.7.2.6", mods=MUL_MODE + ("cc",)),
    _r("mul24", "any", I._mul24, "9.7.1.5", mods=("hi", "lo")),
    _r("mad24", "any", I._mul24, "9.7.1.6", mods=("hi", "lo", "sat")),
    _r("sad", "any", I._sad, "9.7.1.7", mods=(), operands=4),
    _r("div", "int", I._divrem, "9.7.1.8", mods=(), operands=3),
    _r("div", "float", F.float_arith, "9.7.3.8", mods=RND + ("ftz", "approx", "full"),
       only={"ftz": ("f32",), "full": ("f32",)}, operands=3),
    _r("div", "half", H.half_arith, "9.7.4"),
    _r("rem", "any", I._divrem, "9.7.1.9", mods=(), operands=3),
    _r("abs", "int", I._abs, "9.7.1.10", mods=(), operands=2),
    _r("abs", "float", F.float_unary, "9.7.3.9", mods=("ftz",), only={"ftz": ("f32",)}, operands=2),
    _r("abs", "half", H.half_unary, "9.7.4.6"),
    _r("neg", "int", I._neg, "9.7.1.11", mods=(), operands=2),
    _r("neg", "float", F.float_unary, "9.7.3.10", mods=("ftz",), only={"ftz": ("f32",)}, operands=2),
    _r("neg", "half", H.half_unary, "9.7.4.5"),
    _r("min", "int", I._minmax, "9.7.1.12", mods=("relu",), only={"relu": ("s32", "s16x2")}),
    _r("min", "float", F.float_minmax, "9.7.3.11", mods=("ftz", "NaN", "xorsign", "abs"), only=F32_MINMAX),
    _r("min", "half", H.half_minmax, "9.7.4.7"),
    _r("max", "int", I._minmax, "9.7.1.13", mods=("relu",), only={"relu": ("s32", "s16x2")}),
    _r("max", "float", F.float_minmax, "9.7.3.12", mods=("ftz", "NaN", "xorsign", "abs"), only=F32_MINMAX),
    _r("max", "half", H.half_minmax, "9.7.4.8"),
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
    _r("and", "any", I._logic, "9.7.8.1"),
    _r("or", "any", I._logic, "9.7.8.2"),
    _r("xor", "any", I._logic, "9.7.8.3"),
    _r("not", "any", I._logic, "9.7.8.4"),
    _r("cnot", "any", I._logic, "9.7.8.5"),
    _r("lop3", "any", I._lop3, "9.7.8.6"),
    _r("prmt", "any", I._prmt, "9.7.9.7"),
    _r("setp", "any", I._setp, "9.7.6.2"),       # the comparison per type: ops_float.float_compare
    _r("set", "any", I._setp, "9.7.6.1"),
    _r("selp", "any", I._selp, "9.7.6.3", mods=(), operands=4),
    _r("slct", "any", I._slct, "9.7.6.4"),
    # ---- floating point (9.7.3) and half precision (9.7.4) ---------------------------------------
    _r("testp", "any", F._testp, "9.7.3.1"),
    _r("copysign", "any", F._copysign, "9.7.3.2", mods=(), operands=3),
    _r("rcp", "float", F._rcp, "9.7.3.13", mods=RND + ("approx", "ftz"), operands=2),
    _r("rcp", "half", H.half_approx, "9.7.3.13"),
    _r("sqrt", "float", F._sqrt, "9.7.3.15", mods=RND + ("approx", "ftz"), operands=2),
    _r("sqrt", "half", H.half_approx, "9.7.3.15"),
    *[r for op, sec in (("rsqrt", "9.7.3.16"), ("sin", "9.7.3.18"), ("cos", "9.7.3.19"),
                        ("lg2", "9.7.3.20"), ("ex2", "9.7.3.21"), ("tanh", "9.7.3.22"))
      for r in (_r(op, "float", F.approx, sec, mods=("approx", "ftz"), operands=2),
              _r(op, "half", H.half_approx, sec))],
    # ---- data movement and conversion (9.7.9) ----------------------------------------------------
    _r("mov", "any", V._mov, "9.7.9.1"),
    _r("cvt", "any", V._cvt, "9.7.9.21"),
    _r("cvta", "any", V._cvta, "9.7.9.20", spaces=SPACES),
    _r("ld", "any", M._ld, "9.7.9.8", spaces=SPACES, vectors=VECTORS),
    _r("ldu", "any", M._ld, "9.7.9.9", spaces=("global",), vectors=VECTORS),
    _r("st", "any", M._st, "9.7.9.10", spaces=("global", "shared", "local", "param"), vectors=VECTORS),
    _r("atom", "any", M._atomic, "9.7.13.5", spaces=("global", "shared"), vectors=VECTORS),
    _r("red", "any", M._atomic, "9.7.13.6", spaces=("global", "shared"), vectors=VECTORS),
    _r("cp", "any", M._cp_async, "9.7.9.25", spaces=("global", "shared")),
    _r("cp", "any", A.cp_bulk, "9.7.9.25", needs=("async", "bulk"), spaces=("global", "shared")),
    _r("cp", "any", A.cp_async_arrive, "9.7.9.25", needs=("async", "mbarrier"), spaces=("shared",)),
    _r("prefetch", "any", M._noop, "9.7.9.15"),
    _r("prefetchu", "any", M._noop, "9.7.9.15"),
    _r("applypriority", "any", M._noop, "9.7.9.16"),
    _r("discard", "any", M._noop, "9.7.9.17"),
    _r("createpolicy", "any", M._createpolicy, "9.7.9.18"),
    _r("isspacep", "any", M._isspacep, "9.7.9.19"),
    _r("fence", "any", M._noop, "9.7.13.4"),
    _r("membar", "any", M._noop, "9.7.13.4"),
    # ---- warp and CTA collectives (9.7.13) -------------------------------------------------------
    _r("shfl", "any", W._shfl, "9.7.9.6", sync="membermask"),
    _r("vote", "any", W._vote, "9.7.13.10", sync="membermask"),
    _r("match", "any", W._match, "9.7.13.11", sync="membermask"),
    _r("redux", "any", W._redux, "9.7.13.13", sync="membermask"),
    _r("elect", "any", W._elect, "9.7.13.14", sync="membermask"),
    _r("activemask", "any", W._activemask, "9.7.13.12"),
    _r("bar", "any", W._barrier, "9.7.13.1", sync="cta"),
    _r("bar", "any", W._barrier, "9.7.13.2", needs=("warp",), sync="membermask"),
    _r("barrier", "any", W._barrier, "9.7.13.1", sync="cta"),
    _r("mbarrier", "any", A._mbarrier, "9.7.13.15", spaces=("shared",)),
    _r("setmaxnreg", "any", A._setmaxnreg, "9.7.19.5", sync="aligned"),
    # ---- matrix (9.7.14: wmma, mma, ldmatrix, stmatrix; 9.7.15: wgmma) ---------------------------
    _r("ldmatrix", "any", X._ldmatrix, "9.7.14.5.15", spaces=("shared",), sync="aligned"),
    _r("stmatrix", "any", X._ldmatrix, "9.7.14.5.16", spaces=("shared",), sync="aligned"),
    _r("mma", "any", X._mma, "9.7.14.5.14", sync="aligned"),
    _r("wmma", "any", X._wmma, "9.7.14.4", spaces=SPACES, sync="aligned"),
    *[_r("wgmma", "any", G._wgmma, "9.7.15.6", needs=(sub,), sync="aligned")
      for sub in ("fence", "commit_group", "wait_group")],
    _r("wgmma", "any", G._wgmma, "9.7.15.5.2", needs=("mma_async",), sync="warpgroup"),
    # ---- thread-block clusters (issue 24; ops_cluster.py, cluster.py) ----------------------------
    _r("barrier", "any", K.barrier_cluster, "9.7.13.3", needs=("cluster",),
       mods=("arrive", "wait", "relaxed", "release", "acquire", "aligned"), operands=0),
    _r("mapa", "any", K.mapa, "9.7.9.23", spaces=("shared",), operands=3),
    _r("getctarank", "any", K.getctarank, "9.7.9.24", spaces=("shared",), operands=2),
    # ---- textures (9.7.10) and surfaces (9.7.11) through texture/surface objects (issue 24) -------
    _r("tex", "any", TX.tex, "9.7.10.3"),
    _r("tld4", "any", TX.tld4, "9.7.10.4"),
    _r("txq", "any", TX.query, "9.7.10.5"),
    _r("suld", "any", TX.suld, "9.7.11.1"),
    _r("sust", "any", TX.sust, "9.7.11.2"),
    _r("suq", "any", TX.query, "9.7.11.4"),
    # ---- control flow (9.7.12) and miscellaneous (9.7.19) ----------------------------------------
    _r("bra", "any", C._bra, "9.7.12.2"),
    _r("exit", "any", C._exit, "9.7.12.7"),
    _r("ret", "any", C._ret, "9.7.12.6"),
    _r("call", "any", C._call, "9.7.12.5"),
    _r("trap", "any", C._trap, "9.7.19.2"),
    _r("brkpt", "any", C._nop, "9.7.19.1"),
    _r("pmevent", "any", C._nop, "9.7.19.4"),
    _r("nanosleep", "any", C._nop, "9.7.19.3"),
    _r("nop", "any", C._nop, ""),
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
LINKER_STEPS = ("retcopy", "rcall", "icall", "vprintf", "assertfail", "malloc", "free")


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


def _check(row, ins, tys):
    if row.mods is not None:
        typenames = {t.name for t in tys}
        for m in ins.mods[len(row.needs):]:
            if m in typenames:
                continue
            if m not in row.mods:
                legal = ", ".join(f".{x}" for x in sorted(row.mods)) or "no modifier"
                raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode}{'.' + tys[-1].name if tys else ''} "
                                     f"does not take .{m} (PTX ISA {row.section}: {ins.opcode} takes "
                                     f"{legal} beside its type)")
        for m, applies in row.only:
            if m in ins.mods and tys and tys[-1].name not in applies:
                raise LayoutsimError(f"{lines.of(ins)}: {ins.opcode}.{tys[-1].name} does not take .{m} "
                                     f"(PTX ISA {row.section}: {ins.opcode}.{m} applies to "
                                     f"{'/'.join('.' + a for a in applies)} only)")
    if row.operands is not None and len(ins.operands) not in row.operands:
        n = " or ".join(map(str, row.operands))
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
