"""The corpus's wgmma and TMA cases (wgmma_smem_gemm.cu, tma_wgmma_gemm.cu) on the executor, before
and after their H200 run.

Without a GPU: `layoutsim.ptx.run` of each case on its stored inputs gives D = A . B exactly as
layoutsim.mma computes it over the case's own matrices (numpy slices per 16-wide k-block, the
parts outside the tensor zero as TMA fills them), so the replay against the H200 checks the same
numbers the arithmetic model stands behind. With the H200 run committed: the launch's GMMA
wavefronts are ncu's l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma (the buffers and the
ld/st totals are test_kernel_corpus_replay.py's). A case still waiting for its H200 run fails,
naming the command."""
import json
from functools import lru_cache

import numpy as np
import pytest

import layoutsim
from gpu_check.kernel_corpus import cases, corpus as C, device, ncu as N

MANIFEST = {e["name"]: e for e in C.load_manifest()}
HOPPER = [c.name for c in cases.CASES if "sm_90a" in c.archs]


@lru_cache(maxsize=None)
def replay(name):
    from layoutsim.ptx import run
    e = MANIFEST[name]
    return run((C.DATA / C.run_ptx(e)).read_text(), e["kernel"], tuple(e["grid"]), tuple(e["block"]),
               C.launch_args(e, C.load_inputs(e)), arch="sm_90", shared_bytes=e["shared_bytes"])


def chained(instr, A, B):
    """D of 64 x 64 tiles, each the chain of instr over the 16-wide k-blocks from D = 0."""
    ins = layoutsim.get(instr)
    M, N = A.shape[0], B.shape[1]
    out = np.zeros((M, N), np.uint32)
    for i in range(0, M, 64):
        for j in range(0, N, 64):
            acc = np.zeros((64, 64), np.uint32)
            for k in range(0, A.shape[1], 16):
                acc = layoutsim.mma(ins, A[i:i + 64, k:k + 16], B[k:k + 16, j:j + 64], acc, arch="sm_90", raw=True)
            out[i:i + 64, j:j + 64] = acc
    return out


def raw(x):
    return np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}")


@pytest.mark.parametrize("name", HOPPER)
def test_the_executor_computes_what_layoutsim_mma_does(name):
    e = MANIFEST[name]
    arrays = C.load_inputs(e)
    r = replay(name)
    if name == "wgmma_ss_f16":            # B given as Bt (N x K)
        want = chained("wgmma.m64n64k16.f32.f16.f16", raw(arrays[0]), raw(arrays[1]).T)
        got = r.buffers[2]
    elif name == "wgmma_rs_bf16":
        want = chained("wgmma.m64n64k16.f32.bf16.bf16", raw(arrays[0]), raw(arrays[1]))
        got = r.buffers[2]
    else:                                 # tma_wgmma_gemm: zero outside M, N, K up to whole tiles
        A, Bt = raw(arrays[3]), raw(arrays[4])
        (M, K), N = A.shape, Bt.shape[0]
        Ap = np.zeros((-(-M // 64) * 64, -(-K // 64) * 64), A.dtype)
        Ap[:M, :K] = A
        Bp = np.zeros((Ap.shape[1], -(-N // 64) * 64), A.dtype)
        Bp[:K, :N] = Bt.T
        want = chained("wgmma.m64n64k16.f32.f16.f16", Ap, Bp)[:M, :N]
        got = r.buffers[5]
    assert np.array_equal(raw(got), want)
    per_cta = -(-e["args"][-1]["value"] // 64) * 4                  # 4 k-blocks of 16 per 64-wide k-tile
    assert r.gmma_wavefronts == int(np.prod(e["grid"])) * per_cta * {"wgmma_rs_bf16": 16}.get(name, 32)
    # (A and B from shared memory: 4096 bytes = 32 wavefronts; B alone: 2048 bytes = 16)


def test_tensor_maps_are_encoded_from_the_manifest():
    """What cuTensorMapEncodeTiled gets on the GPU for tma_wgmma_gemm's three maps (cuda.h enums)."""
    e = MANIFEST["tma_wgmma_gemm"]
    maps = [a for a in e["args"] if a["kind"] == "tensormap"]
    got = [device.tensormap_arguments(a, 0x10000) for a in maps]
    M, N, K = (a["value"] for a in e["args"][-3:])
    assert [g["globalDim"] for g in got] == [[K, M], [K, N], [N, M]]
    assert [g["globalStrides"] for g in got] == [[2 * K], [2 * K], [4 * N]]
    assert [g["boxDim"] for g in got] == [[64, 64]] * 3
    assert [g["swizzle"] for g in got] == [3, 3, 0]                  # CU_TENSOR_MAP_SWIZZLE_128B / _NONE
    assert [g["dataType"] for g in got] == [1, 1, 2]                 # UINT16, UINT16, UINT32
    assert [a["form"] for a in maps] == ["value", "pointer", "value"]
    assert all(g["globalAddress"] == 0x10000 and g["oobFill"] == 0 and g["interleave"] == 0 for g in got)


@pytest.mark.parametrize("name", HOPPER)
def test_gmma_wavefronts_are_ncus(name):
    if name in C.pending():
        pytest.fail(f"{name} awaits its H200 run: {C.MEASURE}")
    ncu = json.loads((C.DATA / "h200.json").read_text())["cases"][name]["ncu"]
    assert N.SHARED_GMMA in ncu, f"h200.json has no {N.SHARED_GMMA} for {name}"
    assert replay(name).gmma_wavefronts == ncu[N.SHARED_GMMA]
