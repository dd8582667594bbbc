"""Matrix instructions: ldmatrix, stmatrix, mma.sync (catalog layouts, layoutsim.mma
arithmetic) and nvcuda::wmma load/store/mma (wmma.py). Every one is warp-collective
(.sync.aligned): it runs for whole warps, batched over all warps of all CTAs that execute it;
a warp with a lane missing is refused (collective.py: the PTX ISA leaves that undefined).

What each instruction does to registers and memory is layoutsim.warpcore's (the one core that
layoutsim.sim also runs on: how ldmatrix moves bytes, how an mma's words map to matrices, where a
wmma element lies): nothing here knows where an element lives. This module is the executor's
side: operands, whole-warp checks, addresses located and faulted, costs, races, initcheck.
"""
import numpy as np

from .. import sass as SASS
from ..errors import LayoutsimError
from ..isa.ptx_mma_kind import container, selected
from ..isa.registry import get
from ..warpcore import ldmatrix as core_ldmatrix
from ..warpcore import mma as core_mma
from ..warpcore import registers as core_regs
from ..warpcore import wmma as core_wmma
from . import cluster as CL
from . import types as T
from . import mma_regs, mma_runs
from . import wmma as WM
from .access import locate, space_of
from .builders import exactly, need, unsupported
from .collective import whole_warps
from .events import Access, WmmaPattern
from .state import GLOBAL_BASE, LOCAL_WINDOW, SHARED_WINDOW, WINDOW, Fault
from . import lines



def catalog(ins, name):
    try:
        return get(name)
    except LayoutsimError as e:
        raise unsupported(ins, str(e)) from None


def _name(ins):
    return ".".join((ins.opcode,) + tuple(m.replace("shared::cta", "shared") for m in ins.mods))


# ---- registers as 32-bit words ---------------------------------------------------------------------
def _regs(b, op, ins):
    return b.elems(op, ins)


def read_words(b, ops, ins):
    """function(batch) -> uint32 [T, n] words of the register list (64-bit registers: lo, hi)."""
    parts = []
    for o in ops:
        rt = b.rtype(o, ins)
        parts.append((b.read(o, T.get("b64") if rt.bits == 64 else T.get("b32"), ins), rt.bits == 64))

    n = sum(2 if wide else 1 for _, wide in parts)
    plain = b.plain_words(ops, ins)
    if plain is not None:                      # 32-bit registers of one storage: one stack
        slots = plain[0]

        def words(bt):
            regs = bt.regs
            return np.stack([regs[s] for s in slots], axis=1).view(np.uint32)
        return words

    def f(bt):
        out = np.empty((bt.T, n), np.uint32)   # each column assigned (a scalar broadcasts), cast to 32 bits
        j = 0
        for r, wide in parts:
            v = r(bt)
            if wide:
                out[:, j] = v & np.uint64(0xFFFFFFFF)
                out[:, j + 1] = v >> np.uint64(32)
                j += 2
            else:
                out[:, j] = v
                j += 1
        return out
    return f


def write_words(b, ops, ins):
    """function(batch, words uint32 [n_threads, n], threads, g) storing into the registers."""
    parts = []
    for o in ops:
        rt = b.rtype(o, ins)
        parts.append((b.write(o, T.get("b64") if rt.bits == 64 else T.get("b32"), ins), rt.bits == 64))

    plain = b.plain_words(ops, ins)

    def f(bt, words, thr, g):
        every = len(thr) == bt.T          # every warp of the batch: thr is 0 .. T-1 in order
        if every and plain is not None and words.dtype == np.uint32:   # the rows of one block
            for s, row in zip(plain[0], np.ascontiguousarray(words.T).view(plain[1])):
                bt.regs[s] = row
            return
        j = 0
        for w, wide in parts:
            if wide:
                val = words[:, j].astype(np.uint64) | (words[:, j + 1].astype(np.uint64) << np.uint64(32))
                j += 2
            else:
                val = words[:, j]
                j += 1
            if every:                     # every thread executes (whole warps): no merge with the old values
                w(bt, np.ascontiguousarray(val), g, True)
                continue
            v = np.zeros(bt.T, val.dtype)
            v[thr] = val
            w(bt, v, g, False)
    return f


def _of_warps(words, thr, bt):
    """words [T, n] of the threads thr [nA, 32] as [nA, 32, n] (a view when every warp runs)."""
    if thr.size == bt.T:
        return words.reshape(bt.W, 32, -1)
    return words[thr]


# ---- ldmatrix / stmatrix -------------------------------------------------------------------------
def _rows(bt, name, addr, thr, cat):
    """Row addresses [nA, count, 8] (CTA-relative shared offsets), checked, and their threads."""
    a = np.asarray(addr(bt))
    a = a[thr] if a.ndim else np.full(thr.shape, a)                     # [nA, 32]
    rows = core_ldmatrix.rows(cat, a)                                   # [nA, count, 8]
    tl = core_ldmatrix.rows(cat, thr)
    flat_rows, flat_thr = rows.reshape(-1), tl.reshape(-1)
    locate(bt, "shared", flat_rows, flat_thr, cat.addressing.row_bytes, name)
    return rows, tl


def _ldmatrix(ins, b, prog):
    cat = catalog(ins, _name(ins))
    row_bytes = cat.addressing.row_bytes
    count, trans, sass = cat.options["num"], bool(cat.options["trans"]), _sass_matrix(cat, ins.opcode == "stmatrix")
    need(ins, 2)
    st = ins.opcode == "stmatrix"
    if st:
        addr, _ = b.address(ins.operands[0], ins)
        read = read_words(b, b.elems(ins.operands[1], ins), ins)
    else:
        addr, _ = b.address(ins.operands[1], ins)
        write = write_words(b, b.elems(ins.operands[0], ins), ins)
        # the rows' elements straight into the registers (mma_regs.py)
        direct = mma_regs.row_load(b, ins, b.elems(ins.operands[0], ins), cat.operand("R").fragment, row_bytes)
    name = ins.name

    def fn(bt, g, full):
        w, thr = whole_warps(bt, g, ins)         # .aligned: a partial warp is refused
        if len(w) == 0:
            return
        rows, tl = _rows(bt, name, addr, thr, cat)
        flat = bt.smem_base[thr[:, :1, None]] + rows                      # [nA, count, 8]
        if st:
            idx, data = core_ldmatrix.store(cat, flat, _of_warps(read(bt), thr, bt))
            bt.smem[idx] = data
        elif direct is not None and bt.fast and bt.S % direct.e == 0:     # every CTA's window starts aligned
            direct(bt, thr[:, 0], flat)
        else:
            words = core_ldmatrix.load(cat, bt.smem, flat)                # [nA, 32, regs]
            write(bt, words.reshape(thr.size, -1), thr.reshape(-1), g)
        bt.events.access(Access(ins.opcode, "shared", ins.extra["site"], row_bytes, tl.reshape(-1), rows.reshape(-1),
                                flat.reshape(-1), "write" if st else "read", count, trans, sass=sass))
    return {"fn": fn}


# ---- movmatrix ------------------------------------------------------------------------------------
def _movmatrix(ins, b, prog):
    need(ins, 2)
    if "trans" not in ins.mods or "m8n8" not in ins.mods or "b16" not in ins.mods:
        raise unsupported(ins, "movmatrix: only .m8n8.trans.b16 exists (PTX ISA 9.7.14.5.17)")
    lane, half = core_ldmatrix.movmatrix_sources(get("ldmatrix.x1"))
    read = read_words(b, b.elems(ins.operands[1], ins), ins)
    write = write_words(b, b.elems(ins.operands[0], ins), ins)

    def fn(bt, g, full):
        w, thr = whole_warps(bt, g, ins)         # .aligned: a partial warp is refused
        if len(w) == 0:
            return
        words = _of_warps(read(bt), thr, bt)[..., 0]                      # [nA, 32]
        halves = np.stack([words & np.uint32(0xFFFF), words >> np.uint32(16)], -1)
        got = halves[:, lane, half]                                        # [nA, 32, 2]
        out = (got[..., 0] | (got[..., 1] << np.uint32(16))).astype(np.uint32)
        write(bt, out.reshape(-1, 1), thr.reshape(-1), g)
    return {"fn": fn}


def _sass_matrix(cat, st):
    return SASS.matrix("st" if st else "ld", int(cat.options["num"]), cat.options["trans"])


# ---- mma.sync -----------------------------------------------------------------------------------------
def _mma(ins, b, prog):
    if "sp" in ins.mods or ins.opcode == "mma" and ins.mods and ins.mods[0].startswith("sp"):
        raise unsupported(ins, "sparse mma.sp")
    if "block_scale" in ins.mods:          # sm_120a: the scales come in registers picked by {byte-id, thread-id}
        return _mma_scaled(ins, b, prog)
    cat = catalog(ins, _name(ins))
    need(ins, 4)
    d, a, bb, c = (b.elems(o, ins) for o in ins.operands[:4])
    if cat.family == "mma_kind" and (container(cat, "a") or container(cat, "b")):
        return _mma_scaled(ins, b, prog, cat)
    fn, direct, comp = _mma_fn(b, ins, (a, bb, c, d), cat, prog.arch)
    if cat.family == "mma_kind":           # sm_120a's forms run one step at a time (no mma_runs part)
        return {"fn": fn, "info": {"documented": KIND_DOCUMENTED}}
    if direct is None:
        return {"fn": fn}
    # consecutive independent steps of this form may run as one batch (mma_runs.py)
    fd = cat.operand("D").fragment
    part = mma_runs.Part((cat.name, prog.arch) + tuple(np.dtype(m.storage).str for m in direct), ins, direct, comp,
                         lambda D, n: core_mma.raw_result(D, n, fd),
                         [s for m in direct[:3] for s in m.slots], direct[3].slots)
    return {"fn": fn, "info": {"mma_run": part}}


# ---- sm_120a's .kind:: mma.sync: FP6/FP4 containers, block scales ----------------------------------------
KIND_DOCUMENTED = ("mma.sync .kind:: per PTX ISA 9.7.14.3 + 9.7.14.5.14 (scale registers: CuTe SM120, Triton for sm_120); "
                   "no sm_120 GPU")


def _unpacked(cat, arch, scales=None):
    """compute(A, B, C) of a .kind:: mma.sync: A's and B's FP6/FP4 taken out of their 8-bit containers
    (isa.ptx_mma_kind.container; _check_containers has refused other bits), then layoutsim.mma with
    the scales `scales` (SFA, SFB raw matrices) where block-scaled."""
    comp = core_mma.default_compute(cat, arch)
    extra = {} if scales is None else {"scale_a": scales[0], "scale_b": scales[1]}
    fields = [container(cat, k) for k in "ab"]

    def compute(A, B, C):
        A, B = ((x >> x.dtype.type(f[0])) & x.dtype.type((1 << f[1]) - 1) if f else x for x, f in zip((A, B), fields))
        return comp(A, B, C, **extra)
    return compute


def _check_containers(ins, cat, words, thr):
    """Fault on the first A or B register whose FP6/FP4 container bytes have a bit outside the element's
    field (what the tensor core does with those bits no source read here says)."""
    for key in "ab":
        f = container(cat, key)
        if not f:
            continue
        keep = ((1 << f[1]) - 1) << f[0]
        bad = np.argwhere((words[key.upper()] & np.uint32(~(keep * 0x01010101) & 0xFFFFFFFF)) != 0)
        if len(bad):
            i, j, r = bad[0]
            raise Fault(thr[i, j], 0, f"{ins.name}: {key}{r} = {int(words[key.upper()][i, j, r]):#010x}: a "
                                      f".{cat.formats[key]} element in its byte uses bits {f[0]}-{f[0] + f[1] - 1} "
                                      f"only (PTX ISA 9.7.14.5.14; MMA-Sim, CuTe); other bits set are not "
                                      f"modelled", "invalid_operand")


def _mma_scaled(ins, b, prog, unscaled=None):
    """mma.sync ... .block_scale d, a, b, c, scale-a-data, {byte-id-a, thread-id-a}, scale-b-data,
    {byte-id-b, thread-id-b} (PTX ISA 9.7.14.5.14): SFA / SFB read from each lane's scale register by the
    catalog's maps for the selectors (isa.ptx_mma_kind.selected). Immediate selectors are checked once;
    selectors in registers must be one value per warp (ptxas loops over the distinct values of a
    register selector; the ISA gives one value per instruction) within Table 37's ranges, else a fault.
    `unscaled`: the catalog entry of a .kind::f8f6f4 form with FP6/FP4 operands (no scales: d, a, b, c)."""
    exactly(ins, 4 if unscaled else 8)
    base = unscaled or catalog(ins, _name(ins))
    d, a, bb, c = (b.elems(o, ins) for o in ins.operands[:4])
    sel_ops = [] if unscaled else b.elems(ins.operands[5], ins, 2) + b.elems(ins.operands[7], ins, 2)
    arch = prog.arch
    for name, ops, frag in (("d", d, "D"), ("a", a, "A"), ("b", bb, "B"), ("c", c, "C")):
        _check_words(b, ops, base.operand(frag).fragment, ins, name)
    ra, rb, rc = read_words(b, a, ins), read_words(b, bb, ins), read_words(b, c, ins)
    rs = [] if unscaled else [read_words(b, b.elems(ins.operands[k], ins, 1), ins) for k in (4, 6)]
    wd = write_words(b, d, ins)
    if unscaled:
        fixed, readers = unscaled, None
    elif all(o.kind == "imm" for o in sel_ops):
        try:
            fixed = selected(base, *(o.value for o in sel_ops))
        except LayoutsimError as e:
            raise LayoutsimError(f"{lines.of(ins)}: {e}") from None
        readers = None
    else:
        readers = [b.read(o, T.get("u16"), ins) for o in sel_ops]

    def groups(bt, thr):
        """[(Instruction with the warps' SFA/SFB maps, warp selection)]."""
        if readers is None:
            return [(fixed, slice(None))]
        S = np.stack([np.broadcast_to(np.asarray(r(bt)), (bt.T,))[thr] for r in readers], -1).astype(np.int64)
        odd = np.argwhere((S != S[:, :1]).any(-1))
        if len(odd):
            i, j = odd[0]
            raise Fault(thr[i, j], 0, f"{ins.name}: the threads of the warp give different byte-id/thread-id "
                                      f"selectors ({S[i, 0].tolist()} and {S[i, j].tolist()})", "not_uniform")
        out = []
        for sel in np.unique(S[:, 0], axis=0):
            pick = (S[:, 0] == sel).all(-1)
            try:
                out.append((selected(base, *(int(v) for v in sel)), pick))
            except LayoutsimError as e:
                raise Fault(thr[np.argmax(pick), 0], 0, str(e), "invalid_operand") from None
        return out

    def fn(bt, g, full):
        w, thr = whole_warps(bt, g, ins)         # .aligned: a partial warp is refused
        if len(w) == 0:
            return
        words = {"A": _of_warps(ra(bt), thr, bt), "B": _of_warps(rb(bt), thr, bt), "C": _of_warps(rc(bt), thr, bt)}
        _check_containers(ins, base, words, thr)
        sa, sb = (_of_warps(r(bt), thr, bt) for r in rs) if rs else (None, None)
        out = None
        for inst, pick in groups(bt, thr):
            scales = None if unscaled else (core_regs.operand(inst.operand("SFA").fragment, sa[pick]),
                                            core_regs.operand(inst.operand("SFB").fragment, sb[pick]))
            D = core_mma.run(inst, {k: v[pick] for k, v in words.items()}, arch, _unpacked(inst, arch, scales))
            if readers is None:
                out = D
                break
            out = np.zeros((len(w), *D.shape[1:]), np.uint32) if out is None else out
            out[pick] = D
        wd(bt, out.reshape(len(w) * 32, -1), thr.reshape(-1), g)
    return {"fn": fn, "info": {"documented": KIND_DOCUMENTED}}


def _mma_fn(b, ins, regs, cat, arch, frags=None, compute=None):
    """The step of an MMA: the register words of A, B, C of every executing warp through the
    collective core (warpcore.mma: the catalog entry `cat`'s maps, or `frags` by operand, and
    `compute`, default layoutsim.mma), D's words back into registers. Returns (the step
    function, the direct moves or None, the arithmetic)."""
    a, bb, c, d = regs
    fa, fb, fc, fd = ([frags[k] for k in "ABCD"] if frags is not None else
                      [cat.operand(k).fragment for k in "ABCD"])
    for name, ops, frag in (("d", d, fd), ("a", a, fa), ("b", bb, fb), ("c", c, fc)):
        _check_words(b, ops, frag, ins, name)
    ra, rb, rc = read_words(b, a, ins), read_words(b, bb, ins), read_words(b, c, ins)
    wd = write_words(b, d, ins)
    # the same elements gathered from and scattered to the registers directly (mma_regs.py)
    direct = mma_regs.plan(b, ins, (a, bb, c, d), (fa, fb, fc, fd))
    comp = core_mma.default_compute(cat, arch) if compute is None else compute

    def fn(bt, g, full):
        w, thr = whole_warps(bt, g, ins)         # .aligned: a partial warp is refused
        if len(w) == 0:
            return
        if direct is not None and bt.fast:
            ga, gb, gc, sd = direct
            first = thr[:, 0]
            D = core_mma.raw_result(comp(ga(bt, first), gb(bt, first), gc(bt, first)), len(w), fd)
            if D.dtype == sd.dtype:
                sd(bt, first, D)
                return
            wd(bt, core_regs.result_words(fd, D).reshape(len(w) * 32, -1), thr.reshape(-1), g)
            return
        words = {"A": _of_warps(ra(bt), thr, bt), "B": _of_warps(rb(bt), thr, bt), "C": _of_warps(rc(bt), thr, bt)}
        D = core_mma.run(cat, words, arch, compute, frags=frags)
        wd(bt, D.reshape(len(w) * 32, -1), thr.reshape(-1), g)
    return fn, direct, comp


def _check_words(b, ops, frag, ins, name):
    """Refuse a register list that does not hold exactly the operand's 32-bit words per lane."""
    have = sum(2 if b.rtype(o, ins).bits == 64 else 1 for o in ops)
    want = core_regs.n_words(frag)
    if have != want:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: operand {name} takes {want} 32-bit register "
                             f"word{'s' * (want != 1)} per lane, not {have}: {ins.text}")


# ---- wmma -------------------------------------------------------------------------------------------
def _wmma(ins, b, prog):
    if not ins.mods:
        raise unsupported(ins)
    if ins.mods[0] == "mma":
        return _wmma_mma(ins, b, prog)
    if ins.mods[0] in ("load", "store"):
        return _wmma_move(ins, b, prog)
    raise unsupported(ins)


def _wmma_move(ins, b, prog):
    store = ins.mods[0] == "store"
    use = ins.mods[1]
    layout = next((m for m in ins.mods if m in ("row", "col")), None)
    if layout is None:
        raise unsupported(ins, "wmma layout: .row or .col")
    shape = next((m for m in ins.mods if m in WM.SHAPES), None)
    if shape is None:
        raise unsupported(ins, "wmma shape")
    typ = ins.mods[-1]
    if typ not in WM.ELEM_BITS:
        raise unsupported(ins, f"wmma type .{typ}")
    space = space_of(ins.mods)
    frag = _fragment(ins, use, layout, shape, typ)
    R, C = WM.operand_shape(use, shape)
    esize = WM.ELEM_BITS[typ] // 8
    nwords = core_regs.n_words(frag)
    regs = b.elems(ins.operands[1 if store else 0], ins)
    addr, _ = b.address(ins.operands[0 if store else 1], ins)
    sop = ins.operands[2] if len(ins.operands) > 2 else None
    stride = b.read(sop, T.get("u32"), ins) if sop is not None else None
    default = C if layout == "row" else R
    rw = read_words(b, regs, ins) if store else None
    ww = None if store else write_words(b, regs, ins)
    positions = core_wmma.element_positions(frag)
    verb = "store" if store else "load"

    def fn(bt, g, full):
        w, thr = whole_warps(bt, g, ins)         # .aligned: a partial warp is refused
        if len(w) == 0:
            return
        P = np.broadcast_to(np.asarray(addr(bt)), (bt.T,))[thr]
        S = np.broadcast_to(np.asarray(stride(bt)).astype(np.int64), (bt.T,))[thr] if stride else \
            np.full(thr.shape, default, np.int64)
        bad = (P != P[:, :1]) | (S != S[:, :1])
        if np.any(bad):
            i, j = np.argwhere(bad)[0]
            raise Fault(thr[i, j], P[i, j], f"{ins.name}: the threads of the warp give different "
                                            f"addresses or strides (undefined behaviour)", "not_uniform")
        base, st = P[:, 0], S[:, 0]
        addrs = core_wmma.element_addresses(layout, R, C, base, st, esize)    # [nA, R, C]
        for sp, sel, window in _warp_spaces(space, base):
            views, flat, rel = _fast_locate(bt, sp, addrs[sel] - window, thr[sel, 0], esize, ins)
            unit = views[esize]
            if store:
                core_wmma.store(frag, unit, flat, esize, _of_warps(rw(bt), thr[sel], bt))
            else:
                ww(bt, core_wmma.load(frag, unit, flat, esize).reshape(-1, nwords), thr[sel].reshape(-1), g)
            bt.events.access(Access(
                f"wmma.{verb}", sp, ins.extra["site"], esize, thr[sel, 0], rel,
                flat.reshape(-1) if sp == "shared" else None, "write" if store else "read",
                detail=WmmaPattern(use, layout, shape, typ, frag, positions, st[sel], thr[sel]), per_thread=R * C))
    return {"fn": fn}


def _warp_spaces(space, base):
    """[(state space, warp selection, generic window base)]: a generic wmma access goes where each
    warp's base address points."""
    if space != "generic":
        return [(space, np.ones(len(base), bool), 0)]
    win = base & ~np.int64(WINDOW - 1)
    out = []
    for sp, sel, w in (("shared", win == SHARED_WINDOW, SHARED_WINDOW), ("local", win == LOCAL_WINDOW, LOCAL_WINDOW),
                       ("global", (win != SHARED_WINDOW) & (win != LOCAL_WINDOW), 0)):
        if sel.any():
            out.append((sp, sel, w))
    return out


def _fast_locate(bt, sp, addrs, owners, esize, ins):
    """(views, flat byte offsets [n, R, C], space-relative addresses) of whole-warp wmma accesses,
    checked per warp by its lowest and highest address (a bad warp is then checked element by
    element, to name the first bad element)."""
    n = addrs.shape[0]
    # a shared (generic) address of the CTA's own rank field: its offset (cluster.cta_offsets)
    rel = CL.cta_offsets(bt, addrs, owners[:, None, None]) if sp == "shared" else addrs
    flatrel = rel.reshape(n, -1)
    lo, hi = flatrel.min(axis=1), flatrel.max(axis=1)
    owner_all = np.repeat(owners, flatrel.shape[1])
    try:
        if np.any(lo % esize):
            raise Fault(0, 0, "")
        locate(bt, sp, np.concatenate([lo, hi]), np.concatenate([owners, owners]), esize, ins.name)
    except Fault:
        locate(bt, sp, flatrel.reshape(-1), owner_all, esize, ins.name)     # raises the precise fault
        raise
    if sp == "shared":
        return bt.smem_v, bt.smem_base[owners][:, None, None] + rel, rel
    if sp == "global":
        return bt.heap.v, rel - GLOBAL_BASE, rel
    raise Fault(owners[0], int(lo[0]), f"{ins.name} from local memory: wmma reads only global and shared memory",
                "invalid_address", "local")


def _fragment(ins, use, layout, shape, typ):
    try:
        return WM.fragment(use, layout, shape, typ)
    except LayoutsimError as e:
        raise unsupported(ins, str(e)) from None


def _wmma_mma(ins, b, prog):
    op = ".".join((ins.opcode,) + ins.mods)
    try:
        plan = WM.mma_plan(op)
    except LayoutsimError as e:
        raise unsupported(ins, str(e)) from None
    al, bl = ins.mods[3], ins.mods[4]
    shape = ins.mods[5]
    need(ins, 4)
    d, a, bb, c = (b.elems(o, ins) for o in ins.operands[:4])
    frags = {"A": _fragment(ins, "a", al, shape, plan.a), "B": _fragment(ins, "b", bl, shape, plan.b),
             "C": _fragment(ins, "c", "row", shape, plan.c), "D": _fragment(ins, "d", "row", shape, plan.d)}
    arch = prog.arch
    fn, _, _ = _mma_fn(b, ins, (a, bb, c, d), None, arch, frags, lambda A, B, C: core_wmma.tiled(plan, A, B, C, arch))
    return {"fn": fn, "info": {"sass": plan.sass}}
