"""The TMA reductions: cp.reduce.async.bulk (PTX ISA 9.0, 9.7.9.25.4.2) and
cp.reduce.async.bulk.tensor (9.7.9.25.5.3). Each element of the destination is reduced inline
with the matching element of a shared::cta source by .redOp:

    cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp{.noftz}.type [dst], [src], size{, policy}
    cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.redOp.type [dst], [src], size, [mbar]
    cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp{.tile}.bulk_group{.L2::cache_hint} [map, {c0, ...}], [src]{, policy}

The ISA's tables of .redOp and element type are TYPES below; the tensor form takes its element
type from the tensor map (tensormap.py's GlobalMap.dtype). The arithmetic, element by element:
integers wrap (.add), compare as their type (.min/.max), .inc/.dec as atom's (ops_mem._atom_fn);
.f16/.bf16 .add (.noftz) rounds the exact sum to nearest even and keeps subnormals, as the ISA says;
.f32 .add of the non-tensor form rounds to nearest even and flushes subnormal inputs and results
to sign-preserving zero ("the current implementation", 9.7.9.25.4.2); .f64 .add rounds to
nearest even. Where the ISA is silent the model says what it does: the tensor form's .f32 .add
(9.7.9.25.5.3 names no flush) keeps subnormals for a FLOAT32 map and flushes for FLOAT32_FTZ;
.f16/.bf16 .min/.max are min.f16/max.f16's (a NaN loses to a number, two NaNs give the canonical
NaN, -0 is below +0). None of these was run on a GPU here.

Order: each element's reduction is its own .relaxed.gpu operation (the ISA), so reductions from
several threads or CTAs into one element land atomically in some order. The model applies each
instruction whole when its thread issues it, in the executor's order; integer results do not
depend on it, a float sum may (tests/ptx/test_ptx_tma_reduce.py shows both). Completion: done at
issue, as ops_async.py's bulk copies (a valid schedule): cp.async.bulk.commit_group and
wait_group{.read} then have nothing to wait for; the shared::cluster form credits `size` bytes to
its mbarrier (complete_tx) at once. The source is read by the TMA unit, not the LSU: it adds no
shared ld/st wavefronts and no global requests (ops_async.TMA_NOTE), as the bulk copies.
Refused: .im2col_no_offs (the im2col layout is not modelled), a tensor map whose element type
is unknown or not in the table.
"""
import numpy as np

from ..errors import LayoutsimError
from . import cluster as CL
from . import fround as F
from . import lines
from . import tensormap as TM
from . import types as T
from .builders import need, unsupported
from .events import Access
from .mbarrier_operand import barrier_address as barrier_addr
from .ops_async import BULK_ALIGN, box, copy_step, tensor_ref, values
from .ops_half import decode, minmax_bits
from .ops_mem import atom_fn, serial_rounds
from .state import Fault
from .table import REDOPS                   # its reductions: the instruction table's row

_INT = {"add": ("u32", "s32", "u64"), "min": ("u32", "s32"), "max": ("u32", "s32"), "inc": ("u32",),
        "dec": ("u32",), "and": ("b32",), "or": ("b32",), "xor": ("b32",)}
_MINMAX = ("u32", "s32", "u64", "s64", "f16", "bf16")
_BITS = ("b32", "b64")
TYPES = {   # (destination): {.redOp: element types}, the tables of 9.7.9.25.4.2 and 9.7.9.25.5.3
    "shared::cluster": _INT,
    "global": {**_INT, "add": ("u32", "s32", "u64", "f32", "f64", "f16", "bf16"), "min": _MINMAX, "max": _MINMAX,
               "and": _BITS, "or": _BITS, "xor": _BITS},
    "tensor": {**_INT, "add": ("u32", "s32", "u64", "f32", "f16", "bf16"), "min": _MINMAX, "max": _MINMAX,
               "and": _BITS, "or": _BITS, "xor": _BITS},
}
# a tensor map's element type as the table names it (.b32/.b64: any integer type of that size)
_MAP_AS = {"u32": ("u32", "b32"), "s32": ("s32", "b32"), "u64": ("u64", "b64"), "s64": ("s64", "b64"),
           "f16": ("f16",), "bf16": ("bf16",), "f32": ("f32",), "f32.ftz": ("f32",)}
SECTION = {"shared::cluster": "9.7.9.25.4.2", "global": "9.7.9.25.4.2", "tensor": "9.7.9.25.5.3"}


def _allowed(form, op):
    return ", ".join("." + x for x in TYPES[form][op])


def element_fn(op, tname, ftz=False):
    """f(old, src) -> new on raw element arrays (the dtype of `storage(tname)`)."""
    if tname in ("f16", "bf16"):
        if op == "add":                       # .noftz: the exact sum (float64) rounded once, subnormals kept
            return lambda o, s: F.round_to(decode(o, tname) + decode(s, tname), tname, "rn")
        return lambda o, s: minmax_bits(o, s, tname, op == "min")
    if tname == "f32":
        def fadd(o, s):
            x, y = o.view(np.float32).astype(np.float64), s.view(np.float32).astype(np.float64)
            if ftz:
                x, y = F.flush(x, "f32"), F.flush(y, "f32")
            return F.round_to(x + y, "f32", "rn", ftz)       # the float64 sum of two f32 is exact
        return fadd
    if tname == "f64":
        return lambda o, s: (o.view(np.float64) + s.view(np.float64)).view(np.uint64)
    f = atom_fn(op, T.get(tname), "global")                 # the integer ops are atom's
    return lambda o, s: f(o, s, None)


def storage(tname):
    return np.dtype(f"<u{T.get(tname).bits // 8}")


def reduce_into(mem, dst, src, fn, dt):
    """Reduce the elements src [n, e] (bytes) into uint8 array `mem` at byte offsets dst [n], in
    order: an offset named twice takes its reductions one after the other."""
    dst = np.asarray(dst, np.int64).reshape(-1)
    if not dst.size:
        return
    e = dt.itemsize
    src = np.ascontiguousarray(src, np.uint8).reshape(-1, e)
    k = np.arange(e)
    for sel in serial_rounds(dst, np.arange(len(dst))):
        at = dst[sel][:, None] + k
        old = np.ascontiguousarray(mem[at]).view(dt).reshape(-1)
        new = np.asarray(fn(old, src[sel].view(dt).reshape(-1))).astype(dt)
        mem[at] = new.view(np.uint8).reshape(-1, e)


# ---- the handler ------------------------------------------------------------------------------------
def cp_reduce(ins, b, prog):
    mods = ins.mods[3:]
    op = next((m for m in mods if m in REDOPS), None)
    if op is None:
        raise unsupported(ins, f"no reduction operation (one of {', '.join('.' + r for r in REDOPS)})")
    if "im2col_no_offs" in mods:
        raise unsupported(ins, "load mode .im2col_no_offs (only the tile mode is modelled)")
    if mods[:1] == ("tensor",):
        dim = int(mods[1].rstrip("d")) if len(mods) > 1 and mods[1].rstrip("d").isdigit() else 0
        if not 1 <= dim <= 5:
            raise unsupported(ins, "cp.reduce.async.bulk.tensor needs .1d ... .5d")
        if "noftz" in mods:
            raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: the tensor form takes no .noftz (PTX ISA "
                                 f"9.7.9.25.5.3)")
        return _tensor(ins, b, prog, dim, op)
    spaces = [m for m in mods if m.split("::")[0] in ("shared", "global")]
    form = {("global", "shared::cta"): "global", ("shared::cluster", "shared::cta"): "shared::cluster"}.get(
        tuple(spaces))
    if form is None:
        raise unsupported(ins, "give .global.shared::cta or .shared::cluster.shared::cta (PTX ISA 9.7.9.25.4.2)")
    mech = "bulk_group" if form == "global" else "mbarrier::complete_tx::bytes"
    if mech not in mods:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: the .{spaces[0]} destination completes through "
                             f".{mech} (PTX ISA 9.7.9.25.4.2)")
    t = T.instr_type(ins.mods, ins.line)
    if t.name not in TYPES[form][op]:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: .{op} into .{spaces[0]} takes "
                             f"{_allowed(form, op)}, not .{t.name} (PTX ISA 9.7.9.25.4.2)")
    half = t.name in ("f16", "bf16")
    if half and op == "add" and "noftz" not in mods:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: .add of .{t.name} requires .noftz (PTX ISA 9.7.9.25.4.2)")
    if "noftz" in mods and not (half and op == "add"):
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: .noftz goes with .add.f16 / .add.bf16 only "
                             f"(PTX ISA 9.7.9.25.4.2)")
    return _bulk(ins, b, form, element_fn(op, t.name, ftz=t.name == "f32"), storage(t.name))


def _bulk(ins, b, form, fn, dt):
    o = ins.operands
    cluster = form == "shared::cluster"
    need(ins, 4 if cluster else 3)
    dst, _ = b.address(o[0], ins)
    src, _ = b.address(o[1], ins)
    size = b.read(o[2], T.get("u32"), ins)
    at = barrier_addr(b, ins, o[3]) if cluster else None       # .L2::cache_hint's policy: a hint, unread
    site = ins.extra["site"]

    def body(bt, thr):
        d, s_, n = values(dst, bt, thr), CL.cta_offsets(bt, values(src, bt, thr), thr), values(size, bt, thr)
        own = bt.cta_index[thr]
        if cluster:
            cta, d, _ = CL.resolve(bt, d, thr, 1, ins.name)
            mcta = at(bt, thr)[0] // bt.S
        for j, t in enumerate(thr):
            bad = [x for x in (d[j], s_[j], n[j]) if x % BULK_ALIGN]
            if bad or n[j] <= 0:
                raise Fault(t, s_[j], f"{ins.name}: addresses {int(d[j]):#x}, {int(s_[j]):#x} and size {int(n[j])} "
                                      f"must be positive multiples of {BULK_ALIGN} bytes", "misaligned", "shared")
            for what, a in (("source", s_[j]),) + ((("destination", d[j]),) if cluster else ()):
                if a < 0 or a + n[j] > bt.smem_size:
                    raise Fault(t, a, f"{ins.name}: the {what} {int(a):#x} + {int(n[j])} bytes is outside the "
                                      f"CTA's shared memory ({bt.smem_size} bytes)", "out_of_bounds", "shared")
            so = int(own[j] * bt.S + s_[j])
            data = bt.smem[so:so + n[j]]
            elems = np.arange(0, int(n[j]), dt.itemsize)
            if cluster:
                if mcta[j] != cta[j]:
                    raise Fault(t, d[j], f"{ins.name}: the mbarrier is not in the destination's CTA (cluster rank "
                                         f"{int(d[j]) >> CL.RANK_SHIFT})", "invalid_operand", "shared::cluster")
                do = int(cta[j] * bt.S + d[j])
                reduce_into(bt.smem, do + elems, data.copy(), fn, dt)
                bt.events.access(Access("bulk", "shared::cluster" if cta[j] != own[j] else "shared", site, int(n[j]),
                                        np.array([t]), np.array([d[j]]), np.array([do]), "atomic", proxy="async",
                                        target=np.array([cta[j]])))
            else:
                off = int(bt.heap.check(np.array([d[j]], np.int64), int(n[j]), np.array([t]))[0])
                reduce_into(bt.heap.data, off + elems, data, fn, dt)
            bt.events.access(Access("bulk", "shared", site, int(n[j]), np.array([t]), np.array([s_[j]]),
                                    np.array([so]), "read", proxy="async", target=np.array([own[j]])))
        return [(j, int(cta[j]), int(n[j])) for j in range(len(thr))] if cluster else []
    return {"fn": copy_step(ins, at, body)}


def _tensor(ins, b, prog, dim, op):
    o = ins.operands
    need(ins, 2)
    maps, coords = tensor_ref(ins, b, prog, o[0], dim)
    smem_addr, _ = b.address(o[1], ins)
    site = ins.extra["site"]
    fns = {}

    def fn_for(gm, t):
        names = _MAP_AS.get(gm.dtype, ())
        tname = next((x for x in names if x in TYPES["tensor"][op]), None)
        if tname is None:
            raise Fault(t, gm.base, f"{ins.name}: .{op} on a tensor map of "
                                    f"{gm.dtype or 'unknown (give TensorMapArg(dtype=...))'} elements: PTX ISA "
                                    f"9.7.9.25.5.3 allows {_allowed('tensor', op)}", "invalid_tensor_map")
        key = (tname, gm.dtype)
        if key not in fns:
            dt = storage(tname)
            fns[key] = (element_fn(op, tname, ftz=gm.dtype == "f32.ftz"), dt)
        return fns[key]

    def body(bt, thr):
        sa_all = CL.cta_offsets(bt, values(smem_addr, bt, thr), thr)
        ma = maps(bt, thr)
        cs = np.stack([values(c, bt, thr) for c in coords], axis=1)
        for j, t in enumerate(thr):
            gm = TM.resolve(bt, ma[j], t, ins.name)
            fn, dt = fn_for(gm, t)
            c = tuple(int(x) for x in cs[j])
            sa, _ = box(bt, gm, c, int(sa_all[j]), t, ins.name)
            off, inside = gm.elements(c)                     # elements outside the tensor are skipped
            src = sa[inside].reshape(-1)
            flat = bt.smem_base[t] + src
            data = bt.smem[flat[:, None] + np.arange(gm.e)]
            reduce_into(bt.heap.data, off[inside], data, fn, dt)
            bt.events.access(Access("tma", "shared", site, gm.e, np.array([t]), src.reshape(1, -1),
                                    flat.reshape(1, -1), "read", proxy="async",
                                    target=np.array([bt.cta_index[t]])))
        return []
    return {"fn": copy_step(ins, None, body)}
