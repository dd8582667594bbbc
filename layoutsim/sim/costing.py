"""The simulator's bridge to the bank model (`layoutsim.banks`): one warp's shared access -> cost.

The simulator knows nothing about banks; it hands the bank model the op, the 32 per-lane byte
offsets and the active lanes, and records what comes back.
"""


def cost(op, offsets, active, arch):
    """(wavefronts, ideal, conflicts) of one warp's access."""
    from .. import banks
    mask = [bool(a) for a in active]
    r = banks.analyze(op, [int(o) for o in offsets], arch=arch, active=None if all(mask) else mask)
    return int(r.wavefronts), int(r.ideal), int(r.conflicts)
