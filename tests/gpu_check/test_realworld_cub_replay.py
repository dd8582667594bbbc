"""CUB's device-wide algorithms (the headers of the PyPI package nvidia-cuda-cccl==13.0.85, CCCL
3.0.1) in the real-world corpus: tests/data/realworld/cub/ holds the PTX nvcc 13.0 printed for our
host program gpu_check/realworld/cub/cub_launches.cu (gpu_check.realworld.cub_build), and, once
measured on the GPU, every launch the algorithms made there (capture.json, capture.npz: written by
`python -m gpu_check.realworld.cub_measure --out OUT`).

  * every captured launch replayed through the executor from its captured parameter bytes and
    allocations leaves every allocation bit for bit as the GPU left it;
  * its shared ld/st wavefronts and global ld/st sectors fall inside the range of the ncu runs
    capture.json keeps (Nsight Compute's l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld/st.sum,
    l1tex__t_sectors_pipe_lsu_mem_global_op_ld/st.sum over the whole launch).

Until the GPU data exists those skip, naming the command; the launches below whose arguments are
built here from the kernels' parameter lists run always, against what the algorithm computes
(sums of ints, an exclusive prefix sum, a stable radix pass: exact in any order).
"""
import gzip
import json
import re
from functools import lru_cache

import numpy as np
import pytest
from tool_needs import need

from gpu_check.kernel_corpus.parts import TOTALS, run_totals
from gpu_check.realworld import cub_capture as K
from gpu_check.realworld.cub_build import DATA, LICENSE, PACKAGE, PTX

CAPTURE = DATA / "capture.json"
MEASURE = ("python -m gpu_check.realworld.cub_build (here), carry build/cub_launches, then "
           "python -m gpu_check.realworld.cub_measure --out OUT on the GPU and copy OUT/capture.json and "
           "OUT/capture.npz into tests/data/realworld/cub/")


@lru_cache(maxsize=None)
def ptx():
    return gzip.decompress((DATA / PTX).read_bytes()).decode()


@lru_cache(maxsize=None)
def captured():
    if not CAPTURE.is_file():
        return None, None
    return K.load(DATA)


def launch_ids():
    if not CAPTURE.is_file():
        return ["no-capture-yet"]
    return [f"{r['launch']}-{r['label']}" for r in json.loads(CAPTURE.read_text())["launches"]]


def entry(*parts):
    names = [n for n in re.findall(r"\.entry\s+([\w$]+)\(", ptx()) if all(p in n for p in parts)]
    assert len(names) == 1, (parts, names)
    return names[0]


def test_the_cub_files_are_complete():
    meta = json.loads((DATA / "build.json").read_text())
    assert meta["package"] == PACKAGE and (DATA / LICENSE).is_file(), "the package's licence is kept beside its PTX"
    assert len(re.findall(r"\.entry\s+", ptx())) == 24


def _record(kernel, grid, block, params, pointers):
    """A launch in capture.json's form: params as bytes, pointers (param, byte, allocation, byte)."""
    return {"kernel": kernel, "grid": [grid, 1, 1], "block": [block, 1, 1], "shared_bytes": 0,
            "params": [{"hex": p.hex()} for p in params], "pointers": [list(p) for p in pointers],
            "in": {p[2]: p[2] for p in pointers}}


def u32(*v):
    return np.array(v, "<u4").tobytes()


PTR = bytes(8)
X = (np.arange(8000, dtype=np.uint32) * 2654435761 % 1000).astype(np.int32)


def test_device_reduce_sum_of_ints_through_its_two_kernels():
    """DeviceReduce::Sum's two passes over 8,000 ints: DeviceReduceKernel on 2 CTAs (the sm_90
    policy's 256 threads x 16 items = 4,096-item tiles: tuning_reduce.cuh), its GridEvenShare
    (cub/grid/grid_even_share.cuh's ten 4-byte fields, as DispatchInit(8000, grid, 4096) sets
    them), then DeviceReduceSingleTileKernel over the two partials."""
    contents = {"x": X.view(np.uint8), "part": np.zeros(8, np.uint8), "out": np.full(4, 0xCD, np.uint8)}
    even = u32(2, 0, 8192, 4096, 0, 8000, 2, 8000, 8000, 0)
    first = _record(entry("DeviceReduceKernel", "IijN4cuda3std3__44plusIvEE"), 2, 256,
                    (PTR, PTR, u32(8000), even, b"\0", b"\0"), ((0, 0, "x", 0), (1, 0, "part", 0)))
    _, final = K.replay(ptx(), first, contents)
    assert final["part"].view(np.int32).tolist() == [X[:4096].sum(), X[4096:].sum()]
    contents["part"] = final["part"]
    second = _record(entry("DeviceReduceSingleTileKernel", "IijN4cuda3std3__44plusIvEE", "EPiSC_iS9_"), 1, 256,
                     (PTR, PTR, u32(2), b"\0", u32(0), b"\0"), ((0, 0, "part", 0), (1, 0, "out", 0)))
    _, final = K.replay(ptx(), second, contents)
    assert final["out"].view(np.int32).tolist() == [X.sum()]


def test_device_scan_exclusive_sum_with_decoupled_look_back():
    """DeviceScan::ExclusiveSum over 8,000 ints: DeviceScanInitKernel marks 3 tile descriptors
    invalid (ScanTileState<int>: 8-byte descriptors after 32 padding ones), then DeviceScanKernel
    on 3 CTAs (the sm_90 policy's 128 threads x 24 items: tuning_scan.cuh) whose tiles wait on
    their predecessors' descriptors; init value InputValue<int> (16 bytes, not a future)."""
    contents = {"x": X.view(np.uint8), "tmp": np.zeros(512, np.uint8), "out": np.full(4 * 8000, 0xCD, np.uint8)}
    init = _record(entry("DeviceScanInitKernel", "ScanTileStateIiLb1"), 1, 128, (PTR, u32(3)), ((0, 0, "tmp", 0),))
    _, final = K.replay(ptx(), init, contents)
    contents["tmp"] = final["tmp"]
    scan = _record(entry("DeviceScanKernel", "IiiijN4cuda"), 3, 128,
                   (PTR, PTR, PTR, u32(0), b"\0", bytes(16), u32(8000)),
                   ((0, 0, "x", 0), (1, 0, "out", 0), (2, 0, "tmp", 0)))
    _, final = K.replay(ptx(), scan, contents)
    want = np.concatenate([[0], np.cumsum(X)[:-1]]).astype(np.int32)
    assert np.array_equal(final["out"].view(np.int32), want)


def test_device_radix_sort_histogram_exclusive_sum_and_a_onesweep_pass():
    """DeviceRadixSort::SortKeys's onesweep path over 8,000 u32 keys, its first 8-bit pass:
    DeviceRadixSortHistogramKernel (2 CTAs of 128 threads: it strides) counts the four digits' bins,
    DeviceRadixSortExclusiveSumKernel (one CTA of 256 per pass) scans them, then
    DeviceRadixSortOnesweepKernel on 2 CTAs of 384 threads (the sm_90 tile is 384 x 20 = 7,680
    keys: a grid of 1 leaves the last 320 unsorted) ranks and scatters with a decoupled look-back
    between the CTAs (dispatch_radix_sort.cuh's InvokeOnesweep: its arguments, in its order)."""
    keys = (np.arange(8000, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    c = {"bins": np.zeros(4 * 256 * 4, np.uint8), "keys": keys.view(np.uint8), "out": np.full(4 * 8000, 0xCD, np.uint8),
         "look": np.zeros(2 * 256 * 4, np.uint8), "ctrs": np.zeros(16, np.uint8)}
    _, f = K.replay(ptx(), _record(entry("DeviceRadixSortHistogramKernel"), 2, 128, (PTR, PTR, u32(8000), u32(0), u32(32), b"\0"),
                                   ((0, 0, "bins", 0), (1, 0, "keys", 0))), c)
    # whole 128 x 8-key tiles: the 192 keys past the end are loaded as the largest key
    # (Twiddle::DefaultKey) and counted in the last bin (agent_radix_sort_histogram.cuh counts
    # every loaded key; only the bins' starts matter to the passes)
    want = np.bincount(keys & 255, minlength=256)
    want[255] += 8192 - 8000
    assert f["bins"].view(np.uint32)[:256].tolist() == want.tolist()
    c["bins"] = f["bins"]
    _, f = K.replay(ptx(), _record(entry("DeviceRadixSortExclusiveSumKernel"), 4, 256, (PTR,), ((0, 0, "bins", 0),)), c)
    c["bins"] = f["bins"]
    _, f = K.replay(ptx(), _record(entry("DeviceRadixSortOnesweepKernel"), 2, 384,
                                   (PTR,) * 8 + (u32(8000), u32(0), u32(8), b"\0"),
                                   ((0, 0, "look", 0), (1, 0, "ctrs", 0), (3, 0, "bins", 0), (4, 0, "out", 0),
                                    (5, 0, "keys", 0))), c)
    assert np.array_equal(f["out"].view(np.uint32), keys[np.argsort(keys & 255, kind="stable")])


@lru_cache(maxsize=None)
def replayed(launch):
    """(index, record, Run, final allocations) of one captured launch."""
    doc, contents = captured()
    if doc is None:
        pytest.skip(f"no GPU capture of CUB's launches yet: {MEASURE}")
    i, rec = next((i, r) for i, r in enumerate(doc["launches"]) if f"{r['launch']}-{r['label']}" == launch)
    r, final = K.replay(ptx(), rec, contents)
    return i, rec, r, final


@pytest.mark.parametrize("launch", launch_ids())
def test_every_captured_launch_leaves_the_gpus_bytes(launch):
    _, rec, _, final = replayed(launch)
    assert K.differences(rec, final, captured()[1]) == []


@pytest.mark.parametrize("launch", launch_ids())
def test_captured_launch_costs_are_inside_the_gpus_range(launch):
    i, rec, r, _ = replayed(launch)
    doc = captured()[0]
    runs = [run[i] for run in doc.get("ncu_runs", []) if i < len(run) and run[i]]
    if not runs:
        pytest.skip(f"{launch}: ncu gave no totals ({doc.get('problems', [])[:1]})")
    if r.sass_source is None:        # costed as ptxas's SASS, which needs ptxas or committed lowering data
        need("ptxas")
    got = run_totals(r)
    outside = []
    for total, metric in TOTALS.items():
        vs = [int(x[metric]) for x in runs if x.get(metric) is not None]
        if not vs:
            continue
        seen = (got[total], min(vs), max(vs))
        known = K.UNEXPLAINED.get((launch, metric))
        if known:       # a documented difference must stay exactly the one recorded (cub_capture.UNEXPLAINED)
            assert seen == known[:3], f"{launch} {total}: model {seen[0]}, GPU {seen[1]}..{seen[2]}: update UNEXPLAINED"
        elif not min(vs) <= got[total] <= max(vs):
            outside.append(f"{total}: model {got[total]}, GPU {min(vs)}..{max(vs)} over {len(vs)} runs")
    assert not outside, f"{launch}: " + "; ".join(outside)


def test_a_capture_folder_is_stored_and_read_back_byte_for_byte(tmp_path):
    """capture.cpp's folder (launches.jsonl, L<k>_A<id>.in/.out) -> capture.json + capture.npz as
    cub_measure writes them -> the same bytes; an output is kept as its XOR with its input, and an
    input equal to an earlier output is stored once."""
    from gpu_check.kernel_corpus import corpus as C
    a_in = np.arange(256, dtype=np.uint8)
    a_out = a_in.copy()
    a_out[7] = 99
    rec = {"launch": 0, "label": "x", "kernel": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "shared_bytes": 0,
           "params": [{"offset": 0, "size": 8, "hex": "00" * 8}], "pointers": [[0, 0, 0, 0]], "allocations": {"0": 256}}
    rec1 = dict(rec, launch=1)
    (tmp_path / "launches.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps(rec1) + "\n")
    for k, (i, o) in enumerate(((a_in, a_out), (a_out, a_out))):
        i.tofile(tmp_path / f"L{k}_A0.in")
        o.tofile(tmp_path / f"L{k}_A0.out")
    records, store = K.read_capture(tmp_path)
    assert len(store.arrays) == 2 and store.arrays["b1"].tolist().count(0) == 255      # the XOR: one byte set
    (tmp_path / "capture.json").write_text(json.dumps({"launches": records, "blobs": store.index}))
    (tmp_path / "capture.npz").write_bytes(C.npz_bytes(store.arrays))
    doc, contents = K.load(tmp_path)
    for r, (i, o) in zip(doc["launches"], ((a_in, a_out), (a_out, a_out))):
        assert contents[r["in"]["0"]].tolist() == i.tolist() and contents[r["out"]["0"]].tolist() == o.tolist()


def test_the_measure_without_its_program_is_one_line(tmp_path, capsys):
    from gpu_check.realworld import cub_measure
    assert cub_measure.main(["--out", str(tmp_path), "--binary", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cub_build" in err


def test_finals_name_each_allocation_once_when_two_pointers_share_it():
    """layoutsim.ptx.Run.buffers holds, per StructArg, one final content per array in the order of
    each array's first pointer (launch.py: an array at several offsets is one buffer); a struct
    pointing twice into allocation 3 and once into 5 has two finals, not three."""
    from layoutsim.ptx import StructArg
    three, five = np.zeros(16, np.uint8), np.zeros(8, np.uint8)
    args = [StructArg(bytes(24), ((0, three, 0), (8, three, 4), (16, five, 0))), StructArg(bytes(8), ())]
    got3, got5 = np.full(16, 3, np.uint8), np.full(8, 5, np.uint8)
    final = K.finals(args, {"3": three, "5": five}, [(got3, got5), None])
    assert set(final) == {"3", "5"} and final["3"] is got3 and final["5"] is got5
