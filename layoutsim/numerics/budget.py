"""How much memory one `layoutsim.mma` call may take, checked before anything is allocated.

A batch broadcast from small operands (A (10**4, 1, M, K) against B (1, 10**4, K, N)) is a few
megabytes given and 10**8 matrices computed: every operand is materialized over the whole batch,
with the decoded values and the accumulators beside it. The bytes a call needs are estimated
per batch element from the plan's arithmetic path (upper bounds of the peaks tracemalloc
measured: sm_90 f16/bf16/fp8/tf32 mma and wgmma, s8 and f64 mma; gfx942/gfx950 MFMA f16,
i8 and f64; gfx12 WMMA f16) and refused above the limit
with the largest batch that fits, so the caller can split the batch.

The limit: max_bytes= of the call, else $LAYOUTSIM_MMA_BYTES, else DEFAULT_BYTES (4 GiB: most of
a laptop's free memory, far above any one tile, and 10**7 f16 m16n8k16 products).
"""
import math
import os

from ..errors import LayoutsimError

DEFAULT_BYTES = 4 << 30
ENV = "LAYOUTSIM_MMA_BYTES"
# bytes per element of A and B (materialized raw bits, decoded or prepared copies) and per
# element of C/D (accumulator, temporaries, the raw and the value output)
INPUT_BYTES = {"float": 4, "int": 8, "f64": 16, "cdna": 48}
OUTPUT_BYTES = 40


def limit(max_bytes=None):
    """The byte limit of one call: max_bytes, else $LAYOUTSIM_MMA_BYTES, else DEFAULT_BYTES."""
    if max_bytes is None:
        text = os.environ.get(ENV)
        if text is None or not text.strip():
            return DEFAULT_BYTES
        try:
            value = int(text.strip(), 0)
        except ValueError:
            value = -1
        if value < 1:
            raise LayoutsimError(f"${ENV}={text!r}: give a number of bytes >= 1 (default {DEFAULT_BYTES})")
        return value
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise LayoutsimError(f"max_bytes={max_bytes!r}: give a number of bytes >= 1 (or None: "
                             f"${ENV}, else {DEFAULT_BYTES})")
    return max_bytes


def per_batch(kind, M, N, K):
    """Upper bound of the bytes one batch element of an M x N x K product takes on path `kind`."""
    return (M * K + K * N) * INPUT_BYTES.get(kind, 16) + M * N * OUTPUT_BYTES


def check(name, kind, shape, lead, max_bytes=None):
    """Refuse, before any allocation, a batch `lead` of `shape` (M, N, K) products that needs
    more than the limit; returns the bytes it needs."""
    M, N, K = shape
    nb = math.prod(lead)                   # Python ints: np.prod wraps past 2**63
    each = per_batch(kind, M, N, K)
    need = nb * each
    most = limit(max_bytes)
    if need > most:
        fit = max(1, most // each)
        raise LayoutsimError(f"{name}: a batch of {nb} products (batch shape {tuple(lead)}) needs about "
                             f"{need} bytes ({need / 2**30:.3g} GiB); the limit is {most} bytes (max_bytes= "
                             f"or ${ENV}): split the batch into chunks of at most {fit} products")
    return need
