"""warpcore.wgmma.gather: the aligned path (one take of the image viewed as e-byte integers)
reads the same little-endian elements as the byte-by-byte path, which any unaligned offset takes
(no vendor figure: two paths of one function)."""
import numpy as np

from layoutsim.isa.registry import get
from layoutsim.warpcore import wgmma as W


def test_aligned_and_bytewise_gathers_agree():
    rng = np.random.default_rng(0)
    image = rng.integers(0, 256, 4096, dtype=np.uint8)
    for name in ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32",
                 "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3"):
        ins = get(name)
        e = W.element_bytes(ins, "B")
        flat = rng.integers(0, 4096 // e - 1, (2, 5, 3)) * e
        want = np.array([[[int.from_bytes(image[f:f + e].tobytes(), "little") for f in row] for row in m] for m in flat])
        got = W.gather(ins, "B", image, flat)
        assert got.dtype == np.dtype(f"<u{e}") and np.array_equal(got, want)
        odd = flat + (1 if e > 1 else 0)               # unaligned: the byte-wise path
        want_odd = np.array([[[int.from_bytes(image[f:f + e].tobytes(), "little") for f in row] for row in m] for m in odd])
        assert np.array_equal(W.gather(ins, "B", image, odd), want_odd)


def test_ldmatrix_rows_aligned_and_bytewise_agree():
    """warpcore.ldmatrix.load: rows at multiples of their size (one take of the image viewed as
    rows) give the words the byte-wise path gives for the same bytes at an unaligned copy."""
    from layoutsim.warpcore import ldmatrix as L
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, 8192, dtype=np.uint8)
    for name in ("ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"):
        ins = get(name)
        rb = ins.addressing.row_bytes
        rows = rng.integers(0, 8192 // rb - 2, (3, ins.options["num"], 8)) * rb
        shifted = np.concatenate([image[-1:], image])      # the same bytes one byte later
        assert np.array_equal(L.load(ins, image, rows), L.load(ins, shifted, rows + 1))
