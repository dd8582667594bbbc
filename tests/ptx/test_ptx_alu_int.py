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


PRMT_IMM = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 po)
{{
 .reg .b32 %r<8>; .reg .b64 %rd<10>;
 ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [po];
 mov.u32 %r1, %tid.x;
 mul.wide.u32 %rd4, %r1, 4;
 add.s64 %rd5, %rd1, %rd4; add.s64 %rd6, %rd2, %rd4; add.s64 %rd7, %rd3, %rd4;
 ld.global.b32 %r2, [%rd5]; ld.global.b32 %r3, [%rd6];
 prmt.b32{mode} %r4, %r2, %r3, {sel};
 st.global.b32 [%rd7], %r4;
 ret;
}}
"""


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
@pytest.mark.parametrize("sel", [0x3210, 0x7654, 0x1B8F, 0xC840, 2, 3])
def test_prmt_with_an_immediate_selector(mode, sel):
    """An immediate selector (as compilers write it) takes the uniform path; the same reference."""
    from ptx_int_cases import prmt
    rng = np.random.default_rng(sel)
    a, b = (edge_words(rng, 64) for _ in range(2))
    out = np.zeros(64, np.uint32)
    text = PRMT_IMM.format(mode=f".{mode}" if mode else "", sel=sel)
    got = P.run(text, "k", 1, 64, [a, b, out]).buffers[2]
    want = [prmt(int(x), int(y), sel, mode) & 0xFFFFFFFF for x, y in zip(a, b)]
    assert [int(v) for v in got] == want
