"""Integer, logic, bit-field, carry and compare instructions, each checked against a reference
written from the PTX ISA semantics with Python integers (ptx_int_cases.py), on inputs that mix
random words with the edge values (0, -1, INT_MIN, shift counts past the width, ...)."""
import numpy as np
import pytest
from ptx_int_cases import CASES
from ptx_kernels import edge_words, ptx

import layoutsim.ptx as P

N = 256


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(20261201)
    a, b, c = (edge_words(rng, N) for _ in range(3))
    s = rng.integers(0, 70, N).astype(np.uint32)
    t = rng.integers(0, 41, N).astype(np.uint32)
    A, B, C = (edge_words(rng, N, 64) for _ in range(3))
    out = np.zeros(len(CASES) * N, np.uint64)
    r = P.run(ptx("alu_int"), "alu_int", N // 64, 64, [a, b, c, s, t, A, B, C, out, np.int32(N)])
    inputs = {"a": a, "b": b, "c": c, "s": s, "t": t, "A": A, "B": B, "C": C}
    return inputs, r.buffers[8].reshape(len(CASES), N)


@pytest.mark.parametrize("k", range(len(CASES)), ids=[c[0] for c in CASES])
def test_instruction(results, k):
    inputs, out = results
    name, _, kinds, ref = CASES[k]
    srcs = [inputs[x] for x in kinds[1:]]
    mask = (1 << 64) - 1 if kinds[0] == "l" else (1 << 32) - 1
    checked = 0
    for i in range(N):
        want = ref(*(int(v[i]) for v in srcs))
        if want is None:            # division by zero: PTX leaves the value unspecified
            continue
        got = int(out[k, i])
        assert got == want & mask, (f"{name} thread {i}: inputs {[hex(int(v[i])) for v in srcs]} "
                                    f"gave {got:#x}, expected {want & mask:#x}")
        checked += 1
    assert checked > N // 2
