"""layoutsim: lane/register/bit-level model of GPU matrix instructions.

    import layoutsim
    mma = layoutsim.get("mma.m16n8k16.f32.f16.f16.f32")
    mma.operand("C").lane(13)          # [(reg, slot, matrix, row, col), ...]
    mma.operand("C").who_holds(11, 3)  # [(lane, reg, slot), ...]
"""
import importlib
import importlib.util

from .errors import LayoutsimError
from .isa.registry import get, listing, lookup
from .numerics import mma  # lazy: numpy/numba load on the first call

__version__ = "0.1.0"
__all__ = ["get", "lookup", "listing", "LayoutsimError", "__version__"]


def __getattr__(name):
    """A submodule named after `import layoutsim` alone (layoutsim.smem.Descriptor, layoutsim.banks.
    analyze) is imported then, as `import layoutsim.smem` would: `import layoutsim.ptx` loads only
    what a run needs (issue 26), no longer every subpackage scripts may name."""
    if name.startswith("_") or importlib.util.find_spec(f"{__name__}.{name}") is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
