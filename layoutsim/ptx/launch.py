"""A launch: grid and block, the arguments checked against the kernel's parameters, global
memory laid out, and the CTAs run batch by batch through the scheduler.

Arguments (issue 10's interface): a numpy array is a global buffer (the kernel receives its
address; a pointer parameter is 64-bit); a numpy scalar (np.int32, np.float32, np.uint64, ...)
or a Python number is passed by value and must fit the parameter's type; `bytes` fill a
by-value struct parameter (`.param .align A .b8 name[N]`) of exactly that size; a
`TensorMapArg` (tensormap.py) is a CUtensorMap, by value for a 128-byte parameter (or the first
128 bytes of a larger multiple of 128, the rest 0: CuTe's TMA Copy_Atom) or, for a
64-bit parameter, in a 128-byte global buffer the launch allocates (the kernel gets its address);
its tensor is another array argument, or an array of its own (then Run.buffers[i] is that
tensor's final content). A `TextureArg` / `SurfaceArg` (texture.py, surface.py) is a texture or
surface object for a 64-bit parameter (Run.buffers[i] of a surface is its final content). A
`StructArg` is a by-value struct that holds device pointers (a CuTe Tensor passed by value: its
pointer, then its layout's dynamic ints): its bytes, with the address of each of its own arrays
written at the given offset; Run.buffers[i] is the tuple of those arrays' final contents, in the
order given (an array given at several offsets is one buffer, listed once). A pointer (offset,
array, byte) points `byte` bytes into its array (a CUB temporary storage carved into parts), and
one array object named by several StructArg pointers of a launch is one allocation (the segment
offsets d_offsets and d_offsets + 1 of a segmented reduction). Its `maps` are
CUtensorMaps inside the struct (a CUTLASS 3.x kernel's Params holds its TMA descriptors): each
a TensorMapArg at a 64-byte aligned offset, written as the same opaque handle as a by-value map;
a map's buffer is the index of an array argument, one of the struct's own arrays (the same numpy
object: its tensor is that array) or an array of its own (then its final content follows the
pointers' in Run.buffers[i]).
"""
from dataclasses import dataclass

import math
from types import SimpleNamespace

import numpy as np

from .. import archs
from ..errors import LayoutsimError
from . import cluster as CL
from . import state as S
from . import surface as SF
from . import tensormap as TM
from . import texture as TX
from .malloc import HEAP_BYTES, DeviceHeap
from .samples import Samples

MAX_BATCH_THREADS = 1 << 16
# The model's global memory (every array argument and .global/.const variable) may hold at most
# this: it holds a copy of each array the caller passes, and Run.buffers a third copy, so 512 MiB
# keeps a launch within ~2 GB (and a 3 GB address space with the interpreter and numba).
MAX_GLOBAL_BYTES = 1 << 29


@dataclass(frozen=True, eq=False)
class StructArg:
    """A by-value struct parameter of exactly len(data) bytes whose 8-byte fields at the offsets of
    `pointers` ((offset, numpy array) or (offset, numpy array, byte in it), ...) are the device
    addresses of those arrays (plus the byte); an array object named twice in a launch is placed once."""
    data: bytes
    pointers: tuple = ()
    maps: tuple = ()        # ((offset, TensorMapArg), ...): tensor maps inside the struct


def check_global_bytes(total, what):
    """Refuse `total` bytes of global buffers before they are allocated."""
    if total > MAX_GLOBAL_BYTES:
        raise LayoutsimError(f"{what}: {total} bytes of global buffers; array arguments and .global "
                             f"variables together may hold at most {MAX_GLOBAL_BYTES} bytes (512 MiB: the "
                             f"model keeps its own copy of each in global memory, and one for the results)")


def dims(value, what):
    """(x, y, z) from an int, a 1-3 tuple, or 'X[,Y[,Z]]'."""
    v = value
    if isinstance(v, str):
        try:
            v = tuple(int(p) for p in v.replace(" ", "").split(","))
        except ValueError:
            raise LayoutsimError(f"{what} {value!r}: give X[,Y[,Z]] positive integers") from None
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        v = (int(v),)
    if not isinstance(v, (tuple, list)) or not 1 <= len(v) <= 3 or \
            not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in v):
        raise LayoutsimError(f"{what} {value!r}: give 1 to 3 positive integers (x, y, z)")
    v = tuple(int(x) for x in v) + (1,) * (3 - len(v))
    if min(v) < 1:
        raise LayoutsimError(f"{what} {value!r}: every dimension must be at least 1")
    return v


def _pointer(a):
    return a.__array_interface__["data"][0]


def overlapping_arrays(args):
    """{argument index: (first, last + 1 host byte address) of its group} for the C-contiguous array
    arguments whose memory overlaps another's (the same array twice, or views of one array that
    overlap): on a GPU they are one memory, so the model places each group once and points every
    member into it. Arrays that touch no other keep a buffer of their own (reads past their end
    fault)."""
    spans = sorted((_pointer(a), _pointer(a) + a.nbytes, i) for i, a in enumerate(args)
                   if isinstance(a, np.ndarray) and a.flags.c_contiguous and a.nbytes)
    groups, cur = {}, None
    for lo, hi, i in spans + [(None, None, None)]:
        if cur is not None and lo is not None and lo < cur[1]:
            cur[1] = max(cur[1], hi)
            cur[2].append(i)
            continue
        if cur is not None and len(cur[2]) > 1:
            groups.update({j: (cur[0], cur[1]) for j in cur[2]})
        cur = [lo, hi, [i]]
    return groups


class Launch:
    def __init__(self, prog, grid, block, args, arch, shared_bytes=0, cluster=None, symbols=None):
        self.prog, self.arch = prog, arch
        self.grid, self.block = dims(grid, "grid"), dims(block, "block")
        for i, (g, lim) in enumerate(zip(self.grid, archs.GRID_LIMITS)):
            if g > lim:
                raise LayoutsimError(f"grid {self.grid}: dimension {'xyz'[i]} = {g} exceeds {lim}")
        self.cluster = CL.shape(prog.fn, cluster, self.grid, arch, dims)     # thread-block clusters
        # math.prod: Python ints, where np.prod wraps (block (2**32, 2**32) would give 0 threads)
        self.threads_per_cta = math.prod(self.block)
        if self.threads_per_cta > archs.MAX_BLOCK_THREADS or self.block[2] > archs.MAX_BLOCK_Z:
            raise LayoutsimError(f"block {self.block}: a CTA has at most {archs.MAX_BLOCK_THREADS} threads "
                                 f"(z at most {archs.MAX_BLOCK_Z}); "
                                 f"this one has {self.threads_per_cta}")
        want = prog.fn.directives.get("reqntid")
        if want and tuple(want) + (1,) * (3 - len(want)) != self.block:
            raise LayoutsimError(f"block {self.block}: kernel {prog.fn.name} requires .reqntid {tuple(want)}")
        mx = prog.fn.directives.get("maxntid")
        if mx and self.threads_per_cta > math.prod(mx):
            raise LayoutsimError(f"block {self.block}: kernel {prog.fn.name} allows at most .maxntid "
                                 f"{tuple(mx)} ({math.prod(mx)} threads)")
        self.n_ctas = math.prod(self.grid)
        if not isinstance(shared_bytes, (int, np.integer)) or isinstance(shared_bytes, bool) or shared_bytes < 0:
            raise LayoutsimError(f"shared_bytes={shared_bytes!r}: give a number of bytes >= 0")
        self.shared_bytes = int(shared_bytes)
        self.notes = set()                    # what this launch could not prove or ignored
        if CL.size_note(self.cluster):
            self.notes.add(CL.size_note(self.cluster))
        self.initcheck = None                 # initcheck=True: the records of every batch (initcheck.py)
        self.mmas = None                      # record_mmas=True: the MMA records (events.MmaLog)
        self.printed = bytearray()            # what printf printed (ops_sys.py), in the executor's order
        self.assertions = []                  # the lines of failed asserts (ops_sys.py)
        self.conditionals = {}                # cudaGraphSetConditional (ops_sys.py): handle -> [value, setter]
        self.samples = Samples(len(prog.sites), arch)   # the hotspot samples, an observer (samples.py)
        if prog.dynamic_shared_offset is None and self.shared_bytes:
            self.notes.add(f"{self.shared_bytes} bytes of dynamic shared memory given, but the kernel "
                           f"declares no extern .shared array")
        limit = archs.shared_memory_limit(arch)[0]
        if prog.user_smem(self.shared_bytes) > limit:
            raise LayoutsimError(f"shared memory {prog.user_smem(self.shared_bytes)} bytes "
                                 f"({prog.static_shared - prog.smem_base} static + {self.shared_bytes} dynamic) exceeds "
                                 f"the {limit} bytes a CTA can have on {arch}")
        self.heap = prog.static_heap.copy()
        self.var_addr = dict(prog.global_vars)
        self.args = self._check_args(args)
        self.device_heap = None               # in-kernel malloc/free (malloc.py): the launch's device heap
        if prog.mallocs:
            self.device_heap = DeviceHeap(self.heap.alloc(HEAP_BYTES, "device heap (malloc)"))
        check_global_bytes(sum(self.heap.sizes), f"kernel {prog.fn.name}")
        self.heap.finish()
        self._fill()
        self._write_symbols(symbols)

    # ---- arguments ---------------------------------------------------------------------------
    def _check_args(self, args):
        params = self.prog.kernel_params
        if not isinstance(args, (list, tuple)):
            raise LayoutsimError(f"args: give a list of the kernel's {len(params)} arguments, not "
                                 f"{type(args).__name__}")
        if len(args) != len(params):
            sig = ", ".join(_ptype(p) for _, p, _, _, _ in params)
            raise LayoutsimError(f"kernel {self.prog.fn.name} takes {len(params)} parameter(s) ({sig}); "
                                 f"{len(args)} argument(s) given")
        out = []
        self.textures, self.surfaces = {}, {}
        self._struct_arrays = {}              # id(array) -> (array, address): StructArg arrays, placed once
        self._map_tensors = {}                # id(array) -> (array, address): tensors of maps, placed once
        self._overlaps = overlapping_arrays(args)   # argument index -> its memory group's span
        self._group_addr = {}                 # a group's first byte (host pointer) -> its model address
        for i, (a, (name, p, off, size, _)) in enumerate(zip(args, params)):
            out.append(self._tmap_arg(i, a, p, size) if isinstance(a, TM.TensorMapArg) else
                       self._object_arg(i, a, p, size) if isinstance(a, (TX.TextureArg, SF.SurfaceArg)) else
                       self._arg(i, a, p, size))
        # a tensor map names its tensor by argument index (resolved once every buffer is placed)
        # or brings it (placed in global memory like an array argument)
        self.tensor_maps = []
        for i, a in enumerate(out):
            if a[0] not in ("tmap", "tmap_ptr"):
                continue
            where = f"argument {i} (tensor map)"
            own = a[3]
            if own is not None:
                buf, addr = own
            else:
                k = a[1].buffer
                if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(out) \
                        or out[k][0] != "array":
                    arrays = [j for j, x in enumerate(out) if x[0] == "array"]
                    raise LayoutsimError(f"{where}: buffer={k!r} must be the index of an array argument "
                                         f"holding the global tensor (array arguments: {arrays or 'none'}) "
                                         f"or the tensor itself (a numpy array)")
                buf, addr = out[k][1], out[k][2]
            self.tensor_maps.append(TM.GlobalMap(a[1], where, buf, addr, index=i))
            out[i] = a + (len(self.tensor_maps) - 1,)
        for i, a in enumerate(out):
            if a[0] == "struct":
                out[i] = a[:3] + (self._struct_maps(i, a, out),)
        return out

    def _struct_maps(self, i, a, out):
        """[(offset in the struct, tensor map index)] of a StructArg's maps, each resolved against an
        array argument, one of the struct's arrays (by identity) or an array of its own."""
        placed = []
        for off, m in a[3]:
            where = f"argument {i} (the tensor map at byte {off} of its struct)"
            k = m.buffer
            if isinstance(k, np.ndarray):
                mine = [(arr, addr) for _, arr, addr in a[2] if arr is k]
                if mine:
                    buf, addr = mine[0]
                else:
                    if k.dtype.hasobject:
                        raise LayoutsimError(f"{where}: arrays of Python objects cannot be device buffers")
                    buf, addr = k, self.heap.alloc(k.nbytes, f"{where}: its tensor")
                    a[2].append(([], k, addr))            # an array of its own, after the pointers
            elif isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(out) \
                    or out[k][0] != "array":
                raise LayoutsimError(f"{where}: buffer={k!r} must be the index of an array argument, one of "
                                     f"the struct's arrays or a numpy array of its own")
            else:
                buf, addr = out[k][1], out[k][2]
            self.tensor_maps.append(TM.GlobalMap(m, where, buf, addr, index=i))
            placed.append((off, len(self.tensor_maps) - 1))
        return placed

    def _tmap_arg(self, i, a, p, size):
        what = f"argument {i} ({_ptype(p)} parameter {p.name})"
        if p.count is not None and size >= TM.MAP_BYTES and size % TM.MAP_BYTES == 0:
            # a CUtensorMap, or a struct that begins with one (CuTe's Copy_Atom of a TMA op, 256
            # bytes in its Blackwell tutorials, whose PTX reads nothing after the map): the rest 0
            kind, at = "tmap", None
        elif p.count is None and size == 8:
            kind, at = "tmap_ptr", self.heap.alloc(TM.MAP_BYTES, f"argument {i} (tensor map)")
        else:
            raise LayoutsimError(f"{what}: a TensorMapArg is a CUtensorMap: a 128-byte by-value parameter "
                                 f"(const __grid_constant__ CUtensorMap, or a struct of 256, 384 ... bytes "
                                 f"beginning with one) or a 64-bit pointer to one; this "
                                 f"parameter is {size} bytes")
        own = None
        if isinstance(a.buffer, np.ndarray):
            if a.buffer.dtype.hasobject:
                raise LayoutsimError(f"{what}: arrays of Python objects cannot be device buffers")
            # maps given the same array object share its memory, as maps over one tensor do on a GPU
            own = self._map_tensors.get(id(a.buffer))
            if own is None:
                own = (a.buffer, self.heap.alloc(a.buffer.nbytes, f"argument {i} (the tensor of its tensor map)"))
                self._map_tensors[id(a.buffer)] = own
        return (kind, a, at, own)

    def _object_arg(self, i, a, p, size):
        """A texture or surface object: the 64-bit handle the kernel receives, its texels resolved."""
        what = f"argument {i} ({_ptype(p)} parameter {p.name})"
        if p.count is not None or size != 8:
            raise LayoutsimError(f"{what}: a {type(a).__name__} is a 64-bit cudaTextureObject_t / "
                                 f"cudaSurfaceObject_t; this parameter is {size} bytes")
        if isinstance(a, TX.TextureArg):
            h = TX.HANDLE + len(self.textures)
            self.textures[h] = TX.Texture(a, what)
        else:
            h = SF.HANDLE + len(self.surfaces)
            self.surfaces[h] = SF.Surface(a, what)
        return ("object", a, h)

    def _arg(self, i, a, p, size):
        what = f"argument {i} ({_ptype(p)} parameter {p.name})"
        if isinstance(a, np.ndarray):
            if size != 8 or p.count is not None:
                raise LayoutsimError(f"{what}: an array is passed as a 64-bit pointer; this parameter "
                                     f"is {size} bytes")
            if a.dtype.hasobject:
                raise LayoutsimError(f"{what}: arrays of Python objects cannot be device buffers")
            if i in self._overlaps:           # memory another argument shares: one buffer for all of it
                lo, hi = self._overlaps[i]
                if lo not in self._group_addr:
                    self._group_addr[lo] = self.heap.alloc(hi - lo, f"arguments sharing memory with argument {i}")
                return ("array", a, self._group_addr[lo] + (_pointer(a) - lo))
            addr = self.heap.alloc(a.nbytes, f"argument {i}")
            return ("array", a, addr)
        if isinstance(a, StructArg):
            return self._struct_arg(i, a, what, size)
        if isinstance(a, (bytes, bytearray)):
            if len(a) != size:
                raise LayoutsimError(f"{what}: {len(a)} bytes given; the parameter is {size} bytes")
            return ("bytes", bytes(a))
        if p.count is not None:
            raise LayoutsimError(f"{what}: a {size}-byte by-value parameter; give {size} bytes")
        t = p.ptype
        if isinstance(a, np.generic):
            if a.dtype.itemsize != size:
                raise LayoutsimError(f"{what}: {a.dtype} is {a.dtype.itemsize} bytes; the parameter is "
                                     f"{size} bytes")
            if (a.dtype.kind == "f") != (t.kind == "f"):
                raise LayoutsimError(f"{what}: {a.dtype} given for a .{t.name} parameter")
            return ("bytes", a.tobytes())
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            raise LayoutsimError(f"{what}: give a numpy array, a numpy scalar or a number, not "
                                 f"{type(a).__name__}")
        if t.kind == "f":
            return ("bytes", np.array(a, t.dtype).tobytes())
        if isinstance(a, float):
            raise LayoutsimError(f"{what}: {a!r} is a float; the parameter is .{t.name}")
        lo, hi = (-(1 << (t.bits - 1)), (1 << t.bits) - 1)
        if not lo <= a <= hi:
            raise LayoutsimError(f"{what}: {a} does not fit in .{t.name}")
        return ("bytes", (a & ((1 << t.bits) - 1)).to_bytes(size, "little"))

    def _struct_arg(self, i, a, what, size):
        if not isinstance(a.data, (bytes, bytearray)) or len(a.data) != size:
            raise LayoutsimError(f"{what}: a StructArg of {len(a.data) if isinstance(a.data, (bytes, bytearray)) else '?'}"
                                 f" bytes given; the parameter is {size} bytes")
        placed = []
        for ptr in a.pointers:
            off, arr, byte = (tuple(ptr) + (0,))[:3] if isinstance(ptr, tuple) and len(ptr) in (2, 3) else (None,) * 3
            if isinstance(off, bool) or not isinstance(off, (int, np.integer)) or not 0 <= off <= size - 8 \
                    or not isinstance(arr, np.ndarray) or arr.dtype.hasobject or isinstance(byte, bool) \
                    or not isinstance(byte, (int, np.integer)) or not 0 <= byte <= arr.nbytes:
                raise LayoutsimError(f"{what}: StructArg pointers are (offset, numpy array[, byte in it]) with the "
                                     f"8-byte field inside the {size}-byte struct and the byte inside the array; "
                                     f"got {ptr!r:.80}")
            same = [x for x in placed if x[1] is arr]       # one array at several offsets: one buffer
            if same:
                same[0][0].append((int(off), int(byte)))
                continue
            shared = self._struct_arrays
            if id(arr) not in shared:             # one allocation per array object of the launch
                shared[id(arr)] = (arr, self.heap.alloc(arr.nbytes, f"argument {i} (an array of its struct)"))
            placed.append(([(int(off), int(byte))], arr, shared[id(arr)][1]))
        maps = []
        for off, m in a.maps:
            if isinstance(off, bool) or not isinstance(off, (int, np.integer)) or not 0 <= off <= size - TM.MAP_BYTES \
                    or off % TM.MAP_ALIGN or not isinstance(m, TM.TensorMapArg):
                raise LayoutsimError(f"{what}: StructArg maps are (offset, TensorMapArg) pairs with the 128-byte map "
                                     f"inside the {size}-byte struct at a multiple of {TM.MAP_ALIGN} bytes; got "
                                     f"({off!r}, {type(m).__name__})")
            maps.append((int(off), m))
        return ("struct", bytes(a.data), placed, maps)

    # ---- memory ---------------------------------------------------------------------------------
    def _write_symbols(self, symbols):
        """What the host copied into module variables before the launch (cudaMemcpyToSymbol, from
        byte 0): {name: numpy array, numpy scalar or bytes} over .global/.const variables, each at most the
        variable's size. The bytes replace the variable's initialiser; the rest of it stays."""
        if symbols is None:
            return
        if not isinstance(symbols, dict):
            raise LayoutsimError(f"symbols: give {{variable name: numpy array or bytes}}, not {type(symbols).__name__}")
        variables = {v.name: v for v in self.prog.module.variables if v.name in self.var_addr}
        for name, data in symbols.items():
            v = variables.get(name)
            if v is None:
                known = ", ".join(sorted(variables)[:8]) or "none"
                raise LayoutsimError(f"symbols: {name!r} is not a .global or .const variable of the module "
                                     f"(it has: {known})")
            if isinstance(data, (bytes, bytearray)):
                raw = np.frombuffer(bytes(data), np.uint8)
            elif isinstance(data, (np.ndarray, np.generic)) and not data.dtype.hasobject:
                raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
            else:
                raise LayoutsimError(f"symbols: {name}: give a numpy array or bytes, not {type(data).__name__}")
            if raw.size > v.size:
                raise LayoutsimError(f"symbols: {name}: {raw.size} bytes given, the .{v.space} variable holds "
                                     f"{v.size}")
            self.heap.write(self.var_addr[name], raw)

    def _fill(self):
        for v in self.prog.module.variables:
            if v.name in self.var_addr and v.init:
                self.heap.write(self.var_addr[v.name], init_bytes(v))
        kp = bytearray(max(self.prog.kernel_param_bytes, 8))
        for a, (name, p, off, size, _) in zip(self.args, self.prog.kernel_params):
            if a[0] == "array":
                self.heap.write(a[2], np.ascontiguousarray(a[1]).reshape(-1).view(np.uint8))
                kp[off:off + 8] = int(a[2]).to_bytes(8, "little")
            elif a[0] == "object":
                kp[off:off + 8] = int(a[2]).to_bytes(8, "little")
            elif a[0] in ("tmap", "tmap_ptr"):
                if a[3] is not None:
                    self.heap.write(a[3][1], np.ascontiguousarray(a[3][0]).reshape(-1).view(np.uint8))
                if a[0] == "tmap":
                    kp[off:off + TM.MAP_BYTES] = TM.handle(a[4])
                else:
                    self.heap.write(a[2], np.frombuffer(TM.handle(a[4]), np.uint8))
                    kp[off:off + 8] = int(a[2]).to_bytes(8, "little")
            elif a[0] == "struct":
                kp[off:off + size] = a[1]
                for ats, arr, addr in a[2]:
                    self.heap.write(addr, np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
                    for at, byte in ats:
                        kp[off + at:off + at + 8] = int(addr + byte).to_bytes(8, "little")
                for at, index in a[3]:
                    kp[off + at:off + at + TM.MAP_BYTES] = TM.handle(index)
            else:
                kp[off:off + size] = a[1]
        pad = -(-len(kp) // 16) * 16
        self.kparams = np.frombuffer(bytes(kp) + bytes(pad - len(kp)), np.uint8).copy()
        self.kparam_views = S.word_views(self.kparams)

    def buffers(self):
        """Final content of every array argument (None for scalars)."""
        out = []
        for a in self.args:
            if a[0] == "struct":                   # the arrays a struct argument points to
                out.append(tuple(self._final(arr, at) for _, arr, at in a[2]) or None)
                continue
            if a[0] == "array":
                arr, at = a[1], a[2]
            elif a[0] in ("tmap", "tmap_ptr") and a[3] is not None:
                arr, at = a[3]                     # the tensor a tensor map brought
            elif a[0] == "object" and a[2] in self.surfaces:
                out.append(self.surfaces[a[2]].final())
                continue
            else:
                out.append(None)
                continue
            out.append(self._final(arr, at))
        return out

    def _final(self, arr, at):
        raw = self.heap.read(at, arr.nbytes).copy()
        return raw.view(arr.dtype).reshape(arr.shape) if arr.nbytes else arr.copy()

    # ---- coordinates and special registers ------------------------------------------------------------
    def cta_coords(self, c):
        return S.coords(self.grid, c)

    def thread_coords(self, t):
        return S.coords(self.block, t)

    def special_registers(self, bt):
        """{name: value} of the batch's special registers, each computed when first read (most
        kernels read a few of the sixty: a batch no longer pays for the others)."""
        return _Specials(self, bt)

    def all_special_registers(self, bt):
        """Every special register of the batch at once (what _Specials computes one by one)."""
        sp = _Specials(self, bt)
        for name in list(_SPECIAL) + list(CL.registers(self.cluster, bt.ctas[bt.cta_index], self.grid)):
            sp[name]
        return dict(sp)


_U = np.uint32


def _lanemask(bt, shift):
    return ((np.uint64(shift) << bt.lane.astype(np.uint64)) - np.uint64(1)).astype(_U)


# the special registers: name -> f(launch, batch)
_SPECIAL = {
    **{f"%tid.{a}": (lambda L, bt, k=k: S.coords(L.block, bt.local_tid)[k].astype(_U)) for k, a in enumerate("xyz")},
    "%ntid.x": lambda L, bt: _U(L.block[0]), "%ntid.y": lambda L, bt: _U(L.block[1]),
    "%ntid.z": lambda L, bt: _U(L.block[2]),
    **{f"%ctaid.{a}": (lambda L, bt, k=k: S.coords(L.grid, bt.ctas[bt.cta_index])[k].astype(_U))
       for k, a in enumerate("xyz")},
    "%nctaid.x": lambda L, bt: _U(L.grid[0]), "%nctaid.y": lambda L, bt: _U(L.grid[1]),
    "%nctaid.z": lambda L, bt: _U(L.grid[2]),
    "%laneid": lambda L, bt: bt.lane, "%warpid": lambda L, bt: (bt.local_tid // 32).astype(_U),
    "%nwarpid": lambda L, bt: _U(64),
    "%smid": lambda L, bt: (bt.ctas[bt.cta_index] % archs.sm_count(L.arch)).astype(_U),
    "%nsmid": lambda L, bt: _U(archs.sm_count(L.arch)), "%gridid": lambda L, bt: np.uint64(1),
    "%lanemask_eq": lambda L, bt: (_U(1) << bt.lane).astype(_U),
    "%lanemask_lt": lambda L, bt: _lanemask(bt, 1),
    "%lanemask_le": lambda L, bt: _lanemask(bt, 2),
    "%lanemask_ge": lambda L, bt: (~_lanemask(bt, 1)).astype(_U),
    "%lanemask_gt": lambda L, bt: (~_lanemask(bt, 2)).astype(_U),
    "%dynamic_smem_size": lambda L, bt: _U(L.shared_bytes),
    "%total_smem_size": lambda L, bt: _U(-(-L.prog.user_smem(L.shared_bytes) // archs.smem_allocation_unit(L.arch))
                                         * archs.smem_allocation_unit(L.arch)),
    "%aggr_smem_size": lambda L, bt: _U(L.prog.user_smem(L.shared_bytes)),
    # the system's reserved shared memory (PTX ISA 10.35), on sm_90 the window's first
    # KiB (archs.user_smem_base): begin 0 and cap 0x400 are constants in ptxas's SASS;
    # end and _1 are words the driver writes at launch, which an H100 (driver 580) read as
    # 288 and 0 (tests/data/constructs/constructs.json; CUDA 13.0's
    # cooperative_groups/details/memory.h: "CG can expect at least 288 bytes available
    # in reserved shared"). Other archs refuse these registers (operands.py).
    "%reserved_smem_offset_begin": lambda L, bt: _U(0), "%reserved_smem_offset_end": lambda L, bt: _U(288),
    "%reserved_smem_offset_cap": lambda L, bt: _U(archs.reserved_smem_per_block(L.arch)),
    "%reserved_smem_offset_0": lambda L, bt: _U(0), "%reserved_smem_offset_1": lambda L, bt: _U(0),
    **{f"%envreg{i}": (lambda L, bt: _U(0)) for i in range(32)},
    **{f"%pm{i}": (lambda L, bt: _U(0)) for i in range(8)},
}


class _Specials(dict):
    """A batch's special registers, each computed on its first read (_SPECIAL; the cluster ones,
    cluster.registers, together)."""

    def __init__(self, launch, bt):
        super().__init__()
        # what the formulas read of the batch (not the batch: no cycle keeps its memory alive)
        self.launch = launch
        self.bt = SimpleNamespace(local_tid=bt.local_tid, lane=bt.lane, ctas=bt.ctas, cta_index=bt.cta_index)

    def __missing__(self, name):
        f = _SPECIAL.get(name)
        if f is not None:
            v = self[name] = f(self.launch, self.bt)
            return v
        L, bt = self.launch, self.bt
        got = CL.registers(L.cluster, bt.ctas[bt.cta_index], L.grid)
        for k, v in got.items():
            self.setdefault(k, v)
        return got[name]                 # KeyError for a name that is none of them


def _ptype(p):
    if p.count is not None:
        return f".b8[{p.count}]"
    return f".{p.ptype.name}"


def init_bytes(v):
    """The bytes of a variable's initialiser (its count and vector width filled with zeros)."""
    vals = list(v.init)
    n = 1 if v.count is None else v.count
    vals = (vals + [0] * (n * v.vec))[:n * v.vec]
    dt = v.ptype.storage
    return np.asarray(vals, np.uint64).astype(dt).view(np.uint8)
