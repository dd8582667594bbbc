"""The simulated machine: warps of lanes with 32-bit registers, shared memory and global buffers.

    from layoutsim.sim import Warp
    w = Warp("sm_90")
    w.global_alloc("A", a_f16)                        # named global buffer (bytes of the array)
    w.ld_global("a0", "A", offsets=4 * w.lane)        # one 32-bit word per lane
    w.mma("mma.m16n8k16.f32.f16.f16.f32", d="d", a="a", b="b", c="d")

State: `threads` = warps x wave lanes; every register is a uint32 array over the threads (one
32-bit register per lane). Registers are named (any string; an int n means "r{n}") and come
into existence when written; reading one that was never written is an error. Registers move
raw bits only: what they mean is decided by the catalog fragment maps and `layoutsim.mma`.

Execution model: every instruction runs on all threads of the machine, each warp (or, for
wgmma, each warpgroup) issuing its own copy, as the threads of a CUDA block run the same
code. Addresses are given per thread as integer arrays computed from `w.lane`, `w.tid`,
`w.warp_id` the way a kernel computes them. Memory instructions take an optional active mask.

Every instruction first checks and computes everything, then commits: a bad instruction
raises one LayoutsimError (naming the instruction, the lane and the address where the
hardware would fault) and leaves registers, memory and the trace exactly as they were.
"""
import warnings

import numpy as np

from .. import archs as A
from ..errors import LayoutsimError, integer, suggest
from ..formats import raw_dtype_of_width
from ..packing import pack, squeeze_matrices, unpack, words_per_lane
from . import costing
from ..smem import Descriptor, operand_addresses, operand_fault
from .trace import Run, Trace, TraceEntry

def smem_limit(arch):
    """Shared memory (LDS) one block can address on `arch`, in bytes. The figures live with
    the bank model (layoutsim.banks.model.memory_limit)."""
    from ..banks.model import memory_limit
    return memory_limit(arch)[0]


WIDTHS = (8, 16, 32, 64, 128)


def regs(prefix, n, start=0):
    """["prefix{start}", ..., "prefix{start+n-1}"]: a register list."""
    return [f"{prefix}{i}" for i in range(start, start + n)]


class State:
    """A copy of everything an instruction may change (for tests and for undo)."""

    def __init__(self, m):
        self.regs = {k: v.copy() for k, v in m._regs.items()}
        self.smem = m.smem.copy()
        self.globals = {k: v.data.copy() for k, v in m._global.items()}
        self.trace_len = len(m.trace)

    def __eq__(self, other):
        return (isinstance(other, State) and self.trace_len == other.trace_len
                and self.regs.keys() == other.regs.keys()
                and all(np.array_equal(v, other.regs[k]) for k, v in self.regs.items())
                and np.array_equal(self.smem, other.smem)
                and self.globals.keys() == other.globals.keys()
                and all(np.array_equal(v, other.globals[k]) for k, v in self.globals.items()))


class _Buffer:
    def __init__(self, array):
        a = np.ascontiguousarray(array)
        self.dtype, self.shape = a.dtype, a.shape
        self.data = a.reshape(-1).view(np.uint8).copy()

    def array(self, dtype=None):
        dt = np.dtype(dtype) if dtype is not None else self.dtype
        out = self.data.view(dt)
        return out.reshape(self.shape) if dt == self.dtype else out.copy()


class Machine:
    """`warps` warps of `wave` lanes (32; 64 for AMD wave64) sharing one shared memory."""

    def __init__(self, arch="sm_90", warps=1, wave=None, smem_bytes=None, mma=None):
        self.arch = A.normalize(arch)
        if self.arch is None:
            raise LayoutsimError("the simulator needs an arch, for example arch='sm_90' or 'gfx1201'")
        self.vendor = A.vendor(self.arch)
        wave = 32 if wave is None else wave
        if isinstance(wave, bool) or not isinstance(wave, (int, np.integer)) or wave not in (32, 64) \
                or (self.vendor == "nvidia" and wave != 32):
            raise LayoutsimError(f"wave size {wave!r}: {'NVIDIA warps have 32 lanes' if self.vendor == 'nvidia' else 'valid 32, 64'}")
        most = A.MAX_BLOCK_THREADS // int(wave)
        warps = integer(warps, f"warps (a block holds at most {A.MAX_BLOCK_THREADS} threads)", 1, most)
        self.wave, self.warps = int(wave), warps
        self.threads = self.wave * self.warps
        self.tid = np.arange(self.threads, dtype=np.int64)
        self.lane = self.tid % self.wave
        self.warp_id = self.tid // self.wave
        limit = smem_limit(self.arch)
        size = limit if smem_bytes is None else integer(smem_bytes, f"smem_bytes ({self.arch} gives a "
                                                                    f"block at most {limit} bytes)", 1, limit)
        self.smem = np.zeros(size, np.uint8)
        self._regs = {}
        self._global = {}
        self.trace = Trace()
        self._mma = mma

    def __repr__(self):
        return (f"{type(self).__name__}(arch={self.arch!r}, warps={self.warps}, wave={self.wave}, "
                f"registers={len(self._regs)}, smem={self.smem.size} B, globals={list(self._global)})")

    # ================================================================ host-side access
    # (not instructions: no trace entry; use them to set up and inspect a run)
    def global_alloc(self, name, array):
        """Create (or replace) the named global buffer holding the bytes of `array`."""
        if not isinstance(name, str) or not name:
            raise LayoutsimError(f"global buffer name {name!r}: give a non-empty string")
        self._global[name] = _Buffer(_numeric_array(array, f"global_alloc({name!r})"))

    def global_array(self, name, dtype=None):
        """A copy of a global buffer, in its original dtype and shape (or flat in `dtype`)."""
        buf = self._buffer(name, "global_array")
        if dtype is not None:
            dt = _numeric_dtype(dtype, "global_array")
            if buf.data.size % dt.itemsize:
                raise LayoutsimError(f"global_array: buffer {name!r} holds {buf.data.size} bytes, not a whole "
                                     f"number of {dt} ({dt.itemsize} bytes)")
        return buf.array(dtype).copy()

    def smem_write(self, offset, array):
        """Host-side: copy the bytes of `array` into shared memory at byte `offset`."""
        a = _numeric_array(array, "smem_write").reshape(-1).view(np.uint8)
        offset = self._check_host_range(offset, a.size)
        self.smem[offset:offset + a.size] = a

    def smem_read(self, offset, dtype, shape):
        """Host-side: the shared-memory bytes at `offset` as an array of `dtype` and `shape`."""
        dt = _numeric_dtype(dtype, "smem_read")
        dims = (shape,) if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool) else shape
        try:
            dims = tuple(integer(d, "smem_read: shape dimension", 0, self.smem.size) for d in dims)
        except TypeError:
            raise LayoutsimError(f"smem_read: shape {shape!r}: give a tuple of integers") from None
        n = int(np.prod(dims, dtype=object)) * dt.itemsize
        offset = self._check_host_range(offset, n)
        return self.smem[offset:offset + n].copy().view(dt).reshape(dims)

    def reg(self, name):
        """A copy of one register: uint32 over the threads."""
        return self._read_regs([self._name(name)], "reg")[:, 0].copy()

    def registers(self):
        """Names of the registers defined so far."""
        return list(self._regs)

    def fragment(self, instr, operand, names):
        """Host-side: the operand matrices the registers `names` hold, as raw element bits
        [groups, matrices, rows, cols] (groups = warps, or warpgroups for wgmma)."""
        ins = self._instr(instr, "fragment")
        frag = ins.operand(operand).fragment
        names = self._names(names, words_per_lane(frag), f"{ins.name} {operand}")
        return unpack(frag, self._group_words(names, ins.threads, ins.name))

    def set_fragment(self, instr, operand, names, mats):
        """Host-side: write registers `names` so that they hold operand matrices `mats`
        ([groups, matrices, rows, cols] or [groups, rows, cols] or [rows, cols]: raw bits)."""
        ins = self._instr(instr, "set_fragment")
        frag = ins.operand(operand).fragment
        names = self._names(names, words_per_lane(frag), f"{ins.name} {operand}", dst=True)
        groups = self._groups(ins.threads, ins)
        want = tuple(frag.shape)
        m = np.asarray(mats)
        if not np.issubdtype(m.dtype, np.integer):
            raise LayoutsimError(f"set_fragment: give raw bits as an unsigned integer array, not {m.dtype}")
        if m.ndim == 2:
            m = m[None, None]
        elif m.ndim == 3:
            m = m[None] if want[0] > 1 else m[:, None]
        if m.ndim != 4 or m.shape[1:] != want or m.shape[0] not in (1, groups):
            raise LayoutsimError(f"set_fragment: operand {operand} of {ins.name} is {want[0]} x "
                                 f"{want[1]}x{want[2]} per group ({groups} groups); got shape {np.shape(mats)}")
        if (m < 0).any() or (frag.elem_bits < 64 and (m.astype(np.uint64) >> np.uint64(frag.elem_bits)).any()):
            raise LayoutsimError(f"set_fragment: operand {operand} of {ins.name} holds {frag.elem_bits}-bit "
                                 f"raw bits; values outside 0..{(1 << frag.elem_bits) - 1} given (view signed "
                                 f"or float data as unsigned bits first)")
        m = np.broadcast_to(m, (groups, *want))
        words = pack(frag, m).reshape(self.threads, -1)
        self._commit_regs({n: words[:, j] for j, n in enumerate(names)})

    def snapshot(self):
        """Everything an instruction can change; compare two snapshots with ==."""
        return State(self)

    def run(self, program, *args, **kwargs):
        """Run `program(machine, *args, **kwargs)`; return Run(result, trace of this run, machine)."""
        start = len(self.trace)
        result = program(self, *args, **kwargs)
        return Run(result=result, trace=Trace(self.trace[start:]), machine=self)

    # ================================================================ instructions
    def mov(self, dst, value):
        """mov.b32: dst = value (an int, or one int per thread), kept as 32 raw bits."""
        name = self._name(dst)
        v = np.asarray(value)
        if v.dtype.kind not in "iub":
            raise LayoutsimError(f"mov.b32 {name}: give integer bits (use .view(np.uint32) for floats), "
                                 f"not {v.dtype}")
        if v.ndim and v.shape != (self.threads,):
            raise LayoutsimError(f"mov.b32 {name}: give one value or {self.threads} per-thread values, "
                                 f"not shape {v.shape}")
        vi = v.astype(np.int64) if v.dtype.kind != "u" else v.astype(np.uint64)
        if (vi < -(1 << 31)).any() or (vi > 0xFFFFFFFF).any():
            raise LayoutsimError(f"mov.b32 {name}: value does not fit in 32 bits")
        bits = np.broadcast_to((vi.astype(np.int64) & 0xFFFFFFFF).astype(np.uint32), (self.threads,)).copy()
        self._commit(regs={name: bits}, entry=dict(op="mov.b32", active=self.threads))

    def ld_global(self, dst, buffer, offsets, bits=32, mask=None):
        """ld.global (8/16 bits zero-extend into one register; 64/128 bits fill 2/4 registers).
        `offsets`: per-thread byte offsets into the named buffer."""
        op = self._op("ld", "global", bits)
        buf = self._buffer(buffer, op)
        return self._load(op, dst, buf.data, offsets, bits, mask, where=f"buffer {buffer!r}")

    def st_global(self, buffer, offsets, src, bits=32, mask=None):
        op = self._op("st", "global", bits)
        buf = self._buffer(buffer, op)
        return self._store(op, buf.data, offsets, src, bits, mask, where=f"buffer {buffer!r}",
                           target=("global", buffer))

    def ld_shared(self, dst, offsets, bits=32, mask=None):
        """ld.shared / ds_read: per-thread byte addresses in shared memory; costed by the bank model."""
        op = self._op("ld", "shared", bits)
        return self._load(op, dst, self.smem, offsets, bits, mask, where="shared memory", shared=True)

    def st_shared(self, offsets, src, bits=32, mask=None):
        op = self._op("st", "shared", bits)
        return self._store(op, self.smem, offsets, src, bits, mask, where="shared memory",
                           target=("shared", None), shared=True)

    def ldmatrix(self, instr, dst, offsets):
        """ldmatrix.m8n8.x{1,2,4}[.trans]: lanes named by the catalog's addressing give 16-byte
        row addresses; the registers receive the b16 elements the catalog's fragment says."""
        ins = self._instr(instr, "ldmatrix", families=("ldmatrix",))
        frag = ins.operand("R").fragment
        names = self._names(dst, frag.regs, ins.name, dst=True)
        addr = self._row_addresses(ins, offsets)                  # [groups, count, 8]
        rows = self.smem[addr[..., None] + np.arange(16)]        # [groups, count, 8, 16]
        rows = np.ascontiguousarray(rows).view("<u2")             # [groups, count, 8, 8]
        words = pack(frag, rows).reshape(self.threads, -1)
        cost = self._cost(_short(ins), self._row_lane_offsets(ins, addr))
        self._commit(regs={n: words[:, j] for j, n in enumerate(names)},
                     entry=dict(op=_short(ins), instruction=ins.name, active=self.threads, **cost))

    def stmatrix(self, instr, offsets, src):
        """stmatrix.m8n8.x{1,2,4}[.trans]: the inverse of ldmatrix."""
        ins = self._instr(instr, "stmatrix", families=("stmatrix",))
        frag = ins.operand("R").fragment
        names = self._names(src, frag.regs, ins.name)
        words = self._group_words(names, ins.threads, ins.name)
        addr = self._row_addresses(ins, offsets)                  # [groups, count, 8]
        rows = unpack(frag, words)                                # [groups, count, 8, 8] uint16
        data = np.ascontiguousarray(rows.astype("<u2")).view(np.uint8)   # [groups, count, 8, 16]
        idx = addr[..., None] + np.arange(16)
        cost = self._cost(_short(ins), self._row_lane_offsets(ins, addr))
        self._commit(smem=[(idx.reshape(-1), data.reshape(-1))],
                     entry=dict(op=_short(ins), instruction=ins.name, active=self.threads, **cost))

    def mma(self, instr, d, a, b, c, index=None):
        """mma.sync (NVIDIA) or WMMA / SWMMAC / MFMA (AMD): gather A, B, C through the catalog
        fragments as raw bits (every block of a multi-block MFMA), compute with layoutsim.mma,
        scatter D's bits into the registers `d`.
        Register lists: a list of names, or a prefix ("a" -> a0, a1, ...); c=None means C = 0.
        `index`: SWMMAC only, the register holding the sparsity index (the IDX operand)."""
        ins = self._instr(instr, "mma", families=("mma", "wmma", "swmmac", "mfma"))
        ops = ins.operands
        sparse = ins.family == "swmmac"
        if sparse and index is None:
            raise LayoutsimError(f"{ins.name}: give index=, the register holding the sparsity index")
        if not sparse and index is not None:
            raise LayoutsimError(f"{ins.name}: index= is for sparse swmmac instructions only")
        args = (("a", a), ("b", b), ("d", d)) + ((("c", c),) if c is not None else ()) \
            + ((("idx", index),) if sparse else ())
        names = {k: self._names(v, words_per_lane(ops[k.upper()].fragment), f"{ins.name} {k.upper()}",
                                dst=(k == "d"))
                 for k, v in args}
        mats = {k: squeeze_matrices(unpack(ops[k.upper()].fragment,
                                           self._group_words(names[k], ins.threads, ins.name)))
                for k in ("a", "b", "c", "idx") if k in names}
        groups = self._groups(ins.threads, ins)
        if "c" not in mats:
            mats["c"] = _zeros_like_operand(ops["C"].fragment, groups)
        self._execute_mma(ins, names["d"], mats, note="")

    def wgmma(self, instr, d, a, b, scale_d=True, trans_a=False, trans_b=False):
        """wgmma.mma_async (sm_90), executed at once (as if followed by commit and wait 0).
        `a`: registers (list or prefix) holding the A fragment, or a layoutsim.smem.Descriptor /
        64-bit descriptor; `b`: a Descriptor / 64-bit descriptor (any swizzle mode and base offset,
        see layoutsim.smem); trans_a / trans_b: imm-trans-a/-b (MN-major, 16-bit types only);
        D = A*B + D when scale_d, else A*B."""
        ins = self._instr(instr, "wgmma", families=("wgmma",))
        groups = self._groups(ins.threads, ins)
        if groups != 1:
            raise LayoutsimError(f"{ins.name}: the machine has {self.warps} warps; wgmma runs on one "
                                 f"warpgroup of 4 warps (use Warpgroup)")
        M, N, K = ins.shape
        dfrag = ins.operand("D").fragment
        dnames = self._names(d, words_per_lane(dfrag), f"{ins.name} D", dst=True)
        mats, notes = {}, []
        if isinstance(a, (Descriptor, int, np.integer)):
            mats["a"] = self._desc_read(ins, "A", a, trans_a)[None]
            notes.append("A")
        else:
            if trans_a:
                raise LayoutsimError(f"{ins.name}: trans_a is for A read from shared memory; A is in registers")
            anames = self._names(a, words_per_lane(ins.operand("A").fragment), f"{ins.name} A")
            mats["a"] = unpack(ins.operand("A").fragment, self._group_words(anames, 128, ins.name))[:, 0]
        mats["b"] = self._desc_read(ins, "B", b, trans_b)[None]
        notes.append("B")
        if scale_d:
            mats["c"] = unpack(dfrag, self._group_words(dnames, 128, ins.name))[:, 0]
        else:
            mats["c"] = _zeros_like_operand(dfrag, 1)
        nbytes = sum(int(mats[k.lower()].nbytes) for k in notes)          # the operands read from smem
        wavefronts, ideal, conflicts = costing.wgmma_cost(nbytes)
        note = (f"{' and '.join(notes)} read from shared memory by descriptor: {nbytes} bytes = {wavefronts} "
                f"GMMA wavefronts (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma; conflicts not modelled)")
        self._execute_mma(ins, dnames, mats, note=note,
                          cost=dict(wavefronts=wavefronts, ideal=ideal, conflicts=conflicts))

    # ================================================================ internals
    def _execute_mma(self, ins, dnames, mats, note, cost=None):
        fn = self._mma
        if fn is None:
            from ..numerics import mma as fn
        dfrag = ins.operand("D").fragment
        try:
            extra = {"index": mats["idx"]} if "idx" in mats else {}
            out = fn(ins, mats["a"], mats["b"], mats["c"], arch=self.arch, **extra)
        except LayoutsimError as e:
            msg = str(e)
            raise LayoutsimError(msg if ins.name in msg else f"{ins.name}: {msg}") from None
        out = np.ascontiguousarray(np.asarray(out))
        one = dfrag.shape[0] == 1                  # one matrix; MFMA blocks stay a dimension
        want = (mats["a"].shape[0], *(dfrag.shape[1:] if one else dfrag.shape))
        if out.shape != want:
            raise AssertionError(f"layoutsim.mma returned shape {out.shape}, expected {want}")
        dbits = out.view(np.dtype(f"u{out.dtype.itemsize}"))
        old = self._group_words(dnames, ins.threads, ins.name) if all(n in self._regs for n in dnames) else None
        words = pack(dfrag, dbits[:, None] if one else dbits, old).reshape(self.threads, -1)
        self._commit(regs={n: words[:, j] for j, n in enumerate(dnames)},
                     entry=dict(op=_short(ins), instruction=ins.name, active=self.threads, note=note,
                                **(cost or {})))

    def _desc_read(self, ins, which, desc, trans):
        """Raw bits of operand `which` ((M, K) for A, (K, N) for B) read through a descriptor."""
        from ..formats import bits as fmt_bits
        if not isinstance(desc, (Descriptor, int, np.integer)):
            raise LayoutsimError(f"{ins.name}: {which} from shared memory needs a layoutsim.smem.Descriptor "
                                 f"or a 64-bit descriptor value, not {desc!r}")
        desc = Descriptor.of(desc)
        addr = operand_addresses(ins, which, desc, trans)
        e = fmt_bits(ins.formats[which.lower()]) // 8
        fault = operand_fault(ins, which, desc, trans, self.smem.size, addr)
        if fault:
            raise LayoutsimError(fault)
        raw = self.smem[addr[..., None] + np.arange(e)]           # [rows, cols, e]
        return np.ascontiguousarray(raw).view(f"<u{e}")[..., 0]

    def _load(self, op, dst, mem, offsets, bits, mask, where, shared=False):
        nw = max(1, bits // 32)
        names = self._names(dst, nw, op, dst=True, vector=bits > 32)
        act = self._mask(mask, op)
        addr = self._offsets(offsets, op, act)
        nb = bits // 8
        self._check_addresses(op, addr, act, nb, mem.size, where)
        cost = self._cost(op, addr, act) if shared else {}
        ta = np.flatnonzero(act)
        raw = mem[addr[ta, None] + np.arange(nb)]                 # [n_active, nb]
        if nb < 4:
            raw = np.concatenate([raw, np.zeros((raw.shape[0], 4 - nb), np.uint8)], axis=1)
        words = np.ascontiguousarray(raw).view("<u4")             # [n_active, nw]
        out = {}
        for j, n in enumerate(names):
            v = self._regs[n].copy() if n in self._regs else np.zeros(self.threads, np.uint32)
            v[ta] = words[:, j]
            out[n] = v
        self._commit(regs=out, entry=dict(op=op, active=len(ta), **cost))

    def _store(self, op, mem, offsets, src, bits, mask, where, target, shared=False):
        nw = max(1, bits // 32)
        names = self._names(src, nw, op, vector=bits > 32)
        act = self._mask(mask, op)
        addr = self._offsets(offsets, op, act)
        vals = self._read_regs(names, op)                         # [threads, nw]
        nb = bits // 8
        self._check_addresses(op, addr, act, nb, mem.size, where)
        cost = self._cost(op, addr, act) if shared else {}
        ta = np.flatnonzero(act)
        data = np.ascontiguousarray(vals[ta].astype("<u4")).view(np.uint8)[:, :nb]
        idx = addr[ta, None] + np.arange(nb)
        kind, name = target
        writes = [(idx.reshape(-1), data.reshape(-1))]
        if kind == "shared":
            self._commit(smem=writes, entry=dict(op=op, active=len(ta), **cost))
        else:
            self._commit(glob=(name, writes), entry=dict(op=op, active=len(ta), **cost))

    def _row_addresses(self, ins, offsets):
        """ldmatrix/stmatrix: the row addresses [groups, count, 8], checked."""
        op = _short(ins)
        lanes = np.asarray(ins.addressing.lanes, dtype=np.int64)  # [count, 8]
        groups = self._groups(ins.threads, ins)
        thr = np.arange(groups)[:, None, None] * ins.threads + lanes[None]
        act = np.zeros(self.threads, bool)
        act[thr.reshape(-1)] = True                               # only the address-giving lanes
        addr = self._offsets(offsets, op, act)
        self._check_addresses(op, addr, act, ins.addressing.row_bytes, self.smem.size, "shared memory",
                              align=16)
        return addr[thr]

    def _row_lane_offsets(self, ins, addr):
        """Per-thread offsets for the bank model, with the lanes that give no address masked."""
        lanes = np.asarray(ins.addressing.lanes, dtype=np.int64)
        groups = addr.shape[0]
        full = np.zeros(self.threads, np.int64)
        act = np.zeros(self.threads, bool)
        thr = (np.arange(groups)[:, None, None] * ins.threads + lanes[None]).reshape(-1)
        full[thr] = addr.reshape(-1)
        act[thr] = True
        return full, act

    def _cost(self, op, addr, act=None):
        """Bank-model cost of one shared access (per warp, summed)."""
        if isinstance(addr, tuple):
            addr, act = addr
        per_warp = []
        # one bank-model access per 32 lanes: a warp, or each half of an AMD wave64 (assumed
        # to be served as two wave32 halves, like its VALU work)
        for w in range(self.threads // 32):
            sl = slice(w * 32, (w + 1) * 32)
            if act[sl].any():
                per_warp.append(costing.cost(op, addr[sl], act[sl], self.arch))
        if not per_warp:
            return {"wavefronts": 0, "ideal": 0, "conflicts": 0}
        return {"wavefronts": sum(p[0] for p in per_warp), "ideal": sum(p[1] for p in per_warp),
                "conflicts": sum(p[2] for p in per_warp), "per_warp": tuple(per_warp)}

    def _commit(self, regs=None, smem=None, glob=None, entry=None):
        """Apply checked writes; nothing here can fail."""
        if regs:
            self._commit_regs(regs)
        for idx, data in smem or ():
            self.smem[idx] = data
        if glob:
            name, writes = glob
            for idx, data in writes:
                self._global[name].data[idx] = data
        if entry is not None:
            entry.setdefault("instruction", entry["op"])
            self.trace.append(TraceEntry(index=len(self.trace), **entry))

    def _commit_regs(self, regs):
        for n, v in regs.items():
            self._regs[n] = np.ascontiguousarray(v, dtype=np.uint32).copy()

    # ---- checks ----------------------------------------------------------------------
    def _op(self, kind, space, bits):
        if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or bits not in WIDTHS:
            raise LayoutsimError(f"{kind}.{space}: width {bits!r} bits; valid: {', '.join(map(str, WIDTHS))}")
        from ..banks.ops import access_name
        return access_name(self.vendor, kind, bits // 8, space)

    def _instr(self, instr, what, families=None):
        from ..isa.instruction import Instruction
        if isinstance(instr, Instruction):
            ins = instr
        elif isinstance(instr, str):
            from ..isa.registry import get
            ins = get(instr, arch=self.arch, wave=self.wave if self.vendor == "amd" else None)
        else:
            raise LayoutsimError(f"{what}: give an instruction name or a catalog Instruction, not {instr!r}")
        ins.check_arch(self.arch)
        if families and ins.family not in families:
            raise LayoutsimError(f"{what}: {ins.name} is a {ins.family} instruction; this needs "
                                 f"{' or '.join(families)}")
        return ins

    def _groups(self, threads, ins):
        if ins.family == "wgmma":
            if self.threads % 128:
                raise LayoutsimError(f"{ins.name} runs on a warpgroup of 128 threads; this machine has "
                                     f"{self.threads} (use Warpgroup)")
            return self.threads // 128
        if threads != self.wave:
            raise LayoutsimError(f"{ins.name} runs on {threads}-lane waves; this machine has "
                                 f"{self.wave}-lane {'warps' if self.vendor == 'nvidia' else 'waves'}")
        return self.warps

    def _name(self, n):
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0:
            return f"r{int(n)}"
        if isinstance(n, str) and n.strip():
            return n.strip()
        raise LayoutsimError(f"register {n!r}: give a name (string) or a register number")

    def _names(self, spec, n, what, dst=False, vector=True):
        """Register list of exactly n names: a list of names, "x,y,z", or a prefix ("a" ->
        a0..a{n-1}). For a scalar operand (vector=False: 8/16/32-bit loads and stores) a string
        is the register's own name."""
        if isinstance(spec, (list, tuple)):
            names = [self._name(s) for s in spec]
        elif isinstance(spec, str) and "," in spec:
            names = [self._name(s) for s in spec.split(",")]
        elif isinstance(spec, str) and vector:
            names = regs(self._name(spec), n)
        else:
            names = [self._name(spec)]
        if len(names) != n:
            raise LayoutsimError(f"{what}: needs {n} register{'s' if n > 1 else ''}, got {len(names)} "
                                 f"({', '.join(names)})")
        if dst and len(set(names)) != len(names):
            dup = next(x for x in names if names.count(x) > 1)
            raise LayoutsimError(f"{what}: register {dup} appears twice among the destinations")
        return names

    def _read_regs(self, names, what):
        for n in names:
            if n not in self._regs:
                known = list(self._regs)
                hint = suggest(n, known) or (f"; defined: {', '.join(known[:12])}{', ...' if len(known) > 12 else ''}"
                                             if known else "; no register has been written yet")
                raise LayoutsimError(f"{what}: unknown register {n!r}{hint}")
        return np.stack([self._regs[n] for n in names], axis=1)

    def _group_words(self, names, group, what):
        """uint32 [groups, group_threads, len(names)]."""
        return self._read_regs(names, what).reshape(self.threads // group, group, len(names))

    def _buffer(self, name, op):
        if not isinstance(name, str) or name not in self._global:
            known = list(self._global)
            raise LayoutsimError(f"{op}: unknown global buffer {name!r}{suggest(name, known)}; "
                                 f"defined: {', '.join(known) or 'none (use global_alloc)'}")
        return self._global[name]

    def _mask(self, mask, op):
        if mask is None:
            return np.ones(self.threads, bool)
        if isinstance(mask, (int, np.integer)) and not isinstance(mask, bool):
            m = int(mask)
            if m < 0 or m >> self.threads:
                raise LayoutsimError(f"{op}: mask {mask:#x} has bits beyond the {self.threads} threads")
            return np.array([(m >> i) & 1 for i in range(self.threads)], bool)
        a = np.asarray(mask)
        if a.shape != (self.threads,) or a.dtype.kind not in "biu":
            raise LayoutsimError(f"{op}: mask must be {self.threads} booleans (one per thread) or an "
                                 f"integer bit mask; got {a.dtype} of shape {a.shape}")
        return a.astype(bool)

    def _offsets(self, offsets, op, act):
        try:
            a = np.asarray(offsets)
        except (ValueError, TypeError):
            a = np.asarray(None)
        if a.dtype.kind not in "iu":
            raise LayoutsimError(f"{op}: addresses must be integers, not {a.dtype}"
                                 + (" (Python ints beyond 64 bits?)" if a.dtype == object else ""))
        if a.ndim == 0:
            a = np.broadcast_to(a, (self.threads,))
        if a.shape != (self.threads,):
            raise LayoutsimError(f"{op}: give one address per thread ({self.threads}), not shape {a.shape}")
        if a.dtype.kind == "u":          # uint64 beyond 2**63 would wrap to a negative int64
            far = a > np.uint64(np.iinfo(np.int64).max)
            if (far & act).any():
                t = int(np.flatnonzero(far & act)[0])
                raise LayoutsimError(f"{op}: {self._who(t)} address {int(a[t])} ({int(a[t]):#x}) is outside "
                                     f"every memory (beyond 2**63): the hardware faults (out-of-range address)")
            a = np.where(far, 0, a)
        return a.astype(np.int64)

    def _who(self, t):
        t = int(t)
        if self.warps == 1:
            return f"lane {t}"
        return f"thread {t} (warp {t // self.wave}, lane {t % self.wave})"

    def _check_addresses(self, op, addr, act, nb, size, where, align=None):
        align = nb if align is None else align
        a = np.where(act, addr, 0)
        mis = act & (a % align != 0)
        if mis.any():
            t = np.flatnonzero(mis)[0]
            raise LayoutsimError(f"{op}: {self._who(t)} address {int(addr[t])} ({int(addr[t]):#x}) is not "
                                 f"{align}-byte aligned: the hardware faults (misaligned address)")
        out = act & ((a < 0) | (a > size - nb))          # not a + nb: it wraps near 2**63
        if out.any():
            t = np.flatnonzero(out)[0]
            raise LayoutsimError(f"{op}: {self._who(t)} address {int(addr[t])} ({int(addr[t]):#x}) is outside "
                                 f"{where} ({size} bytes, valid 0..{size - nb}): the hardware faults "
                                 f"(out-of-range address)")

    def _check_host_range(self, offset, n):
        """offset as an int, if [offset, offset + n) lies in shared memory."""
        if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)) or not 0 <= offset <= self.smem.size - n:
            raise LayoutsimError(f"shared memory range {offset!r}..+{n} is outside 0..{self.smem.size}")
        return int(offset)


class Warp(Machine):
    """One warp: 32 lanes (NVIDIA, AMD wave32) or 64 lanes (AMD wave64, wave=64)."""

    def __init__(self, arch="sm_90", wave=None, smem_bytes=None, mma=None):
        super().__init__(arch=arch, warps=1, wave=wave, smem_bytes=smem_bytes, mma=mma)


class Warpgroup(Machine):
    """Four warps, 128 threads (tid 0..127; warp w = tid // 32), one shared memory: runs wgmma,
    and every warp-level instruction on all four warps at once."""

    def __init__(self, arch="sm_90", smem_bytes=None, mma=None):
        if A.vendor(A.normalize(arch) or "sm_90") != "nvidia":
            raise LayoutsimError(f"a warpgroup is an NVIDIA (sm_90) notion; arch {arch!r} is AMD "
                                 f"(use Machine(arch, warps=4))")
        super().__init__(arch=arch, warps=4, wave=32, smem_bytes=smem_bytes, mma=mma)


def _numeric_dtype(dtype, what):
    """np.dtype of a plain number type (bool, int, uint, float), else a one-line error."""
    try:
        with warnings.catch_warnings():           # numpy warns about some spellings it still reads
            warnings.simplefilter("ignore")
            dt = np.dtype(dtype)
    except (TypeError, ValueError):
        dt = None
    if dtype is None or dt is None or dt.kind not in "biuf" or dt.shape:
        raise LayoutsimError(f"{what}: dtype {dtype!r}: give a number type such as np.uint32, 'u2' or 'f4'")
    return dt


def _numeric_array(array, what):
    """A contiguous array of plain numbers (the bytes are what matters), else a one-line error."""
    try:
        a = np.ascontiguousarray(array)
    except (TypeError, ValueError):
        a = None
    if a is None or a.dtype.kind not in "biuf":
        raise LayoutsimError(f"{what}: give an array of numbers (its bytes are copied), not "
                             f"{a.dtype if a is not None else type(array).__name__}")
    return a


def _short(ins):
    """The short spelling used in traces and for the bank model (ldmatrix.x4.trans, ...)."""
    return ins.aliases[0] if ins.aliases else ins.name


def _zeros_like_operand(frag, groups):
    shape = frag.shape[1:] if frag.shape[0] == 1 else frag.shape
    return np.zeros((groups, *shape), raw_dtype_of_width(frag.elem_bits))
