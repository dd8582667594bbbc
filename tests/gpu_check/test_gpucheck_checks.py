"""The check groups on a CPU stand-in for the GPU: everything matches, injected faults are caught
with a readable diff, and recorded dumps replay through the same comparison code."""
import json

import numpy as np
import pytest

import layoutsim
from fakegpu import FakeBackend
from gpu_check import discover as D
from gpu_check import families as F
from gpu_check import record
from gpu_check.checks import layouts
from gpu_check.run import Session

from gpucheck_helpers import need_nvcc

SOME = ("mma.m16n8k16.f32.f16.f16.f32,mma.m16n8k16.f16.f16.f16.f16,mma.m16n8k8.f32.tf32.tf32.f32,"
        "mma.m16n8k32.f16.e5m2.e4m3.f16,mma.m16n8k64.s32.u4.s4.s32,mma.m8n8k16.s32.s8.u8.s32,"
        "mma.m16n8k8.f64.f64.f64.f64,ldmatrix.*,stmatrix.*,wgmma.m64n8k32.s32.u8.s8,wgmma.m64n256k16.f16.f16.f16,"
        "wgmma.m64n8k32.f16.e4m3.e5m2,mma.m16n8k8.f32.bf16.bf16.f32")


def _session(**kw):
    kw.setdefault("groups", ("layouts",))
    return Session(kw.pop("backend", FakeBackend()), log=lambda s: None, **kw)


@need_nvcc
def test_every_layout_check_passes_on_a_faithful_device(kernel_cache):
    s = _session()
    s.run()
    lay = [r for r in s.results if r.group == "layouts"]
    assert lay and all(r.status == "pass" for r in lay), [r.diff_text() for r in lay if r.status != "pass"][:3]
    checks = {r.check for r in lay}
    assert {"ids", "c_ids", "onehot", "smallint", "e2e"} <= checks
    entries = {r.entry for r in lay}
    assert len([e for e in entries if e.startswith("ldmatrix")]) == 6
    assert len([e for e in entries if e.startswith("stmatrix")]) == 6
    assert sum(r.compared for r in lay) > 1_000_000


def _lane_swap(spec, out):
    o = out.reshape(-1, spec.lanes if hasattr(spec, "lanes") else 32, spec.wd)
    o[:, [1, 2]] = o[:, [2, 1]]
    return o.reshape(-1)


@need_nvcc
def test_a_wrong_lane_is_reported_with_lane_register_and_values(kernel_cache):
    s = _session(backend=FakeBackend(fault=("k_mma_sync_aligned_m16n8k16_row_col_f32_f16_f16_f32", _lane_swap)),
                 only="mma.m16n8k16.f32.f16.f16.f32")
    s.run()
    bad = [r for r in s.results if r.status == "fail"]
    assert {r.check for r in bad} == {"c_ids", "onehot", "smallint"}
    text = "\n".join(r.diff_text() for r in bad)
    assert "MISMATCH mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in text
    assert "lane 1 d0 (reg 0) = D[0][2]: expected 0x" in text and "(3.0), got 0x40a00000 (5.0)" in text
    onehot = next(r for r in bad if r.check == "onehot")
    assert any("received A[0][0] x B[0][4]; catalog: A[0][0] x B[0][2]" in line for line in onehot.explain)


@need_nvcc
def test_a_wrong_ldmatrix_half_is_reported(kernel_cache):
    def swap_halves(spec, out):
        o = out.reshape(-1, 32, spec.count)
        o[:, 7, 0] = (o[:, 7, 0] >> 16) | ((o[:, 7, 0] & 0xFFFF) << 16)
        return o.reshape(-1)
    s = _session(backend=FakeBackend(fault=("ldmatrix_sync_aligned_m8n8_x4_trans", swap_halves)),
                 only="ldmatrix.x4.trans")
    s.run()
    (r,) = [r for r in s.results if r.status == "fail"]
    assert r.mismatches == 2 * r.cases
    assert "lane 7 r0.lo (reg 0 bits 0-15) = M0[6][1]" in r.diff_text()
    assert "row addressed by lane" in r.diff_text()


@need_nvcc
def test_record_then_replay(tmp_path, kernel_cache):
    s = _session(only=SOME, record=tmp_path)
    s.run()
    path = tmp_path / "layouts" / "layouts_sm_90.npz"
    assert path.exists()
    manifest, results = record.replay(path)
    assert manifest["environment"]["gpu"] == "FakeGPU"
    live = [(r.entry, r.check, r.compared) for r in s.results if r.group == "layouts"]
    assert sorted(live) == sorted((r.entry, r.check, r.compared) for r in results)
    assert all(r.status == "pass" for r in results)
    # tamper with one recorded output word: the replay must see it
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["r000_out"] = arrays["r000_out"].copy()
    arrays["r000_out"].flat[5] ^= 1
    bad = tmp_path / "bad.npz"
    np.savez_compressed(bad, **arrays)
    _, results = record.replay(bad)
    assert sum(r.mismatches for r in results) == 1


def test_replay_reports_a_stale_layout(tmp_path):
    rec = record.LayoutRecorder()
    spec = F.ldmatrix.LdmatrixSpec(layoutsim.get("ldmatrix.x1"))
    probes = layouts.probes(spec)
    # as an older kernel would have recorded it: twice the input words per case, half the cases
    n = len(probes[0].inp) // 2
    rec.add(spec, [(probes[0].check, 0, n, probes[0].meta)], probes[0].inp[:2 * n],
            np.zeros((n, spec.out_words), np.uint32))
    rec.records[0]["in_words"] = 2 * spec.in_words
    path = rec.save(tmp_path / "x.npz", {"gpu": "test"})
    _, results = record.replay(path)
    assert results[0].status == "error" and "record again" in results[0].note


@need_nvcc
def test_numerics_group_matches_the_model(kernel_cache):
    s = _session(groups=("numerics",), cases=64, only="mma.m16n8k8.f32.tf32.tf32.f32,mma.m8n8k16.s32.s8.u8.s32")
    s.run()
    res = [r for r in s.results if r.group == "numerics"]
    assert len(res) == 2 and all(r.status == "pass" for r in res), [r.diff_text() for r in res]


def test_numerics_diff_names_the_element_and_inputs():
    from gpu_check.checks import numerics as num
    spec = F.mma.MmaSpec(layoutsim.get("mma.m16n8k8.f32.tf32.tf32.f32"))
    a = np.zeros((2, 16, 8), np.uint32)
    b = np.zeros((2, 8, 8), np.uint32)
    c = np.zeros((2, 16, 8), np.uint32)
    d_model = np.zeros((2, 16, 8), np.uint64)
    d_gpu = d_model.copy()
    d_gpu[1, 11, 3] = 0x3F800000
    r = num.compare(spec, a, b, c, d_gpu, "sm_90", d_model=d_model)
    assert r.status == "fail" and r.mismatches == 1
    text = r.diff_text()
    assert "case 1: D[11][3] (lane 13 c3)" in text or "case 1: D[11][3] (lane 13 d3)" in text
    assert "expected 0x00000000 (0.0), got 0x3f800000 (1.0)" in text
    assert "A row:" in text and "B col:" in text


def test_discover_decodes_maps_and_saves_catalog_json(tmp_path):
    specs = F.wmma_specs()
    fake = FakeBackend()
    outs = [[fake.launch(None, s, image, 1) for image in s.images()] for s in specs]
    entries = D.decode_all(specs, outs, fake.environment())
    assert len(entries) == 78 and all(e["valid"] for e in entries)
    e = entries[0]
    assert e["name"] == "wmma.load.a.sync.aligned.row.m16n16k16.f16" and e["elements_per_lane"] == 8
    assert e["table"][1][0] == [0, 8]               # the fake's made-up layout, decoded back
    assert "lane  1: x0=A[0][8]" in D.format_map(e, lanes=[1])
    path = D.save(entries, fake.environment(), tmp_path / "layouts" / "wmma_discovered.json")
    doc = json.loads(path.read_text())
    assert doc["environment"]["gpu"] == "FakeGPU" and len(doc["entries"]) == 78
    assert doc["entries"][0]["confirmed"].startswith("measured on FakeGPU")


def test_bank_group_reads_the_probe_output(tmp_path):
    """The probe's --dry-run (the model plays the GPU) through gpu-check's comparison."""
    from gpu_check.checks import banks
    rc, secs, tail = banks.measure(tmp_path, extra=("--dry-run", "--limit", "60", "--nvcc", "/nonexistent-nvcc"))
    assert rc == 0, tail
    results, env = banks.compare(tmp_path)
    measured = [r for r in results if r.status != "skip"]
    assert measured and all(r.status == "pass" for r in measured)
    assert sum(r.cases for r in measured) == 60
    assert any("not measured" in r.note for r in results)
    # a wrong measurement is a mismatch naming the pattern
    data = json.loads((tmp_path / "bank_corpus.json").read_text())
    p = next(p for p in data["patterns"] if p.get("measured") is not None)
    p["measured"] += 1
    (tmp_path / "bank_corpus.json").write_text(json.dumps(data))
    results, _ = banks.compare(tmp_path)
    (bad,) = [r for r in results if r.status == "fail"]
    assert bad.entry == p["op"] and bad.mismatches == 1
    assert f"pattern #{p['id']}" in bad.diff_text()


def test_c_ids_survive_every_accumulation_path():
    """C ids must be exact under the narrowest accumulator path (wgmma fp8: 13 fraction bits of an
    fp32 result, seen on the H200): integers up to 64 x 256 have at most 14 significant bits."""
    from gpu_check.families.operand_maps import ids as c_ids
    from layoutsim.formats import decode
    ids = c_ids("f32", 64 * 256)
    vals = decode("f32", ids)
    assert len(np.unique(ids)) == len(ids)
    mant = ids.astype(np.uint32) & 0x7FFFFF
    assert (mant & ((1 << 10) - 1) == 0).all()            # nothing below the 13th fraction bit
    assert vals.min() == 1 and vals.max() == 64 * 256
    f16 = c_ids("f16", 64 * 256)
    assert len(np.unique(f16)) == len(f16) and (decode("f16", f16) > 0).all()
    assert np.isfinite(decode("f16", f16)).all()


def test_amd_session_plumbing(tmp_path):
    """The AMD path end to end on the CPU stand-in: HIP build for the device's gfx target, every
    WMMA/SWMMAC layout probe, SWMMAC's sparse A decompressed through its IDX operand."""
    from gpu_check.backends import hip as H
    if H.clang_path() is None:
        pytest.skip("clang-19 not installed")

    class FakeAmd(FakeBackend):
        vendor = "amd"
        arch = "gfx1201"
        target = "gfx1201"

    s = _session(backend=FakeAmd(), record=tmp_path)
    s.run()
    lay = [r for r in s.results if r.group == "layouts"]
    assert len({r.entry for r in lay}) == len([x for x in F.amd_specs() if x.gen == "gfx12"])
    assert all(r.status == "pass" for r in lay), [r.diff_text() for r in lay if r.status != "pass"][:2]
    assert any(r.entry.startswith("v_swmmac") and r.check == "onehot" for r in lay)
    _, replayed = record.replay(tmp_path / "layouts" / "layouts_gfx1201.npz")
    assert all(r.status == "pass" for r in replayed) and len(replayed) == len(lay)


def test_sparse_a_decompression():
    a = np.array([[[1, 2, 3, 4]]], np.float64)            # one row, two groups of two kept values
    idx = np.array([[[0 | (2 << 2), 1 | (3 << 2)]]])       # group 0 keeps k 0, 2; group 1 keeps k 5, 7
    from gpu_check.families import operand_maps
    out = operand_maps.sparse.expand(a, idx, 8)     # the one the layout check uses
    assert out.tolist() == [[[1, 0, 2, 0, 0, 3, 0, 4]]]


@need_nvcc
def test_a_session_on_the_ptxsim_backend_executes_the_kernel_text_and_says_it_is_no_gpu(kernel_cache):
    from gpu_check.backends.ptxsim import PtxsimBackend
    s = _session(backend=PtxsimBackend(cache=kernel_cache / "ptx"), only="ldmatrix.x2.trans")
    s.run()
    lay = [r for r in s.results if r.group == "layouts"]
    assert lay and all(r.status == "pass" for r in lay), [r.diff_text() for r in lay][:2]
    assert list((kernel_cache / "ptx").glob("*.ptx"))          # run from nvcc's PTX, not emulated
    assert s.env["simulated"] is True and "not a GPU measurement" in s.env["backend"]
