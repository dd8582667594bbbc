"""Texture and surface instructions through texture/surface objects: tex, tld4, txq (PTX ISA 9.0
section 9.7.10) and suld.b, sust.b, suq (9.7.11). The sampler arithmetic is texture.py's, where a
surface access lands surface.py's; these handlers read the operands, find the object a thread's
64-bit handle names (launch.textures / launch.surfaces) and write the results.

Forms (what nvcc 13 emits for the CUDA texture and surface functions):
    tex{.base|.level|.grad}.{1d,2d,3d,a1d,a2d,cube}.v4.{f32,s32,u32}.{f32,s32}  d, [obj, {c}] {, lod | , dPdx, dPdy}
    tld4.{r,g,b,a}.2d.v4.{f32,s32,u32}.f32                                       d, [obj, {x, y}]
    suld.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.{b8,b16,b32,b64}.{trap,clamp,zero}      d, [obj, {c}]
    sust.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.{b8,b16,b32,b64}.{trap,clamp,zero}      [obj, {c}], a
    txq.{width,height,depth,array_size}.b32 / suq.{...}.b32                     d, [obj]
A .level/.grad fetch samples level 0, the only level of a texture over a CUDA array (mipmapped
arrays are not modelled). Texture references (.texref/.surfref module variables, removed in
CUDA 12), the independent sampler mode ([tex, sampler, {c}]), texel offsets, depth compare,
the predicate result (d|p), .f16x2 results, formatted stores (sust.p) and sured are refused.
The fetches emit no Access (texture and surface memory is not the model's global memory, and
the texture cache is not costed); a launch note says so.
"""
import numpy as np

from . import types as T
from .builders import need, unsupported
from .state import Fault
from .surface import GEOMETRIES as SURFACE_GEOMETRIES
from .surface import MODES
from .texture import GEOMETRIES

LOD = ("base", "level", "grad")
RESULTS = ("f32", "s32", "u32")
# what the H100 measurement (tests/data/textures; gpu_check/textures/replay.py KNOWN) proves and not
SAMPLING_NOTE = ("tex/tld4: point sampling, element and integer fetches, cube maps, tld4 and linear filtering "
                 "match an H100 bit for bit; 3D linear filtering of f32/f16 texels can differ in the last bit "
                 "(1 word of 1 of 108 recorded cases, 79 of 32768 probe samples)")
QUERIES = ("width", "height", "depth", "array_size")
NOTE = "texture and surface accesses are not costed (the texture cache is not modelled)"
_COORDS = {"1d": 1, "2d": 2, "3d": 4, "a1d": 2, "a2d": 4, "cube": 4}


def _objects(ins, b, op, allow_coords=True):
    """(handle reader, coordinate operands) of `[obj, {c...}]` (or `[obj]` for a query)."""
    if op.kind == "addr" and op.base is not None and op.base.kind == "reg" and op.offset == 0:
        return b.read(op.base, T.get("u64"), ins), ()
    if op.kind == "tref" and allow_coords and len(op.value) == 2 and op.value[1].kind == "vec":
        h, c = op.value
        if h.kind == "reg":
            return b.read(h, T.get("u64"), ins), c.value
    if op.kind == "tref" and len(op.value) == 3:
        raise unsupported(ins, "the independent texture/sampler mode [tex, sampler, {..}] is not modelled")
    raise unsupported(ins, f"operand {op}: the model runs texture and surface objects (a 64-bit handle in a "
                           f"register); texture references (.texref/.surfref) were removed in CUDA 12")


def _handles(rd, bt, thr):
    v = rd(bt)
    return np.asarray(v, np.uint64)[thr] if np.ndim(v) else np.full(len(thr), int(v), np.uint64)


def _each(bt, table, handles, thr, ins, kind):
    """(object, selection) for each distinct handle among the threads; an unknown one faults."""
    for h in np.unique(handles):
        sel = handles == h
        obj = table.get(int(h))
        if obj is None:
            t = int(thr[np.flatnonzero(sel)[0]])
            raise Fault(t, 0, f"{ins.name}: handle {int(h):#x} names no {kind} object of this launch "
                              f"(pass a layoutsim.ptx.{kind.capitalize()}Arg)", "invalid_texture", kind)
        yield obj, sel


def _threads(bt, g):
    """The executing threads (None when there are none); the launch notes that fetches are not costed."""
    thr = np.flatnonzero(g)
    if len(thr) == 0:
        return None
    bt.launch.notes.add(NOTE)
    return thr


def _vals(reader, bt, thr):
    v = reader(bt)
    return np.asarray(v)[thr] if np.ndim(v) else np.full(len(thr), v)


def _mod(ins, choices, what, default=None):
    got = [m for m in ins.mods if m in choices]
    if len(got) > 1 or (not got and default is None):
        raise unsupported(ins, f"give one {what} ({', '.join('.' + c for c in choices)})")
    return got[0] if got else default


def tex(ins, b, prog):
    mods = ins.mods
    lod = _mod(ins, LOD, "level-of-detail mode", "base")
    geom = _mod(ins, tuple(GEOMETRIES) + ("acube", "2dms", "a2dms"), "geometry")
    if geom not in GEOMETRIES:
        raise unsupported(ins, f"tex.{geom} is not modelled (1d, 2d, 3d, a1d, a2d, cube are)")
    if "v4" not in mods or len(mods) < 3 or mods[-2] not in RESULTS or mods[-1] not in ("f32", "s32"):
        raise unsupported(ins, "tex takes .v4 with an .f32/.s32/.u32 result and .f32/.s32 coordinates")
    rtype, ctype = mods[-2], mods[-1]
    integer = ctype == "s32"
    if integer and (geom == "cube" or lod != "base"):
        raise unsupported(ins, "integer coordinates with .cube or an explicit level of detail")
    extra = {"base": 0, "level": 1, "grad": 2}[lod]
    need(ins, 2)
    if len(ins.operands) != 2 + extra:
        raise unsupported(ins, "texel offsets and depth compare are not modelled")
    prog.notes.add(SAMPLING_NOTE)
    step = _fetch(ins, b, geom, rtype, ctype,
                  lambda t, coords, layer: t.fetch(geom, coords, layer, integer))
    for op in ins.operands[2:]:                       # read (the level or gradients sample level 0)
        for e in b.elems(op, ins):
            b.read(e, T.get("f32"), ins)
    return step


def tld4(ins, b, prog):
    comp = _mod(ins, ("r", "g", "b", "a"), "component")
    if "2d" not in ins.mods or "v4" not in ins.mods or ins.mods[-2] not in RESULTS or ins.mods[-1] != "f32":
        raise unsupported(ins, "tld4 is modelled for .2d.v4.{f32,s32,u32}.f32")
    if len(ins.operands) != 2:
        raise unsupported(ins, "texel offsets and depth compare are not modelled")
    prog.notes.add(SAMPLING_NOTE)
    k = "rgba".index(comp)
    return _fetch(ins, b, "2d", ins.mods[-2], "f32", lambda t, coords, layer: t.gather(k, coords))


def _fetch(ins, b, geom, rtype, ctype, sample):
    d, ref = ins.operands[0], ins.operands[1]
    if d.kind != "vec" or len(d.value) != 4:
        raise unsupported(ins, f"destination {d}: give four registers (the predicate form d|p is not modelled)")
    writers = [b.write(e, T.get("b32"), ins) for e in d.value]
    handle, cops = _objects(ins, b, ref)
    if len(cops) != _COORDS[geom]:
        raise unsupported(ins, f".{geom} takes {_COORDS[geom]} coordinates, not {len(cops)}")
    layered = GEOMETRIES[geom][1]
    n = 3 if geom == "cube" else GEOMETRIES[geom][0]
    layer_rd = b.read(cops[0], T.get("s32"), ins) if layered else None
    coord_rd = [b.read(c, T.get(ctype), ins) for c in cops[int(layered):int(layered) + n]]

    def fn(bt, g, full):
        thr = _threads(bt, g)
        if thr is None:
            return
        hs = _handles(handle, bt, thr)
        coords = [_vals(r, bt, thr) for r in coord_rd]
        coords = [c.astype(np.float64) if ctype == "f32" else c.astype(np.int64) for c in coords]
        layer = _vals(layer_rd, bt, thr).astype(np.int64) if layer_rd is not None else None
        out = np.zeros((len(thr), 4), np.uint32)
        for t, sel in _each(bt, bt.launch.textures, hs, thr, ins, "texture"):
            why = t.check(geom, rtype)
            if why:
                raise Fault(int(thr[np.flatnonzero(sel)[0]]), 0, f"{ins.name}: {why}", "invalid_texture", "texture")
            out[sel] = sample(t, [c[sel] for c in coords], None if layer is None else layer[sel])
        for j, w in enumerate(writers):
            v = np.zeros(bt.T, np.uint32)
            v[thr] = out[:, j]
            w(bt, v, g, full)
    return {"fn": fn}


# ---- surfaces ---------------------------------------------------------------------------------
def _surface_form(ins):
    if ins.mods[:1] != ("b",):
        raise unsupported(ins, f"{ins.opcode}.p (formatted) is not modelled; the unformatted .b forms are")
    geom = _mod(ins, tuple(SURFACE_GEOMETRIES) + ("cube", "acube", "2dms"), "geometry")
    if geom not in SURFACE_GEOMETRIES:
        raise unsupported(ins, f"{ins.opcode}.b.{geom} is not modelled (1d, 2d, 3d, a1d, a2d are)")
    mode = _mod(ins, MODES, "out-of-range mode", "trap")
    t = next((m for m in ins.mods if m in ("b8", "b16", "b32", "b64")), None)
    if t is None:
        raise unsupported(ins, f"{ins.opcode}.b takes .b8, .b16, .b32 or .b64")
    vec = 4 if "v4" in ins.mods else 2 if "v2" in ins.mods else 1
    return geom, mode, T.get(t), vec


def _surface_where(ins, b, ref, geom):
    handle, cops = _objects(ins, b, ref)
    dims, layered = SURFACE_GEOMETRIES[geom]
    want = {1: 1, 2: 2, 3: 4}[dims] if not layered else {1: 2, 2: 4}[dims]
    if len(cops) != want:
        raise unsupported(ins, f".{geom} takes {want} coordinates, not {len(cops)}")
    rds = [b.read(c, T.get("s32"), ins) for c in cops]
    layer_rd = rds[0] if layered else None
    coord_rd = rds[int(layered):int(layered) + dims]

    def where(bt, thr, s, sel, nbytes, mode):
        coords = [_vals(r, bt, thr)[sel].astype(np.int64) for r in coord_rd]
        layer = _vals(layer_rd, bt, thr)[sel].astype(np.int64) if layer_rd is not None else None
        return s.locate(geom, coords, layer, nbytes, mode, thr[sel], ins.name)
    return handle, where


def suld(ins, b, prog):
    return _surface_step(ins, b, load=True)


def sust(ins, b, prog):
    return _surface_step(ins, b, load=False)


def _surface_step(ins, b, load):
    """suld.b d, [obj, {c}] (load) or sust.b [obj, {c}], a: raw bytes of vec x t per thread."""
    geom, mode, t, vec = _surface_form(ins)
    need(ins, 2)
    regs = b.elems(ins.operands[0 if load else 1], ins, vec if vec > 1 else None)
    handle, where = _surface_where(ins, b, ins.operands[1 if load else 0], geom)
    io = [b.write(e, t, ins) for e in regs] if load else [b.read(e, t, ins) for e in regs]
    e = t.bits // 8
    raw = np.dtype(f"<u{e}")

    def fn(bt, g, full):
        thr = _threads(bt, g)
        if thr is None:
            return
        handles = _handles(handle, bt, thr)
        if not load:
            vals = np.stack([np.asarray(_vals(r, bt, thr)).astype(raw) for r in io], 1)
            data = np.ascontiguousarray(vals).view(np.uint8).reshape(len(thr), vec * e)
        else:
            data = np.zeros((len(thr), vec * e), np.uint8)
        for s, sel in _each(bt, bt.launch.surfaces, handles, thr, ins, "surface"):
            loc = where(bt, thr, s, sel, vec * e, mode)
            if load:
                data[sel] = s.load(loc).reshape(-1, vec * e)
            else:
                s.store(loc, data[sel])
        if load:
            vals = np.ascontiguousarray(data).view(raw).reshape(len(thr), vec)
            for j, w in enumerate(io):
                out = np.zeros(bt.T, raw)
                out[thr] = vals[:, j]
                w(bt, out, g, full)
    return {"fn": fn}


def query(ins, b, prog):
    """txq / suq: the texture's or surface's size (9.7.10.5, 9.7.11.4)."""
    what = _mod(ins, QUERIES + ("channel_data_type", "channel_order", "normalized_coords", "filter_mode",
                                "addr_mode_0", "addr_mode_1", "addr_mode_2", "num_mipmap_levels",
                                "num_samples", "force_unnormalized_coords", "memory_layout"), "query")
    if what not in QUERIES or "level" in ins.mods:
        raise unsupported(ins, f"{ins.opcode}.{what}: the model answers .width, .height, .depth, .array_size")
    need(ins, 2)
    d = b.write(ins.operands[0], T.get("b32"), ins)
    handle, _ = _objects(ins, b, ins.operands[1], allow_coords=False)
    kind = "texture" if ins.opcode == "txq" else "surface"

    def fn(bt, g, full):
        thr = np.flatnonzero(g)
        if len(thr) == 0:
            return
        table = bt.launch.textures if kind == "texture" else bt.launch.surfaces
        out = np.zeros(bt.T, np.uint32)
        for o, sel in _each(bt, table, _handles(handle, bt, thr), thr, ins, kind):
            out[thr[sel]] = o.query(what)
        d(bt, out, g, full)
    return {"fn": fn}
