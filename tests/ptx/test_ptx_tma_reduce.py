"""cp.reduce.async.bulk and cp.reduce.async.bulk.tensor in the executor (layoutsim/ptx/ops_reduce.py)
through the hand-written kernels of handwritten/tma_reduce.ptx.in, which ptxas -arch=sm_90a assembles.

Expected values are numpy's, from the PTX ISA 9.0's words (9.7.9.25.4.2, 9.7.9.25.5.3): each
destination element reduced with its source element; integers wrap, compare as their type,
.inc/.dec return a result in [0..src] (atom's rules, 9.7.13.5); .f16/.bf16 .add.noftz rounds the
exact sum to nearest even and keeps subnormals; the non-tensor .f32 .add flushes subnormal inputs
and results to sign-preserving zero. The tensor form's box lies in shared memory as cuda.h and the
ISA place it (rows of box[0] elements, 128B swizzle: the 16-byte chunk bits XOR the row bits), its
elements outside the tensor skipped. None of these values was measured on a GPU here."""
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.errors import LayoutsimError
from layoutsim.ptx import runner

SMEM = 4096                 # dynamic shared memory: the extern smem[] array
TEMPLATE = (Path(__file__).resolve().parent / "handwritten" / "tma_reduce.ptx.in").read_text()


def module(op="add", type_="u32", top="add", cred="add.u32"):
    return TEMPLATE.replace("@OP@", op).replace("@TYPE@", type_).replace("@TOP@", top).replace("@CRED@", cred)


MODULES = [("add", "u32", "add", "add.u32"), ("add.noftz", "bf16", "min", "min.s32"), ("xor", "b64", "or", "xor.b32"),
           ("min", "s64", "max", "inc.u32"), ("add", "f32", "and", "dec.u32"), ("add", "f64", "add", "add.u64")]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
def test_ptxas_assembles_them(tmp_path):
    for k, m in enumerate(MODULES):
        src = tmp_path / f"m{k}.ptx"
        src.write_text(module(*m))
        r = subprocess.run(["ptxas", "-arch=sm_90a", str(src), "-o", str(tmp_path / f"m{k}.cubin")],
                           capture_output=True, text=True)
        assert r.returncode == 0, (m, r.stderr)


def bulk(op, type_, dst, src, grid=1):
    n = dst.nbytes
    r = P.run(module(op, type_), "red_bulk", grid, 32, [dst, src, np.zeros(n * grid, np.uint8), np.uint32(n)], shared_bytes=SMEM)
    return r.buffers[0], r.buffers[2]


def words(rng, dt, n):
    x = rng.integers(0, 1 << 63, n, dtype=np.uint64).astype(dt)
    x[:4] = np.array([0, 1, np.iinfo(dt).max, np.iinfo(dt).min], dt) if np.iinfo(dt).min else [0, 1, 2, np.iinfo(dt).max]
    return x


INTS = [  # .redOp, .type, numpy dtype, what the element becomes (9.7.9.25.4.2; .inc/.dec as atom's, 9.7.13.5)
    ("add", "u32", np.uint32, lambda a, b: a + b),
    ("add", "s32", np.int32, lambda a, b: a + b),
    ("add", "u64", np.uint64, lambda a, b: a + b),
    ("min", "s32", np.int32, np.minimum), ("max", "u32", np.uint32, np.maximum),
    ("min", "s64", np.int64, np.minimum), ("max", "u64", np.uint64, np.maximum),
    ("inc", "u32", np.uint32, lambda a, b: np.where(a >= b, 0, a + 1).astype(np.uint32)),
    ("dec", "u32", np.uint32, lambda a, b: np.where((a == 0) | (a > b), b, a - 1).astype(np.uint32)),
    ("and", "b32", np.uint32, np.bitwise_and), ("or", "b64", np.uint64, np.bitwise_or),
    ("xor", "b64", np.uint64, np.bitwise_xor),
]


@pytest.mark.parametrize("op,type_,dt,f", INTS, ids=[f"{c[0]}.{c[1]}" for c in INTS])
def test_integer_reductions_and_reading_after_wait_group(op, type_, dt, f):
    """The kernel's thread 0 reads the destination back after cp.async.bulk.wait_group 0: it sees
    the reduced values (the bulk group is complete)."""
    rng = np.random.default_rng(len(op) * 7 + len(type_))
    n = 256 // np.dtype(dt).itemsize
    a, b = words(rng, dt, n), words(rng, dt, n)
    if op in ("inc", "dec"):
        b[4:8] = [0, 1, 5, 0xFFFFFFFF]
        a[4:8] = [3, 1, 5, 0]
    with np.errstate(over="ignore"):
        want = f(a, b)
    got, seen = bulk(op, type_, a.copy(), b)
    assert np.array_equal(got.view(dt), want)
    assert np.array_equal(seen.view(dt), want)


def test_several_ctas_add_into_the_same_elements():
    """Four CTAs reduce into one array: integer addition gives the same sum in any order."""
    rng = np.random.default_rng(3)
    a = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, 4 * 64, dtype=np.uint64).astype(np.uint32)
    got, _ = bulk("add", "u32", a.copy(), b, grid=4)
    with np.errstate(over="ignore"):
        assert np.array_equal(got.view(np.uint32), a + b[:64] + b[64:128] + b[128:192] + b[192:])


def test_float_order_between_ctas_is_the_executors():
    """The ISA makes each element's reduction atomic but orders none: 1 + 2^24 - 2^24 is 0 in CTA
    order (1 + 2^24 rounds to 2^24, ties to even) and 1 the other way. The model applies CTA 0's
    reduction first (the executor's order); a GPU may give either."""
    a = np.array([1.0, 0, 0, 0], np.float32)
    b = np.array([2.0 ** 24, 0, 0, 0, -2.0 ** 24, 0, 0, 0], np.float32)
    assert (np.float32(1.0) + np.float32(2 ** 24)) - np.float32(2 ** 24) == 0
    assert (np.float32(1.0) - np.float32(2 ** 24)) + np.float32(2 ** 24) == 1
    got, _ = bulk("add", "f32", a.copy(), b, grid=2)
    assert got.view(np.float32)[0] == 0.0


def ftz(x):
    x = np.asarray(x, np.float32)
    return np.where(np.abs(x) < np.float32(2.0 ** -126), np.copysign(np.float32(0), x), x).astype(np.float32)


def test_f32_add_flushes_subnormals_as_the_isa_says():
    tiny = np.float32(2.0 ** -126)
    a = np.array([1e-40, 1.0, -3e-39, tiny, 1.5 * tiny, 3.0, -1e-45, 2.0 ** 100], np.float32)
    b = np.array([1e-40, 2.0 ** -149, 1.0, -tiny / 2, -tiny, 0.1, -0.0, 2.0 ** 100], np.float32)
    want = ftz(ftz(a) + ftz(b))              # numpy's float32 add rounds to nearest even
    got, _ = bulk("add", "f32", a.copy(), b)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    assert got.view(np.uint32)[4] == 0 and got.view(np.uint32)[6] == 0x80000000   # a subnormal result; -0


def test_f64_add():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(32) * 1e300, rng.standard_normal(32)
    got, _ = bulk("add", "f64", a.copy(), b)
    assert np.array_equal(got.view(np.float64), a + b)


def test_f16_add_noftz_keeps_subnormals():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 0x7C00, 128).astype(np.uint16) | (rng.integers(0, 2, 128).astype(np.uint16) << 15)
    b = rng.integers(0, 0x0400, 128).astype(np.uint16)             # subnormal and small
    b[:8] = [0x0001, 0x8001, 0x03FF, 0x0200, 0x7BFF, 0x0000, 0x8000, 0x3C00]
    a[:8] = [0x0001, 0x0001, 0x0001, 0x8000, 0x7BFF, 0x8000, 0x8000, 0x0001]
    exact = a.view(np.float16).astype(np.float64) + b.view(np.float16).astype(np.float64)
    with np.errstate(over="ignore"):
        want = exact.astype(np.float16)                             # one rounding, to nearest even
    got, _ = bulk("add.noftz", "f16", a.copy(), b)
    assert np.array_equal(got.view(np.uint16), want.view(np.uint16))
    assert got.view(np.uint16)[0] == 0x0002 and got.view(np.uint16)[4] == 0x7C00   # subnormal kept; overflow inf


def bf16(x32):
    """float32 -> bf16 bits, rounded to nearest even."""
    u = np.asarray(x32, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_bf16_add_noftz():
    rng = np.random.default_rng(6)
    # exponents within 2^-6..2^6 of each other and subnormals: the float32 sum is exact
    a = (rng.integers(0x3C00, 0x4300, 128) | (rng.integers(0, 2, 128) << 15)).astype(np.uint16)
    b = rng.integers(0x3C00, 0x4300, 128).astype(np.uint16)
    a[:4], b[:4] = [0x0001, 0x0040, 0x8001, 0x0000], [0x0001, 0x0040, 0x0003, 0x8000]
    f = lambda h: (h.astype(np.uint32) << 16).view(np.float32)     # noqa: E731
    want = bf16(f(a) + f(b))
    got, _ = bulk("add.noftz", "bf16", a.copy(), b)
    assert np.array_equal(got.view(np.uint16), want)
    assert list(got.view(np.uint16)[:4]) == [0x0002, 0x0080, 0x0002, 0x0000]


def test_f16_min_max():
    """min.f16/max.f16's rules (the ISA says none for this instruction): a NaN loses, -0 < +0."""
    a = np.array([0x3C00, 0x7E00, 0x7E00, 0x8000, 0x0000, 0xBC00, 0x0001, 0x7C00], np.uint16)
    b = np.array([0x4000, 0x3C00, 0x7E00, 0x0000, 0x8000, 0x3C00, 0x8001, 0xFC00], np.uint16)
    lo, _ = bulk("min", "f16", a.copy(), b)
    hi, _ = bulk("max", "f16", a.copy(), b)
    assert list(lo.view(np.uint16)) == [0x3C00, 0x3C00, 0x7FFF, 0x8000, 0x8000, 0xBC00, 0x8001, 0xFC00]
    assert list(hi.view(np.uint16)) == [0x4000, 0x3C00, 0x7FFF, 0x0000, 0x0000, 0x3C00, 0x0001, 0x7C00]


def test_the_cache_hint_form():
    a, b = np.arange(16, dtype=np.uint32), np.full(16, 5, np.uint32)
    r = P.run(module("add", "u32"), "red_bulk_hint", 1, 32, [a.copy(), b, np.uint32(64)], shared_bytes=SMEM)
    assert np.array_equal(r.buffers[0], a + 5)


def test_no_shared_wavefronts_for_the_tma():
    a, b = np.zeros(64, np.uint32), np.ones(64, np.uint32)
    r = P.run(module("add", "u32"), "red_bulk", 1, 32, [a, b, np.zeros(256, np.uint8), np.uint32(256)], shared_bytes=SMEM)
    copied = P.run(module("add", "u32"), "red_bulk", 1, 32, [a, b, np.zeros(256, np.uint8), np.uint32(16)], shared_bytes=SMEM)
    # the kernel's own st.shared of the source: 2 wavefronts per 32 words more for 256 bytes than 16
    assert r.shared_wavefronts["ld"] == 0 and "TMA" in " ".join(r.notes)
    assert r.shared_wavefronts["st"] - copied.shared_wavefronts["st"] == 1


# ---- the tensor form -----------------------------------------------------------------------------
def smem_image(box_vals, swizzle):
    """The shared bytes of a 2-D box [rows, cols] as TMA lays it: row r at r * row_bytes, each 16-byte
    chunk c of a 128B-swizzled row at c ^ (r % 8)."""
    rows, cols = box_vals.shape
    e = box_vals.itemsize
    raw = np.ascontiguousarray(box_vals).view(np.uint8).reshape(rows, cols * e)
    out = np.zeros(rows * cols * e, np.uint8)
    for r in range(rows):
        for k in range(cols * e):
            lin = r * cols * e + k
            if swizzle == "128B":
                lin ^= ((lin >> 7) & 7) << 4
            out[lin] = raw[r, k]
    return out


def tensor(top, tm, image, c0, c1, c2=-1):
    return P.run(module(top=top), "red_tensor", 1, 32, [tm, image, np.uint32(image.nbytes), np.int32(c0),
                                                        np.int32(c1), np.int32(c2)], shared_bytes=SMEM)


def test_tensor_add_f32_swizzled_and_clipped():
    rng = np.random.default_rng(7)
    t = rng.standard_normal((40, 64)).astype(np.float32)
    box = rng.standard_normal((8, 32)).astype(np.float32)
    tm = P.TensorMapArg(buffer=t.copy(), dims=(64, 40), box=(32, 8), swizzle="128B")
    r = tensor("add", tm, smem_image(box, "128B"), 32, 36)
    want = t.copy()
    want[36:40, 32:64] += box[:4]                    # rows 40..43 lie outside the tensor: skipped
    assert np.array_equal(r.buffers[0], want)


def test_tensor_min_s32_at_negative_coordinates():
    rng = np.random.default_rng(8)
    t = rng.integers(-1000, 1000, (16, 16)).astype(np.int32)
    box = rng.integers(-1000, 1000, (8, 8)).astype(np.int32)
    tm = P.TensorMapArg(buffer=t.copy(), dims=(16, 16), box=(8, 8))
    r = tensor("min", tm, smem_image(box, "none"), -4, -2)
    want = t.copy()
    want[0:6, 0:4] = np.minimum(want[0:6, 0:4], box[2:, 4:])
    assert np.array_equal(r.buffers[0], want)


def test_tensor_5d_bf16_by_the_map_dtype():
    """ThunderKittens' form: .5d, no .tile; the map's element type given as dtype (numpy has no bf16)."""
    rng = np.random.default_rng(9)
    t = rng.integers(0x3C00, 0x4300, (2, 3, 8, 16)).astype(np.uint16)        # dims (16, 8, 3, 2, 1)
    box = rng.integers(0x3C00, 0x4300, (4, 16)).astype(np.uint16)            # box (16, 4, 1, 1, 1)
    tm = P.TensorMapArg(buffer=t.copy(), dims=(16, 8, 3, 2, 1), box=(16, 4, 1, 1, 1), dtype="bf16")
    r = tensor("add", tm, smem_image(box, "none"), 0, 4, 2)
    f = lambda h: (h.astype(np.uint32) << 16).view(np.float32)               # noqa: E731
    want = t.copy()
    want[0, 2, 4:8] = bf16(f(t[0, 2, 4:8]) + f(box))
    assert np.array_equal(r.buffers[0], want)


def test_a_map_type_the_table_refuses():
    tm = P.TensorMapArg(buffer=np.zeros((8, 16), np.uint8), dims=(16, 8), box=(16, 8))
    with pytest.raises(P.PtxFault, match=r"\.add on a tensor map of u8 elements: PTX ISA 9.7.9.25.5.3 allows") as e:
        tensor("add", tm, np.zeros(128, np.uint8), 0, 0)
    assert "\n" not in str(e.value)
    tm = P.TensorMapArg(buffer=np.zeros((8, 16), np.int16), dims=(16, 8), box=(16, 8))
    with pytest.raises(P.PtxFault, match="unknown .give TensorMapArg.dtype"):
        tensor("add", tm, np.zeros(256, np.uint8), 0, 0)


# ---- shared::cta -> shared::cluster with an mbarrier ---------------------------------------------------
@pytest.mark.parametrize("cred,dt,f", [("add.u32", np.uint32, lambda a, b: a + b),
                                       ("min.s32", np.int32, np.minimum)])
def test_into_another_ctas_shared_memory(cred, dt, f):
    """Rank 1 reduces into rank 0's shared memory; rank 0 waits on its mbarrier for the 256 bytes."""
    rng = np.random.default_rng(10)
    src = rng.integers(-(1 << 31), 1 << 31, 128).astype(dt)
    r = P.run(module(cred=cred), "red_cluster", 2, 32, [src, np.zeros(64, dt)], cluster=(2, 1, 1), shared_bytes=SMEM)
    with np.errstate(over="ignore"):
        assert np.array_equal(r.buffers[1], f(src[:64], src[64:]))


# ---- refusals: one line naming the PTX line -----------------------------------------------------------
@pytest.mark.parametrize("kernel,old,new,match", [
    ("red_tensor", "5d.global.shared::cta.add.bulk_group", "5d.global.shared::cta.add.im2col_no_offs.bulk_group",
     r"unsupported instruction cp.reduce.async.bulk.tensor.5d.*im2col_no_offs .only the tile mode"),
    ("red_bulk", "bulk_group.add.u32 [", "bulk_group.add.f16 [", r"\.add of \.f16 requires \.noftz"),
    ("red_bulk", "bulk_group.add.u32 [", "bulk_group.inc.s32 [", r"\.inc into \.global takes \.u32, not \.s32"),
    ("red_cluster", "complete_tx::bytes.add.u32", "complete_tx::bytes.add.f32", r"\.add into \.shared::cluster takes \.u32, \.s32, \.u64"),
])
def test_refusals(kernel, old, new, match):
    src = module()
    assert old in src
    with pytest.raises(LayoutsimError, match=match) as e:
        runner.program(src.replace(old, new), kernel, "sm_90")
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("line ")
