"""The real-world corpus's GPU side without a GPU: its cases launch through the kernelParams path
(by-value struct arguments as their bytes), and the measurement keeps every value of every ncu
run (h200.json's ncu_runs), which is what the replay's range check reads. A pycuda stand-in and a
program standing in for ncu (tests/gpu_check/test_kernel_corpus.py's) play the GPU."""
import json
import shutil
import sys

import numpy as np

from gpu_check.kernel_corpus import corpus as C, measure, ncu as N
from gpu_check.realworld import build, cases

from test_kernel_corpus import FakeDrv, PtxBackend


def test_struct_arguments_are_launched_as_their_bytes():
    drv = FakeDrv()
    manifest = C.load_manifest(build.DATA)
    e = manifest[0]
    seen = []
    real = drv.tensormap_driver.Kernel

    def kernel(image, name):
        k = real(image, name)
        inner = k.launch

        def launch(params, grid, block, shared):
            seen.append(params)
            return inner(params, grid, block, shared)
        k.launch = launch
        return k
    drv.tensormap_driver.Kernel = kernel
    runs = measure.run_plain(drv, build.DATA, [e], ["sm_90"], {}, [], log=lambda s: None)
    assert runs[e["name"]]["sm_90"]["deterministic"]
    params = seen[0]
    assert len(params) == len(e["args"])
    for p, a in zip(params, e["args"]):
        if a["kind"] == "bytes":
            assert p == bytes.fromhex(a["hex"])
        elif a["kind"] == "array":
            assert len(p) == 8                     # a device address
    m, n, k = (int(x) for x in e["argv"][:3])
    assert params[0] == np.array([m, n, k], "<i4").tobytes()      # make_shape(M, N, K)


def test_every_case_names_its_package_and_command_line():
    manifest = {x["name"]: x for x in C.load_manifest(build.DATA)}
    assert set(manifest) == set(cases.BY_NAME)
    for name, e in manifest.items():
        c = cases.BY_NAME[name]
        assert e["argv"] == list(c.argv) and e["package"] == cases.PACKAGE
        assert e["nvcc"] == build.nvcc_command(c)


def _fake_ncu(tmp_path):
    """An ncu that answers every planned launch; run r (counted in a file) adds r to each value."""
    fake = tmp_path / "ncu"
    count = tmp_path / "runs"
    fake.write_text(f"""#!{sys.executable}
import json, sys, os
sys.path.insert(0, {str(C.DATA.parents[2])!r})
from gpu_check.bank_probe import ncu_csv
a = sys.argv[1:]
if "--query-metrics" in a or "--version" in a:
    sys.exit(1)
r = int(open({str(count)!r}).read()) if os.path.exists({str(count)!r}) else 0
open({str(count)!r}, "w").write(str(r + 1))
metrics = a[a.index("--metrics") + 1].split(",")
plan = json.load(open(a[a.index("--plan") + 1]))
man = json.load(open(a[a.index("--dir") + 1] + "/manifest.json"))
rows = [(next(e["kernel"] for e in man if e["name"] == j["case"]), {{m: 100 * i + r for m in metrics}})
        for i, j in enumerate(plan["launches"])]
open(a[a.index("--log-file") + 1], "w").write(ncu_csv.synthesize(rows, metrics))
""")
    fake.chmod(0o755)
    return fake


def test_measure_keeps_every_ncu_run(tmp_path, monkeypatch):
    d = tmp_path / "realworld"
    shutil.copytree(build.DATA, d)
    for p in list(d.glob("*.h200.npz")) + list(d.glob("h200.json")):
        p.unlink()
    monkeypatch.setattr(N, "ncu_path", lambda: str(_fake_ncu(tmp_path)))
    out = tmp_path / "out"
    rc = measure.main(["--out", str(out), "--dir", str(d), "--variants", "sm_90", "--ncu-runs", "3",
                       "--no-source-counters"], backend=PtxBackend())
    assert rc == 0
    doc = json.loads((out / "h200.json").read_text())
    runs = doc["ncu_runs"]["cases"]
    names = [e["name"] for e in C.load_manifest(d)]
    assert sorted(runs) == sorted(names)
    for i, name in enumerate(names):
        assert [r[N.SHARED_LD] for r in runs[name]] == [100 * i, 100 * i + 1, 100 * i + 2]
        assert doc["cases"][name]["ncu"][N.SHARED_LD] == 100 * i              # the first run's totals


def test_the_kernels_group_runs_the_realworld_corpus_too(monkeypatch):
    """gpu-check run --group kernels: the real-world corpus (its buffers against the recorded run,
    no ncu) and then the kernel corpus."""
    from gpu_check.kernel_corpus import check
    from gpu_check.run import Session
    monkeypatch.setattr(check, "model_runner", lambda: None)
    monkeypatch.setattr(N, "ncu_path", lambda: None)
    s = Session(PtxBackend(), groups=("kernels",), log=lambda line: None, corpora="kernels,cute")
    s.run()
    launched = [x[0] for x in s.backend.drv.launches]
    realworld = [e["kernel"] for e in C.load_manifest(build.DATA)]
    assert launched[:2 * len(realworld)] == [k for k in realworld for _ in (0, 1)]      # two runs each
    assert len(launched) > 2 * len(realworld)
