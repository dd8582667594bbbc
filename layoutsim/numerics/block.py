"""Which of the block-FMA kernel's paths runs a batch, and running it (kernel.py describes the
three paths): the vector path (vector.py) where vector_ok proves it exact, else the scalar paths
of kernel.py. It sits above both, so neither imports the other's caller."""
import numpy as np

from . import vector
from .kernel import _chunk, in_chunks


def path(cfg, M, N, K):
    """Which path block_fma takes: "vector f32", "vector f64" or "scalar"."""
    cfg = cfg.tolist()          # Python ints: these checks run on every call (ptx: per instruction)
    if not vector.vector_ok(cfg, M, N, K):
        return "scalar"
    return "vector f32" if vector.f32_ok(cfg) else "vector f64"


def block_fma(a, b, c, cfg, out, which=None):
    """a (B, M, K), b (B, K, N) (k already in the plan's order), c (B, M, N): raw bits of the
    formats in cfg (a and b one unsigned dtype, c uint32); out (B, M, N) uint32: raw D bits.
    which: path(cfg, M, N, K) where the caller has it already (api keeps it per Plan)."""
    _, M, K = a.shape
    if which is None:
        which = path(cfg, M, b.shape[2], K)
    runner(cfg, which, M, b.shape[2], K)(a, b, c, out)


def runner(cfg, which, M, N, K):
    """block_fma(a, b, c, cfg, out, which) for operands of this shape, as a function (a, b, c,
    out) that a caller with many batches of one instruction keeps (numerics.api, per Plan)."""
    if which == "scalar":
        return lambda a, b, c, out: in_chunks(a.shape[0], lambda lo, hi: _chunk(a, b, c, cfg, out, lo, hi))
    return vector.Chunks(cfg, M, N, K, np.float32 if which == "vector f32" else np.float64)
