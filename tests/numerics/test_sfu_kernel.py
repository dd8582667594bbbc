"""numerics/sfu_kernel.py (MUFU.EX2 and MUFU.RCP as compiled loops, taken once numba is up)
against sfu.py's numpy forms, the reference: the same bits on random words, on every sign,
exponent and leading mantissa bits (each high half with random low halves), and on the special
values (zeros, subnormals, infinities, NaNs, ex2's range limits). The numpy forms run on the same
words as one 2-D array, which the compiled loops do not take."""
import numba  # noqa: F401  (the compiled forms are taken only once numba is imported)
import numpy as np
import pytest

from layoutsim.numerics import sfu

SPECIAL = np.array([0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F800000,
                    0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x45800000, 0x45800001,
                    0xC5800000, 0xC5800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000], np.uint32)


def _words():
    rng = np.random.default_rng(2612)
    high = np.repeat(np.arange(1 << 16, dtype=np.uint32) << np.uint32(16), 2)
    low = rng.integers(0, 1 << 16, high.size, dtype=np.uint64).astype(np.uint32)
    rand = rng.integers(0, 1 << 32, 1 << 17, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([SPECIAL, high | low, rand])


@pytest.mark.parametrize("fn", [sfu.mufu_ex2, sfu.mufu_rcp], ids=["ex2", "rcp"])
def test_compiled_is_the_numpy_form(fn):
    u = _words()
    assert sfu._compiled(u) is not None and sfu._compiled(u.reshape(1, -1)) is None
    got, want = fn(u), fn(u.reshape(1, -1))[0]
    bad = np.flatnonzero(got != want)
    assert not bad.size, [(hex(int(u[i])), hex(int(got[i])), hex(int(want[i]))) for i in bad[:4]]
