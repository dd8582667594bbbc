"""ThunderKittens' Hopper kernels (gpu_check/realworld/tk_cases.py: educational levels 5-8, the bf16
and fp8 LCF GEMMs, the attention forward), launched by our harness through ThunderKittens' own host code and
replayed through the executor:

  * on this machine's capture (hopper_local --group tk: the CPU stand-in runtime, seeded operands
    put in here), the executor runs each launch to completion and computes numpy's result: GEMM
    operands k/16 make every product and fp32 sum exact, so C is the float64 GEMM rounded once to
    bf16 (e4m3 for the fp8 GEMM), bit for bit; attention is within bf16's rounding of float64's;
  * on the GPU's capture (tests/data/realworld/tk/, `python -m gpu_check.realworld.tk_measure --out
    OUT` on the GPU, then `--merge OUT` here): every buffer the launch changed, bit for bit; the
    GPU's own C against numpy's GEMM of its operands (a check of the harness's inputs); the shared
    ld/st wavefronts and global ld/st sectors inside the min..max of the ncu runs.
While the GPU data is absent those skip, naming the command that makes it.
"""
import gzip
import json
from functools import lru_cache

import numpy as np
import pytest
from tool_needs import need

from gpu_check.kernel_corpus.parts import TOTALS, run_totals
from gpu_check.realworld.hopper_build import ENTRY, case_entries
from gpu_check.realworld.hopper_cases import ptx_name
from gpu_check.realworld.tk_cases import B_TRANSPOSED, EXPLAINED_COSTS, GEMM_PROGRAMS, TK, gemm_shape
from layoutsim.formats import decode, encode

MEASURE = ("python -m gpu_check.realworld.tk_measure --out OUT on the GPU (.tk-src/ from "
           "python -m gpu_check.realworld.tk_build --prepare carried), then --merge OUT here")
GEMMS = [c.name for c in TK.cases if TK.by_stem[c.example].program in GEMM_PROGRAMS]
ATTENTION = [c.name for c in TK.cases if TK.by_stem[c.example].program == 3]


@pytest.mark.parametrize("stem", [e.stem for e in TK.examples])
def test_the_ptx_holds_the_cases_kernels_only(stem):
    path = TK.data / ptx_name(stem, TK.arch)
    assert path.is_file(), f"{path} is missing: python -m gpu_check.realworld.tk_build"
    text = gzip.decompress(path.read_bytes()).decode()
    names = ENTRY.findall(text)
    assert len(names) == 1 and case_entries(TK.by_stem[stem], names, TK) == names
    assert f".target {TK.arch}" in text and "/tmp/layoutsim-tk/tk/" in text


def load(name, kind):
    from gpu_check.realworld import hopper_replay as R
    if not R.files(name, kind=kind, group=TK)[0].is_file():
        pytest.skip(f"no {kind} capture of {name}: " + (MEASURE if kind == "capture" else
                                                         "python -m gpu_check.realworld.hopper_local --group tk"))
    return R.load(name, kind=kind, group=TK)


def execute(launch):
    from layoutsim.ptx import run
    r = run(launch.ptx, launch.kernel, launch.grid, launch.block, launch.args, arch=TK.arch,
            shared_bytes=launch.shared_bytes, cluster=launch.cluster)
    assert r.fidelity["refused"] == 0
    return r, dict(zip(launch.order, (np.asarray(b).reshape(-1).view(np.uint8) for b in r.buffers[0])))


def values(raw, shape, fmt="bf16"):
    return decode(fmt, raw.view(np.uint16 if fmt == "bf16" else np.uint8)).reshape(shape)


def seeded(shape, scale, rng):
    """k/scale for k uniform in -scale..scale: exact in bf16."""
    return rng.integers(-scale, scale + 1, shape) / scale


def gemm(a, b, fmt="bf16"):
    """A [m, k] @ B [k, n] (ThunderKittens' row-major A, B and C) rounded once to fmt."""
    return decode(fmt, encode(fmt, a @ b))


def operands(name):
    """(format, (m, n, k), shape of A, shape of B, B as [k, n] from B's array) of a GEMM case."""
    ex = TK.by_stem[TK.by_name[name].example]
    m, n, k = gemm_shape(ex)
    if ex.program in B_TRANSPOSED:
        return GEMM_PROGRAMS[ex.program], (m, n, k), (m, k), (n, k), lambda b: b.T
    return GEMM_PROGRAMS[ex.program], (m, n, k), (m, k), (k, n), lambda b: b


@pytest.mark.parametrize("name", GEMMS)
def test_the_executor_computes_numpys_gemm_from_thunderkittens_own_globals(name):
    """The launch ThunderKittens' host code builds (gl globals with their TMA maps, captured here
    over the CPU stand-in): the whole kernel runs and C is numpy's GEMM exactly."""
    launch = load(name, "cpu")
    from gpu_check.realworld.hopper_replay import mapped
    ia, ib, ic = mapped(launch)
    fmt, (m, n, k), a_shape, b_shape, as_kn = operands(name)
    rng = np.random.default_rng(24)
    a, b = seeded(a_shape, 16, rng), seeded(b_shape, 16, rng)
    launch.arrays[ia][:] = encode(fmt, a).reshape(-1).view(np.uint8)
    launch.arrays[ib][:] = encode(fmt, b).reshape(-1).view(np.uint8)
    _, out = execute(launch)
    assert np.array_equal(values(out[ic], (m, n), fmt), gemm(a, as_kn(b), fmt))


def attention(q, k, v):
    """(O, L) of ThunderKittens' forward in float64: O = softmax(Q K^T / 8) V, and the kernel's
    L = -8 * logsumexp(Q K^T / 8) per row (head dim 64)."""
    s = q @ k.T / 8
    mx = s.max(1, keepdims=True)
    p = np.exp(s - mx)
    return p @ v / p.sum(1, keepdims=True), -8 * (np.log(p.sum(1)) + mx[:, 0])


@pytest.mark.parametrize("name", ATTENTION)
def test_the_executor_computes_attention_within_bf16(name):
    """The attention forward from its own globals, against float64: the kernel rounds P to bf16
    before P V (relative error 2^-9 in each weight, so at most 2^-9 max|V| = 2^-9 in O) and O to
    bf16 (2^-9 |O|); L (fp32 throughout) within 1e-4."""
    launch = load(name, "cpu")
    from gpu_check.realworld.hopper_replay import mapped
    iq, ik, iv, il, io = mapped(launch)
    batch, heads, seq = (int(x) for x in TK.by_stem[TK.by_name[name].example].argv)
    rng = np.random.default_rng(24)
    qkv = [seeded((seq, 64), 64, rng) for _ in range(3)]
    for i, x in zip((iq, ik, iv), qkv):
        launch.arrays[i][:] = encode("bf16", x).reshape(-1).view(np.uint8)
    _, out = execute(launch)
    o, lse = attention(*qkv)
    got_o = values(out[io], (seq, 64))
    assert np.all(np.abs(got_o - o) <= 2 ** -9 * (1 + np.abs(o)) + 1e-6)
    assert np.allclose(out[il].view(np.float32), lse, atol=1e-4, rtol=0)


@lru_cache(maxsize=None)
def replay(name):
    launch = load(name, "capture")
    return launch, *execute(launch)


@pytest.mark.parametrize("name", [c.name for c in TK.cases])
def test_every_buffer_is_the_gpus_bit_for_bit(name):
    launch, r, out = replay(name)
    if r.sass_source is None:        # which mul+adds ptxas fused decides the attention's bits (contract.py)
        need("ptxas")
    changed = [k for k in launch.after if not np.array_equal(launch.after[k], launch.before[k])]
    assert changed, f"{name}: the GPU's launch changed no buffer"
    for k in changed:
        bad = np.flatnonzero(launch.after[k] != out[k])
        assert bad.size == 0, f"buffer {k}: {bad.size} of {out[k].size} bytes differ, first at byte {bad[:1]}"


@pytest.mark.parametrize("name", GEMMS)
def test_the_gpus_c_is_numpys_gemm_of_its_operands(name):
    from gpu_check.realworld.hopper_replay import mapped
    launch, _, _ = replay(name)
    ia, ib, ic = mapped(launch)
    fmt, (m, n, k), a_shape, b_shape, as_kn = operands(name)
    a, b = values(launch.before[ia], a_shape, fmt), values(launch.before[ib], b_shape, fmt)
    assert np.array_equal(values(launch.after[ic], (m, n), fmt), gemm(a, as_kn(b), fmt))


@pytest.mark.parametrize("name", [c.name for c in TK.cases])
def test_the_gpu_capture_is_the_launch_captured_here(name):
    """The harness's launch is the same on the GPU and over the CPU stand-in: kernel, grid, block,
    dynamic shared memory, buffer sizes, and each tensor map's arguments but its address."""
    gpu, cpu = load(name, "capture"), load(name, "cpu")
    assert (gpu.kernel, gpu.grid, gpu.block, gpu.shared_bytes) == (cpu.kernel, cpu.grid, cpu.block, cpu.shared_bytes)
    assert sorted(a.nbytes for a in gpu.arrays) == sorted(a.nbytes for a in cpu.arrays)   # listed by address

    def maps(launch):
        return [(o, m.dims, m.box, m.swizzle, m.elem_bytes, m.strides_bytes) for o, m in launch.args[0].maps]
    assert maps(gpu) == maps(cpu)


@pytest.mark.parametrize("name", [c.name for c in TK.cases])
def test_costs_are_inside_the_gpus_range(name):
    doc = TK.data / "h200.json"
    if not doc.is_file():
        pytest.skip(f"no GPU measurement of ThunderKittens yet: {MEASURE}")
    runs = [r for r in json.loads(doc.read_text())["cases"].get(name, {}).get("ncu_runs", []) if r]
    if not runs:
        pytest.skip(f"{name}: ncu gave no totals on the GPU")
    _, r, _ = replay(name)
    got = run_totals(r)
    values = {t: [int(x[m]) for x in runs if x.get(m) is not None] for t, m in TOTALS.items()}
    outside = {TOTALS[t]: (got[t], min(vs), max(vs)) for t, vs in values.items() if vs and not min(vs) <= got[t] <= max(vs)}
    explained = {m: v[:3] for (case, m), v in EXPLAINED_COSTS.items() if case == name}
    assert outside == explained, f"{name}: outside the GPU's range {outside}, documented {explained}"


def test_merge_refuses_a_folder_without_a_measurement(tmp_path, capsys):
    from gpu_check.realworld import tk_measure
    assert tk_measure.main(["--merge", str(tmp_path), "--dir", str(tmp_path / "dest")]) == 2
    assert "holds no h200.json" in capsys.readouterr().err
    assert tk_measure.main([]) == 2


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    from gpu_check.realworld import hopper_measure, tk_build
    assert tk_build.main(["--tk-root", str(tmp_path), "--dir", str(tmp_path / "d"), "--bin", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tk_build: ") and err.count("\n") == 1
    assert tk_build.main(["--prepare", "--mirror", str(tmp_path)]) == 2
    assert "not a git directory" in capsys.readouterr().err
    assert hopper_measure.main(["--group", "tk", "--out", str(tmp_path), "--example", "level_99"]) == 2
    assert "no example 'level_99' in tk" in capsys.readouterr().err


@pytest.mark.parametrize("case", TK.cases, ids=[c.name for c in TK.cases])
def test_the_gpus_per_instruction_counts_are_the_models(case):
    """ncu's SourceCounters (one more run on the GPU, tk/source_counters.json: an H100, 2026-12-07):
    the shared-store wavefronts ncu charges the SASS instructions sum to the model's total in every
    launch, each instruction its ideal count, and where the launch total exceeds that
    (tk_cases.EXPLAINED_COSTS) the surplus is charged to no instruction."""
    doc = TK.data / "source_counters.json"
    if not doc.is_file():
        pytest.skip(f"no SourceCounters run yet: {MEASURE} --ncu-runs 0 --source-counters, then "
                    f"python -m gpu_check.realworld.source_counters OUT/raw --out {doc}")
    got = json.loads(doc.read_text())[case.example]
    stores = sum(w for key, (w, ideal, n) in got["instructions"].items() if key.startswith("Shared Store"))
    _, r, _ = replay(case.name)
    assert run_totals(r)["shared st wavefronts"] == stores
    total = got["totals"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]
    explained = EXPLAINED_COSTS.get((case.name, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"))
    assert (total > stores) == (explained is not None)
    assert all(w == ideal for key, (w, ideal, n) in got["instructions"].items() if key.startswith("Shared Store"))
