"""FlashAttention-2's forward kernel as the PyPI sdist flash-attn==2.8.3.post2 publishes it
(gpu_check.realworld.flashattn_build compiled one instance of flash_fwd_kernel, hdim 64 fp16
non-causal, to tests/data/realworld/flashattn/), launched with a Flash_fwd_params whose layout the
compiler printed (params_layout.json) and filled as flash_api.cpp's set_params_fprop fills it
(gpu_check/realworld/flashattn_case.py).

  * the executor's O and softmax_lse agree with a float64 attention within what fp16 inputs with
    fp32 accumulation allow: a sanity check of the launch (struct, grid, shared memory), not the
    fidelity claim, which is the next point;
  * once measured on the GPU (python -m gpu_check.realworld.flashattn_measure --out OUT), every
    buffer the executor leaves is bit for bit the GPU's (softmax_lse too, through lg2.approx, the one
    instruction whose model is not proven exact), and its shared ld/st
    wavefronts and global ld/st sectors are compared with the ncu runs' min..max.
Everything skips, naming the build command, when the committed PTX is missing.
"""
import gzip
import json
import re
from functools import lru_cache

import numpy as np
import pytest
from tool_needs import need

from gpu_check.kernel_corpus.parts import TOTALS, run_totals
from gpu_check.realworld import flashattn_case as F, flashattn_measure as M

OK, WHY = F.available()
needs_ptx = pytest.mark.skipif(not OK, reason=WHY)
MEASURED = F.DATA / M.NPZ
MEASURE = ("python -m gpu_check.realworld.flashattn_measure --out OUT on the GPU, then copy OUT/flashattn.h200.npz "
           "and OUT/flashattn.h200.json into tests/data/realworld/flashattn/")


@lru_cache(maxsize=None)
def executed():
    return F.execute()


@needs_ptx
def test_the_struct_the_compiler_laid_out_is_the_kernels_parameter():
    lay = F.layout()
    text = F.ptx_text()
    assert re.findall(r"\.entry\s+([\w$]+)\(", text) == [lay["kernel"]]
    size = re.search(r"\.param \.align (\d+) \.b8 \w+_param_0\[(\d+)\]", text)
    assert (int(size.group(1)), int(size.group(2))) == (lay["align"], lay["size"])
    end = 0
    for f in sorted(lay["fields"], key=lambda f: f["offset"]):         # in bounds, none overlapping
        assert f["offset"] >= end and f["offset"] + f["size"] <= lay["size"], f
        end = f["offset"] + f["size"]
    kinds = {f["name"]: (f["kind"], f["size"]) for f in lay["fields"]}
    assert all(kinds[p] == ("pointer", 8) for p in F.POINTERS)
    assert lay["traits"] == {"kHeadDim": 64, "kBlockM": 128, "kBlockN": 128, "kNWarps": 4, "kNThreads": 128,
                             "kSmemSize": 49152}           # flash_fwd_launch_template.h: hdim 64, no dropout


@needs_ptx
def test_the_executor_computes_attention_within_fp16_rounding_of_a_float64_reference():
    run, bufs = executed()
    a = F.inputs()
    for i, n in enumerate(F.ARRAYS[:3]):                        # the inputs are left as they were
        assert bufs[i + 1].tobytes() == a[n].tobytes()
    o, lse = bufs[4].astype(np.float64), bufs[5].astype(np.float64)
    want_o, want_lse = F.reference(a)
    assert np.isfinite(o).all() and np.isfinite(lse).all()
    # O: P is rounded to fp16 before P.V (fp32 accumulation) and O is stored as fp16: a few fp16
    # ulps of |O| <= 2 (2**-10 at 1..2); measured max error 2.2e-4 at seqlen 128 and 256
    assert np.abs(o - want_o).max() < 2e-3
    # LSE: fp32 row max and sum, __logf under --use_fast_math (about 2**-21 absolute)
    assert np.abs(lse - want_lse).max() < 1e-4
    assert run.warp_instructions > 0


@lru_cache(maxsize=None)
def measured():
    with np.load(MEASURED) as z:
        arrays = {k: z[k] for k in z.files}
    return arrays, json.loads((F.DATA / M.JSON).read_text())


def needs_measurement():
    if not MEASURED.is_file():
        pytest.skip(f"{MEASURED.name} is not committed yet: {MEASURE}")


@needs_ptx
def test_every_buffer_is_the_gpus_bit_for_bit():
    needs_measurement()
    arrays, doc = measured()
    e = F.entry()
    assert doc["struct_sha256"] == M.sha(bytes.fromhex(e["args"][0]["hex"]))
    assert doc["ptx_sha256"] == M.sha(F.ptx_text().encode())
    assert doc["runs_agree"]
    run, bufs = executed()
    if run.sass_source is None:      # which mul+adds ptxas fused decides o's bits (contract.py)
        need("ptxas")
    for i, n in enumerate(F.ARRAYS):                             # q, k, v, o, softmax_lse
        assert bufs[i + 1].tobytes() == arrays[n].tobytes(), n
    # softmax_lse = row max * scale + __logf(row sum), __logf being lg2.approx.ftz.f32 times ln 2: the
    # one instruction of the launch the executor does not claim exact (numerics.sfu.INFERRED)
    approx = {x["instruction"] for x in run.fidelity["approximate_instructions"]}
    assert approx <= {"lg2.approx.ftz.f32"} and run.fidelity["unknown"] == run.fidelity["refused"] == 0


@needs_ptx
def test_the_launch_costs_against_the_gpus_ncu_runs():
    needs_measurement()
    _, doc = measured()
    runs = [r for r in doc["ncu_runs"] if r]
    assert len(runs) >= 5, doc["problems"]
    run = executed()[0]
    if run.sass_source is None:      # costed as ptxas's SASS, which needs ptxas or committed lowering data
        need("ptxas")
    got = run_totals(run)
    outside = []
    for total, metric in TOTALS.items():
        vs = [int(r[metric]) for r in runs]
        if not min(vs) <= got[total] <= max(vs):
            outside.append(f"{total}: executor {got[total]}, ncu {min(vs)}..{max(vs)}")
    if outside:   # issue 24 item 4 (costs inside the GPU's range on real kernels) is open
        pytest.xfail("; ".join(outside))


class _Kernel:
    def __init__(self, drv):
        self.drv = drv

    def launch(self, params, grid, block, shared):
        self.drv.launches.append((params, grid, block, shared))
        off = F.entry()["args"][0]["pointers"][4][0]             # softmax_lse_ptr, as the struct holds it
        self.drv.allocs[int.from_bytes(params[0][off:off + 8], "little")].mem[:] = 7   # a write to keep


class _Alloc:
    def __init__(self, n, address):
        self.mem, self.address = np.zeros(n, np.uint8), address

    def __int__(self):
        return self.address

    def free(self):
        pass


class _Drv:
    """A pycuda stand-in: allocations at known addresses; a launch records its parameters."""

    class Context:
        @staticmethod
        def synchronize():
            pass

    def __init__(self):
        self.allocs, self.order, self.launches = {}, [], []
        self.tensormap_driver = self

    def Kernel(self, image, name):
        assert image.endswith(b"\0") and name.encode() in image
        return _Kernel(self)

    def mem_alloc(self, n):
        a = _Alloc(n, 0x7f00_0000_0000 + 0x10_0000 * len(self.order))
        self.allocs[a.address] = a
        self.order.append(a.address)
        return a

    def memcpy_htod(self, dev, host):
        dev.mem[:] = host

    def memcpy_dtoh(self, host, dev):
        host[:] = dev.mem


@needs_ptx
def test_the_measurement_passes_the_struct_with_the_device_addresses(tmp_path):
    drv = _Drv()
    assert M.main(["--out", str(tmp_path), "--ncu-runs", "0"], drv=drv) == 0
    params, grid, block, shared = drv.launches[0]
    e = F.entry()
    assert (grid, block, shared) == (tuple(e["grid"]), tuple(e["block"]), e["shared_bytes"])
    want = bytearray.fromhex(e["args"][0]["hex"])
    for (off, j), address in zip(e["args"][0]["pointers"], drv.order[:5]):
        want[off:off + 8] = address.to_bytes(8, "little")
        assert j == len([p for p in e["args"][0]["pointers"] if p[1] <= j])
    assert params == [bytes(want)]
    with np.load(tmp_path / M.NPZ) as z:
        assert z["q"].tobytes() == F.inputs()["q"].tobytes() and (z["softmax_lse"].view(np.uint8) == 7).all()
    doc = json.loads((tmp_path / M.JSON).read_text())
    assert doc["runs_agree"] and doc["ncu_runs"] == [] and doc["grid"] == e["grid"]


def test_the_licence_is_beside_the_ptx():
    if not OK:
        pytest.skip(WHY)
    assert "BSD 3-Clause" in (F.DATA / "LICENSE.flash-attn.txt").read_text()
    assert gzip.decompress((F.DATA / F.PTX).read_bytes()).startswith(b"//\n// Generated by NVIDIA NVVM Compiler")
