"""The input set of the division probe (div_probe.cu), generated the same way here in numpy, and
the per-block hash both sides compute: what lets a replay check the model against the H200's
results without storing them.

Groups (name, mode, pairs, parameters): mode 0 draws (a, b) = ((w & a_and) | a_or, (v & b_and) | b_or)
from splitmix64 words, mode 1 is the 256 x 256 cross product of SPECIAL, mode 2 sweeps every 32-bit
divisor under one numerator. A block is 2^LOG2_BLOCK consecutive pairs (2^LOG2_SWEEP_BLOCK in a sweep); its hash is the sum mod
2^64 of splitmix64((i << 32) ^ result_i) over its pairs i (i counted from the group's start).
"""
import numpy as np

LOG2_BLOCK = 16                      # the random and special groups' blocks
LOG2_SWEEP_BLOCK = 20                # a sweep's: 4096 blocks of 2^20 divisors
OPS = ("div.approx.f32", "div.approx.ftz.f32", "div.full.f32", "div.full.ftz.f32")   # probe op codes 0..3
M = 0xFFFFFFFF
EXP_LOW = 0x80FFFFFF                 # keeps sign, mantissa and exponent bits 23-24: exponents 0..3
# mode 0 groups: (name, pairs, seed, a_and, a_or, b_and, b_or)
RANDOM = (
    ("random bits", 1 << 22, 1, M, 0, M, 0),
    ("subnormal divisor", 1 << 20, 2, M, 0, 0x807FFFFF, 0),
    ("divisor exponent 0..3", 1 << 20, 3, M, 0, EXP_LOW, 0),
    ("divisor exponent 252..255 (|b| > 2^126 scaled)", 1 << 20, 4, M, 0, EXP_LOW, 0x7E000000),
    ("numerator exponent 252..255, divisor exponent 0..3 (overflow)", 1 << 20, 5, EXP_LOW, 0x7E000000, EXP_LOW, 0),
    ("numerator exponent 0..3, divisor exponent 252..255 (underflow)", 1 << 20, 6, EXP_LOW, 0, EXP_LOW, 0x7E000000),
    ("subnormal numerator", 1 << 20, 7, 0x807FFFFF, 0, M, 0),
    ("numerator and divisor near 1 (exponents 124..127)", 1 << 20, 8, 0x80FFFFFF, 0x3E000000, 0x80FFFFFF, 0x3E000000),
    ("results near the subnormal boundary (exponents 60..63 / 184..187)", 1 << 20, 9, 0x80FFFFFF, 0x1E000000,
     0x80FFFFFF, 0x5C000000),
    ("divisor exponent 124..127, numerator exponent 252..255", 1 << 20, 10, EXP_LOW, 0x7E000000, 0x80FFFFFF, 0x3E000000),
)
# mode 2: every divisor under these numerators (1, 3, the largest mantissa, pi, -max, the smallest
# subnormal)
SWEEP_NUMERATORS = (0x3F800000, 0x40400000, 0x3FFFFFFF, 0x40490FDB, 0xFF7FFFFF, 0x00000001)
SWEEP_PAIRS = 1 << 32


def special():
    """256 f32 bit patterns of every class: zeros, infinities, NaNs, subnormal extremes, the
    normal boundary, powers of two at the scaling thresholds (2^-126, 2^126) and around them,
    the largest finite, ones, then splitmix64 words to fill."""
    base = [0x00000000, 0x00000001, 0x00000002, 0x00400000, 0x007FFFFF, 0x00800000, 0x00800001, 0x00FFFFFF,
            0x01000000, 0x0B800000, 0x33800000, 0x3F800000, 0x3F800001, 0x3FFFFFFF, 0x40000000, 0x40400000,
            0x40490FDB, 0x4B800000, 0x7E7FFFFF, 0x7E800000, 0x7E800001, 0x7EFFFFFF, 0x7F000000, 0x7F7FFFFE,
            0x7F7FFFFF, 0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x3F7FFFFF, 0x3EAAAAAB, 0x34000000]
    vals = base + [b | 0x80000000 for b in base]
    words = splitmix64(np.arange(256 - len(vals), dtype=np.uint64) + np.uint64(0x5EED)).astype(np.uint32)
    return np.concatenate([np.array(vals, np.uint32), words]).astype(np.uint32)


def splitmix64(z):
    z = np.asarray(z, np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def groups():
    """[(name, mode, pairs, log2 of the block, params dict)] in the order the probe runs them."""
    out = [(name, 0, n, LOG2_BLOCK, dict(seed=seed, a_and=aa, a_or=ao, b_and=ba, b_or=bo))
           for name, n, seed, aa, ao, ba, bo in RANDOM]
    out.append(("special x special", 1, 1 << 16, LOG2_BLOCK, {}))
    out += [(f"every divisor under {a:#010x}", 2, SWEEP_PAIRS, LOG2_SWEEP_BLOCK, dict(fixed_a=a))
            for a in SWEEP_NUMERATORS]
    return out


def pairs(mode, params, start, n):
    """(a, b) uint32 arrays of pairs start..start+n of a group."""
    i = np.arange(start, start + n, dtype=np.uint64)
    if mode == 0:
        s = np.uint64(params["seed"])
        a = (splitmix64(s + np.uint64(2) * i).astype(np.uint32) & np.uint32(params["a_and"])) | np.uint32(params["a_or"])
        b = (splitmix64(s + np.uint64(2) * i + np.uint64(1)).astype(np.uint32) & np.uint32(params["b_and"])) | np.uint32(params["b_or"])
        return a.astype(np.uint32), b.astype(np.uint32)
    if mode == 1:
        sp = special()
        return sp[(i >> np.uint64(8)).astype(np.int64)], sp[(i & np.uint64(255)).astype(np.int64)]
    return np.full(n, params["fixed_a"], np.uint32), i.astype(np.uint32)


def block_hashes(results, start, log2_block):
    """The per-block sums of results for pairs start.. (start and length multiples of the block)."""
    r = np.asarray(results, np.uint32).astype(np.uint64)
    i = np.arange(start, start + r.size, dtype=np.uint64)
    h = splitmix64((i << np.uint64(32)) ^ r)
    return h.reshape(-1, 1 << log2_block).sum(axis=1, dtype=np.uint64)
