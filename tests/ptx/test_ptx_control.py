"""Control flow: divergent branches that reconverge, loops with per-thread trip counts, calls of
non-inlined functions (.param arguments and results), printf, early exit before a barrier, and the
errors a launch that cannot finish gives (deadlock, endless loop)."""
import numpy as np
import pytest
from ptx_kernels import ptx

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError

SRC = ptx("control")


def collatz(x):
    s = 0
    while x != 1:
        x = 3 * x + 1 if x & 1 else x // 2
        s += 1
    return s


def test_divergence_calls_and_reconvergence():
    rng = np.random.default_rng(11)
    n = 256
    v = rng.integers(0, 1000, n).astype(np.int32)
    v[17] = 12345                                   # takes the printf path
    r = P.run(SRC, "diverge", 2, 128, [v, np.zeros(n, np.int32), np.zeros(n, np.float32), np.int32(n)])
    res = np.zeros(n, np.int64)
    for i, x in enumerate(v.astype(np.int64)):
        if x % 3 == 0:
            y = x * 2
        elif x % 3 == 1:
            y = sum(k * x for k in range(x & 15))
        else:
            s = collatz((x & 63) + 1)
            y = s * 2 + 1 + s
        y += {0: 1, 3: -7}.get(x & 7, 0) if (x & 7) in (0, 3) else 0
        if (x & 7) == 5:
            y ^= 0x55
        elif (x & 7) not in (0, 3):
            y += x & 7
        res[i] = y
    tile = res.reshape(2, 128)
    want = np.roll(tile, -1, axis=1) - tile
    assert np.array_equal(r.buffers[1], want.reshape(-1).astype(np.int32))
    vf = v.astype(np.float32)
    assert np.array_equal(r.buffers[2], (vf * np.float32(0.5)) + (vf - np.float32(0.5)))
    # printf("v=%d r=%d\n", v, r) of control.cu:28, formatted from its argument buffer (ops_sys.py)
    assert r.printf == f"v=12345 r={res[17]}\n"


def test_early_exit_then_barrier():
    x = np.arange(128, dtype=np.float32)
    out = np.full(128, -1.0, np.float32)
    r = P.run(SRC, "early_exit", 1, 128, [x, out, np.int32(77)])
    want = out.copy()
    want[:77] = 2 * x[76::-1]
    assert np.array_equal(r.buffers[1], want)


def test_deadlock_is_reported():
    with pytest.raises(LayoutsimError, match=r"deadlock: .*barrier on line \d+.*warp-synchronous instruction "
                                             r"on line \d+ (\(\S+\) )?\(shfl.sync"):
        P.run(SRC, "deadlock", 1, 64, [np.zeros(64, np.float32)])


def test_endless_loop_stops_at_max_steps():
    with pytest.raises(LayoutsimError, match="step limit, 5000 steps"):
        P.run(SRC, "endless", 1, 32, [np.zeros(2, np.int32)], max_steps=5000)
