"""LLVM operations numba does not spell: reinterpreting float64 / float32 bits (a bitcast: no
arithmetic, so a NaN's payload and quiet bit stay as they are) and the fused multiply-add."""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def f64_from_bits(typingctx, x):
    """The float64 whose bits are the int64 x."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return sig, codegen


@intrinsic
def f64_bits(typingctx, x):
    """The int64 whose bits are the float64 x."""
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return sig, codegen


@intrinsic
def f32_from_bits(typingctx, x):
    """The float32 whose bits are the low 32 bits of the int64 x."""
    sig = types.float32(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.trunc(args[0], ir.IntType(32)), ir.FloatType())
    return sig, codegen


@intrinsic
def f32_bits(typingctx, x):
    """The bits of the float32 x, as a non-negative int64."""
    sig = types.int64(types.float32)

    def codegen(context, builder, signature, args):
        return builder.zext(builder.bitcast(args[0], ir.IntType(32)), ir.IntType(64))
    return sig, codegen


@intrinsic
def fma(typingctx, x, y, z):
    """llvm.fma.f32 / llvm.fma.f64: the correctly rounded fused multiply-add x * y + z (all
    three float32, or all float64)."""
    if not (x == y == z and x in (types.float32, types.float64)):
        return None
    sig = x(x, y, z)

    def codegen(context, builder, signature, args):
        t = ir.FloatType() if x == types.float32 else ir.DoubleType()
        name = "llvm.fma.f32" if x == types.float32 else "llvm.fma.f64"
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(t, [t, t, t]), name)
        return builder.call(fn, args)
    return sig, codegen
