"""%clock64, %clock and %globaltimer: the count of warp-instructions the reading thread's warp has
issued so far (the reading one included), deterministic; a warp that takes a branch the other
skips counts the instructions of its path only."""
import numpy as np

import layoutsim.ptx as P

PTX = r""".version 8.0
.target sm_90
.address_size 64

.visible .entry clocks(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [out];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %tid.x;
	mov.u64 %rd2, %clock64;
	add.s32 %r2, %r1, 1;
	add.s32 %r2, %r2, 1;
	add.s32 %r2, %r2, 1;
	mov.u64 %rd3, %clock64;
	setp.ge.u32 %p1, %r1, 32;
	@%p1 bra SKIP;
	add.s32 %r2, %r2, 1;
	add.s32 %r2, %r2, 1;
SKIP:
	mov.u32 %r3, %clock;
	cvt.u64.u32 %rd4, %r3;
	mul.wide.u32 %rd5, %r1, 24;
	add.s64 %rd6, %rd1, %rd5;
	st.global.u64 [%rd6], %rd2;
	st.global.u64 [%rd6+8], %rd3;
	st.global.u64 [%rd6+16], %rd4;
	ret;
}
"""


def test_clock64_counts_the_warps_instructions():
    r = P.run(PTX, "clocks", 1, 64, [np.zeros((64, 3), np.uint64)])
    out = r.buffers[0]
    # ld.param, cvta, mov %tid, then mov %clock64: the 4th instruction; three adds later the 8th
    assert (out[:, 0] == 4).all() and (out[:, 1] == 8).all()
    # setp, bra; warp 0 (tid < 32) runs two adds more before reading %clock
    assert (out[:32, 2] == 13).all() and (out[32:, 2] == 11).all()
    # a second CTA (writing the same rows) counts from 0 as well: the same values
    again = P.run(PTX, "clocks", 2, 64, [np.zeros((128, 3), np.uint64)]).buffers[0]
    assert np.array_equal(again[:64], out) and not again[64:].any()
