"""Shifts and bit-field extracts by immediate amounts (one amount for every thread, which
ops_int computes as the shift itself), checked against the same PTX ISA references as
test_ptx_alu_int.py's register amounts (ptx_int_cases.py, Python integers): every amount from 0
past the width, and bfe positions and lengths at and past the edges, on words with the edge
values mixed in."""
import numpy as np
import pytest
from ptx_int_cases import CASES
from ptx_kernels import edge_words

import layoutsim.ptx as P

REF = {c[0]: c[3] for c in CASES}
HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"
N = 64


def _forms():
    out = []
    for name, w in (("shl.b32", 32), ("shr.u32", 32), ("shr.s32", 32), ("shl.b64", 64), ("shr.s64", 64)):
        out += [(name, w, (n,)) for n in (0, 1, 7, w - 1, w, w + 1, 255)]
    for name, w in (("bfe.u32", 32), ("bfe.s32", 32), ("bfe.s64", 64)):
        out += [(name, w, (p, n)) for p in (0, 3, w - 1, w, 200) for n in (0, 1, 9, w, 255)]
    return [f for f in out if f[0] in REF]


FORMS = _forms()


@pytest.fixture(scope="module")
def results():
    rng = np.random.default_rng(26)
    a32, a64 = edge_words(rng, N), edge_words(rng, N, 64)
    body = []
    for k, (name, w, imm) in enumerate(FORMS):
        r = "%r" if w == 32 else "%rd"
        src = "%r1" if w == 32 else "%rd1"
        body.append(f"{name} {r}9, {src}, {', '.join(map(str, imm))};")
        body.append(f"cvt.u64.u32 %rd9, %r9;" if w == 32 else "")
        body.append(f"st.global.u64 [%rd6+{k * N * 8}], %rd9;")
    ptx = HEAD + (".visible .entry k(.param .u64 pa, .param .u64 pA, .param .u64 po)\n{\n"
                  " .reg .b32 %r<12>; .reg .b64 %rd<12>;\n"
                  " ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pA]; ld.param.u64 %rd3, [po];\n"
                  " cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3;\n"
                  " mov.u32 %r2, %tid.x; mul.wide.u32 %rd4, %r2, 4; add.s64 %rd4, %rd1, %rd4;\n"
                  " ld.global.u32 %r1, [%rd4]; mul.wide.u32 %rd5, %r2, 8; add.s64 %rd7, %rd2, %rd5;\n"
                  " add.s64 %rd6, %rd3, %rd5; ld.global.u64 %rd1, [%rd7];\n " + "\n ".join(body) + "\n ret;\n}\n")
    out = np.zeros(len(FORMS) * N, np.uint64)
    r = P.run(ptx, "k", 1, N, [a32, a64, out])
    return a32, a64, r.buffers[2].reshape(len(FORMS), N)


@pytest.mark.parametrize("k", range(len(FORMS)), ids=[f"{n} {','.join(map(str, i))}" for n, _, i in FORMS])
def test_immediate_form(results, k):
    a32, a64, out = results
    name, w, imm = FORMS[k]
    a = a32 if w == 32 else a64
    for i in range(N):
        want = REF[name](int(a[i]), *imm) & ((1 << w) - 1)
        assert int(out[k, i]) == want, f"{name} {imm} of {int(a[i]):#x}: {int(out[k, i]):#x}, expected {want:#x}"
