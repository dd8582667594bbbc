"""The kernel corpus (tests/data/kernels) and the gpu-check group `kernels`, without a GPU.

The corpus files are checked against the contract (gpu_check/kernel_corpus/__init__.py) and,
where nvcc is installed, against a fresh build (the PTX must be byte-identical). The GPU side
runs on a pycuda stand-in (FakeDrv) whose kernels XOR every byte of every buffer with 0x5A:
that tests the plumbing (allocation, copies, recording, comparing), not any kernel.
"""
import json
import shutil

import numpy as np
import pytest

from gpu_check.bank_probe import ncu_csv
from gpu_check.kernel_corpus import build, cases, check, corpus as C, measure, ncu as N
from gpu_check.run import Session

from fakegpu import FakeBackend
from gpucheck_helpers import need_nvcc


# ---- the corpus files --------------------------------------------------------------------------
def test_corpus_is_complete_and_within_bounds():
    assert C.validate() == []
    manifest = C.load_manifest()
    assert len(manifest) >= 15                                   # issue 10: at least 15 kernels
    assert [e["name"] for e in manifest] == [c.name for c in cases.CASES]


def test_the_h200_run_is_committed_for_every_case():
    """The measured record (GPU job of 2026-12-01 on the H200): every case's final buffers in the
    manifest's dtypes and shapes, its ncu shared wavefront totals, and where it ran. Missing data is
    a failure, not a skip."""
    doc = json.loads((C.DATA / "h200.json").read_text())
    env = doc["environment"]
    assert env["gpu"] == "NVIDIA H200" and env["arch"] == "sm_90"
    assert env["driver"] and env["cuda_driver_api"] and env["date"].startswith("2026-")
    assert doc["problems"] == []
    waiting = C.pending()
    for e in C.load_manifest():
        if e["name"] in waiting:
            continue
        case = doc["cases"][e["name"]]
        assert case["buffers"] == C.h200_file(e["name"]) and case["deterministic"], e["name"]
        for k in (N.SHARED_LD, N.SHARED_ST):
            assert isinstance(case["ncu"][k], int), (e["name"], k)
        # the same buffers from the sm_80 PTX JIT'd for sm_90 and from a ptxas -arch=sm_90 cubin
        assert all(v["same_buffers_as_sm_90"] for v in case["variants"].values()), e["name"]
        out = C.load_arrays(C.DATA / C.h200_file(e["name"]), e)
        for a, before, after in zip(e["args"], C.load_inputs(e), out):
            if a["kind"] == "array" and a["role"] == "in":          # read-only arguments came back as sent
                assert before.tobytes() == after.tobytes(), e["name"]
            if a["kind"] == "array" and a["role"] != "in":          # outputs were written (filled with 0xCD before)
                assert before.tobytes() != after.tobytes(), e["name"]
    assert not waiting, f"{', '.join(waiting)} await their H200 run: {C.MEASURE}"


def test_manifest_entries_follow_the_contract():
    keys = {"name", "source", "ptx", "kernel", "grid", "block", "shared_bytes", "args", "nvcc", "what"}
    for e, c in zip(C.load_manifest(), cases.CASES):
        assert keys <= set(e), e["name"]
        assert set(e["ptx"]) == set(c.archs) and C.run_arch(e) == c.run_arch
        assert len(e["grid"]) == 3 and len(e["block"]) == 3
        assert e["nvcc"].endswith(f"-arch={c.run_arch} -o {c.stem}.{c.run_arch}.ptx {c.stem}.cu")
        assert ("nvcc_sm_80" in e) == ("sm_80" in c.archs)
        for a in e["args"]:
            assert a["kind"] in ("array", "scalar", "tensormap")
            if a["kind"] == "tensormap":
                assert e["args"][a["buffer"]]["kind"] == "array" and a["form"] in ("value", "pointer")
            if a["kind"] == "array":
                assert a["role"] in ("in", "out", "inout")


def test_stored_inputs_are_the_generated_ones():
    """The .npz files hold exactly what cases.inputs makes (so regenerating cannot drift)."""
    for e, c in zip(C.load_manifest(), cases.CASES):
        stored = C.load_inputs(e)
        made = cases.inputs(c)
        for i, a in enumerate(stored):
            if a is None:
                continue
            assert a.dtype == made[f"arg{i}"].dtype and a.tobytes() == made[f"arg{i}"].tobytes(), (e["name"], i)


def test_outputs_start_as_the_marker_pattern():
    for e in C.load_manifest():
        for a, v in zip(e["args"], C.load_inputs(e)):
            if a["kind"] == "array" and a["role"] == "out":
                assert set(np.ascontiguousarray(v).view(np.uint8).reshape(-1).tolist()) == {0xCD}, e["name"]


def test_hash_bits_are_fixed():
    """splitmix64 with the published constants: the first value for counter 0 of key ''."""
    z = cases.hash_bits("", 1)[0]
    # splitmix64(0x632BE59BD9B4E5A9 ... ) computed independently with Python integers:
    x = (0 * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E5A9) & (2 ** 64 - 1)
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & (2 ** 64 - 1)
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & (2 ** 64 - 1)
    assert int(z) == x ^ (x >> 31)


def test_ptx_has_the_entries_and_the_instructions_the_cases_exercise():
    ptx = {p.name: p.read_text() for p in C.DATA.glob("*.ptx")}
    expect = {"wmma_gemm.sm_90.ptx": ["wmma.load.a.sync.aligned.row.m16n16k16.shared.f16",
                                      "wmma.load.a.sync.aligned.row.m16n16k16.global.s8",
                                      "wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32"],
              "mma_ldmatrix.sm_90.ptx": ["ldmatrix.sync.aligned.m8n8.x4.shared.b16",
                                         "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"],
              "cp_async_pipeline.sm_90.ptx": ["cp.async.cg.shared.global", "cp.async.wait_group 2"],
              "stmatrix_epilogue.sm_90.ptx": ["stmatrix.sync.aligned.m8n8.x4.shared.b16"],
              "int8_gemv.sm_90.ptx": ["dp4a.s32.s32", "fma.rn.f16"],
              "byte_smem.sm_90.ptx": ["st.shared.u8", "st.shared.u16"],
              "softmax_ex2.sm_90.ptx": ["ex2.approx.f32", "ex2.approx.ftz.f32", "ex2.approx.f16x2"],
              "histogram_atomics.sm_90.ptx": ["atom.shared.add.u32", "atom.global.add.u32"],
              "warp_reduce.sm_90.ptx": ["redux.sync.add.s32", "vote.sync.ballot.b32", "shfl.sync.bfly.b32"],
              "wgmma_smem_gemm.sm_90a.ptx": [".target sm_90a", "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16",
                                             "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "st.shared.v4",
                                             "ldmatrix.sync.aligned.m8n8.x4.shared.b16", "fence.proxy.async"],
              "tma_wgmma_gemm.sm_90a.ptx": [
                  "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                  "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group", "mbarrier.try_wait.parity.shared::cta.b64",
                  "mbarrier.arrive.expect_tx.shared::cta.b64", "elect.sync", "cvta.param.u64",
                  ".param .align 128 .b8 tma_wgmma_gemm_param_0[128]"]}
    for f, needles in expect.items():
        for n in needles:
            assert n in ptx[f], (f, n)
    assert "stmatrix.sync" not in ptx["stmatrix_epilogue.sm_80.ptx"]     # sm_80 has no stmatrix


@need_nvcc
def test_every_kernel_compiles_for_sm80_and_sm90_to_the_committed_ptx():
    """nvcc 13.0 gives byte-identical PTX (the build compiles in the fixed BUILD_DIR)."""
    if build.nvcc_version() != C.load_manifest()[0]["nvcc_version"]:
        pytest.skip("a different nvcc than the corpus was built with")
    files = build.planned_files(C.DATA, log=lambda s: None)
    changed = [n for n, data in files.items() if build.differs(C.DATA, n, data)]
    assert changed == []


# ---- a pycuda stand-in ---------------------------------------------------------------------------
class _Alloc:
    def __init__(self, n):
        self.mem = np.zeros(n, np.uint8)

    def free(self):
        self.mem = None

    def __int__(self):                         # a device address: what the kernelParams path passes
        return 0x7000_0000_0000 + id(self) * 256


class _TensorMapDriver:
    """Stands in for gpu_check.descriptors.driver: encode() keeps the arguments it got (as JSON in
    the 128 bytes), and a launch XORs every buffer whose address is a parameter, as _Function does."""

    def __init__(self, drv):
        self.drv, self.encoded = drv, []

    def encode(self, args):
        self.encoded.append(args)
        raw = json.dumps(args).encode()
        return (raw + bytes(128))[:128] if len(raw) <= 128 else raw[:128]

    def Kernel(self, image, name):
        drv = self.drv

        class K:
            def launch(self, params, grid, block, shared):
                drv.launches.append((name, grid, block, shared))
                for p in params:
                    if len(p) == 8 and int.from_bytes(p, "little") in drv.allocs:
                        alloc = drv.allocs[int.from_bytes(p, "little")]
                        alloc.mem ^= 0x5A
                        if drv.fault == name:
                            alloc.mem[0] ^= 1
        return K()


class _Function:
    def __init__(self, drv, name):
        self.drv, self.name = drv, name

    def set_attribute(self, attr, value):
        pass

    def __call__(self, *params, grid, block, shared):
        self.drv.launches.append((self.name, grid, block, shared))
        for p in params:
            if isinstance(p, _Alloc):
                p.mem ^= 0x5A
                if self.drv.fault == self.name:
                    p.mem[0] ^= 1


class _Module:
    def __init__(self, drv, image):
        self.drv, self.image = drv, image

    def get_global(self, name):                 # (device address, bytes) of a module variable
        if name not in self.drv.globals:
            self.drv.globals[name] = self.drv.mem_alloc(20)
        return self.drv.globals[name], 20

    def get_function(self, name):
        text = self.image.decode(errors="replace")
        if f".entry {name}(" not in text and name.encode() not in self.image:
            raise LookupError(f"cuModuleGetFunction failed: named symbol not found ({name})")
        return _Function(self.drv, name)


class FakeDrv:
    class Context:
        @staticmethod
        def synchronize():
            pass

    class function_attribute:
        MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    def __init__(self, fault=None):
        self.fault, self.launches, self.loaded = fault, [], 0
        self.allocs, self.globals = {}, {}
        self.tensormap_driver = _TensorMapDriver(self)

    def module_from_buffer(self, image):
        self.loaded += 1
        return _Module(self, image)

    def mem_alloc(self, n):
        a = _Alloc(n)
        self.allocs[int(a)] = a
        return a

    def memcpy_htod(self, dev, host):
        dev.mem[:] = host

    def memcpy_dtoh(self, host, dev):
        host[:] = dev.mem


class PtxBackend(FakeBackend):
    def __init__(self, fault=None):
        super().__init__()
        self.drv = FakeDrv(fault)
        self.released = False

    def release(self):
        self.released = True


def _xor(entry, arrays):
    return [None if a is None else (np.ascontiguousarray(a).view(np.uint8) ^ 0x5A).view(a.dtype).reshape(a.shape)
            for a in arrays]


@pytest.fixture
def corpus_copy(tmp_path):
    d = tmp_path / "kernels"
    shutil.copytree(C.DATA, d)
    for p in list(d.glob("*.h200.npz")) + list(d.glob("h200.json")):
        p.unlink()
    return d


def test_run_plain_launches_every_case_with_its_geometry():
    drv = FakeDrv()
    problems = []
    manifest = C.load_manifest()
    runs = measure.run_plain(drv, C.DATA, manifest, ["sm_90", "sm_80"], {}, problems, log=lambda s: None)
    assert problems == []
    built = {e["name"]: ["sm_90"] + (["sm_80"] if "sm_80" in e["ptx"] else []) for e in manifest}
    assert len(drv.launches) == 2 * sum(map(len, built.values()))     # two launches per variant built
    for e in manifest:
        assert set(runs[e["name"]]) == set(built[e["name"]])
        for v in built[e["name"]]:
            r = runs[e["name"]][v]
            assert r["deterministic"]
            want = _xor(e, C.load_inputs(e))
            assert all((w is None and g is None) or w.tobytes() == g.tobytes() for w, g in zip(want, r["buffers"]))
    name, grid, block, shared = drv.launches[0]
    e0 = manifest[0]
    assert (name, grid, block, shared) == (e0["kernel"], tuple(e0["grid"]), tuple(e0["block"]), e0["shared_bytes"])


def test_a_symbol_argument_is_copied_into_its_variable_and_is_not_a_parameter():
    """cudaMemcpyToSymbol: the array goes to the module variable before the launch, the kernel
    gets only the real parameters, and the symbol has no final buffer."""
    from gpu_check.kernel_corpus.cases import Arg, symbol
    from gpu_check.kernel_corpus.device import Launcher
    drv = FakeDrv()
    args = (Arg("float32", (8,), "out"), symbol("c_k", "float32", (5,), ("uniform", -1, 1)))
    e = {"name": "t", "kernel": "t", "grid": [1, 1, 1], "block": [32, 1, 1], "shared_bytes": 0,
         "args": [C.arg_entry(a) for a in args]}
    assert e["args"][1] == {"kind": "array", "dtype": "float32", "shape": [5], "role": "in", "param": False,
                            "symbol": "c_k"}
    k = np.arange(5, dtype=np.float32)
    out = Launcher(drv).run(b".entry t(", e, [np.zeros(8, np.float32), k])
    assert bytes(drv.globals["c_k"].mem) == k.tobytes()
    assert len(drv.launches) == 1 and out[1] is None and out[0].shape == (8,)
    assert C.symbol_values(e, [np.zeros(8, np.float32), k])["c_k"].tobytes() == k.tobytes()
    assert C.launch_args(e, [np.zeros(8, np.float32), k])[0].shape == (8,) and len(C.launch_args(e, [None, k])) == 1
    too_big = dict(e, args=[e["args"][0], dict(e["args"][1], shape=[6])])
    with pytest.raises(ValueError, match="24 bytes for c_k, which holds 20"):
        Launcher(drv).run(b".entry t(", too_big, [np.zeros(8, np.float32), np.zeros(6, np.float32)])


def test_tensor_map_cases_launch_with_kernel_params():
    """A case with CUtensorMap arguments goes through the driver API (kernelParams): its maps are
    encoded over the device buffers of the arrays they name, one per map and launch."""
    drv = FakeDrv()
    e = next(x for x in C.load_manifest() if x["name"] == "tma_wgmma_gemm")
    runs = measure.run_plain(drv, C.DATA, [e], ["sm_90", "sm_80"], {}, [], log=lambda s: None)
    maps = [a for a in e["args"] if a["kind"] == "tensormap"]
    enc = drv.tensormap_driver.encoded
    assert len(enc) == 2 * len(maps) and [x["globalDim"] for x in enc[:3]] == [m["dims"] for m in maps]
    assert list(runs[e["name"]]) == ["sm_90"] and runs[e["name"]]["sm_90"]["deterministic"]
    want = _xor(e, C.load_inputs(e))
    assert all((w is None and g is None) or w.tobytes() == g.tobytes()
               for w, g in zip(want, runs[e["name"]]["sm_90"]["buffers"]))


def test_measure_records_what_ran(tmp_path, corpus_copy, monkeypatch):
    monkeypatch.setattr(N, "ncu_path", lambda: None)
    out = tmp_path / "out"
    rc = measure.main(["--out", str(out), "--dir", str(corpus_copy), "--variants", "sm_90,sm_80",
                       "--no-source-counters"], backend=PtxBackend())
    assert rc == 0
    doc = json.loads((out / "h200.json").read_text())
    assert "ncu not found: no totals" in doc["problems"]
    assert doc["environment"]["gpu"] == "FakeGPU"
    for e in C.load_manifest(corpus_copy):
        case = doc["cases"][e["name"]]
        assert case["deterministic"] and set(case["variants"]) == ({"sm_80"} if "sm_80" in e["ptx"] else set())
        assert all(v["same_buffers_as_sm_90"] for v in case["variants"].values())
        got = C.load_arrays(out / C.h200_file(e["name"]), e)
        want = _xor(e, C.load_inputs(e, corpus_copy))
        assert all((w is None and g is None) or (w.dtype == g.dtype and w.tobytes() == g.tobytes())
                   for w, g in zip(want, got))


def test_group_compares_with_the_recorded_run(corpus_copy, tmp_path, monkeypatch):
    monkeypatch.setattr(check, "model_runner", lambda: None)
    monkeypatch.setattr(N, "ncu_path", lambda: None)
    rec = tmp_path / "rec"
    first = check.run(PtxBackend(), corpus_copy, record=rec, log=lambda s: None)
    assert {r.status for r in first} == {"skip"}                  # nothing recorded yet; no model; no ncu
    for p in (rec / "kernels").glob("*.h200.npz"):
        shutil.copy(p, corpus_copy / p.name)
    again = check.run(PtxBackend(), corpus_copy, log=lambda s: None)
    recorded = [r for r in again if r.check == "recorded"]
    assert len(recorded) == len(cases.CASES) and all(r.status == "pass" for r in recorded)
    assert all(r.compared > 0 for r in recorded)
    bad = check.run(PtxBackend(fault="transpose_padded"), corpus_copy, log=lambda s: None)
    failed = [r for r in bad if r.status == "fail"]
    assert [r.entry for r in failed] == ["transpose_padded"]
    assert failed[0].mismatches == 2                               # byte 0 of each of its two arrays
    assert failed[0].details[0].where == "transpose_padded arg0[0][0]"


def test_group_compares_with_the_model_when_there_is_one(corpus_copy, monkeypatch):
    monkeypatch.setattr(N, "ncu_path", lambda: None)

    class Run:
        def __init__(self, buffers):
            self.buffers, self.shared_wavefronts = buffers, {"ld": 0, "st": 0}

    def fake_model(ptx, kernel, grid, block, args, arch="sm_90", shared_bytes=0):
        assert f".entry {kernel}(" in ptx and arch == "sm_90"
        return Run(_xor(None, [a if isinstance(a, np.ndarray) else None for a in args]))

    monkeypatch.setattr(check, "model_runner", lambda: fake_model)
    res = check.run(PtxBackend(), corpus_copy, log=lambda s: None)
    model = [r for r in res if r.check == "model"]
    assert len(model) == len(cases.CASES) and all(r.status == "pass" for r in model)


def test_group_without_pycuda_is_skipped():
    res = check.run(FakeBackend(), C.DATA)
    assert [r.status for r in res] == ["skip"] and "pycuda" in res[0].note


def test_session_runs_only_the_kernels_group_without_building_the_catalog(monkeypatch):
    monkeypatch.setattr(check, "model_runner", lambda: None)
    monkeypatch.setattr(N, "ncu_path", lambda: None)
    lines = []
    s = Session(PtxBackend(), groups=("kernels",), log=lines.append, corpora="kernels,cute")   # the others: ..._group.py
    s.run()
    assert s.build_stats["kernels"] == 0 and s.backend.drv.loaded > 0
    assert any(line.startswith("[kernels]") for line in lines)


# ---- ncu --------------------------------------------------------------------------------------
def test_ncu_rows_map_to_the_planned_launches():
    launches = [{"case": "a", "variant": "sm_90", "kernel": "ka"}, {"case": "b", "variant": "sm_90", "kernel": "kb"}]
    text = ncu_csv.synthesize([("ka", {N.SHARED_LD: 10, N.SHARED_ST: 3}), ("kb", {N.SHARED_LD: 1, N.SHARED_ST: 0})])
    problems = []
    rows = N.assign(launches, ncu_csv.parse(text), problems)
    assert problems == [] and rows[0][N.SHARED_LD] == 10 and rows[1][N.SHARED_ST] == 0
    wrong = ncu_csv.synthesize([("kb", {N.SHARED_LD: 1})])
    rows = N.assign(launches, ncu_csv.parse(wrong), problems)
    assert rows == [None, None] and any("names kernel 'kb'" in p for p in problems)


def test_metric_choice_keeps_the_base_and_only_known_extras():
    avail = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st",
             "smsp__inst_executed_op_ldsm", "dram__bytes_read"}
    m = N.choose_metrics(avail)
    assert m[:len(N.BASE)] == list(N.BASE)
    assert "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum" in m and "smsp__inst_executed_op_ldsm.sum" in m
    assert not any(x.startswith("dram") for x in m)
    assert N.choose_metrics(None) == list(N.BASE)


def test_ncu_totals_through_a_stand_in_ncu(tmp_path):
    """The command line, plan file and CSV round trip of ncu.totals, with a program standing in for
    ncu that answers every planned launch (it reads the plan the child would get)."""
    fake = tmp_path / "ncu"
    fake.write_text(f"""#!{__import__('sys').executable}
import json, sys
sys.path.insert(0, {str(C.DATA.parents[2])!r})
from gpu_check.bank_probe import ncu_csv
a = sys.argv[1:]
assert "--clock-control" in a and a[a.index("--clock-control") + 1] == "none"
metrics = a[a.index("--metrics") + 1].split(",")
plan = json.load(open(a[a.index("--plan") + 1]))
rows = [(j["case"], {{m: 7 * i + k for k, m in enumerate(metrics)}}) for i, j in enumerate(plan["launches"])]
rows = [(next(e["kernel"] for e in json.load(open(a[a.index("--dir") + 1] + "/manifest.json")) if e["name"] == c), v)
        for c, v in rows]
open(a[a.index("--log-file") + 1], "w").write(ncu_csv.synthesize(rows, metrics))
""")
    fake.chmod(0o755)
    manifest = C.load_manifest()[:3]
    launches = [{"case": e["name"], "variant": "sm_90", "kernel": e["kernel"]} for e in manifest]
    rows, problems, text, cmd = N.totals(str(fake), C.DATA, launches, {}, list(N.BASE), tmp_path, 60)
    assert problems == [] and len(rows) == 3
    assert [r[N.SHARED_LD] for r in rows] == [0, 7, 14] and rows[2][N.SHARED_ST] == 15
    assert "-m gpu_check.kernel_corpus.launch" in cmd


def test_launch_program_runs_the_plan_in_order(tmp_path, monkeypatch, capsys):
    """launch.py (the program ncu profiles) with a pycuda stand-in: every planned launch, in order."""
    import sys
    import types
    from gpu_check.kernel_corpus import launch
    drv = FakeDrv()
    drv.init = lambda: None

    class _Ctx:
        def pop(self):
            pass

    drv.Device = lambda i: types.SimpleNamespace(make_context=lambda: _Ctx())
    pkg = types.ModuleType("pycuda")
    pkg.driver = drv
    monkeypatch.setitem(sys.modules, "pycuda", pkg)
    monkeypatch.setitem(sys.modules, "pycuda.driver", drv)
    plan = tmp_path / "plan.json"
    jobs = [{"case": "byte_smem", "variant": "sm_80"}, {"case": "warp_reduce", "variant": "sm_90"}]
    plan.write_text(json.dumps({"launches": jobs, "cubins": {}}))
    assert launch.main(["--dir", str(C.DATA), "--plan", str(plan)]) == 0
    assert [x[0] for x in drv.launches] == ["byte_smem", "warp_reduce"]
    assert capsys.readouterr().out.splitlines() == ["launch 0 byte_smem sm_80: ok", "launch 1 warp_reduce sm_90: ok"]
