"""What every per-lane memory access model shares: PTX width spellings, lane masks, offsets.

The shared-memory bank model (layoutsim.banks) and the global-memory coalescing model
(layoutsim.memory) both take a warp's access as an op spelled the PTX way, 32 per-lane byte
offsets (or an expression in `lane`) and a mask of active lanes. This module is the one place
that knows
  * how many bytes a PTX type suffix moves (`.u8` 1, `.f16x2` 4, `.b128` 16, ...) and how a
    vector prefix multiplies it (`.v2`, `.v4`, `.v8`): PTX ISA 5.2 "Fundamental types" and
    9.7.9.8/9 (`ld`/`st` `.vec`); an element format's width is formats.py's;
  * how a lane mask is given (None = all lanes, a 32-bit integer, or 32 booleans);
  * how 32 offsets are given (a list with None for "no address", a 1-D array, or an expression);
  * how a set of lanes is written in messages (`lane_ranges`: "0-7,16").
"""
import numpy as np

from .errors import LayoutsimError
from .formats import FORMATS

LANES = 32
MAX_OFFSET = 1 << 48          # the expression language's bound too (address/expr.py MAX_ABS)



def _type_bytes(name):
    """Bytes of one PTX type suffix: an element format's width is formats.py's; the bit and
    integer types formats does not hold spell theirs in bits (.u16, .s64, .b128); .f16x2 and
    .bf16x2 are two halves."""
    if name in FORMATS:
        return FORMATS[name].bits // 8
    if name.endswith("x2"):
        return 2 * _type_bytes(name[:-2])
    return int(name[1:]) // 8


TYPE_BYTES = {t: _type_bytes(t) for t in (
    "b8", "u8", "s8", "b16", "u16", "s16", "f16", "bf16", "f16x2", "bf16x2", "b32", "u32", "s32",
    "f32", "b64", "u64", "s64", "f64", "b128")}
VECTORS = {"v2": 2, "v4": 4, "v8": 8}
# The canonical spelling of a per-lane access of each width (reports and JSON print it):
# 8/16-bit as .b8/.b16, 64/128-bit as vectors of .b32, the form nvcc's inline PTX uses.
WIDTH_NAME = {1: "b8", 2: "b16", 4: "b32", 8: "v2.b32", 16: "v4.b32"}


def op_name(direction, space, width, path=""):
    """The canonical PTX spelling of a per-lane ld/st of `width` bytes in `space` (the names the
    bank and coalescing models list): ld.shared.b8, st.shared.v4.b32, ld.global.nc.v2.b32."""
    if width not in WIDTH_NAME:
        raise LayoutsimError(f"a {width}-byte {direction}.{space} per lane has no single-access spelling: "
                             f"valid widths {', '.join(map(str, WIDTH_NAME))}")
    return f"{direction}.{space}{'.' + path if path else ''}.{WIDTH_NAME[width]}"


def access_bytes(tokens, ignore=()):
    """Bytes per lane for the dot-separated qualifiers of a PTX load/store after its head
    (['shared', 'v4', 'b32'] -> 16), skipping the words in `ignore`; None when a token is
    neither a type, a vector count nor ignorable, or when no type is given."""
    vec, elem = 1, None
    for t in tokens:
        if t in VECTORS:
            vec = VECTORS[t]
        elif t in TYPE_BYTES:
            elem = TYPE_BYTES[t]
        elif t not in ignore:
            return None
    return None if elem is None else vec * elem


def lane_mask(active, width=LANES):
    """bool[width] from None (all lanes), an int bit mask (bit L = lane L), or one boolean per
    lane; width is the warp's (32; a CDNA wave64 LDS access: 64)."""
    if active is None:
        return np.ones(width, bool)
    if isinstance(active, (int, np.integer)) and not isinstance(active, bool):
        m = int(active)
        if not 0 <= m < (1 << width):
            raise LayoutsimError(f"active mask {m:#x} does not fit {width} lanes (0 .. {(1 << width) - 1:#x})")
        return np.array([(m >> i) & 1 for i in range(width)], bool)
    arr = np.asarray(active)
    if arr.ndim != 1 or arr.shape[0] != width:
        raise LayoutsimError(f"active: give a {width}-bit lane mask or {width} booleans (one per lane), "
                             f"not {arr.shape[0] if arr.ndim == 1 else arr.shape} values")
    if arr.dtype != bool and not np.isin(arr, (0, 1)).all():
        raise LayoutsimError(f"active: the {width} values must be booleans (or 0/1), one per lane")
    return arr.astype(bool)


def lane_masks(active, n):
    """uint64[N] lane masks for N warp accesses from None (all lanes), N integer masks or
    [N, 32] booleans."""
    if active is None:
        return np.full(n, 0xFFFFFFFF, np.uint64)
    a = np.asarray(active)
    if a.ndim == 1 and a.shape[0] == n and a.dtype != bool:
        if a.dtype.kind not in "iu" or (a.dtype.kind == "i" and np.any(a < 0)) or np.any(a.astype(np.uint64) >> 32):
            raise LayoutsimError("active masks must be 32-bit lane masks (0 .. 0xffffffff)")
        return a.astype(np.uint64)
    if a.shape == (n, LANES):
        return (a.astype(np.uint64) << np.arange(LANES, dtype=np.uint64)).sum(axis=1, dtype=np.uint64)
    raise LayoutsimError(f"active: give {n} lane masks or a [{n}, 32] boolean array, not shape {a.shape}")


def lane_ranges(lanes):
    """Sorted lanes as runs for messages and reports: [0, 1, 2, 3, 8] -> "0-3,8"; none: "-"."""
    lanes = list(lanes)
    if not lanes:
        return "-"
    runs, start = [], lanes[0]
    for a, b in zip(lanes, lanes[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a != start else f"{a}")
            start = b
    return ",".join(runs)


def mask_bits(masks):
    """bool[N, 32] lanes of N uint64 lane masks."""
    masks = np.asarray(masks, np.uint64)
    if masks.size and (masks == 0xFFFFFFFF).all():
        return np.ones((masks.shape[0], LANES), bool)
    bits = np.unpackbits(masks.astype("<u4").view(np.uint8).reshape(-1, 4), axis=1, bitorder="little")
    return bits.astype(bool)


def batch_offsets(offsets):
    """int64[N, 32] C-contiguous byte offsets of N warp accesses, or a one-line error."""
    off = np.asarray(offsets)
    if off.ndim != 2 or off.shape[1] != LANES:
        raise LayoutsimError(f"batch offsets: an [N, 32] array of byte offsets (one row per warp "
                             f"access), not shape {off.shape}")
    if off.dtype.kind not in "iu":
        raise LayoutsimError(f"batch offsets must be integers, not {off.dtype}")
    if off.dtype == np.uint64 and off.size and int(off.max()) > MAX_OFFSET:
        raise LayoutsimError(f"batch offsets beyond 2**48: {int(off.max())}")
    return np.ascontiguousarray(off, dtype=np.int64)


def parse_rule_text(text, base):
    """'key=value,key=value' -> a copy of the frozen dataclass `base` with those fields set (the
    rule sets of the bank and coalescing models); digits become ints for integer fields."""
    from dataclasses import fields, replace
    from .errors import suggest
    names = [f.name for f in fields(base)]
    kw = {}
    for item in str(text).split(","):
        if not item.strip():
            continue
        if "=" not in item:
            raise LayoutsimError(f"rules: write KEY=VALUE,... with keys {', '.join(names)}, not {item!r}")
        k, v = (x.strip() for x in item.split("=", 1))
        if k not in names:
            raise LayoutsimError(f"unknown rule {k!r}{suggest(k, names)}; valid: {', '.join(names)}")
        kw[k] = int(v) if isinstance(getattr(base, k), int) and v.isdigit() else v
    try:
        return replace(base, **kw)
    except ValueError as e:
        raise LayoutsimError(str(e)) from None


def lane_values(offsets, what, variables=None, lanes=None, width=LANES):
    """(int64[width] byte offsets, bool[width] lanes that gave one) from an expression in `lane`, a
    list (None = the lane gives no address) or a 1-D array. `lanes` lists the lanes that a
    shorter list stands for (ldmatrix's row-address lanes); `what` names the op in errors;
    `width` is the warp's (32; a CDNA wave64 LDS access: 64)."""
    if isinstance(offsets, str):
        from .address import lane_offsets
        return lane_offsets(offsets, lanes=width, **(variables or {})), np.ones(width, bool)
    if isinstance(offsets, np.ndarray):
        if offsets.ndim != 1:
            raise LayoutsimError(f"offsets: one warp takes a 1-D list of {width} byte offsets, not shape {offsets.shape}")
        vals = offsets.tolist()
    else:
        try:
            vals = list(offsets)
        except TypeError:
            raise LayoutsimError(f"offsets: give {width} byte offsets (a list) or an expression in lane, "
                                 f"not {offsets!r}") from None
    n = len(vals)
    if n != width and not (lanes is not None and n == len(lanes)):
        extra = f" (or {len(lanes)}, one per row address)" if lanes is not None else ""
        raise LayoutsimError(f"{what} takes one offset per lane: {width} offsets{extra}, not {n}")
    out = np.zeros(width, np.int64)
    given = np.zeros(width, bool)
    for i, v in enumerate(vals):
        lane = lanes[i] if n != width else i
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            if isinstance(v, (float, np.floating)) and float(v).is_integer():
                v = int(v)
            else:
                raise LayoutsimError(f"lane {lane}: offset {v!r} is not an integer byte offset")
        if abs(int(v)) > MAX_OFFSET:
            raise LayoutsimError(f"lane {lane}: offset {int(v)} is out of range (beyond 2**48)")
        out[lane] = int(v)
        given[lane] = True
    return out, given
