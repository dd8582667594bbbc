"""Reinterpreting float64 bits inside numba code (LLVM bitcast: no arithmetic, so a NaN's
payload and quiet bit stay as they are)."""
from llvmlite import ir
from numba import types
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
