"""Global-memory access ops the coalescing model knows, from the spellings users paste.

An op is reduced to a `GlobalOp`: vendor, kind (ld / st / atom / red / cp.async), bytes per
lane, and the qualifiers that change the data path (ld.global.nc, cache operators). Type
suffixes and vector counts are read by layoutsim.access, the same code the bank model uses.

Spellings accepted (PTX ISA 9.7.9.8 ld, 9.7.9.9 ld.global.nc, 9.7.9.10 st, 9.7.13.5 atom,
9.7.13.6 red, 9.7.9.25 cp.async):
  ld.global[.nc|.ca|.cg|.cs|.lu|.cv][.v2|.v4].TYPE      ld.global.u8, ld.global.v4.b32, ld.global.nc.f32
  st.global[.wb|.cg|.cs|.wt][.v2|.v4].TYPE              st.global.b32, st.global.v2.f32
  atom.global.OP.TYPE   red.global.OP.TYPE              atom.global.add.u32, red.global.add.f32
                        (32/64-bit types and .f16x2/.bf16x2; 16-bit ones become CAS loops)
  cp.async.ca.shared.global.SIZE (SIZE 4, 8, 16)        cp.async.cg.shared.global.16
Memory-order and scope words (.weak .relaxed .acquire .release .volatile .cta .cluster .gpu
.sys), `.noftz` and `.L1::`/`.L2::` hints are accepted and left out of the canonical name: the
model gives them the plain op's counts. AMD (RDNA3/RDNA4, from documents):
  global_load_b32/b64/b128/u8/u16, global_store_b8/b16/b32/b64/b128, buffer_load_*, buffer_store_*
  and the older dword spellings (global_load_dwordx4 = global_load_b128).
"""
import functools
import re
from dataclasses import dataclass

from .. import sass as SASS
from ..access import TYPE_BYTES, WIDTH_NAME, access_bytes
from ..errors import LayoutsimError, suggest

KINDS = ("ld", "st", "atom", "red", "cp.async")


@dataclass(frozen=True)
class GlobalOp:
    name: str            # canonical spelling (reports, JSON)
    vendor: str          # "nvidia" / "amd"
    kind: str            # ld, st, atom, red, cp.async
    width: int           # bytes per lane
    path: str = ""       # ld: "" (cached, .ca), "nc" (read-only path), "cg", "cs", "lu", "cv";
    #                      st: "", "cg", "cs", "wt"; cp.async: "ca" / "cg"; atom/red: the operation
    sass: str = ""       # SASS opcode family nvcc emits (LDG, STG, ATOMG, RED, LDGSTS)
    min_arch: str = "sm_70"

    @property
    def family(self):
        """The group of ops one counting rule set covers: ld, ld.nc, ld.cg, st, atom, red, cp.async,
        cp.async.cg (LDGSTS.BYPASS, which skips L1 and counts differently)."""
        if self.kind == "ld" and self.path in ("nc", "cg"):
            return f"ld.{self.path}"
        return "cp.async.cg" if self.kind == "cp.async" and self.path == "cg" else self.kind

    @property
    def operands(self):
        """Values each lane sends with its address: 2 for atom.cas (compare and swap, PTX ISA
        9.7.13.5), else 1."""
        return 2 if self.kind == "atom" and self.path == "cas" else 1

    @property
    def metric_op(self):
        """The op suffix of the Nsight Compute metrics that count it (..._global_op_ld, ...).
        cp.async (LDGSTS) counts as a load: on the H200 (ncu 2025.3) its requests, sectors and
        wavefronts appear in the _op_ld counters (.ca also in _op_ldgsts_cache_access, .cg in
        neither of the ldgsts counters): tests/data/coalescing/coalesce_corpus.json."""
        return {"ld": "ld", "st": "st", "atom": "atom", "red": "red", "cp.async": "ld"}[self.kind]


_SEMANTICS = {"weak", "relaxed", "acquire", "release", "acq_rel", "volatile", "cta", "cluster", "gpu", "sys",
              "noftz", "mmio"}         # orderings and scopes: the access is the same (acq_rel: atom only)
_LD_PATHS = ("ca", "cg", "cs", "lu", "cv", "nc")
_ST_PATHS = ("wb", "cg", "cs", "wt")
ATOM_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")


def _ld_st(kind, width, path=""):
    label = "" if path in ("", "ca", "wb") else f".{path}"
    sass = SASS.opcode("global", kind)
    return GlobalOp(f"{kind}.global{label}.{WIDTH_NAME[width]}", "nvidia", kind, width,
                    "" if path in ("ca", "wb") else path, sass)


def _atomic(kind, operation, type_name):
    # f16/bf16 additions exist only as .noftz (PTX ISA 9.7.13.5): the canonical name keeps it
    noftz = ".noftz" if operation == "add" and type_name.startswith(("f16", "bf16")) else ""
    return GlobalOp(f"{kind}.global.{operation}{noftz}.{type_name}", "nvidia", kind,
                    TYPE_BYTES[type_name], operation, "ATOMG" if kind == "atom" else "REDG")


def _cp_async(cache, size):
    return GlobalOp(f"cp.async.{cache}.shared.global.{size}", "nvidia", "cp.async", size, cache,
                    "LDGSTS", "sm_80")


# AMD's width suffixes: the PTX-like ones (i8/i16 are AMD's s8/s16) and the word names
_AMD_WIDTH = {**{t: TYPE_BYTES[t] for t in ("u8", "b8", "u16", "b16", "b32", "b64", "b128")},
              "i8": TYPE_BYTES["s8"], "i16": TYPE_BYTES["s16"], "ubyte": 1, "sbyte": 1, "byte": 1,
              "ushort": 2, "sshort": 2, "short": 2, "dword": 4, "dwordx2": 8, "dwordx4": 16}


def _amd(unit, kind, width):
    suffix = {1: "u8", 2: "u16"}.get(width, f"b{8 * width}") if kind == "ld" else f"b{8 * width}"
    verb = "load" if kind == "ld" else "store"
    return GlobalOp(f"{unit}_{verb}_{suffix}", "amd", kind, width, min_arch="")


@functools.lru_cache(maxsize=None)
def catalog():
    """Canonical name -> GlobalOp: the ops the model has a name for (NVIDIA first)."""
    out = {}
    for kind, paths in (("ld", ("", "nc", "cg")), ("st", ("",))):
        for path in paths:
            for w in WIDTH_NAME:
                s = _ld_st(kind, w, path)
                out[s.name] = s
    for kind in ("atom", "red"):
        for operation, t in (("add", "u32"), ("add", "u64"), ("add", "f32"), ("add", "f16x2"),
                             ("exch", "b32"), ("cas", "b32"), ("cas", "b64")):
            if kind == "red" and operation in ("exch", "cas"):
                continue
            s = _atomic(kind, operation, t)
            out[s.name] = s
    for cache, sizes in (("ca", (4, 8, 16)), ("cg", (16,))):
        for size in sizes:
            s = _cp_async(cache, size)
            out[s.name] = s
    for unit in ("global", "buffer"):
        for kind in ("ld", "st"):
            for w in (1, 2, 4, 8, 16):
                s = _amd(unit, kind, w)
                out[s.name] = s
    return out


def names(vendor=None):
    return [n for n, s in catalog().items() if vendor is None or s.vendor == vendor]


# ---- parsing ----------------------------------------------------------------------------
def _hint(t):
    return t.startswith(("l1::", "l2::")) or t == "level::cache_hint"


def _parse_ld_st(kind, tokens):
    if "global" not in tokens:
        return None
    paths = _LD_PATHS if kind == "ld" else _ST_PATHS
    chosen = [t for t in tokens if t in paths]
    if len(chosen) > 1:
        return None
    rest = [t for t in tokens if t not in paths and not _hint(t)]
    w = access_bytes(rest, _SEMANTICS | {"global"})
    if w not in WIDTH_NAME:
        return None
    return _ld_st(kind, w, chosen[0] if chosen else "")


def _parse_atomic(kind, tokens):
    if "global" not in tokens:
        return None
    ops = [t for t in tokens if t in ATOM_OPS]
    types = [t for t in tokens if t in TYPE_BYTES]
    other = [t for t in tokens if t not in ATOM_OPS and t not in TYPE_BYTES and t != "global"
             and t not in _SEMANTICS and not _hint(t)]
    if len(ops) != 1 or len(types) != 1 or other or TYPE_BYTES[types[0]] not in (2, 4, 8, 16):
        return None
    if kind == "red" and ops[0] in ("exch", "cas"):
        return None
    if TYPE_BYTES[types[0]] == 2:
        raise LayoutsimError(f"{kind}.global 16-bit ({types[0]}) is no single access: ptxas 13 lowers it "
                             f"to a load and a compare-and-swap loop (SASS LDG + ATOMG.CAS, seen for "
                             f"sm_80 and sm_90); use the 32-bit .f16x2/.bf16x2 form")
    return _atomic(kind, ops[0], types[0])


def _parse_cp_async(tokens):
    caches = [t for t in tokens if t in ("ca", "cg")]
    sizes = [t for t in tokens if t in ("4", "8", "16")]
    other = [t for t in tokens if t not in ("ca", "cg", "4", "8", "16", "shared", "shared::cta",
                                            "global") and not _hint(t)]
    if len(caches) != 1 or len(sizes) != 1 or other or "global" not in tokens:
        return None
    if caches[0] == "cg" and sizes[0] != "16":
        raise LayoutsimError(f"cp.async.cg copies 16 bytes only (PTX ISA 9.7.9.25), not {sizes[0]}; "
                             f"use cp.async.ca for 4 or 8")
    return _cp_async(caches[0], int(sizes[0]))


def _parse_amd(text):
    m = re.match(r"^(global|buffer)_(load|store)_([a-z0-9]+)$", text)
    if not m or m.group(3) not in _AMD_WIDTH:
        return None
    kind = "ld" if m.group(2) == "load" else "st"
    suffix = m.group(3)
    if kind == "st" and suffix[0] in "ui" and suffix != "ushort":
        return None
    return _amd(m.group(1), kind, _AMD_WIDTH[suffix])


def parse(op):
    """GlobalOp for a user's spelling; a one-line error with close matches otherwise."""
    if isinstance(op, GlobalOp):
        return op
    text = str(op).strip().lower()
    spec = None
    if text.startswith(("global_", "buffer_")):
        spec = _parse_amd(text)
    elif text:
        tokens = text.split(".")
        head = tokens[0]
        if head in ("ld", "st"):
            spec = _parse_ld_st(head, tokens[1:])
        elif head in ("atom", "red"):
            spec = _parse_atomic(head, tokens[1:])
        elif head == "cp" and tokens[1:2] == ["async"]:
            if not any(t in ("4", "8", "16") for t in tokens):
                raise LayoutsimError(f"{op!r}: give the copy size as the last part, e.g. "
                                     f"cp.async.ca.shared.global.16 (4, 8 or 16 bytes)")
            spec = _parse_cp_async(tokens[2:])
    if spec is None:
        hint = ""
        if text.startswith(("ld.shared", "st.shared", "ldmatrix", "stmatrix", "ds_")):
            hint = " (a shared-memory op: use `layoutsim banks`)"
        choices = names()
        raise LayoutsimError(f"unknown global-memory op {str(op).strip()!r}{hint}"
                             f"{suggest(text, choices)}; valid: {', '.join(choices[:24])}, ... "
                             f"(`layoutsim coalesce --list-ops` lists all)")
    return spec
