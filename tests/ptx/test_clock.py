"""%clock64, %clock and %globaltimer: the count of warp-instructions the reading thread's warp has
issued so far (the reading one included), deterministic; a warp that takes a branch the other
skips counts the instructions of its path only."""
import numpy as np
from report_kernels import TEXT

import layoutsim.ptx as P


def test_clock64_counts_the_warps_instructions():
    r = P.run(TEXT, "clocks", 1, 64, [np.zeros((64, 3), np.uint64)])
    out = r.buffers[0]
    # ld.param, cvta, mov %tid, then mov %clock64: the 4th instruction; three adds later the 8th
    assert (out[:, 0] == 4).all() and (out[:, 1] == 8).all()
    # setp, bra; warp 0 (tid < 32) runs two adds more before reading %clock
    assert (out[:32, 2] == 13).all() and (out[32:, 2] == 11).all()
    # a second CTA (writing the same rows) counts from 0 as well: the same values
    again = P.run(TEXT, "clocks", 2, 64, [np.zeros((128, 3), np.uint64)]).buffers[0]
    assert np.array_equal(again[:64], out) and not again[64:].any()
