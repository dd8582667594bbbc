"""wgmma (sm_90a): wgmma.fence / commit_group / wait_group and wgmma.mma_async of every catalog
form, A from shared memory (descriptor) or registers, B from shared memory. PTX ISA 9.0,
9.7.15.5 ('Asynchronous Warpgroup Level Matrix Multiply-Accumulate').

wgmma.mma_async is a warpgroup collective: the scheduler runs it (sync "warpgroup") only when all
four warps of the warpgroup (warps 4g .. 4g+3 of the CTA) are there, and then for every
warpgroup of the batch that executes it at once. What it computes is layoutsim.warpcore.wgmma's
(the core layoutsim.sim's Warpgroup.wgmma runs on too): D and A through the catalog's
FragmentMaps, the shared operands through layoutsim.smem.operand_addresses (the descriptor
readings the H200 confirmed), the arithmetic layoutsim.mma's (the run's arch profile). This
module checks the operands, the warpgroups and the addresses, and charges the cost.
Operand options (PTX ISA 9.7.15.5.2):
  scale-d false      D = A*B (the accumulator read as +0)
  imm-scale-a/b -1   every element of A / B negated (its sign bit flipped) before the multiply
  imm-trans-a/b 1    the operand is MN-major (16-bit types only)
  .satfinite         integer results clamped to the s32 range (the catalog entry with its option)

The operation runs at the rendezvous and its D is written at once: wgmma.fence, commit_group and
wait_group then have nothing left to order. PTX leaves reading D (or writing A, B, D) between the
mma_async and the wait_group that covers it undefined, so a correct kernel sees the same values;
a kernel that breaks that rule sees the finished result here, not a fault.

Cost: the GMMA unit reads the shared operands, one GMMA wavefront per 128 bytes
(sim/costing.wgmma_cost, measured on the H200): kind "gmma" per PTX line, outside the shared
ld/st totals (ncu's op_gmma, not op_ld); Run.gmma_wavefronts sums them.
"""
import dataclasses

import numpy as np

from .. import archs, smem
from ..errors import LayoutsimError
from ..warpcore import mma as core_mma
from ..warpcore import registers as core_regs
from ..warpcore import wgmma as core_wgmma
from . import mma_regs
from . import types as T
from .builders import unsupported
from .collective import ALIGNED, check_warps, partial, short_name
from .events import Access
from .ops_matrix import catalog, read_words, write_words
from .state import Fault
from . import lines

THREADS = 128


def _sync_only(ins, b, prog):
    # fence / commit_group / wait_group: the mma_async ran at its rendezvous, nothing to wait for;
    # .aligned: every lane of the warp executes them (collective.py)
    return {"fn": check_warps(ins)}


def _imm(ins, op, what, valid):
    if op.kind != "imm" or op.value not in valid:
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: {what} must be an immediate "
                             f"{' or '.join(map(str, valid))}, not {op}")
    return op.value


def _wgmma(ins, b, prog):
    sub = ins.mods[0] if ins.mods else ""
    if sub in ("fence", "commit_group", "wait_group"):
        return _sync_only(ins, b, prog)
    if sub != "mma_async":
        raise unsupported(ins)
    if "sp" in ins.mods:
        raise unsupported(ins, "sparse wgmma.mma_async.sp")
    sat = "satfinite" in ins.mods
    cat = catalog(ins, ".".join(("wgmma",) + tuple(m for m in ins.mods if m != "satfinite")))
    if prog.arch not in cat.archs:
        raise unsupported(ins, f"wgmma exists on {', '.join(cat.archs)} (compiled for "
                               f"{', '.join(map(archs.target_of_device, cat.archs))}); this run's "
                               f"arch is {prog.arch}")
    fa = cat.formats["a"]
    if sat:
        if cat.formats["d"] != "s32":
            raise unsupported(ins, ".satfinite is for the integer forms")
        cat = dataclasses.replace(cat, options={**cat.options, "satfinite": True})
    o = ins.operands
    regs_a = len(o) > 1 and o[1].kind == "vec"
    floating = fa not in ("s8", "u8")
    trans_ok = fa in ("f16", "bf16")
    want = 4 if not floating else 6 + (trans_ok and (1 if regs_a else 2))
    if len(o) != want:
        form = "d, a, b-desc, scale-d" if regs_a else "d, a-desc, b-desc, scale-d"
        extra = ", imm-scale-a, imm-scale-b" if floating else ""
        extra += ("" if not trans_ok else ", imm-trans-b" if regs_a else ", imm-trans-a, imm-trans-b")
        raise LayoutsimError(f"{lines.of(ins)}: {ins.name} takes {want} operands ({form}{extra}); "
                             f"{len(o)} given")
    neg_a = floating and _imm(ins, o[4], "imm-scale-a", (1, -1)) == -1
    neg_b = floating and _imm(ins, o[5], "imm-scale-b", (1, -1)) == -1
    trans_a = trans_ok and not regs_a and _imm(ins, o[6], "imm-trans-a", (0, 1)) == 1
    trans_b = trans_ok and _imm(ins, o[-1], "imm-trans-b", (0, 1)) == 1
    fd = cat.operand("D").fragment
    dregs = b.elems(o[0], ins)
    rd, wd = read_words(b, dregs, ins), write_words(b, dregs, ins)
    ra = read_words(b, b.elems(o[1], ins), ins) if regs_a else None
    # D (and a register A) gathered from and scattered to the registers directly (mma_regs.py)
    gd, sd_ = mma_regs.gather(b, ins, dregs, fd, THREADS), mma_regs.scatter(b, ins, dregs, fd, THREADS)
    ga = mma_regs.gather(b, ins, b.elems(o[1], ins), cat.operand("A").fragment, THREADS) if regs_a else None
    direct = gd is not None and sd_ is not None and (ga is not None or not regs_a)
    da = None if regs_a else b.read(o[1], T.get("b64"), ins)
    db = b.read(o[2], T.get("b64"), ins)
    sd = b.read(o[3], T.get("pred"), ins)
    arch = prog.arch
    for frag, regs, what in ((fd, dregs, "D"),) + (((cat.operand("A").fragment, b.elems(o[1], ins), "A"),)
                                                     if regs_a else ()):
        n = sum(2 if b.rtype(r, ins).bits == 64 else 1 for r in regs)
        if n != core_regs.n_words(frag):
            raise LayoutsimError(f"{lines.of(ins)}: {ins.name}: {what} takes {core_regs.n_words(frag)} "
                                 f"32-bit registers per thread; {n} given")

    def fn(bt, g, full):
        thr = _warpgroups(bt, g, ins)
        if len(thr) == 0:
            return
        bt.events.sync("async")
        lead = thr[:, 0]
        scale = _uniform(np.broadcast_to(np.asarray(sd(bt)), (bt.T,))[thr], thr, ins, "scale-d")
        fast = direct and bt.fast
        if regs_a:
            A = ga(bt, lead) if fast else core_wgmma.register_a(cat, ra(bt)[thr])
        else:
            A = _read_shared(bt, cat, "A", _uniform(_words64(da, bt, thr), thr, ins, "A descriptor"), trans_a,
                             lead, ins)
        B = _read_shared(bt, cat, "B", _uniform(_words64(db, bt, thr), thr, ins, "B descriptor"), trans_b,
                         lead, ins)
        if fast:
            D = core_mma.raw_result(core_wgmma.product(cat, A, B, gd(bt, lead), scale, neg_a, neg_b, arch),
                                    len(lead), fd)
            if D.dtype == sd_.dtype:
                sd_(bt, lead, D)
                return
            wd(bt, core_regs.result_words(fd, D).reshape(thr.size, -1), thr.reshape(-1), g)
            return
        D = core_wgmma.run(cat, A, B, rd(bt)[thr], scale, neg_a, neg_b, arch)
        wd(bt, D.reshape(thr.size, -1), thr.reshape(-1), g)
    return {"fn": fn}


def _words64(read, bt, thr):
    """The 64-bit operand values of the threads thr (an immediate repeated)."""
    v = np.asarray(read(bt))
    return (v[thr] if v.ndim else np.full(thr.shape, v)).astype(np.uint64)


def _uniform(v, thr, ins, what):
    """One value per warpgroup: PTX requires the same one in every thread of it."""
    bad = v != v[:, :1]
    if np.count_nonzero(bad):
        i, j = np.argwhere(bad)[0]
        raise Fault(thr[i, j], 0, f"{ins.name}: the threads of the warpgroup give different {what} values "
                                  f"({int(v[i, 0]):#x} and {int(v[i, j]):#x}): undefined behaviour",
                    "not_uniform")
    return v[:, 0]


def _warpgroups(bt, g, ins):
    """Batch threads [nG, 128] of the warpgroups executing: every one of their threads must
    (.aligned; collective.py words the refusal)."""
    if bt.pad == bt.tpc and bt.tpc % THREADS == 0 and np.count_nonzero(g) == g.size:     # every thread: warpgroups in order
        return np.arange(bt.T, dtype=np.int64).reshape(-1, THREADS)
    w = np.flatnonzero(g.reshape(bt.W, 32).any(1))
    if len(w) == 0:
        return np.zeros((0, THREADS), np.int64)
    key = np.unique((w // bt.wpc) * bt.pad + (w % bt.wpc) // 4 * THREADS)    # CTA slot + warpgroup start
    start = key % bt.pad
    short = start + THREADS > bt.tpc
    if short.any():
        i = int(np.flatnonzero(short)[0])
        op = short_name(ins)
        raise Fault(key[i], 0, f"{op} run by a partial warpgroup: a block of {bt.tpc} threads runs a partial "
                               f"warpgroup ({int(start[i]) // THREADS}); wgmma needs all 128 threads (a "
                               f"warpgroup is 4 whole warps) ({ALIGNED.format(group='warpgroup', op=op)})",
                    "partial_warpgroup")
    thr = key[:, None] + np.arange(THREADS)
    missing = ~g[thr]
    if missing.any():
        raise partial(bt, ins, thr[int(np.flatnonzero(missing.any(1))[0])], g, "warpgroup")
    return thr


_CHECKED = {}            # (instruction, operand, trans, descriptor value, shared bytes) -> _one_value's answer
CHECKED_MAX = 512        # kept; a full table starts again


def _one_value(cat, which, value, trans, smem_size):
    """(addresses [1, rows, cols], element bytes, element index [rows, cols] in the shared window
    viewed as elements or None where an element is not aligned to its size) of one descriptor
    value whose every element lies inside the CTA's shared memory; None when one does not (the
    general path of _read_shared then words the fault). A function of its arguments alone: kept."""
    key = (cat.name, which, trans, value, smem_size)
    if key in _CHECKED:
        return _CHECKED[key]
    uaddr = core_wgmma.addresses(cat, which, np.array([value], np.uint64), trans)
    e = core_wgmma.element_bytes(cat, which)
    got = None
    if not ((uaddr < 0) | (uaddr + e > smem_size)).any():
        uaddr.flags.writeable = False
        got = (uaddr, e, None if (uaddr % e).any() else uaddr[0] // e)
    if len(_CHECKED) >= CHECKED_MAX:
        _CHECKED.clear()
    _CHECKED[key] = got
    return got


def _read_shared(bt, cat, which, desc, trans, lead, ins):
    """Raw bits of operand `which` ((M, K) for A, (K, N) for B) of each warpgroup, read through its
    descriptor value: layoutsim.smem.operand_addresses, then the CTA's shared memory."""
    # the warpgroups of a batch mostly hold the same few descriptor values (each CTA's own shared
    # memory at the same offsets): each distinct value is decoded and checked once
    one = np.count_nonzero(desc != desc[0]) == 0     # one value (what np.unique would find)
    got = _one_value(cat, which, int(desc[0]), bool(trans), bt.smem_size) if one and bt.fast else None
    if got is not None:                     # checked before: the elements' addresses and indices
        uaddr, e, index = got
        addr = uaddr[np.zeros(len(desc), np.intp)]                        # [nG, rows, cols]
        base = bt.smem_base[lead]
        flat = base[:, None, None] + addr
        if index is not None and bt.S % e == 0 and e in bt.smem_v:       # every CTA's window starts aligned
            raw = bt.smem_v[e].take(index + (base // e)[:, None, None])
        else:
            raw = core_wgmma.gather(cat, which, bt.smem, flat)
        bt.events.access(Access("wgmma", "shared", ins.extra["site"], e, lead, addr, flat, proxy="async"))
        return raw
    if one:
        vals, inv = desc[:1].copy(), np.zeros(desc.shape, np.intp)
    else:
        vals, inv = np.unique(desc, return_inverse=True)
    uaddr = core_wgmma.addresses(cat, which, vals, trans)                 # [distinct, rows, cols]
    e = core_wgmma.element_bytes(cat, which)
    bad = (uaddr < 0) | (uaddr + e > bt.smem_size)
    if bad.any():
        i = int(np.flatnonzero(bad.reshape(len(vals), -1).any(1)[inv])[0])     # the first warpgroup hit
        r, c = (int(x) for x in np.argwhere(bad[inv[i]])[0])
        why = smem.operand_fault(cat, which, int(desc[i]), trans, bt.smem_size, uaddr[inv[i]]) if bt.smem_size \
            else f"the {which} descriptor reads shared memory and the CTA has none"
        raise Fault(lead[i], int(uaddr[inv[i], r, c]), f"{why} (the CTA's shared memory)", "out_of_bounds", "shared")
    addr = uaddr[inv.reshape(-1)]                                         # [nG, rows, cols]
    flat = bt.smem_base[lead][:, None, None] + addr
    raw = core_wgmma.gather(cat, which, bt.smem, flat)
    # the warpgroup's operand, read by the GMMA unit for its first thread
    bt.events.access(Access("wgmma", "shared", ins.extra["site"], e, lead, addr, flat, proxy="async"))
    return raw
