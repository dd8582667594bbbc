"""What every cuda-samples case module uses: the Case constructor and argument shorthands."""
from gpu_check.kernel_corpus.cases import Arg, scalar

from ..cases import Case


def cdiv(a, b):
    return -(-a // b)


def ints(*values, dtype="int32"):
    return tuple(scalar(dtype, v) for v in values)


def case(name, source, kernel, argv, grid, block, args, what, shared=0, index=0, arch="sm_90"):
    """One launch: `source` under Samples/, `kernel` the mangled-name prefix of its entry (the
    index-th with it), grid and block as ints or tuples."""
    as3 = lambda v: tuple(v) + (1,) * (3 - len(v)) if isinstance(v, tuple) else (v, 1, 1)  # noqa: E731
    return Case(f"samples_{name}", f"Samples/{source}", (kernel, index), arch, tuple(argv), as3(grid), as3(block),
                shared, tuple(args), what)


__all__ = ["Arg", "case", "cdiv", "ints", "scalar"]
