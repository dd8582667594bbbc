"""--racecheck with atomics: a plain store and an atomic to one shared address from different warps
with no barrier between them race (which value lands last is unordered); atomics among themselves
never do. The kernel of the corpus case histogram_atomics (tests/data/kernels) has both barriers
and no hazard; without either barrier it has exactly the one hazard that barrier prevented."""
import pytest

import layoutsim.ptx as P
from gpu_check.kernel_corpus import corpus as C

CASE = next(e for e in C.load_manifest() if e["name"] == "histogram_atomics")
SRC = (C.DATA / CASE["ptx"]["sm_90"]).read_text().splitlines()
BARRIERS = [i for i, line in enumerate(SRC, 1) if "bar.sync" in line]   # after bins[tid] = 0, after the loop


def histogram(drop=()):
    text = "\n".join(line for i, line in enumerate(SRC, 1) if i not in drop) + "\n"
    return P.run(text, CASE["kernel"], tuple(CASE["grid"]), tuple(CASE["block"]),
                 C.launch_args(CASE, C.load_inputs(CASE)), racecheck=True)


def op(text):
    return text.split()[1] if text.startswith("@") else text.split()[0]


def pairs(r):
    return {(h["kind"], op(h["first_text"]), op(h["second_text"])) for h in r.hazards}


def test_atomics_among_themselves_are_no_hazard():
    """Every warp of a CTA adds into the same 256 bins (skewed data): no hazard."""
    assert histogram().hazards == []


def test_a_store_then_an_atomic_of_another_warp_is_a_hazard():
    r = histogram({BARRIERS[0]})
    assert pairs(r) == {("WAW", "st.shared.u32", "atom.shared.add.u32")}
    assert "racecheck: WAW hazard: shared memory written at histogram_atomics.cu:9 (st.shared.u32) is written " \
           "again at histogram_atomics.cu:12 (atom.shared.add.u32) by another warp" in r.format()


def test_an_atomic_then_a_read_of_another_warp_is_a_hazard():
    assert pairs(histogram({BARRIERS[1]})) == {("RAW", "atom.shared.add.u32", "ld.shared.u32")}


KERNEL = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k()
{{
	.reg .pred %p<2>;
	.reg .b32 %r<4>;
	.shared .align 4 .b32 s[1];
	mov.u32 %r1, %tid.x;
	mov.u32 %r2, s;
	atom.shared.{op}.u32 %r3, [%r2], 1;
	setp.lt.u32 %p1, %r1, 32;
	@%p1 {second} [%r2], %r1;
	ret;
}}
"""


@pytest.mark.parametrize("second, want", [
    ("st.shared.u32", {("WAW", "atom.shared.add.u32", "st.shared.u32")}),    # warp 0 stores over warp 1's add
    ("red.shared.add.u32", set()),                                           # one more atomic: no hazard
])
def test_an_atomic_then_a_store_of_another_warp(second, want):
    src = KERNEL.format(op="add", second=second)
    r = P.run(src, "k", 1, 64, [], racecheck=True)
    assert pairs(r) == want
    if want:
        h = r.hazards[0]
        assert sorted(h["warps"]) == [0, 1] and h["count"] == 32 * 4     # warp 0's 32 lanes x the 4 bytes of s
        assert "(atom.shared.add.u32) is written again at PTX line 13 (st.shared.u32)" in r.format()
