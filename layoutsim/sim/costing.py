"""The simulator's bridge to the bank model (`layoutsim.banks`): one warp's shared access -> cost.

The simulator knows nothing about banks; it hands the bank model the op, the 32 per-lane byte
offsets and the active lanes, and records what comes back. wgmma's operand reads (the GMMA unit's,
not the LSU's) are costed by their size (`wgmma_cost`), as the H200's counters showed.
"""


def cost(op, offsets, active, arch):
    """(wavefronts, ideal, conflicts) of one warp's access."""
    from .. import banks
    mask = [bool(a) for a in active]
    r = banks.analyze(op, [int(o) for o in offsets], arch=arch, active=None if all(mask) else mask)
    return int(r.wavefronts), int(r.ideal), int(r.conflicts)


def wgmma_cost(nbytes):
    """(wavefronts, ideal, conflicts) of a wgmma reading `nbytes` of operands from shared memory.

    The GMMA unit, not the LSU, reads them: Nsight Compute counts no ld.shared wavefront
    (l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld stays 0) but one wavefront of
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma per 128 bytes (one pass over the 32 banks),
    and the total l1tex__data_pipe_lsu_wavefronts_mem_shared includes them. Measured on the H200
    (tests/data/descriptors/counters_wgmma_sm_90.json): 32 per m64n128k16 f16 B (4096 bytes) in
    all four swizzle modes, K- and MN-major, 20 per m64n16k16 with A and B in shared memory (2560
    bytes), bank conflicts 0. Those were the canonical (dense) tiles: whether other descriptor
    layouts cost more is not measured, so conflicts are not modelled (0)."""
    from ..banks.model import BANKS
    per = BANKS * 4
    w = -(-int(nbytes) // per)
    return w, w, 0
