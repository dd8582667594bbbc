"""Shared-memory / LDS access ops the bank model knows, and the spellings users paste.

An op is reduced to an `OpSpec`: vendor, direction (ld/st), bytes per lane access, and for
ldmatrix/stmatrix the number of 8x8 matrices (each one 8 row addresses of 16 bytes, taken from
the lanes the catalog's `addressing` names). Everything the bank model needs about an op is
here; the rules that turn addresses into wavefronts live in nvidia.py / amd.py.

Spellings accepted:
  PTX     ld.shared.b32, ld.shared::cta.u16, ld.shared.v2.b32 (= .b64, .v2.f32, ...),
          ld.shared.v4.b32 (= .b128, .v4.f32, .v2.b64, ...), st.shared.*, ld.volatile.shared.*
          ldmatrix.x4[.trans], ldmatrix.sync.aligned.m8n8.x4.shared.b16, stmatrix.x2, ...
  SASS    LDS, LDS.U8, LDS.S16, LDS.64, LDS.128, STS.*, LDSM.16.M88.4, LDSM.16.MT88.2, STSM.16.M88.4
  AMD     ds_read_b32/b64/b128, ds_write_b32/b64/b128, ds_load_*/ds_store_* (gfx11+ spellings),
          ds_read_u8/u16, ds_write_b8/b16
"""
import functools
import re
from dataclasses import dataclass

from .. import sass as SASS
from ..access import WIDTH_NAME, access_bytes, op_name
from ..errors import LayoutsimError, suggest


@dataclass(frozen=True)
class OpSpec:
    name: str            # canonical spelling (what reports and JSON print)
    vendor: str          # "nvidia" / "amd"
    direction: str       # "ld" / "st"
    width: int           # bytes per lane access (per row for ldmatrix/stmatrix: 16)
    matrices: int = 0    # ldmatrix/stmatrix: 1, 2 or 4; 0 for per-lane accesses
    trans: bool = False
    catalog: str = ""    # catalog name of ldmatrix/stmatrix (layoutsim.get)
    sass: str = ""       # the SASS instruction nvcc emits for it (what gpu_check looks for)

    @property
    def is_matrix(self):
        return self.matrices > 0

    @property
    def words(self):
        """32-bit words one lane (one row for matrix ops) touches."""
        return max(1, self.width // 4)

    def address_lanes(self):
        """Lanes whose addresses the instruction uses, in phase order ([matrices, 8] for matrix ops)."""
        if not self.is_matrix:
            return None
        from ..isa.registry import get
        return get(self.catalog).addressing.lanes


_AMD_NAME = {("ld", 1): "ds_read_u8", ("ld", 2): "ds_read_u16", ("ld", 4): "ds_read_b32",
             ("ld", 8): "ds_read_b64", ("ld", 16): "ds_read_b128",
             ("st", 1): "ds_write_b8", ("st", 2): "ds_write_b16", ("st", 4): "ds_write_b32",
             ("st", 8): "ds_write_b64", ("st", 16): "ds_write_b128"}


def _nv(direction, width):
    name = op_name(direction, "shared", width)
    return OpSpec(name, "nvidia", direction, width, sass=SASS.shared(direction, width))


def _matrix(direction, count, trans):
    op = "ldmatrix" if direction == "ld" else "stmatrix"
    t = ".trans" if trans else ""
    return OpSpec(f"{op}.x{count}{t}", "nvidia", direction, 16, count, trans,
                  catalog=f"{op}.sync.aligned.m8n8.x{count}{t}.shared.b16", sass=SASS.matrix(direction, count, trans))


def access_name(vendor, direction, width, space="shared"):
    """How a program spells a per-lane access of `width` bytes (what the simulator's trace shows):
    PTX ld/st.shared|global with .u8/.u16 for sub-word loads, .b8/.b16 stores, .b32, .v2.b32,
    .v4.b32; AMD ds_read/ds_write (LDS) or global_load/global_store with _u8/_u16 sub-word loads."""
    if vendor == "amd":
        name = _AMD_NAME[(direction, width)]
        return name if space == "shared" else name.replace("ds_read", "global_load").replace("ds_write", "global_store")
    t = WIDTH_NAME[width]
    if direction == "ld" and width < 4:
        t = "u" + t[1:]                    # PTX loads zero-extend: ld.shared.u8
    return f"{direction}.{space}.{t}"


@functools.lru_cache(maxsize=None)
def catalog():
    """Canonical name -> OpSpec, NVIDIA first."""
    out = {}
    for d in ("ld", "st"):
        for w in (1, 2, 4, 8, 16):
            s = _nv(d, w)
            out[s.name] = s
    for d in ("ld", "st"):
        for n in (1, 2, 4):
            for t in (False, True):
                s = _matrix(d, n, t)
                out[s.name] = s
    for (d, w), name in _AMD_NAME.items():
        out[name] = OpSpec(name, "amd", d, w)
    return out


def names(vendor=None):
    return [n for n, s in catalog().items() if vendor is None or s.vendor == vendor]


# ---- parsing ----------------------------------------------------------------------------
_FILLER = {"shared", "shared::cta", "volatile", "relaxed", "weak", "cta", "sync", "aligned",
           "m8n8", "b16", "cs", "ca", "cg", "lu", "cv", "wb", "wt"}


def _parse_ptx_lsu(tokens):
    head = tokens[0]
    if "shared" not in tokens and "shared::cta" not in tokens:
        return None
    w = access_bytes(tokens[1:], _FILLER)
    return _nv(head, w) if w in WIDTH_NAME else None


def _parse_ptx_matrix(tokens):
    head = tokens[0]
    count, trans = None, False
    for t in tokens[1:]:
        if t in ("x1", "x2", "x4"):
            count = int(t[1])
        elif t == "trans":
            trans = True
        elif t in _FILLER:
            continue
        else:
            return None
    if count is None:
        return None
    return _matrix("ld" if head == "ldmatrix" else "st", count, trans)


def _parse_sass(text):
    lsu, mat = SASS.parse_shared(text), SASS.parse_matrix(text)
    return _nv(*lsu) if lsu else (_matrix(*mat) if mat else None)


def _parse_amd(text):
    n = text.lower()
    m = re.match(r"^ds_(read|write|load|store)_([bui])(8|16|32|64|128)$", n)
    if not m:
        return None
    d = "ld" if m.group(1) in ("read", "load") else "st"
    w = int(m.group(3)) // 8
    ok = ("u", "i") if (d == "ld" and w < 4) else ("b",)   # ds_read_u8/i16, ds_write_b8, ds_read_b32
    if m.group(2) not in ok:
        return None
    return catalog().get(_AMD_NAME.get((d, w), ""))


def parse(op):
    """OpSpec for a user's spelling; a one-line error with close matches otherwise."""
    if isinstance(op, OpSpec):
        return op
    text = str(op).strip()
    if not text:
        raise LayoutsimError("empty op name; valid: " + ", ".join(names()))
    spec = None
    if text.lower().startswith("ds_"):
        spec = _parse_amd(text)
    elif SASS.is_shared_spelling(text):
        spec = _parse_sass(text)
    else:
        tokens = text.lower().split(".")
        head = tokens[0]
        if head in ("ld", "st"):
            spec = _parse_ptx_lsu(tokens)
        elif head in ("ldmatrix", "stmatrix"):
            spec = _parse_ptx_matrix(tokens)
    if spec is None:
        choices = names()
        raise LayoutsimError(f"unknown shared-memory op {text!r}{suggest(text.lower(), choices)}; "
                             f"valid: {', '.join(choices)} (also SASS LDS.128, LDSM.16.M88.4, ...)")
    return spec
