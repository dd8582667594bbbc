"""gpu_check/bank_probe without a GPU: the corpus, the CUDA source (compiled for sm_80 and sm_90
when nvcc is here), the ncu CSV reader, the SASS check and a dry run of the driver."""
import json
import os
import re
import shutil
import subprocess

import pytest

from gpu_check.bank_probe import common, corpus, measure, ncu_csv
from layoutsim.banks import nvidia, op_names, parse_op

PROBE = os.path.join(os.path.dirname(corpus.__file__), "probe.cu")
NVIDIA_OPS = op_names("nvidia")


@pytest.fixture(scope="module")
def patterns():
    return corpus.generate()


def test_corpus_covers_every_op_and_is_deterministic(patterns):
    assert len(patterns) >= 400
    assert patterns == corpus.generate()
    counts = common.per_op(patterns)
    assert set(counts) == set(NVIDIA_OPS)
    assert min(counts.values()) >= 8
    assert [p["id"] for p in patterns] == list(range(len(patterns)))
    for op in NVIDIA_OPS:
        if not parse_op(op).is_matrix:
            masks = {p["active"] for p in patterns if p["op"] == op}
            assert 0 in masks and len(masks) >= 3, op          # partial-lane and all-off cases
    assert any(max(p["offsets"]) >= corpus.HIGH for p in patterns)
    doc = open(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs", "banks.md")).read()
    assert f"runs {len(patterns)} patterns" in doc


def test_corpus_tells_every_candidate_rule_apart(patterns):
    assert corpus.discrimination(patterns) == []
    assert len(nvidia.candidates()) == 6 * 6 * 3 * 2 * 2 * 2


def test_probe_source_has_a_kernel_for_every_op():
    src = open(PROBE).read()
    table = re.findall(r'\bK\((bank_probe_[a-z0-9_]+), \d+\)', src)
    extras = sorted({name for name, *_ in measure.EXTRAS})
    assert sorted(table) == sorted([corpus.kernel_name(op) for op in NVIDIA_OPS] + extras)
    assert "__CUDA_ARCH__ >= 900" in src                    # stmatrix guarded


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_probe_compiles_for_sm80_and_sm90(tmp_path):
    cmd = ["nvcc", "-O3", "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
           "-c", "-o", str(tmp_path / "probe.o"), PROBE]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "warning" not in p.stderr.lower(), p.stderr[-2000:]
    # one shared-memory instruction of the right kind per kernel (the PTX; SASS is checked on the GPU)
    p = subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-ptx", "-o", str(tmp_path / "probe.ptx"), PROBE],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    ptx = (tmp_path / "probe.ptx").read_text()
    bodies = dict(re.findall(r"\.entry (bank_probe_\w+)\((.*?)\n}", ptx, re.S))
    for op in NVIDIA_OPS:
        body = bodies[corpus.kernel_name(op)]
        ops = re.findall(r"\b(ld\.shared\S*|st\.shared\S*|ldmatrix\S*|stmatrix\S*)", body)
        assert len(ops) == 1, (op, ops)
        spec = parse_op(op)
        if spec.is_matrix:
            assert ops[0] == f"{'ldmatrix' if spec.direction == 'ld' else 'stmatrix'}.sync.aligned.m8n8." \
                             f"x{spec.matrices}{'.trans' if spec.trans else ''}.shared.b16"
        else:
            assert parse_op(ops[0]).name == op, (op, ops[0])
        assert "st.shared" not in body or spec.direction == "st"


def test_ncu_csv_round_trip_and_real_form():
    rows = [("bank_probe_ld_shared_b32", {ncu_csv.LD: 32, ncu_csv.ST: 0, ncu_csv.ALL: 32}),
            ("bank_probe_st_shared_v4_b32", {ncu_csv.LD: 0, ncu_csv.ST: 1024, ncu_csv.ALL: 1024})]
    got = ncu_csv.parse(ncu_csv.synthesize(rows))
    assert [(g["kernel"], g["metrics"][ncu_csv.LD], g["metrics"][ncu_csv.ST]) for g in got] == \
        [("bank_probe_ld_shared_b32", 32, 0), ("bank_probe_st_shared_v4_b32", 0, 1024)]
    real = ('BANK_PROBE device="NVIDIA H200" cc=9.0 driver_api=13000 runtime=13000 smem_optin=232448\n'
            '==PROF== Connected to process 77 (/tmp/bank_probe)\n'
            '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
            '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","77","bank_probe","127.0.0.1","bank_probe_ldmatrix_x4","1","7","(32, 1, 1)","(1, 1, 1)","0",'
            '"9.0","Command line profiler metrics","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum","","4"\n'
            '"0","77","bank_probe","127.0.0.1","bank_probe_ldmatrix_x4","1","7","(32, 1, 1)","(1, 1, 1)","0",'
            '"9.0","Command line profiler metrics","l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum","","0"\n'
            '==PROF== Disconnected from process 77\n')
    got = ncu_csv.parse(real)
    assert got == [{"id": 0, "kernel": "bank_probe_ldmatrix_x4", "metrics": {ncu_csv.LD: 4, ncu_csv.ST: 0}}]
    assert ncu_csv.parse("no csv here") == []


def test_sass_check():
    text = """
        code for sm_90
                Function : bank_probe_ld_shared_v4_b32
        /*0080*/                   @P0 LDS.128 R4, [R2] ;                     /* 0x0000000002040984 */
        /*0090*/                   STG.E.128 desc[UR4][R6.64], R4 ;            /* 0x0000000406007986 */
                Function : bank_probe_ldmatrix_x2_trans
        /*0070*/                   LDSM.16.MT88.2 R4, [R2] ;                   /* 0x000000000204783b */
                Function : bank_probe_st_shared_b8
        /*0070*/                   @P0 STS.U8 [R2], R5 ;                       /* 0x0000000502008388 */
    """
    funcs = measure.sass_ops(text)
    assert funcs == {"bank_probe_ld_shared_v4_b32": ["LDS.128"], "bank_probe_ldmatrix_x2_trans": ["LDSM.16.MT88.2"],
                     "bank_probe_st_shared_b8": ["STS.U8"]}
    assert measure.sass_matches(parse_op("ld.shared.v4.b32"), ["LDS.128"])
    assert measure.sass_matches(parse_op("ldmatrix.x2.trans"), ["LDSM.16.MT88.2"])
    assert measure.sass_matches(parse_op("st.shared.b8"), ["STS.U8"])
    assert measure.sass_matches(parse_op("ld.shared.b32"), ["LDS"])
    assert not measure.sass_matches(parse_op("ld.shared.b32"), ["LDS.64"])
    assert not measure.sass_matches(parse_op("ldmatrix.x4"), ["LDSM.16.M88.2"])
    assert not measure.sass_matches(parse_op("ld.shared.v2.b32"), ["LDS.64", "LDS.64"])


def test_wmma_extras_model_numbers():
    assert [measure.extras_model(spec)[1] for *_, spec in measure.EXTRAS] == [4, 16, 4, 32]
    for _, offset, ldm, _, _ in measure.EXTRAS:
        assert offset % 32 == 0 and ldm % 8 == 0            # wmma: 256-bit aligned pointer, ldm % 8


def test_measurement_order_covers_every_op_early(patterns):
    order = measure.measurement_order(patterns)
    assert sorted(p["id"] for p in order) == [p["id"] for p in patterns]
    assert {p["op"] for p in order[:len(NVIDIA_OPS)]} == set(NVIDIA_OPS)


def test_dry_run_end_to_end(tmp_path, capsys):
    rc = measure.main(["--out", str(tmp_path), "--dry-run", "--nvcc", "no-such-nvcc",
                       "--simulate", "wide_ld=greedy,wide_st=pairs,matrix=as-v4,empty_warp=1"])
    out = capsys.readouterr().out
    assert rc == 0
    data = json.loads((tmp_path / "bank_corpus.json").read_text())
    assert data["environment"]["dry_run"] is True
    pats = data["patterns"]
    assert len(pats) == len(corpus.generate()) and all(isinstance(p["measured"], int) for p in pats)
    assert {"id", "op", "tag", "offsets", "active", "arch", "measured", "metrics"} <= set(pats[0])
    want = nvidia.parse_rules("wide_ld=greedy,wide_st=pairs,matrix=as-v4,empty_warp=1").python()
    assert want in data["fitting_rules"]
    assert "to adopt: in layoutsim/banks/nvidia.py set DEFAULT = " in out
    assert "RESULT: 510/510 patterns measured" in out.splitlines()[-1]
    assert "DRY RUN" in out and (tmp_path / "summary.txt").exists() and (tmp_path / "ncu.csv").exists()
    assert len(os.listdir(tmp_path)) <= 8                    # what comes back from the GPU machine


FAKE_NCU = r'''#!{python}
"""Stands in for ncu: reads the probe's pattern file and prints ncu-style CSV with the model's
wavefronts (rules from FAKE_RULES) to --log-file."""
import os, sys
sys.path.insert(0, {root!r})
from gpu_check.bank_probe import corpus, ncu_csv
from layoutsim.banks import nvidia, op_names
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2099.1.0 (fake)"); sys.exit(0)
log = args[args.index("--log-file") + 1]
exe, path, first, count = args[-4:]
lines = open(path).read().split("\n")[2:]
ops = {{corpus.kernel_name(op): op for op in op_names("nvidia")}}
rules = nvidia.parse_rules(os.environ.get("FAKE_RULES", ""))
rows = []
for line in lines[int(first):int(first) + int(count)]:
    name, active, *offs = line.split()
    if name.startswith("bank_probe_wmma"):
        rows.append((name, {{ncu_csv.LD: 7, ncu_csv.ST: 0}}))
        continue
    op = ops[name]
    v = corpus.predictions([{{"op": op, "offsets": [int(o) for o in offs], "active": int(active, 16)}}], rules)[0]
    ld = op.startswith(("ld.", "ldmatrix"))
    rows.append((name, {{ncu_csv.LD: v if ld else 0, ncu_csv.ST: 0 if ld else v, ncu_csv.ALL: v}}))
open(log, "w").write(ncu_csv.synthesize(rows))
'''

FAKE_PROBE = '''#!/bin/sh
echo 'BANK_PROBE device="Fake GPU" cc=9.0 driver_api=13000 runtime=13000 smem_optin=232448'
'''

FAKE_SMI = '''#!/bin/sh
echo 'Fake GPU, 999.99, 9.0'
'''


def test_gpu_path_with_fake_tools(tmp_path, monkeypatch, capsys):
    """The non-dry path (plain run, ncu chunks sized to the budget, CSV parsing, extras, summary)
    with stand-ins for the GPU tools: a 'GPU' that follows other rules than the default."""
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("ncu", FAKE_NCU.format(python=sys.executable, root=root)), ("probe", FAKE_PROBE),
                       ("nvidia-smi", FAKE_SMI)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_RULES", "wide_ld=none,matrix=as-v4,wide_st=pairs")
    out_dir = tmp_path / "out"
    rc = measure.main(["--out", str(out_dir), "--probe", str(bin_dir / "probe"), "--chunk", "300"])
    out = capsys.readouterr().out
    assert rc == 0, out[-3000:]
    data = json.loads((out_dir / "bank_corpus.json").read_text())
    env = data["environment"]
    assert (env["gpu"], env["driver"], env["device"], env["dry_run"]) == ("Fake GPU", "999.99", "Fake GPU", False)
    assert "2099.1.0" in env["ncu"] and len(env["wmma_extras"]) == 4 and env["wmma_extras"][0]["measured"] == 7
    assert all(p["measured"] is not None for p in data["patterns"])
    want = nvidia.parse_rules("wide_ld=none,matrix=as-v4,wide_st=pairs").python()
    assert data["fitting_rules"] == [want] or want in data["fitting_rules"]
    assert "set DEFAULT = " in out and "mismatch" in out
    assert out.count("ncu: ") >= 2                             # a 64-launch probe chunk, then the rest
