"""TMA, cp.async.bulk and mbarrier in the executor (kernels/tma.cu), and the tensor-map argument.

Where a box lands is computed here from cuda.h's and the PTX ISA's words (rows of box[0]
elements, each a swizzle span apart when swizzled, the span's chunk bits XOR the bits above them
on the shared address; elements outside the tensor read as zero), not from layoutsim.smem; the
GEMM's expected D is layoutsim.mma over numpy slices of the zero-padded matrices."""
import json

import numpy as np
import pytest
from ptx_kernels import KERNELS, ptx

import layoutsim
import layoutsim.ptx as P
from layoutsim.cli import main

SRC = ptx("tma", "sm_90a")
SPAN = {"none": 0, "32B": 32, "64B": 64, "128B": 128}


def landing(tensor, dims, box, swz, coords, dst=0):
    """{shared byte address: byte} of a TMA load of `box` at `coords` (innermost first)."""
    e = tensor.dtype.itemsize
    flat = np.ascontiguousarray(tensor).view(np.uint8).reshape(-1)
    strides = [e]
    for d in dims[:-1]:
        strides.append(strides[-1] * d)
    span = SPAN[swz]
    pitch = span or box[0] * e
    out = {}
    for idx in np.ndindex(*box[::-1]):               # outermost first
        i = idx[::-1]
        x = [c + k for c, k in zip(coords, i)]
        inside = all(0 <= v < d for v, d in zip(x, dims))
        row = int(np.ravel_multi_index(idx[:-1], box[::-1][:-1])) if len(box) > 1 else 0
        lin = dst + row * pitch + i[0] * e
        if span:
            bits = (span // 16).bit_length() - 1
            lin ^= ((lin >> 7) & ((1 << bits) - 1)) << 4
        src = sum(v * s for v, s in zip(x, strides))
        for b in range(e):
            out[lin + b] = int(flat[src + b]) if inside else 0
    return out


def box_args(tm, coords, rank, nbytes=16384, dst=0, tx=None):
    e = tm.buffer.dtype.itemsize if isinstance(tm.buffer, np.ndarray) else (tm.elem_bytes or 1)
    c = list(coords) + [0] * (5 - len(coords))
    return [tm, np.zeros(16384, np.uint8), *map(np.int32, c), np.int32(rank), np.uint32(dst), np.uint32(nbytes),
            np.uint32(tx if tx is not None else int(np.prod(tm.box)) * e)]


BOXES = [  # dtype, tensor dims (innermost first), box, swizzle, coordinates
    ("uint8", (64,), (48,), "none", (16,)),
    ("float32", (64, 100), (32, 16), "128B", (0, 90)),
    ("float32", (64, 100), (16, 8), "64B", (-16, -3)),
    ("float16", (40, 24, 3), (16, 8, 2), "32B", (32, 20, 2)),
    ("float16", (64, 64), (64, 16), "128B", (0, 0)),
    ("uint8", (32, 6, 4, 3), (32, 4, 2, 2), "none", (0, 3, 3, 1)),
    ("float32", (8, 4, 3, 2, 2), (4, 4, 2, 2, 2), "none", (4, 1, 2, 1, 0)),
]


@pytest.mark.parametrize("dtype,dims,box,swz,coords", BOXES, ids=[f"{len(b[1])}d-{b[3]}-{b[0]}" for b in BOXES])
def test_tma_load_lands_as_cuda_says(dtype, dims, box, swz, coords):
    rng = np.random.default_rng(len(dims))
    t = rng.integers(1, 255, tuple(dims[::-1])).astype(dtype)
    tm = P.TensorMapArg(buffer=t, dims=dims, box=box, swizzle=swz)
    r = P.run(SRC, "tma_box", 1, 128, box_args(tm, coords, len(dims)))
    got = r.buffers[1]
    want = landing(t, dims, box, swz, coords)
    at = np.array(sorted(want))
    assert np.array_equal(got[at], np.array([want[a] for a in at], np.uint8))
    assert (got[at.max() + 1:] == 0xEE).all()                     # nothing beyond the box is touched
    assert r.shared_wavefronts["st"] > 0 and "TMA" in " ".join(r.notes)
    assert np.array_equal(r.buffers[0], t)                         # the map's own tensor comes back
    assert r.tensor_maps[0]["arg"] == 0 and r.tensor_maps[0]["box"] == list(box)


def test_a_tensor_map_in_global_memory():
    """tma_box_ptr takes `const CUtensorMap*`: the launch puts the map in a global buffer."""
    x = np.arange(64 * 100, dtype=np.float32).reshape(100, 64)
    tm = P.TensorMapArg(buffer=x, dims=(64, 100), box=(32, 16), swizzle="128B")
    r = P.run(SRC, "tma_box_ptr", 1, 128, [tm, np.zeros(16384, np.uint8), np.int32(32), np.int32(8), np.int32(2),
                                           np.uint32(2048), np.uint32(2048)])
    want = landing(x, (64, 100), (32, 16), "128B", (32, 8))
    at = np.array(sorted(want))
    assert np.array_equal(r.buffers[1][at], np.array([want[a] for a in at], np.uint8))


def test_a_tensor_map_over_another_argument():
    """buffer=1: the tensor is argument 1 (read by TMA before the kernel overwrites it), its
    elements 4 bytes wide whatever the array's dtype."""
    data = np.random.default_rng(2).integers(0, 256, 16384).astype(np.uint8)
    tm = P.TensorMapArg(buffer=1, dims=(32, 128), box=(16, 8), elem_bytes=4, swizzle="64B")
    args = box_args(tm, (16, 120), 2, tx=512)
    args[1] = data.copy()
    r = P.run(SRC, "tma_box", 1, 128, args)
    want = landing(data.view(np.uint32), (32, 128), (16, 8), "64B", (16, 120))
    at = np.array(sorted(want))
    assert np.array_equal(r.buffers[1][at], np.array([want[a] for a in at], np.uint8))
    assert r.buffers[0] is None                                     # the map itself is no buffer


def test_tma_store_writes_the_box_and_clips_it():
    rng = np.random.default_rng(5)
    y = np.full((50, 64), -1.0, np.float32)
    src = rng.standard_normal((16, 32)).astype(np.float32)       # the box, as the kernel copies it into smem
    tm = P.TensorMapArg(buffer=y, dims=(64, 50), box=(32, 16), swizzle="none")
    r = P.run(SRC, "tma_store", 1, 128, [tm, src.view(np.uint8).reshape(-1), np.int32(48), np.int32(40),
                                         np.uint32(src.nbytes)])
    want = y.copy()
    want[40:50, 48:64] = src[:10, :16]                            # rows 50.. and columns 64.. are outside
    assert np.array_equal(r.buffers[0], want)


def test_bulk_copy_both_ways():
    x = np.random.default_rng(1).integers(0, 256, 4096).astype(np.uint8)
    r = P.run(SRC, "bulk_copy", 1, 64, [x, np.zeros(4096, np.uint8), np.uint32(1024)])
    assert np.array_equal(r.buffers[1][:1024], x[:1024]) and (r.buffers[1][1024:] == 0).all()


def test_mbarrier_phases():
    r = P.run(SRC, "mbar_phases", 1, 128, [np.zeros(4 * 5, np.uint32), np.int32(5)])
    out = r.buffers[0].reshape(5, 4)
    assert (out[:, 0] == 0).all()                                 # before its own arrival: not complete
    assert ((out[:, 1] >= 0) & (out[:, 1] < 4)).all()             # pending count of its token
    assert list(out[:, 2]) == [1, 0, 1, 0, 1] and list(out[:, 3]) == [0, 1, 0, 1, 0]


def test_every_warp_spinning_is_a_deadlock():
    with pytest.raises(layoutsim.LayoutsimError) as e:
        P.run(SRC, "mbar_stuck", 1, 64, [np.uint32(2), np.uint32(1), np.zeros(64, np.int32)])
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("deadlock: 64 thread(s) spin on the mbarrier at shared")
    assert "1 of 2 arrivals pending" in msg and "at line" in msg and "mbarrier.try_wait.parity" in msg
    r = P.run(SRC, "mbar_stuck", 1, 64, [np.uint32(2), np.uint32(2), np.zeros(64, np.int32)])
    assert (r.buffers[2] == 1).all()


def test_the_tma_gemm_pipeline():
    """CUTLASS-style mainloop: 3 stages over 4 k-tiles (the mbarrier phases wrap), M, K not
    multiples of the tile: the rows and k TMA fills with zeros take part as zeros."""
    rng = np.random.default_rng(1)
    M, N, K = 120, 128, 200
    A = rng.standard_normal((M, K)).astype(np.float16)
    Bt = rng.standard_normal((N, K)).astype(np.float16)             # B stored N x K (K-major)
    ta = P.TensorMapArg(buffer=A, dims=(K, M), box=(64, 64), swizzle="128B")
    tb = P.TensorMapArg(buffer=Bt, dims=(K, N), box=(64, 64), swizzle="128B")
    r = P.run(SRC, "tma_gemm", (2, 2), 160, [ta, tb, np.zeros((M, N), np.float32), np.int32(M), np.int32(N),
                                            np.int32(K)])
    ins = layoutsim.get("wgmma.m64n64k16.f32.f16.f16")
    Ap = np.zeros((128, 256), np.float16)
    Ap[:M, :K] = A
    Bp = np.zeros((256, 128), np.float16)
    Bp[:K, :N] = Bt.T
    want = np.zeros((128, 128), np.uint32)
    for i in range(2):
        for j in range(2):
            acc = np.zeros((64, 64), np.uint32)
            for kb in range(16):
                acc = layoutsim.mma(ins, Ap[64 * i:64 * i + 64, 16 * kb:16 * kb + 16],
                                    Bp[16 * kb:16 * kb + 16, 64 * j:64 * j + 64], acc, arch="sm_90", raw=True)
            want[64 * i:64 * i + 64, 64 * j:64 * j + 64] = acc
    assert np.array_equal(r.buffers[2].view(np.uint32), want[:M])
    assert r.shared_wavefronts == {"ld": 0, "st": 0}               # TMA and wgmma bypass the LSU
    assert r.gmma_wavefronts == 4 * 16 * (64 * 16 * 2 * 2) // 128


# ---- bad input: one line each ----------------------------------------------------------------------
def _box(**kw):
    x = np.zeros((100, 64), np.float32)
    spec = dict(buffer=x, dims=(64, 100), box=(32, 16), swizzle="128B")
    spec.update(kw)
    return P.TensorMapArg(**spec)


@pytest.mark.parametrize("kw,match", [
    (dict(buffer=7), "buffer=7 must be the index of an array argument"),
    (dict(dims=(64, 200)), "spans 51200 bytes; its buffer holds 25600"),
    (dict(box=(64, 16)), "exceeds the 128B swizzle span"),
    (dict(strides_bytes=(100,)), "multiples of 16"),
    (dict(element_strides=(2, 1)), "only 1 is modelled"),
    (dict(oob_fill=1), "only 0 .none: zeros. is modelled"),
    (dict(dims=(64,)), "as many box as tensor dimensions"),
])
def test_bad_tensor_maps(kw, match):
    with pytest.raises(layoutsim.LayoutsimError, match=match) as e:
        P.run(SRC, "tma_box", 1, 128, box_args(_box(**kw), (0, 0), 2))
    assert "\n" not in str(e.value) and str(e.value).startswith("argument 0 (tensor map)")


def test_a_tensor_map_for_a_plain_parameter_or_a_plain_value():
    args = box_args(_box(), (0, 0), 2)
    with pytest.raises(layoutsim.LayoutsimError, match="a TensorMapArg is a CUtensorMap"):
        P.run(SRC, "tma_box", 1, 128, args[:2] + [_box()] + args[3:])
    with pytest.raises(P.PtxFault, match="does not hold a tensor map"):
        P.run(SRC, "tma_box", 1, 128, [bytes(128)] + args[1:])


@pytest.mark.parametrize("dst,coords,match", [
    (64, (0, 0), "not 128-byte aligned"),
    (0, (1, 0), "innermost coordinate must start on a multiple of 16 bytes"),
    (15360, (0, 0), "outside shared memory"),
])
def test_tma_faults(dst, coords, match):
    with pytest.raises(P.PtxFault, match=match) as e:
        P.run(SRC, "tma_box", 1, 128, box_args(_box(), coords, 2, dst=dst))
    assert "\n" not in str(e.value) and "thread (0, 0, 0)" in str(e.value) and str(e.value).startswith("line ")


# ---- the command line --------------------------------------------------------------------------------
def test_cli_tensor_map_argument_and_json(capsys, tmp_path):
    x = np.arange(64 * 100, dtype=np.float32).reshape(100, 64)
    np.save(tmp_path / "x.npy", x)
    path = str(KERNELS / "tma.sm_90a.ptx")
    rc = main(["ptx", "run", path, "--kernel", "tma_box", "--grid", "1", "--block", "128",
               "--arg", f"tmap:{tmp_path / 'x.npy'}:64x100:32x16:128B", "--arg", "zeros:u8:16384",
               *[a for v in ("i32:0", "i32:8", "i32:0", "i32:0", "i32:0", "i32:2", "u32:0", "u32:2048", "u32:2048")
                 for a in ("--arg", v)], "--json", "--out", str(tmp_path / "o")])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["tensor_maps"] == [{"arg": 0, "buffer": "own", "dims": [64, 100], "box": [32, 16],
                                               "swizzle": "128B", "elem_bytes": 4, "strides_bytes": [256],
                                               "offset": 0}]
    assert np.array_equal(np.load(tmp_path / "o" / "arg0.npy"), x)
    want = landing(x, (64, 100), (32, 16), "128B", (0, 8))
    at = np.array(sorted(want))
    assert np.array_equal(np.load(tmp_path / "o" / "arg1.npy")[at], np.array([want[a] for a in at], np.uint8))


@pytest.mark.parametrize("args,match", [
    (["--arg", "u32:2", "--arg", "u32:1", "--arg", "zeros:i32:64"], "deadlock: "),
    (["--arg", "tmap:0:64", "--arg", "u32:1", "--arg", "zeros:i32:64"], "give tmap:BUF:DIMS:BOX"),
])
def test_cli_errors_are_one_line_exit_2(capsys, args, match):
    rc = main(["ptx", "run", str(KERNELS / "tma.sm_90a.ptx"), "--kernel", "mbar_stuck", "--grid", "1", "--block",
               "64", *args, "--quiet"])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and match in err and len(err.splitlines()) == 1



def box_params(out, c0, c1, tm, size=256):
    """tma.cu's BoxParams (256 bytes: CUDA 13's CUtensorMap is 128-byte aligned): the output
    pointer at 0, c0 and c1 at 8 and 12, the map at 128 (the PTX's ld.param offsets)."""
    data = bytes(8) + np.int32(c0).tobytes() + np.int32(c1).tobytes() + bytes(size - 16)
    return P.StructArg(data, ((0, out),), ((128, tm),))


@pytest.mark.parametrize("buffer", ["argument", "pointer", "own"])
def test_a_tensor_map_inside_a_struct(buffer):
    """tma_box_struct takes a by-value struct holding its output pointer and a CUtensorMap (how
    CUTLASS 3.x kernels receive their TMA descriptors inside Params); the map's tensor is an array
    argument, one of the struct's own arrays (the same numpy object) or an array of its own."""
    x = np.arange(64 * 100, dtype=np.float32).reshape(100, 64)
    out = np.zeros(2048, np.uint8)
    if buffer == "pointer":                                   # the map reads the struct's own array
        out = x.view(np.uint8).reshape(-1).copy()
        tm = P.TensorMapArg(buffer=out, dims=(64, 100), box=(32, 16), swizzle="128B", elem_bytes=4)
    else:
        tm = P.TensorMapArg(buffer=x if buffer == "own" else 1, dims=(64, 100), box=(32, 16), swizzle="128B")
    args = [box_params(out, 32, 8, tm), np.uint32(2048), np.uint32(2048)]
    if buffer == "argument":
        with pytest.raises(layoutsim.LayoutsimError, match="buffer=1 must be the index of an array argument"):
            P.run(SRC, "tma_box_struct", 1, 128, args)
        return
    r = P.run(SRC, "tma_box_struct", 1, 128, args)
    want = landing(x, (64, 100), (32, 16), "128B", (32, 8))
    at = np.array(sorted(want))
    assert np.array_equal(r.buffers[0][0][at], np.array([want[a] for a in at], np.uint8))
    assert len(r.buffers[0]) == (2 if buffer == "own" else 1)
    if buffer == "own":
        assert np.array_equal(r.buffers[0][1], x)             # the map's own tensor follows the pointers
    assert r.tensor_maps[0]["box"] == [32, 16]


def test_a_struct_map_must_be_aligned_and_inside():
    x = np.zeros((100, 64), np.float32)
    tm = P.TensorMapArg(buffer=x, dims=(64, 100), box=(32, 16))
    for off in (96, 192):
        s = box_params(np.zeros(2048, np.uint8), 0, 0, tm)
        s = P.StructArg(s.data, s.pointers, ((off, tm),))
        with pytest.raises(layoutsim.LayoutsimError, match="StructArg maps are"):
            P.run(SRC, "tma_box_struct", 1, 128, [s, np.uint32(16), np.uint32(16)])


def test_a_batch_dimension_of_stride_zero():
    """CUTLASS 3.x encodes its batch mode L = 1 as a third dimension of extent 1 and stride 0
    (cuda.h: strides are multiples of 16 below 2^40; 0 is one): the box lands as in 2-D."""
    x = np.arange(64 * 100, dtype=np.float32).reshape(100, 64)
    tm = P.TensorMapArg(buffer=x, dims=(64, 100, 1), strides_bytes=(256, 0), box=(32, 16, 1), swizzle="128B")
    r = P.run(SRC, "tma_box", 1, 128, box_args(tm, (32, 8, 0), 3))
    want = landing(x, (64, 100), (32, 16), "128B", (32, 8))
    at = np.array(sorted(want))
    assert np.array_equal(r.buffers[1][at], np.array([want[a] for a in at], np.uint8))
