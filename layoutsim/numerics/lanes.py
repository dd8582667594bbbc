"""The vector path of the block-FMA kernel: LLVM vector code (intrinsics) for V outputs at once.

The same arithmetic as the fast path, for ROWS x V outputs at once (rows i0..i0+ROWS-1,
columns j0..j0+V-1), as explicit LLVM vectors (numba leaves LLVM's SLP vectoriser off, and a
loop of V iterations is unrolled rather than vectorised, so the lanes are written out in IR:
AVX2 code, no branch per lane). Every step is exact:
  * each element decodes to its exact value (significand * 2**(exponent - fraction bits));
    an Inf/NaN gets a finite stand-in (its lanes are recomputed by the scalar paths);
  * a product of two has at most ma + mb + 2 <= 53 significant bits: exact in float64;
  * the product times 2**(F - Emax) is exact (a power of two; a value below the smallest
    normal number is below 1 and truncates to 0 either way), and truncating it toward zero
    gives the term: the integer the fast path computes with shifts;
  * every term is an integer below 2**(F + 2), so a block's sum (L + 1 terms) is exact for
    F <= 40 and L <= 64 (below 2**49), in any order.
Where f32_ok holds (f16 and fp8 inputs under the NVIDIA profiles) products and terms are
normal float32 numbers and the sum of a block's products fits an int32: the products run
in float32 lanes (fptosi truncates), half the work of float64 ones.
The sum times 2**(Emax - F) is then the exact block result; it is rounded from the bits of
that double when it is a normal number of the D format (RZ or RNE) or 0; any other lane (a
subnormal or overflowing result, RD/RU) is rounded by _round_pack from the same exact
integer sum. An instance with an Inf/NaN input is computed by the general path, a block's D
that is Inf/NaN decides the result as kernel._special_c does, and a late C is added by
_late_add (vector._vcore).
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, typeof_impl

from .cfg import RNE, RZ

V = 8                     # lanes: outputs of one row; N must be a multiple of V
ROWS = 2                  # rows of A per _lanes_mma (sharing B's loads; even); M a multiple
E_ZERO_SUM = -900         # an Emax below this has no nonzero term: the sum is 0
F32_SCALE_MAX = 100       # float32 lanes: F - Emax clamped here (only all-zero products get there)
VZERO = -(1 << 14)        # the vector path's exponent of a zero element: the max over products
#                           runs in int16 lanes (saturating adds), where two zeros sum to -2**15
#                           and a zero times anything stays below every real exponent (> -400)



class _Lanes:
    """Builds V-lane LLVM vector code inside an intrinsic."""

    def __init__(self, context, builder):
        self.ctx, self.b = context, builder
        self.i1, self.i8, self.i32, self.i64 = (ir.IntType(n) for n in (1, 8, 32, 64))
        self.f32, self.f64 = ir.FloatType(), ir.DoubleType()
        self.vi1, self.vi8, self.vi32, self.vi64, self.vf32, self.vf64 = (
            ir.VectorType(t, V) for t in (self.i1, self.i8, self.i32, self.i64, self.f32, self.f64))

    def splat(self, value, ty=None):
        """<V x T> with every lane = value (an ir.Value, or a Python number of type ty)."""
        if not isinstance(value, ir.Value):
            return ir.Constant(ir.VectorType(ty, V), [value] * V)
        vt = ir.VectorType(value.type, V)
        v = self.b.insert_element(ir.Constant(vt, ir.Undefined), value, ir.Constant(self.i32, 0))
        return self.b.shuffle_vector(v, ir.Constant(vt, ir.Undefined),
                                     ir.Constant(self.vi32, [0] * V))

    def call(self, name, vt, *args):
        """An LLVM vector intrinsic (llvm.smax, llvm.trunc, ...) on operands of type vt."""
        suffix = "v%d%s" % (vt.count, {self.f64: "f64", self.f32: "f32"}.get(
            vt.element, "i%d" % getattr(vt.element, "width", 0)))
        fn = cgutils.get_or_insert_function(
            self.b.module, ir.FunctionType(vt, [vt] * len(args)), f"{name}.{suffix}")
        return self.b.call(fn, args)

    def array(self, ty, value):
        return self.ctx.make_array(ty)(self.ctx, self.b, value)

    def ptr(self, arr, inds):
        return cgutils.get_item_pointer2(self.ctx, self.b, arr.data,
                                         cgutils.unpack_tuple(self.b, arr.shape),
                                         cgutils.unpack_tuple(self.b, arr.strides), "C", inds)

    @staticmethod
    def _align(vt):
        return vt.element.width // 8 if hasattr(vt.element, "width") else (
            4 if vt.element == ir.FloatType() else 8)

    def load(self, arr, inds, vt):
        """vt.count consecutive elements from arr[inds] on (the array's element type as vt)."""
        p = self.b.bitcast(self.ptr(arr, inds), vt.as_pointer())
        return self.b.load(p, align=self._align(vt))

    def store(self, value, arr, inds):
        p = self.b.bitcast(self.ptr(arr, inds), value.type.as_pointer())
        self.b.store(value, p, align=self._align(value.type))

    def store_flat(self, value, arr, k):
        """value at elements k, k + 1, ... of a C-contiguous array of any rank."""
        p = self.b.bitcast(cgutils.gep(self.b, arr.data, k), value.type.as_pointer())
        self.b.store(value, p, align=self._align(value.type))

    def pow2(self, e64):
        """<V x double> 2**e from <V x i64> exponents (-1022 <= e <= 1023)."""
        b = self.b
        return b.bitcast(b.shl(b.add(e64, self.splat(1023, self.i64)), self.splat(52, self.i64)),
                         self.vf64)

    def pow2f(self, e32):
        """<V x float> 2**e from <V x i32> exponents (-126 <= e <= 127)."""
        b = self.b
        return b.bitcast(b.shl(b.add(e32, self.splat(127, self.i32)), self.splat(23, self.i32)),
                         self.vf32)


def _c_array(ty, ndim, dtype=None):
    return (isinstance(ty, types.Array) and ty.ndim == ndim and ty.layout == "C"
            and (dtype is None or ty.dtype == dtype))


class FormatCodes(int):
    """The element formats of A, B, C and D (11 bits each: exponent bits, fraction bits,
    e4m3's "fn"), an int that numba types as a literal: _vcore compiles once per combination
    of formats, with every mask and shift of a format an immediate and only the decoders its
    formats need (see formats_code)."""


_CODE_TYPES = {}         # int -> its IntegerLiteral: numba types every argument on every call


@typeof_impl.register(FormatCodes)
def _typeof_codes(val, c):
    t = _CODE_TYPES.get(int(val))
    if t is None:
        t = _CODE_TYPES[int(val)] = types.IntegerLiteral(int(val))
    return t


def formats_code(*fmts):
    """FormatCodes of (eb, mb, fn) for A, B, C, D."""
    v = 0
    for k, (eb, mb, fn) in enumerate(fmts):
        v |= (int(eb) | int(mb) << 4 | int(fn) << 10) << (11 * k)
    return FormatCodes(v)


def _fmt(codes, which):
    """(eb, mb, fn) of operand `which` (0..3: A, B, C, D; a literal) of a FormatCodes literal,
    else None."""
    if not (isinstance(codes, types.IntegerLiteral) and isinstance(which, types.IntegerLiteral)):
        return None
    v = codes.literal_value >> (11 * which.literal_value)
    return v & 15, (v >> 4) & 63, (v >> 10) & 1


@intrinsic
def _lanes_decode(typingctx, src, row, n, fmts, which, ftz, val, exp, dup):
    """Decode src[row, 0:n] (raw bits of operand `which`'s format in fmts (FormatCodes and
    a constant: literals); an unsigned dtype; n a multiple of V), V at a time, as
    kernel._fast_decode does: val[k] = exact value (float64, or float32 where the caller knows it fits;
    a finite stand-in for an Inf/NaN), exp[k] = exponent (emin for a subnormal) or VZERO
    for a zero (dup != 0: that exponent as two equal int16 halves of the int32, for the int16
    lanes of _lanes_mma); val and exp: C-contiguous, of any rank, indexed flat. Returns
    whether any element is an Inf/NaN."""
    if not (_c_array(src, 2) and isinstance(src.dtype, types.Integer) and not src.dtype.signed
            and src.dtype.bitwidth <= 32 and _c_array(val, getattr(val, "ndim", -1))
            and val.dtype in (types.float32, types.float64)
            and _c_array(exp, getattr(exp, "ndim", -1), types.int32) and _fmt(fmts, which)):
        return None
    i64 = types.int64
    sig = types.boolean(src, i64, i64, fmts, which, i64, val, exp, i64)
    f32 = val.dtype == types.float32
    eb, mb, fn = _fmt(fmts, which)

    def codegen(context, builder, signature, args):
        L = _Lanes(context, builder)
        b = builder
        srcv, rowv, nv, _, _, ftzv, valv, expv, dupv = args
        SRC, VAL, EXP = (L.array(signature.args[k], args[k]) for k in (0, 6, 7))
        fnv = ir.Constant(L.i64, fn)
        vsrc = ir.VectorType(ir.IntType(signature.args[0].dtype.bitwidth), V)
        c32 = lambda x: ir.Constant(L.i32, x)        # noqa: E731
        eb32, mb32 = c32(eb), c32(mb)
        emask = L.splat(b.sub(b.shl(c32(1), eb32), c32(1)))
        fmask = L.splat(b.sub(b.shl(c32(1), mb32), c32(1)))
        bias = b.sub(b.shl(c32(1), b.sub(eb32, c32(1))), c32(1))
        vbias, vmb, vsb = L.splat(bias), L.splat(mb32), L.splat(b.add(eb32, mb32))
        zero32, one32 = L.splat(0, L.i32), L.splat(1, L.i32)
        vsh31 = L.splat(b.sub(c32(31), b.add(eb32, mb32)))      # sign bit to bit 31
        vp2off = L.splat(b.sub(b.sub(c32(127), bias), mb32))    # float32 bias - bias - mb
        vmag = L.splat(b.sub(b.shl(c32(1), b.add(eb32, mb32)), c32(1)))   # all but the sign
        anyv = cgutils.alloca_once_value(builder, ir.Constant(L.vi1, [0] * V))
        count = b.sdiv(nv, ir.Constant(L.i64, V))
        dup = b.icmp_signed("!=", dupv, ir.Constant(L.i64, 0))

        def body(mode):
            with cgutils.for_range(builder, count) as loop:
                k = b.mul(loop.index, ir.Constant(L.i64, V))
                bits = L.load(SRC, [rowv, k], vsrc)
                raw = bits
                if vsrc.element.width < 32:
                    bits = b.zext(bits, L.vi32)
                e = b.and_(b.lshr(bits, vmb), emask)
                fr = b.and_(bits, fmask)
                normal = b.icmp_signed("!=", e, zero32)
                e1 = L.call("llvm.smax", L.vi32, e, one32)           # subnormals: emin
                ex = b.sub(e1, vbias)
                special = b.icmp_signed("==", e, emask)
                if mode == "general":
                    m = b.or_(fr, b.shl(b.zext(normal, L.vi32), vmb))
                    # e4m3 ("fn"): only S.1111.111 is special; flushed subnormal inputs
                    not_fn = L.splat(b.icmp_signed("==", fnv, ir.Constant(L.i64, 0)))
                    keep_sub = L.splat(b.icmp_signed("==", ftzv, ir.Constant(L.i64, 0)))
                    special = b.and_(special, b.or_(not_fn, b.icmp_signed("==", fr, fmask)))
                    m = b.select(b.or_(normal, keep_sub), m, zero32)
                    nonzero = b.icmp_signed("!=", m, zero32)
                    # value = +-m * 2**(ex - mb), exact (an Inf/NaN's is a finite stand-in)
                    if f32:
                        sgn = b.and_(b.shl(bits, vsh31), L.splat(-(1 << 31), L.i32))
                        p2 = b.or_(b.shl(b.add(e1, vp2off), L.splat(23, L.i32)), sgn)
                        v = b.fmul(b.sitofp(m, L.vf32), b.bitcast(p2, L.vf32))
                    else:
                        neg = b.icmp_signed("!=", b.and_(b.lshr(bits, vsb), one32), zero32)
                        v = b.fmul(b.sitofp(m, L.vf64), L.pow2(b.sext(b.sub(ex, vmb), L.vi64)))
                        v = b.select(neg, b.fsub(ir.Constant(v.type, [0.0] * V), v), v)
                else:
                    # an IEEE format with its own (half or float) exponent width, no flush:
                    # the bits shifted into that container are the value (the CPU's exact
                    # conversion; an Inf/NaN's stand-in is 0)
                    nonzero = b.icmp_signed("!=", b.and_(bits, vmag), zero32)
                    wide = 16 if mode == "half" else 32
                    ct = ir.VectorType(ir.HalfType() if wide == 16 else L.f32, V)
                    it = ir.VectorType(ir.IntType(wide), V)
                    cb = raw if vsrc.element.width == wide else (
                        b.zext(raw, it) if vsrc.element.width < wide else b.trunc(raw, it))
                    cb = b.shl(cb, L.splat(b.trunc(b.sub(c32(10 if wide == 16 else 23), mb32),
                                                   ir.IntType(wide))))
                    v = b.bitcast(cb, ct)
                    lane = L.vf32 if f32 else L.vf64
                    if ct != lane:
                        v = b.fpext(v, lane)
                    v = b.select(special, ir.Constant(lane, [0.0] * V), v)
                exz = b.select(nonzero, ex, L.splat(VZERO, L.i32))
                pair = b.or_(b.and_(exz, L.splat(0xFFFF, L.i32)), b.shl(exz, L.splat(16, L.i32)))
                L.store_flat(v, VAL, k)
                L.store_flat(b.select(dup, pair, exz), EXP, k)
                b.store(b.or_(b.load(anyv), special), anyv)

        # the container the CPU converts exactly: half for 5 exponent bits, float for 8 (an
        # IEEE format, no flushed subnormal input: ftz is a profile's, decided at run time)
        wide = {5: (16, 10), 8: (32, 23)}.get(eb)
        if fn == 0 and wide and mb <= wide[1] and vsrc.element.width <= wide[0]:
            with b.if_else(b.icmp_signed("==", ftzv, ir.Constant(L.i64, 0))) as (then, other):
                with then:
                    body("half" if eb == 5 else "float")
                with other:
                    body("general")
        else:
            body("general")
        mask = b.bitcast(b.load(anyv), ir.IntType(V))
        return b.icmp_unsigned("!=", mask, ir.Constant(ir.IntType(V), 0))
    return sig, codegen


@intrinsic
def _lanes_mma(typingctx, av, ae, bv, be, i, j0, k0, k1, F, cv, ce, clo, S, em, out, orow,
               fmts, keep, rnd):
    """One block of the ROWS * V outputs (i + r, j0 + l), r < ROWS, l < V (lane r * V + l).
    av (M, K): A's values; ae (M / 2, K): A's exponents of rows 2p and 2p + 1 as the low and
    high int16 halves of ae[p, k] (pair_rows); bv (K, N): B's values, be (K, N) its exponents
    as int16 pairs; cv/ce (M * N, flat): C's value and exponent (or the last block's D), and
    max(ce, clo) C's part of Emax. Writes em[lane] = Emax (at least E_ZERO_SUM), S[lane] =
    the exact sum of C and the products k0..k1-1, each truncated toward zero to a multiple of
    2**(Emax - F), in units of 2**(Emax - F), and out[orow, (i + r) * N + j0 + l] = the raw D
    bits (D's format in fmts, FormatCodes; keep fraction bits; RZ or RNE) where that is a normal number or 0. Returns
    a bit mask of the lanes left to _round_pack (every lane under RD/RU).

    With float32 av/bv (f32_ok: products and their scaled terms are normal float32 numbers,
    each term below 2**(F + 2), L * 2**(F + 2) <= 2**31) a term is fptosi(a * b * 2**(F -
    Emax)) in float32 and the products' sum an int32."""
    f64, i32, i64 = types.float64, types.int32, types.int64
    f32lanes = av == types.Array(types.float32, 2, "C")
    vt = types.float32 if f32lanes else f64
    if not (_c_array(av, 2, vt) and _c_array(ae, 2, i32) and _c_array(bv, 2, vt)
            and _c_array(be, 2, i32) and _c_array(cv, 1, f64) and _c_array(ce, 1, i32)
            and _c_array(S, 1, f64) and _c_array(em, 1, i32) and _c_array(out, 2, types.uint32)
            and _fmt(fmts, types.IntegerLiteral(3))):
        return None
    sig = i64(av, ae, bv, be, i64, i64, i64, i64, i64, cv, ce, i64, S, em, out, i64, fmts, i64,
              i64)
    d_eb, d_mb, _ = _fmt(fmts, types.IntegerLiteral(3))

    def codegen(context, builder, signature, args):
        L = _Lanes(context, builder)
        b = builder
        (_, _, _, _, iv, j0v, k0v, k1v, Fv, _, _, clov, _, _, _, orowv, _, keepv, rndv) = args
        AV, AE, BV, BE, CV, CE, SS, EM, OUT = (L.array(signature.args[k], args[k])
                                               for k in (0, 1, 2, 3, 9, 10, 12, 13, 14))
        c64 = lambda x: ir.Constant(L.i64, x)        # noqa: E731
        ebv, mbv = c64(d_eb), c64(d_mb)
        N = cgutils.unpack_tuple(b, BV.shape)[1]
        rows = [b.add(iv, c64(r)) for r in range(ROWS)]
        offs = [b.add(b.mul(row, N), j0v) for row in rows]       # C / out offsets of each row
        # Emax = max(C's part, max over k of ea + eb), at least E_ZERO_SUM. The max over the
        # products runs in int16 lanes, two rows per vector: lane 2l + r is (row i + r,
        # column j0 + l); be holds each exponent twice (int16 halves), ae pairs are built here
        vi16 = ir.VectorType(ir.IntType(16), 2 * V)

        def _fn16(name):
            return cgutils.get_or_insert_function(
                b.module, ir.FunctionType(vi16, [vi16, vi16]), "%s.v%di16" % (name, 2 * V))
        acc_p = [cgutils.alloca_once_value(b, ir.Constant(vi16, [-(1 << 15)] * (2 * V)))
                 for _ in range(ROWS // 2)]
        with cgutils.for_range(b, k1v, start=k0v) as loop:
            t = loop.index
            bev = b.bitcast(L.load(BE, [t, j0v], L.vi32), vi16)
            for q in range(ROWS // 2):
                pr = b.add(b.ashr(iv, c64(1)), c64(q))
                s = b.bitcast(L.splat(b.load(L.ptr(AE, [pr, t]))), vi16)
                s = b.call(_fn16("llvm.sadd.sat"), [s, bev])
                b.store(b.call(_fn16("llvm.smax"), [b.load(acc_p[q]), s]), acc_p[q])
        clo32 = L.splat(b.trunc(clov, L.i32))
        es = []
        for r in range(ROWS):
            pm = b.bitcast(b.load(acc_p[r // 2]), L.vi32)       # int16 pairs -> this row's int32
            pm = b.ashr(b.shl(pm, L.splat(16, L.i32)), L.splat(16, L.i32)) if r % 2 == 0 \
                else b.ashr(pm, L.splat(16, L.i32))
            e = L.call("llvm.smax", L.vi32, L.load(CE, [offs[r]], L.vi32), clo32)
            e = L.call("llvm.smax", L.vi32, e, pm)
            es.append(L.call("llvm.smax", L.vi32, e, L.splat(E_ZERO_SUM, L.i32)))
        # 2**(F - Emax) and 2**(Emax - F) from the bits of Emax (|F - Emax| < 1000)
        eb52 = [b.shl(b.sext(e, L.vi64), L.splat(52, L.i64)) for e in es]
        scs = [b.bitcast(b.sub(L.splat(b.shl(b.add(Fv, c64(1023)), c64(52))), x), L.vf64)
               for x in eb52]
        iscs = [b.bitcast(b.add(x, L.splat(b.shl(b.sub(c64(1023), Fv), c64(52)))), L.vf64)
                for x in eb52]
        cterms = [L.call("llvm.trunc", L.vf64, b.fmul(L.load(CV, [offs[r]], L.vf64), scs[r]))
                  for r in range(ROWS)]
        if f32lanes:
            # 2**(F - Emax) as a float32; above 2**F32_SCALE_MAX no product is nonzero
            sc32 = [L.pow2f(L.call("llvm.smin", L.vi32, b.sub(L.splat(b.trunc(Fv, L.i32)), e),
                                   L.splat(F32_SCALE_MAX, L.i32))) for e in es]
            # two rows per <2V x float> (lanes r * V + l: 512-bit registers where the CPU has
            # them): B's V values twice, A's two values each over V lanes
            two = [ir.Constant(L.i32, r) for r in range(2 * V)]
            lo = ir.Constant(ir.VectorType(L.i32, 2 * V), two)
            cat = lambda x, y: b.shuffle_vector(x, y, lo)         # noqa: E731
            halves = [ir.Constant(ir.VectorType(L.i32, V), list(range(h * V, h * V + V)))
                      for h in range(2)]
            vf2, vi2 = ir.VectorType(L.f32, 2 * V), ir.VectorType(L.i32, 2 * V)
            rep = ir.Constant(ir.VectorType(L.i32, 2 * V), [r // V for r in range(2 * V)])
            dup = ir.Constant(ir.VectorType(L.i32, 2 * V), [r % V for r in range(2 * V)])
            accs, scs2 = [], []
            for q in range(ROWS // 2):
                accs.append(cgutils.alloca_once_value(b, ir.Constant(vi2, [0] * (2 * V))))
                scs2.append(cat(sc32[2 * q], sc32[2 * q + 1]))
            with cgutils.for_range(b, k1v, start=k0v) as loop:
                t = loop.index
                bvv = L.load(BV, [t, j0v], L.vf32)
                bv2 = b.shuffle_vector(bvv, ir.Constant(L.vf32, ir.Undefined), dup)
                for q in range(ROWS // 2):
                    x2 = ir.Constant(ir.VectorType(L.f32, 2), ir.Undefined)
                    for r in range(2):
                        x2 = b.insert_element(x2, b.load(L.ptr(AV, [rows[2 * q + r], t])),
                                              ir.Constant(L.i32, r))
                    x = b.shuffle_vector(x2, ir.Constant(x2.type, ir.Undefined), rep)
                    p = b.fmul(b.fmul(x, bv2), scs2[q])
                    b.store(b.add(b.load(accs[q]), b.fptosi(p, vi2)), accs[q])
            sums = []
            for q in range(ROWS // 2):
                a2 = b.load(accs[q])
                sums += [b.shuffle_vector(a2, ir.Constant(vi2, ir.Undefined), h) for h in halves]
            Ss = [b.fadd(b.sitofp(sums[r], L.vf64), cterms[r]) for r in range(ROWS)]
        else:
            acc = [cgutils.alloca_once_value(b, ct) for ct in cterms]
            with cgutils.for_range(b, k1v, start=k0v) as loop:
                t = loop.index
                bvv = L.load(BV, [t, j0v], L.vf64)
                for r in range(ROWS):
                    x = L.splat(b.load(L.ptr(AV, [rows[r], t])))
                    p = b.fmul(b.fmul(x, bvv), scs[r])
                    b.store(b.fadd(b.load(acc[r]), L.call("llvm.trunc", L.vf64, p)), acc[r])
            Ss = [b.load(a_) for a_ in acc]
        sh = b.sub(c64(52), keepv)
        f32_rz = b.and_(b.icmp_signed("==", rndv, c64(RZ)),
                        b.and_(b.icmp_signed("==", ebv, c64(8)), b.icmp_signed("==", mbv, c64(23))))
        is_rz = b.icmp_signed("==", rndv, c64(RZ))
        is_rne = b.icmp_signed("==", rndv, c64(RNE))
        bias = b.sub(b.shl(c64(1), b.sub(ebv, c64(1))), c64(1))
        mask = c64(0)
        for r in range(ROWS):
            L.store(es[r], EM, [c64(r * V)])
            L.store(Ss[r], SS, [c64(r * V)])
            # the exact result S * 2**(Emax - F), rounded from its bits
            y = b.fmul(Ss[r], iscs[r])
            yzero = b.fcmp_ordered("==", y, ir.Constant(L.vf64, [0.0] * V))
            res = cgutils.alloca_once(b, L.vi32)
            okp = cgutils.alloca_once(b, L.vi1)
            with b.if_else(f32_rz) as (then, otherwise):
                with then:
                    # fp32 RZ: clear the bits below the keep-th fraction bit; what is left is
                    # an fp32 number when |y| is in the normal fp32 range: converts exactly
                    ay = L.call("llvm.fabs", L.vf64, y)
                    ok = b.and_(b.fcmp_ordered(">=", ay, ir.Constant(L.vf64, [2.0 ** -126] * V)),
                                b.fcmp_ordered("<", ay, ir.Constant(L.vf64, [2.0 ** 128] * V)))
                    xm = b.and_(b.bitcast(y, L.vi64),
                                L.splat(b.not_(b.sub(b.shl(c64(1), sh), c64(1)))))
                    xm = b.select(ok, b.bitcast(xm, L.vf64), ir.Constant(L.vf64, [0.0] * V))
                    rr = b.bitcast(b.fptrunc(xm, L.vf32), L.vi32)
                    b.store(b.select(yzero, L.splat(0, L.i32), rr), res)
                    b.store(b.or_(ok, yzero), okp)
                with otherwise:
                    x = b.bitcast(y, L.vi64)
                    de = b.and_(b.lshr(x, L.splat(52, L.i64)), L.splat(0x7FF, L.i64))
                    lead = b.sub(de, L.splat(1023, L.i64))
                    vbias, vmb = L.splat(bias), L.splat(mbv)
                    sign = b.shl(b.lshr(x, L.splat(63, L.i64)), L.splat(b.add(ebv, mbv)))
                    vsh, vfsh = L.splat(sh), L.splat(b.sub(mbv, keepv))
                    m52 = L.splat((1 << 52) - 1, L.i64)
                    lo_ok = b.icmp_signed(">=", lead, L.splat(b.sub(c64(1), bias)))
                    # RZ: the top keep fraction bits
                    frac = b.shl(b.lshr(b.and_(x, m52), vsh), vfsh)
                    r_rz = b.or_(b.or_(sign, b.shl(b.add(lead, vbias), vmb)), frac)
                    ok_rz = b.and_(lo_ok, b.icmp_signed("<=", lead, vbias))
                    # RNE: the 53-bit significand to keep + 1 bits, ties to even
                    m53 = b.or_(b.and_(x, m52), L.splat(1 << 52, L.i64))
                    R = b.lshr(m53, vsh)
                    rem = b.and_(m53, L.splat(b.sub(b.shl(c64(1), sh), c64(1))))
                    half = L.splat(b.shl(c64(1), b.sub(sh, c64(1))))
                    up = b.or_(b.icmp_signed(">", rem, half),
                               b.and_(b.icmp_signed("==", rem, half),
                                      b.icmp_signed("!=", b.and_(R, L.splat(1, L.i64)),
                                                    L.splat(0, L.i64))))
                    R = b.add(R, b.zext(up, L.vi64))
                    carry = b.lshr(R, L.splat(b.add(keepv, c64(1))))
                    R = b.lshr(R, carry)
                    lead2 = b.add(lead, carry)
                    r_rne = b.or_(b.or_(sign, b.shl(b.add(lead2, vbias), vmb)),
                                  b.shl(b.sub(R, L.splat(b.shl(c64(1), keepv))), vfsh))
                    ok_rne = b.and_(lo_ok, b.icmp_signed("<=", lead2, vbias))
                    rr = b.select(yzero, L.splat(0, L.i64), b.select(is_rz, r_rz, r_rne))
                    none = ir.Constant(L.vi1, [0] * V)
                    ok = b.or_(yzero, b.select(is_rz, ok_rz, b.select(is_rne, ok_rne, none)))
                    b.store(b.trunc(rr, L.vi32), res)
                    b.store(ok, okp)
            L.store(b.load(res), OUT, [orowv, offs[r]])
            bad = b.zext(b.bitcast(b.not_(b.load(okp)), ir.IntType(V)), L.i64)
            mask = b.or_(mask, b.shl(bad, c64(r * V)))
        return mask
    return sig, codegen
