"""Tensor maps (CUtensorMap) for cp.async.bulk.tensor: the argument a launch takes, the opaque
handle the kernel receives, and the global side of a copy.

A kernel receives a tiled tensor map either by value (`const __grid_constant__ CUtensorMap m`,
a `.param .align 64|128 .b8 m[128]` parameter) or through a pointer to one in global memory.
Either way the launch is given a `TensorMapArg` with the fields of cuTensorMapEncodeTiled
(cuda.h; interleave none, element strides 1):

    TensorMapArg(buffer=0, dims=(K, M), box=(64, 64), swizzle="128B")     # dense strides
    TensorMapArg(buffer=2, dims=(64, 100), strides_bytes=(256,), box=(64, 16), elem_bytes=2)

`buffer` is the index of the array argument holding the global tensor, or the tensor itself (a
numpy array: the launch places it in global memory, and Run.buffers[i] of the map's argument is
its final content, as for an array argument); its address plus `offset` bytes is the
globalAddress. `dtype` is the map's CUtensorMapDataType by its PTX name (ELEMTYPES: "f32",
"bf16", ...), by default the buffer's numpy dtype; only cp.reduce.async.bulk.tensor reads it. dims and box are innermost first; strides_bytes are the
rank-1 strides of dimensions 1.. in bytes (default: dense). The executor writes a 128-byte
opaque handle where the parameter (or, for a pointer parameter, a 128-byte global buffer it
allocates) holds the map, and cp.async.bulk.tensor resolves the map's address to it by content,
so a kernel may pass the map's address around as it likes.

A kernel may also build a map itself (Triton's `tl.make_tensor_descriptor`): it fills 128 bytes
of shared (or global) memory with zeros, sets each field with `tensormap.replace.tile.<field>`
(PTX ISA 9.7.9.29: new_val as the ISA encodes it: the rank minus 1, the element type as its
table numbers it, .u8 0 ... .tf32.ftz 12) and copies the object to global memory with
`tensormap.cp_fenceproxy`. The executor keeps such a map's fields in its own encoding of those
128 bytes (DEVICE_MAGIC, then the fields; the GPU's layout of a CUtensorMap is not documented), so
a copy of the bytes is a copy of the map, and cp.async.bulk.tensor reads it as it reads a
TensorMapArg. Replacing a field of a map the launch was given is refused, as are the packed
sub-byte element types, interleaved layouts, element strides other than 1 and the NaN fill.

The shared-memory side (where each box element lands, the innermost-coordinate rule) is
layoutsim.smem's (TensorMap, box_addresses, box_coords, coords_problem), measured on the H200.
The global side is cuda.h's: element (x0, x1, ...) is at globalAddress + x0 * e + sum(xi *
strides[i-1]); box elements outside the tensor read as zero (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
and are not written by a store. The NaN fill, other element strides and interleaved layouts are
refused, not guessed.
"""
import struct
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import LayoutsimError
from .state import GLOBAL_BASE, PARAM_WINDOW, WINDOW, Fault


def _smem():
    """layoutsim.smem (swizzle modes, TMA boxes: ~10 ms to import), loaded by the first tensor map
    a launch resolves, not by every `ptx run` (issue 26)."""
    from .. import smem
    return smem


MAP_BYTES = 128
MAP_ALIGN = 64                     # PTX ISA: a tensor map is 64-byte aligned (CUDA 13 aligns it to 128)
_MAGIC = b"layoutsimTMAP\x00\x01\x00"
STRIDE_LIMIT = 1 << 40             # cuTensorMapEncodeTiled: strides < 2^40, multiples of 16
DIM_LIMIT = 1 << 32
L2_PROMOTION = {0: 0, "none": 0, 1: 1, "64B": 1, 2: 2, "128B": 2, 3: 3, "256B": 3}
# cuTensorMapEncodeTiled's CUtensorMapSwizzle (cuda.h) -> TensorMapArg.swizzle: what a captured
# encode call (gpu_check/realworld/hopper_replay.py) and Triton's launcher (layoutsim/triton/descriptors.py) pass
ENCODE_SWIZZLE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}


# cuTensorMapEncodeTiled's CUtensorMapDataType, by the names PTX ISA 9.7.9.29 (tensormap.replace's
# .elemtype table) gives them; only cp.reduce.async.bulk.tensor reads it (the arithmetic of its .redOp)
ELEMTYPES = ("u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f32.ftz", "f64", "bf16", "tf32", "tf32.ftz")
_NUMPY_ELEMTYPE = {"uint8": "u8", "uint16": "u16", "uint32": "u32", "int32": "s32", "uint64": "u64",
                   "int64": "s64", "float16": "f16", "float32": "f32", "float64": "f64"}


@dataclass(frozen=True, eq=False)
class TensorMapArg:
    """A tiled CUtensorMap argument, as cuTensorMapEncodeTiled takes it (see the module docstring)."""
    buffer: object                   # index of the array argument holding the tensor, or the array
    dims: tuple
    box: tuple
    swizzle: str = "none"
    elem_bytes: object = None        # default: the buffer's element size
    strides_bytes: object = None     # default: dense
    offset: int = 0                  # bytes from the buffer's start to globalAddress
    element_strides: object = None   # elementStrides: only all ones is modelled
    interleave: str = "none"
    l2_promotion: object = 0         # has no effect on values
    oob_fill: object = 0             # 0 / "none": zeros; the NaN request is not modelled
    dtype: object = None             # the element type (ELEMTYPES); default: the buffer's numpy dtype


def dense_strides(dims, e):
    """cuTensorMapEncodeTiled's globalStrides of a dense tensor (dimension 1 on), in bytes."""
    out, acc = [], int(e)
    for d in dims[:-1]:
        acc *= int(d)
        out.append(acc)
    return out


def _ints(value, what, where):
    try:
        t = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        raise LayoutsimError(f"{where}: {what} {value!r}: give a tuple of integers") from None
    if any(isinstance(v, bool) for v in value):
        raise LayoutsimError(f"{where}: {what} {value!r}: give a tuple of integers")
    return t


class GlobalMap:
    """A tensor map resolved against its launch: the smem.TensorMap (box, element bytes, swizzle),
    the tensor's generic base address, dims and strides (stride 0 is the element size)."""

    def __init__(self, arg, where, buf, address, index=None):
        self.arg, self.where, self.index = arg, where, index
        e = arg.elem_bytes if arg.elem_bytes is not None else buf.dtype.itemsize
        dims = _ints(arg.dims, "dims", where)
        box = _ints(arg.box, "box", where)
        if not 1 <= len(dims) <= _smem().tma.MAX_RANK or len(box) != len(dims):
            raise LayoutsimError(f"{where}: dims {dims} and box {box}: give 1 to {_smem().tma.MAX_RANK} "
                                 f"dimensions each, innermost first, as many box as tensor dimensions")
        try:
            self.tmap = _smem().TensorMap(box, e, arg.swizzle)
        except LayoutsimError as err:
            raise LayoutsimError(f"{where}: {err}") from None
        bad = [d for d in dims if not 1 <= d <= DIM_LIMIT]
        if bad:
            raise LayoutsimError(f"{where}: dims {dims}: every dimension must be 1..2^32 (cuTensorMapEncodeTiled)")
        strides = dense_strides(dims, e) if arg.strides_bytes is None else list(_ints(arg.strides_bytes,
                                                                                     "strides_bytes", where))
        # cuda.h: each a multiple of 16 below 2^40; 0 is one (CUTLASS 3.x encodes a batch
        # dimension of extent 1 with stride 0, and the H200 takes it)
        if len(strides) != len(dims) - 1 or any(s % 16 or not 0 <= s < STRIDE_LIMIT for s in strides):
            raise LayoutsimError(f"{where}: strides_bytes {tuple(strides)}: give {len(dims) - 1} strides "
                                 f"(dimensions 1..{len(dims) - 1}, bytes), multiples of 16 below 2^40")
        if arg.element_strides is not None and any(int(s) != 1 for s in arg.element_strides):
            raise LayoutsimError(f"{where}: element_strides {tuple(arg.element_strides)}: only 1 is "
                                 f"modelled (the shared-memory layout of strided boxes was not measured)")
        if str(arg.interleave).lower() not in ("none", "0"):
            raise LayoutsimError(f"{where}: interleave {arg.interleave!r}: only none is modelled")
        if arg.oob_fill not in (0, "none"):
            raise LayoutsimError(f"{where}: oob_fill {arg.oob_fill!r}: only 0 (none: zeros) is modelled; "
                                 f"the NaN fill (NAN_REQUEST_ZERO_FMA) bits were not measured")
        if arg.l2_promotion not in L2_PROMOTION:
            raise LayoutsimError(f"{where}: l2_promotion {arg.l2_promotion!r}: valid 0-3 or none, 64B, "
                                 f"128B, 256B")
        off = arg.offset
        if isinstance(off, bool) or not isinstance(off, (int, np.integer)) or off < 0 or off % 16:
            raise LayoutsimError(f"{where}: offset {off!r}: globalAddress must be 16-byte aligned "
                                 f"(a multiple of 16 bytes into the buffer)")
        span = int(off) + (dims[0] - 1) * e + e + sum((d - 1) * s for d, s in zip(dims[1:], strides))
        if span > buf.nbytes:
            raise LayoutsimError(f"{where}: the tensor (dims {dims}, strides {tuple(strides)} bytes, "
                                 f"{e}-byte elements, offset {off}) spans {span} bytes; its buffer "
                                 f"holds {buf.nbytes}")
        self.e, self.dims = e, np.asarray(dims, np.int64)
        self.dtype = _elemtype(arg.dtype, buf, e, where)
        self.strides = np.asarray([e] + strides, np.int64)
        self.base = int(address) + int(off)
        self.box_bytes = int(np.prod(box, dtype=np.int64)) * e      # what complete_tx credits

    def elements(self, coords):
        """Heap offsets [*box[::-1]] of the box elements starting at `coords` (innermost first),
        and which of them lie inside the tensor."""
        c = _smem().box_coords(self.tmap, coords)[::-1]             # [rank, *box[::-1]], dim 0 first
        inside = np.ones(c.shape[1:], bool)
        off = np.zeros(c.shape[1:], np.int64)
        for i in range(len(self.dims)):
            inside &= (c[i] >= 0) & (c[i] < self.dims[i])
            off += c[i] * self.strides[i]
        return np.where(inside, off + (self.base - GLOBAL_BASE), 0), inside

    def box_bytes_at(self, coords):
        """elements() at byte level, from offsets kept per box and strides: (heap byte offsets of the
        box starting at `coords`, flat, elements()' order with each element's bytes in order; which
        elements lie inside the tensor, bool [*box[::-1]], or None when all do). Offsets of elements
        outside are meaningless. None where a stride or offset leaves the checked ranges (elements())."""
        st, box = self.strides.tolist(), self.tmap.box
        shift = self.base - GLOBAL_BASE + sum(c * s for c, s in zip(coords, st))
        if max(st) >= STRIDE_LIMIT or not -(1 << 62) <= shift < 1 << 62:
            return None
        rel = _relative_bytes(box, self.e, tuple(st))
        dims = self.dims.tolist()
        if all(0 <= c and c + b <= d for c, b, d in zip(coords, box, dims)):
            return rel + shift, None
        inside = np.ones((), bool)
        for c, b, d in zip(coords[::-1], box[::-1], dims[::-1]):       # outermost first
            v = c + np.arange(b)
            inside = inside[..., None] & ((v >= 0) & (v < d))
        return (rel + shift if inside.any() else rel), inside

    def to_json(self):
        """What the map stands for: cuTensorMapEncodeTiled's arguments (buffer "own": its own array)."""
        a = self.arg
        return {"buffer": "own" if isinstance(a.buffer, np.ndarray) else int(a.buffer),
                "dims": [int(d) for d in self.dims], "box": list(self.tmap.box), "swizzle": self.tmap.swizzle,
                "elem_bytes": self.e, "strides_bytes": [int(s) for s in self.strides[1:]], "offset": int(a.offset)}


def _elemtype(dtype, buf, e, where):
    """The map's element type (ELEMTYPES): the one given, else the buffer's numpy dtype when its
    size is the element size; None when neither says (a reduction then refuses the map)."""
    if dtype is None:
        name = _NUMPY_ELEMTYPE.get(buf.dtype.name) if buf.dtype.itemsize == e else None
        return name
    if dtype not in ELEMTYPES:
        raise LayoutsimError(f"{where}: dtype {dtype!r}: valid {', '.join(ELEMTYPES)}")
    if ELEMTYPE_BYTES[ELEMTYPES.index(dtype)] != e:
        raise LayoutsimError(f"{where}: dtype {dtype} is {ELEMTYPE_BYTES[ELEMTYPES.index(dtype)]} bytes, the "
                             f"elements {e}")
    return dtype


@lru_cache(maxsize=32)                                         # boxes x strides: a launch has a few
def _relative_bytes(box, e, strides):
    """GlobalMap.box_bytes_at's offsets for the box at the tensor's origin (read-only; a k loop reuses them)."""
    idx = np.indices(box[::-1], dtype=np.int64)[::-1]           # idx[i]: the index along dimension i
    rel = sum(idx[i] * strides[i] for i in range(len(box)))
    out = (rel[..., None] + np.arange(e)).reshape(-1)
    out.flags.writeable = False
    return out


def handle(index):
    """The 128 opaque bytes the kernel receives for tensor map `index` of its launch."""
    return _MAGIC + struct.pack("<II", index, index ^ 0xFFFFFFFF) + bytes(MAP_BYTES - len(_MAGIC) - 8)


def _index(raw):
    if raw[:len(_MAGIC)] != _MAGIC:
        return None
    i, j = struct.unpack_from("<II", raw, len(_MAGIC))
    return i if i ^ j == 0xFFFFFFFF else None


def resolve(bt, address, thread, what):
    """The GlobalMap a kernel names by the generic (or kernel-parameter) address of its map."""
    a = int(address)
    if a % MAP_ALIGN:
        raise Fault(thread, a, f"{what}: the tensor map address {a:#x} is not {MAP_ALIGN}-byte aligned",
                    "misaligned")
    if a & ~(WINDOW - 1) == PARAM_WINDOW:
        off = a - PARAM_WINDOW
        kp = bt.launch.kparams
        raw = bytes(kp[off:off + MAP_BYTES]) if 0 <= off <= len(kp) - MAP_BYTES else b""
    else:
        bt.heap.check(np.array([a], np.int64), MAP_BYTES, np.array([thread]))
        raw = bytes(bt.heap.read(a, MAP_BYTES))
    if raw[:len(DEVICE_MAGIC)] == DEVICE_MAGIC:
        gm = _device_map(raw, what)
        bt.heap.check(np.array([gm.base], np.int64), gm.span, np.array([thread]))   # the tensor's bytes
        return gm
    i = _index(raw)
    maps = bt.launch.tensor_maps
    if i is None or i >= len(maps):
        raise Fault(thread, a, f"{what}: address {a:#x} does not hold a tensor map (pass a "
                               f"layoutsim.ptx.TensorMapArg for the kernel's CUtensorMap)", "invalid_tensor_map")
    return maps[i]


# ---- maps built by the kernel (tensormap.replace; see the module docstring) --------------------------
@lru_cache(maxsize=64)                                         # a k loop copies through a few maps
def _device_map(raw, what):
    """The DeviceMap of 128 map bytes, kept per content (the map's fields are its bytes)."""
    return DeviceMap(raw, what)


DEVICE_MAGIC = b"lsTMAPd\x01"
# PTX ISA 9.7.9.29, the element types tensormap.replace.elemtype numbers: their sizes in bytes
ELEMTYPE_BYTES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 4, 9: 8, 10: 2, 11: 4, 12: 4}
SWIZZLE_MODE = {0: "none", 1: "32B", 2: "64B", 3: "128B"}
# field: (byte offset in our encoding, struct format, how many (ord 0..n-1), or 1 without ord)
FIELDS = {"global_address": (8, "<Q", 1), "rank": (16, "<I", 1), "box_dim": (20, "<I", 5),
          "global_dim": (40, "<I", 5), "global_stride": (64, "<Q", 4), "element_stride": (96, "<I", 5),
          "elemtype": (116, "<I", 1), "interleave_layout": (120, "<I", 1), "swizzle_mode": (124, "<H", 1),
          "swizzle_atomicity": (126, "B", 1), "fill_mode": (127, "B", 1)}


def replace(raw, field, ordinal, value, where):
    """The 128 bytes of a kernel-built map after `tensormap.replace.tile.<field>` (ordinal: the
    dimension for box_dim/global_dim/global_stride/element_stride, else None)."""
    raw = bytes(raw)
    if _index(raw) is not None:
        raise LayoutsimError(f"{where}: replacing a field of a tensor map the launch was given (a "
                             f"TensorMapArg) is not modelled; build the map in the kernel or pass it whole")
    if raw[:len(DEVICE_MAGIC)] != DEVICE_MAGIC:    # a fresh object (the kernel zero-filled it)
        raw = DEVICE_MAGIC + bytes(MAP_BYTES - len(DEVICE_MAGIC))
    off, fmt, n = FIELDS[field]
    size = struct.calcsize(fmt)
    if (ordinal is None) != (n == 1) or (ordinal is not None and not 0 <= ordinal < n):
        raise LayoutsimError(f"{where}: .{field} takes {'an ordinal 0..' + str(n - 1) if n > 1 else 'no ordinal'}")
    at = off + (ordinal or 0) * size
    v = int(value) & ((1 << (8 * size)) - 1)
    return raw[:at] + struct.pack(fmt, v) + raw[at + size:]


def _fields(raw):
    return {f: [struct.unpack_from(fmt, raw, off + i * struct.calcsize(fmt))[0] for i in range(n)]
            for f, (off, fmt, n) in FIELDS.items()}


class DeviceMap(GlobalMap):
    """A map the kernel built (tensormap.replace), resolved as GlobalMap resolves a TensorMapArg."""

    def __init__(self, raw, where):                 # noqa: the fields come from the bytes, not an arg
        f = _fields(raw)
        rank = f["rank"][0] + 1
        code = f["elemtype"][0]
        bad = None
        if not 1 <= rank <= _smem().tma.MAX_RANK:
            bad = f"rank {rank}"
        elif code not in ELEMTYPE_BYTES:
            bad = f"element type {code} (the packed sub-byte types are not modelled)"
        elif f["swizzle_mode"][0] not in SWIZZLE_MODE:
            bad = f"swizzle mode {f['swizzle_mode'][0]}"
        elif f["interleave_layout"][0] or f["fill_mode"][0] or f["swizzle_atomicity"][0]:
            bad = "an interleaved layout, the NaN fill or a swizzle atomicity (only 0 is modelled)"
        elif any(s != 1 for s in f["element_stride"][:rank]):
            bad = f"element strides {f['element_stride'][:rank]} (only 1 is modelled)"
        if bad:
            raise LayoutsimError(f"{where}: the kernel-built tensor map has {bad}")
        self.arg, self.where, self.index = None, where, None
        e = ELEMTYPE_BYTES[code]
        self.dtype = ELEMTYPES[code]
        try:
            self.tmap = _smem().TensorMap(tuple(f["box_dim"][:rank]), e, SWIZZLE_MODE[f["swizzle_mode"][0]])
        except LayoutsimError as err:
            raise LayoutsimError(f"{where}: the kernel-built tensor map: {err}") from None
        self.e, self.dims = e, np.asarray(f["global_dim"][:rank], np.int64)
        self.strides = np.asarray([e] + f["global_stride"][:rank - 1], np.int64)
        self.base = int(f["global_address"][0])
        self.box_bytes = int(np.prod(self.tmap.box, dtype=np.int64)) * e
        self.span = int(e + sum((d - 1) * s for d, s in zip(self.dims, self.strides)))

    def to_json(self):
        return {"built_by": "kernel", "dims": [int(d) for d in self.dims], "box": list(self.tmap.box),
                "swizzle": self.tmap.swizzle, "elem_bytes": self.e,
                "strides_bytes": [int(s) for s in self.strides[1:]], "address": self.base}
