"""layoutsim: lane/register/bit-level model of GPU matrix instructions.

    import layoutsim
    mma = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32")
    mma.operand("C").lane(13)          # [(reg, slot, matrix, row, col), ...]
    mma.operand("C").who_holds(11, 3)  # [(lane, reg, slot), ...]
"""
from .errors import LayoutsimError
from .isa.registry import get, listing, lookup
from .numerics import mma  # lazy: numpy/numba load on the first call

__version__ = "0.1.0"
__all__ = ["get", "lookup", "listing", "LayoutsimError", "__version__"]
