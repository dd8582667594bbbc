"""Compile-time operand access: closures that read and write registers, immediates, special
registers and addresses for one instruction, with PTX's width rules.

PTX ISA 9.0, 6.4.1 'Operand Size Exceeding Instruction-Type Size': a source register wider
than the instruction type gives its low bits; a destination register wider than the type
receives the value sign-extended for signed types and zero-extended otherwise.
"""
import numpy as np

from .. import archs
from ..errors import LayoutsimError
from . import cluster as CL
from . import lines
from . import types as T
from .fround import round_to
from .module import UnsupportedPtx

# special registers: name -> (PtxType name)
SPECIAL = {f"%{r}.{c}": "u32" for r in ("tid", "ntid", "ctaid", "nctaid", "cluster_ctaid",
                                         "cluster_nctaid", "clusterid", "nclusterid") for c in "xyz"}
SPECIAL.update({"%laneid": "u32", "%warpid": "u32", "%nwarpid": "u32", "%smid": "u32",
                "%nsmid": "u32", "%gridid": "u64", "%lanemask_eq": "u32", "%lanemask_le": "u32",
                "%lanemask_lt": "u32", "%lanemask_ge": "u32", "%lanemask_gt": "u32",
                "%clock": "u32", "%clock64": "u64", "%globaltimer": "u64", "%globaltimer_lo": "u32",
                "%globaltimer_hi": "u32", "%dynamic_smem_size": "u32", "%total_smem_size": "u32",
                "%aggr_smem_size": "u32", "%cluster_ctarank": "u32", "%cluster_nctarank": "u32",
                "%is_explicit_cluster": "pred", "%reserved_smem_offset_begin": "u32",
                "%reserved_smem_offset_end": "u32", "%reserved_smem_offset_cap": "u32"})
# the clocks: the count of warp-instructions the reading thread's warp has issued (state.Batch.clock)
CLOCKS = ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi")
SPECIAL.update({f"%envreg{i}": "u32" for i in range(32)})
SPECIAL.update({f"%reserved_smem_offset_{i}": "u32" for i in range(2)})
# predefined identifiers (PTX ISA 9.0 section 4.3.3, Table 3): WARP_SZ, the warp size, a constant
PREDEFINED = {"WARP_SZ": 32}
SPECIAL.update({f"%pm{i}": "u32" for i in range(8)})


def convert_bits(v, src_dtype, dst, signed):
    """Raw value array v (src dtype) -> dst dtype, truncating or extending (sign if `signed`)."""
    src = np.dtype(src_dtype)
    dst = np.dtype(dst)
    if src == dst:
        return v
    if dst == np.bool_:
        return v != 0
    if src == np.bool_:
        return v.astype(dst)
    if src.itemsize == dst.itemsize:
        return v.view(dst)
    if src.itemsize > dst.itemsize:
        return v.astype(np.dtype(f"u{src.itemsize}")).astype(np.dtype(f"u{dst.itemsize}")).view(dst)
    if signed:
        sv = v.view(np.dtype(f"i{src.itemsize}")) if src.kind != "i" else v
        return sv.astype(np.dtype(f"i{dst.itemsize}")).view(dst)
    uv = v.view(np.dtype(f"u{src.itemsize}")) if src.kind != "u" else v
    return uv.astype(dst) if dst.kind == "u" else uv.astype(np.dtype(f"u{dst.itemsize}")).view(dst)


def _readable(op, ins):
    if op.kind == "raw":
        raise LayoutsimError(f"{lines.of(ins)}: cannot read operand {op.value!r} (in {ins.text})")


def _modelled(typ, ins):
    """Refuse a value wider than the model's registers (.b128)."""
    if getattr(typ, "bits", 0) > 64:
        raise UnsupportedPtx(f"{lines.of(ins)}: {ins.name}: .{typ.name} values are not modelled (registers "
                             f"of at most 64 bits)")
    if getattr(typ, "kind", "") in ("b", "s", "u") and typ.bits < 8:
        raise UnsupportedPtx(f"{lines.of(ins)}: {ins.name}: .{typ.name} values are not modelled in registers "
                             f"(4-bit elements are packed in .b32 registers)")


class Builder:
    """Operand closures for the instructions of one program (registers already numbered)."""

    def __init__(self, prog):
        self.prog = prog

    # ---- registers and immediates --------------------------------------------------------
    def slot(self, op, ins):
        _readable(op, ins)
        if op.kind != "reg" or op.value in SPECIAL:
            raise LayoutsimError(f"{lines.of(ins)}: {op} is not a register (in {ins.text})")
        return self.prog.reg_slot(op.value, ins)

    def rtype(self, op, ins):
        return self.prog.reg_types[self.slot(op, ins)]

    def opaque(self, op, typ, ins):
        """A .b128 value between .b128 registers: 16 opaque bytes (ld/st, mov, clusterlaunchcontrol.query_cancel);
        a .b128 register read or written as another type is refused."""
        wide = op.kind == "reg" and op.value not in SPECIAL and self.rtype(op, ins).name == "b128"
        if wide != (getattr(typ, "name", "") == "b128") and op.kind == "reg":
            raise UnsupportedPtx(f"{lines.of(ins)}: {ins.name}: a .b128 value and a narrower register (the model moves "
                                 f".b128 only between .b128 registers)")
        return wide or (op.kind == "sink" and getattr(typ, "name", "") == "b128")

    def plain_words(self, ops, ins):
        """(slots, storage dtype) when every operand is a register (no special register, no
        negation) of 32 bits and all share one storage dtype: their values are then the raw
        32-bit words read(op, b32) gives and write(op, b32) stores, viewed as that dtype. None
        otherwise."""
        slots = []
        for op in ops:
            if op.kind != "reg" or op.value in SPECIAL or op.neg:
                return None
            slots.append(self.slot(op, ins))
        storages = {self.prog.reg_types[s].storage for s in slots}
        if len(storages) != 1 or any(self.prog.reg_types[s].bits != 32 for s in slots):
            return None
        st = storages.pop()
        return (slots, st) if st.itemsize == 4 and st != np.bool_ else None

    def read(self, op, typ, ins):
        """A function(batch) -> array (or numpy scalar) of `typ`'s dtype."""
        _readable(op, ins)
        if not self.opaque(op, typ, ins):
            _modelled(typ, ins)
        dt = typ.dtype if not isinstance(typ, np.dtype) else typ
        signed = getattr(typ, "signed", False)
        if op.kind == "reg" and op.value in SPECIAL:
            name, st = op.value, T.get(SPECIAL[op.value]).storage
            if name.startswith("%reserved_smem_offset") and not archs.nvidia_at_least(self.prog.arch, "sm_90"):
                raise LayoutsimError(f"{lines.of(ins)}: {name} on {self.prog.arch} is not modelled: ptxas reads it "
                                     f"from the shared window's size (SR_SMEMSZ) and words the driver writes at "
                                     f"launch (archs.user_smem_base); measured for sm_90 only")
            if name in CLOCKS:
                self.prog.reads_clock = True          # the batches count every warp's issues
                return lambda b: convert_bits(b.clock(name), st, dt, False)
            return lambda b: convert_bits(b.special[name], st, dt, False)
        if op.kind == "reg":
            s = self.slot(op, ins)
            st = self.prog.reg_types[s].storage
            rsigned = self.prog.reg_types[s].signed or signed
            if st == dt:
                if op.neg:
                    return lambda b: ~b.regs[s]
                return lambda b: b.regs[s]
            if st.itemsize == dt.itemsize and st != np.bool_ and dt != np.bool_:
                return lambda b: b.regs[s].view(dt)
            if op.neg and dt == np.bool_:
                return lambda b: ~convert_bits(b.regs[s], st, dt, rsigned)
            return lambda b: convert_bits(b.regs[s], st, dt, rsigned)
        if op.kind in ("imm", "fimm", "sym"):
            v = self.constant(op, typ, ins)
            if op.kind == "sym" and dt.kind in "iu" and self.prog.symbol_space(op.value, ins) == "shared":
                # a shared variable's address carries the CTA's cluster rank at bit 24 (cluster.py)
                return lambda b: v if b.cluster_size == 1 else (np.int64(v) + CL.rank_bits(b)).astype(dt)
            return lambda b: v
        raise LayoutsimError(f"{lines.of(ins)}: operand {op} of {ins.name} cannot be read as .{getattr(typ, 'name', typ)}")

    def constant(self, op, typ, ins):
        """A numpy scalar of typ's dtype for an immediate or a symbol's address."""
        dt = typ.dtype if not isinstance(typ, np.dtype) else typ
        if op.kind == "imm":
            v = op.value
            if dt == np.bool_:
                return np.bool_(v != 0)
            if dt.kind == "f":
                # an integer literal in a float instruction is its value (PTX 4.5.1)
                return dt.type(v)
            bits = dt.itemsize * 8
            return np.array(v & ((1 << bits) - 1), np.dtype(f"u{dt.itemsize}")).view(dt)[()]
        if op.kind == "fimm":
            bits, width, _ = op.value
            f = np.array(bits, np.uint64).view(np.float64)[()] if width == 64 else \
                np.array(bits, np.uint32).view(np.float32)[()]
            if dt.kind == "f":
                return dt.type(f) if dt.itemsize != width // 8 else f
            if dt.itemsize * 8 == width:       # raw bits for .b32/.b64 (mov.b32 %r, 0f3F800000)
                return np.array(bits, np.dtype(f"u{dt.itemsize}")).view(dt)[()]
            if getattr(typ, "name", "") in ("f16", "bf16"):
                return round_to(np.float64(f), typ.name, "rn")[()]
            raise UnsupportedPtx(f"{lines.of(ins)}: float literal {op} used as .{getattr(typ, 'name', dt)}")
        if op.kind == "sym":
            addr = PREDEFINED[op.value] if op.value in PREDEFINED else self.prog.symbol_address(op.value, ins)
            return np.array(addr & ((1 << (dt.itemsize * 8)) - 1), np.dtype(f"u{dt.itemsize}")).view(dt)[()]
        raise LayoutsimError(f"{lines.of(ins)}: {op} is not a constant")

    def write(self, op, typ, ins):
        """A function(batch, value, g, full) storing `value` (typ's dtype) into a register."""
        if not self.opaque(op, typ, ins):
            _modelled(typ, ins)
        if op.kind == "sink":
            return lambda b, v, g, full: None
        s = self.slot(op, ins)
        rt = self.prog.reg_types[s]
        st = rt.storage
        signed = getattr(typ, "signed", False)

        def put(b, v, g, full):
            v = np.asarray(v)
            if v.dtype != st:
                v = convert_bits(v, v.dtype, st, signed)
            if full:
                b.regs[s] = v if v.ndim else np.full(b.T, v, st)
            else:
                b.regs[s] = np.where(g, v, b.regs[s])
        return put

    # ---- vectors ---------------------------------------------------------------------------
    def elems(self, op, ins, n=None):
        """The element operands of a vector operand (or the operand itself as one element)."""
        items = list(op.value) if op.kind == "vec" else [op]
        if n is not None and len(items) != n:
            raise LayoutsimError(f"{lines.of(ins)}: {ins.name} needs {n} registers in {op}, got {len(items)}")
        return items

    # ---- addresses ---------------------------------------------------------------------------
    def address(self, op, ins):
        """(function(batch) -> int64 address array or scalar, base symbol or None)."""
        _readable(op, ins)
        if op.kind != "addr":
            if op.kind == "reg":               # an address held in a register (cp.async src etc.)
                r = self.read(op, T.get("u64"), ins)
                return (lambda b: r(b).astype(np.int64)), None
            raise LayoutsimError(f"{lines.of(ins)}: {op} is not an address (in {ins.text})")
        off = op.offset
        base = op.base
        if base is None:
            return (lambda b: np.int64(off)), None
        cta = any(m in ("shared", "shared::cta") for m in ins.mods) and "shared::cluster" not in ins.mods
        if base.kind == "sym":
            a = self.prog.symbol_address(base.value, ins) + off
            if cta or self.prog.symbol_space(base.value, ins) != "shared":
                return (lambda b: np.int64(a)), base.value
            # a shared variable as a shared::cluster or generic address names the thread's own CTA
            return (lambda b: a + CL.rank_bits(b)), base.value
        rt = self.rtype(base, ins)
        r = self.read(base, T.get("u64") if rt.bits == 64 else T.get("u32"), ins)
        if cta:          # a shared::cta operand: the CTA's own rank field dropped (cluster.cta_offsets)
            return (lambda b: CL.cta_offsets(b, r(b).astype(np.int64) + off, raw=True)), None
        if off:
            return (lambda b: r(b).astype(np.int64) + off), None
        return (lambda b: r(b).astype(np.int64)), None
