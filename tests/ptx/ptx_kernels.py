"""Helpers for the PTX executor tests: the committed test kernels and small launches."""
from pathlib import Path

import numpy as np

KERNELS = Path(__file__).resolve().parent / "kernels"
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def ptx(name, arch="sm_90"):
    """The committed PTX of kernels/<name>.cu or docs/examples/<name>.cu (kernels/build.py
    regenerates it)."""
    path = KERNELS / f"{name}.{arch}.ptx"
    return (path if path.exists() else EXAMPLES / f"{name}.{arch}.ptx").read_text()


def in_out(regs, body):
    """A kernel k(pi, po) for sm_90 of `regs` (register declarations) and `body` (its
    instructions, without the ret): two u64 pointer parameters, loaded into %rd1 and %rd2."""
    return (".version 8.0\n.target sm_90\n.address_size 64\n"
            ".visible .entry k(.param .u64 pi, .param .u64 po)\n{\n"
            f"  {regs}\n  ld.param.u64 %rd1, [pi]; ld.param.u64 %rd2, [po];\n{body}\n  ret;\n}}\n")


EDGES = {32: [0, 1, 2, 3, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 0x00FFFFFF,
              0x01000000, 0xFF800000, 0x7F, 0x80, 0xFF, 0x8000, 0xFFFF],
         64: [0, 1, (1 << 63) - 1, 1 << 63, (1 << 64) - 1, 1 << 32, (1 << 32) - 1, (1 << 53) + 1,
              (1 << 24) + 1]}


def edge_words(rng, n, bits=32):
    """Random words with the edge values every integer op must get right mixed in, and a share
    of small values."""
    dt = np.dtype(f"uint{bits}")
    x = (rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2)
         + rng.integers(0, 2, n).astype(np.uint64)).astype(dt)
    edges = np.array(EDGES[bits], np.uint64).astype(dt)
    k = min(len(edges), n // 4)
    x[rng.choice(n, k, replace=False)] = edges[:k]
    small = rng.random(n) < 0.25
    x[small] = rng.integers(0, 1 << (12 if bits == 32 else 20), small.sum()).astype(dt)
    return x


def edge_f32(rng, n):
    """f32 bit patterns: random values, subnormals, zeros, infinities, NaNs, and near-ties."""
    parts = [rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32),           # anything
             (rng.standard_normal(n).astype(np.float32)).view(np.uint32),              # ordinary
             rng.integers(0, 1 << 23, n, dtype=np.uint64).astype(np.uint32)            # subnormal
             | (rng.integers(0, 2, n).astype(np.uint32) << np.uint32(31)),
             (rng.standard_normal(n) * 2.0 ** rng.integers(-140, 128, n)).astype(np.float32).view(np.uint32)]
    x = np.concatenate(parts)[rng.permutation(4 * n)[:n]]
    special = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001,
                        0x3F800000, 0xBF800000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x00800000,
                        0x3F800001, 0x4B800001, 0x33800000], np.uint32)
    x[:len(special)] = special
    return x


def edge_f64(rng, n):
    parts = [rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2),
             rng.standard_normal(n).view(np.uint64),
             (rng.standard_normal(n) * 2.0 ** rng.integers(-1070, 1023, n)).view(np.uint64),
             rng.integers(0, 1 << 52, n, dtype=np.uint64)]
    x = np.concatenate(parts)[rng.permutation(4 * n)[:n]]
    special = np.array([0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x3FF0000000000000,
                        0x0000000000000001, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000001], np.uint64)
    x[:len(special)] = special
    return x


def edge_f16(rng, n, bf16=False):
    x = rng.integers(0, 1 << 16, n).astype(np.uint16)
    normal = (rng.standard_normal(n).astype(np.float32) if bf16 else rng.standard_normal(n).astype(np.float16))
    x[: n // 2] = (normal.view(np.uint32) >> np.uint32(16)).astype(np.uint16)[: n // 2] if bf16 else \
        normal.view(np.uint16)[: n // 2]
    special = np.array([0, 0x8000, 0x7C00 if not bf16 else 0x7F80, 0x0001, 0x3C00 if not bf16 else 0x3F80,
                        0x7E00 if not bf16 else 0x7FC0], np.uint16)
    x[:len(special)] = special
    return x
