"""The Triton corpus replayed: the committed PTX (tests/data/triton_corpus/ptx, compiled by Triton
3.6.0 for sm_90a by gpu_check.triton_corpus.build) runs through layoutsim.ptx on the cases' inputs,
and every output word must equal the GPU's (tests/data/triton_corpus/h200/outputs.npz and the
later batches h200/<name>/outputs.npz, made by `python -m gpu_check.triton_corpus.measure --out
DIR [--new]` on the GPU and added by `python -m gpu_check.triton_corpus.merge DIR`), and the
shared ld/st wavefronts and global ld/st sectors must lie within the range ncu measured over 5
runs (each batch's results.json). A case no batch holds yet skips, saying so. Triton is not needed: the PTX is
committed; test_ptx_is_what_triton_compiles checks, where the pinned Triton is installed, that
it still compiles these cases to the same PTX."""
import json
from pathlib import Path

import numpy as np
import pytest

from gpu_check.triton_corpus import cases as C
from gpu_check.triton_corpus import replay as R
from tool_needs import need
from triton_needs import needs_triton

CORPUS = Path(__file__).resolve().parents[1] / "data" / "triton_corpus"
H200 = CORPUS / "h200"
MANIFEST = R.load_manifest(CORPUS)
ENTRIES = {e["case"]: e for e in MANIFEST["cases"]}
WHEELS = Path(__file__).resolve().parents[2] / ".triton-src"


MEASURED = R.measurements(H200)


def _measured(case):
    if case not in MEASURED:
        pytest.skip(f"{case}: not measured on the GPU yet: run `python -m gpu_check.triton_corpus.measure --out DIR "
                    f"--new` there, then `python -m gpu_check.triton_corpus.merge DIR` and commit "
                    f"tests/data/triton_corpus/h200/")
    rec, npz, _ = MEASURED[case]
    return rec, np.load(npz)


def test_every_case_is_in_the_manifest():
    assert sorted(ENTRIES) == sorted(C.CASES)
    for e in ENTRIES.values():
        assert (CORPUS / e["ptx"]).is_file() and R.ptx_text(CORPUS, e).startswith("//")
    from gpu_check.triton_corpus.registry import LICENCES
    from gpu_check.triton_corpus.tutorials import FOLDER, LICENCE
    for pkg, members in LICENCES.items():          # each package's licence beside the PTX built from it
        assert all((CORPUS / "licences" / pkg / Path(m).name).is_file() for m in members)
    if any(C.CASES[c][0][0] == FOLDER for c in C.CASES):      # Triton's own, beside its tutorials' PTX
        assert (CORPUS / "licences" / FOLDER / LICENCE).is_file()
    assert sum(C.CASES[c][0][0] != "local" for c in C.CASES) >= 10      # issue 25: 10 from real projects


EXPLAINED = R.EXPLAINED
GAPS = R.MODEL_GAPS


def _run_or_gap(case):
    """(Run, finals) of a case on the model; a case of MODEL_GAPS that raises must raise exactly the
    documented error (the test then ends: the gap holds)."""
    if GAPS.get(case, ("",))[0] != "raises":
        return R.run_case(CORPUS, ENTRIES[case])
    from layoutsim.errors import LayoutsimError
    with pytest.raises(LayoutsimError) as e:
        R.run_case(CORPUS, ENTRIES[case])
    assert GAPS[case][1] in str(e.value), f"{case}: not the documented gap: {e.value}"
    pytest.skip(f"{case}: the documented gap of replay.MODEL_GAPS still holds: {GAPS[case][1]}")


@pytest.mark.parametrize("case", sorted(C.CASES))
def test_replay_is_bit_identical_to_the_h200(case):
    rec, outputs = _measured(case)
    # the GPU's compile, kept where it was not the same code (other install paths in .file lines differ)
    same = rec["ptx_identical"] or rec.get("ptx_code_identical") \
        or C.code_of(rec["ptx"]) == C.code_of(R.ptx_text(CORPUS, ENTRIES[case]))
    assert same, f"{case}: the GPU's Triton compiled other PTX than the committed one"
    r, finals = _run_or_gap(case)
    inputs = C.inputs(case)
    differing = []
    for name, got in finals.items():
        if f"{case}/{name}" not in outputs.files:     # merge kept only what the GPU changed
            assert int(name[3:]) in rec.get("unchanged", ()), f"{case} {name}: no GPU output"
            want = C.output(inputs[int(name[3:])])
        else:
            want = outputs[f"{case}/{name}"]
        # npz keeps fp8 outputs as raw bytes (|V1): the element size and shape must agree, then the bits
        assert want.dtype.itemsize == got.dtype.itemsize and want.shape == got.shape, \
            f"{case} {name}: {want.dtype}{want.shape} vs {got.dtype}{got.shape}"
        diff = int((got.view(np.uint8) != want.view(np.uint8)).sum())
        if diff and not r.fidelity["contraction"]["available"]:
            need("ptxas")       # which mul (or division) + add ptxas fused into FFMA decides these bits (contract.py)
        if case in GAPS:
            differing += [name] if diff else []
            continue
        assert diff == 0, f"{case} {name}: {diff} bytes differ from the H200"
    if case in GAPS:                   # a documented wrong output: it must still differ (else update MODEL_GAPS)
        assert differing, f"{case}: now bit-identical to the GPU: remove it from replay.MODEL_GAPS and docs/triton.md"
        pytest.skip(f"{case}: the documented gap of replay.MODEL_GAPS still holds ({', '.join(differing)} differ)")
    runs = [x for x in rec.get("runs") or [] if x]
    if not runs:
        pytest.skip(f"{case}: no ncu counts in the measurement")
    if r.sass_source is None:        # costed as ptxas's SASS, which needs ptxas or committed lowering data
        need("ptxas")
    g = r.global_totals or {}     # none where the kernel has no LSU global access (TMA's copies are not the LSU's)
    ours = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": r.shared_wavefronts["ld"],
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": r.shared_wavefronts["st"],
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": (g.get("ld") or {}).get("sectors", 0),
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": (g.get("st") or {}).get("sectors", 0)}
    for metric, value in ours.items():
        seen = [x[metric] for x in runs if metric in x]
        inside = bool(seen) and min(seen) <= value <= max(seen)
        if (case, metric) in EXPLAINED:         # a known difference: it must still be the one documented
            assert not inside and (value, min(seen), max(seen)) == EXPLAINED[case, metric][:3], \
                f"{case} {metric}: model {value}, GPU {min(seen)}..{max(seen)}: update EXPLAINED and docs/triton.md"
            continue
        assert inside, f"{case} {metric}: model {value}, GPU {min(seen)}..{max(seen)}"


@pytest.mark.parametrize("case", sorted(C.CASES))
def test_a_case_not_measured_yet_runs_on_the_model(case):
    """Until the GPU has measured a case, the model must at least run its launch: it writes some
    output, and no float output holds a NaN (the inputs keep these kernels' arithmetic finite)."""
    if case in MEASURED:
        pytest.skip(f"{case}: measured; test_replay_is_bit_identical_to_the_h200 checks it")
    args = C.inputs(case)
    _, finals = _run_or_gap(case)
    written = [k for k, v in finals.items()
               if not np.array_equal(v.view(np.uint8), C.output(args[int(k[3:])]).view(np.uint8))]
    assert written, f"{case}: the launch wrote nothing"
    for k in written:
        v = finals[k]
        if v.dtype.kind in "fV":
            assert not np.isnan(v.astype(np.float32)).any(), f"{case} {k}: NaN"
    # the Triton tutorial cases: what each launch computes, against numpy within a tolerance
    from triton_tutorial_references import check
    problems = check(case, args, finals)
    if case in GAPS:
        assert any(GAPS[case][1] in p for p in problems), \
            f"{case}: the documented wrong output is gone: remove it from replay.MODEL_GAPS and docs/triton.md"
        return
    assert not problems, "; ".join(problems)


@needs_triton
@pytest.mark.parametrize("case", sorted(C.CASES))
def test_ptx_is_what_triton_compiles(case):
    import triton
    if triton.__version__ != MANIFEST["triton"]:
        pytest.skip(f"Triton {triton.__version__} installed; the corpus is Triton {MANIFEST['triton']}'s")
    if C.CASES[case][0][0] != "local" and not WHEELS.is_dir():
        pytest.skip(f"{case}: the package wheels are not in .triton-src/ (pip download --no-deps "
                    f"liger-kernel==0.8.5 flag-gems==5.0.2 fla-core==0.6.0 flash-attn-triton==0.1.1 -d .triton-src)")
    _need_tutorial(case)
    from gpu_check.triton_corpus.build import compile_case
    c, _, plan = compile_case(case, WHEELS, Path(__file__).resolve().parents[2])
    assert C.code_of(c.ptx) == C.code_of(R.ptx_text(CORPUS, ENTRIES[case]))
    assert plan == ENTRIES[case]["params"]


def _need_tutorial(case):
    """Skip a Triton tutorial case whose pinned file is not in .triton-src/triton-tutorials/, saying how to get it."""
    from gpu_check.triton_corpus import tutorials as T
    src = C.CASES[case][0]
    if src[0] == T.FOLDER and src[1] in T.missing(WHEELS):
        pytest.skip(f"{case}: {T.local_path(src[1], WHEELS)} is missing: {T.fetch_command(src[1], WHEELS)}")


def test_measure_assigns_ncu_rows_to_cases_in_launch_order():
    """The H200 script's bookkeeping, on ncu-style CSV made by ncu_csv.synthesize (a dry run)."""
    from gpu_check.bank_probe import ncu_csv
    from gpu_check.triton_corpus.measure import assign_runs
    record = {"cases": {c: {"kernel": ENTRIES[c]["kernel"]} for c in C.CASES}}
    launches = [(ENTRIES[c]["kernel"], {ncu_csv.LD: 10 * k + run}) for k, c in enumerate(C.CASES) for run in range(2)]
    problems = []
    assign_runs(record, ncu_csv.parse(ncu_csv.synthesize(launches)), 2, problems)
    assert problems == []
    for k, c in enumerate(C.CASES):
        assert [r[ncu_csv.LD] for r in record["cases"][c]["runs"]] == [10 * k, 10 * k + 1]
    record = {"cases": {c: {"kernel": ENTRIES[c]["kernel"]} for c in C.CASES}}
    assign_runs(record, ncu_csv.parse(ncu_csv.synthesize(launches[:3])), 2, problems)
    assert problems and record["cases"][sorted(C.CASES, key=list(C.CASES).index)[-1]]["runs"] == [None, None]


def test_measure_picks_the_cases_named_or_not_yet_measured(tmp_path):
    """--cases keeps cases.py's order and refuses an unknown name; --new is every case no batch holds."""
    from gpu_check.triton_corpus.measure import selected
    order = list(C.CASES)
    assert selected(f"{order[3]},{order[1]}") == [order[1], order[3]]
    with pytest.raises(SystemExit, match="no_such_case"):
        selected("no_such_case")
    assert selected(new=True, h200=tmp_path / "absent") == order
    _fake_batch(tmp_path / "h200", order[:2])
    assert selected(new=True, h200=tmp_path / "h200") == order[2:]


def _fake_batch(folder, cases, value=0):
    """A measurement folder as measure writes it, for `cases`, with made-up numbers (no GPU)."""
    folder.mkdir(parents=True, exist_ok=True)
    rec = {c: {"kernel": ENTRIES[c]["kernel"], "ptx_identical": True, "ptx_code_identical": True,
               "runs": [{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": value}]} for c in cases}
    (folder / "results.json").write_text(json.dumps({"date": "2026-12-07", "gpu": "fake", "cases": rec}))
    arrays = {f"{c}/arg0": np.full(3, value, np.float32) for c in cases}
    arrays.update({f"{c}/arg{i}": a for c in cases for i, a in enumerate(C.inputs(c))
                   if isinstance(a, np.ndarray) and i})       # the other arguments: left as given
    np.savez(folder / "outputs.npz", **arrays)
    return folder


def test_merge_adds_a_batch_beside_the_committed_ones(tmp_path):
    """merge on made-up measurements: the new cases become h200/<name>/, read with the first batch's;
    a case measured already is refused, and a second merge into the same batch keeps the first's."""
    from gpu_check.triton_corpus.merge import main, merge
    order = list(C.CASES)
    h200 = _fake_batch(tmp_path / "h200", order[:2], value=1)
    dest = merge(_fake_batch(tmp_path / "m1", order[2:4], value=2), h200, "batch-x")
    got = R.measurements(h200)
    assert sorted(got) == sorted(order[:4])
    assert got[order[2]][0]["runs"][0]["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 2
    assert Path(got[order[2]][1]).parent == dest and Path(got[order[0]][1]).parent == h200
    assert np.load(got[order[3]][1])[f"{order[3]}/arg0"].tolist() == [2, 2, 2]
    rec = got[order[3]][0]                 # the arguments the GPU left as given are listed, not stored
    kept = np.load(got[order[3]][1]).files
    assert rec["unchanged"] and all(f"{order[3]}/arg{i}" not in kept for i in rec["unchanged"])
    with pytest.raises(ValueError, match="already measured"):
        merge(_fake_batch(tmp_path / "m2", order[1:2]), h200, "batch-y")
    merge(_fake_batch(tmp_path / "m3", order[4:5], value=3), h200, "batch-x")
    assert sorted(R.measurements(h200)) == sorted(order[:5])
    assert main([str(tmp_path / "absent"), "--h200", str(h200)]) == 2


def test_measure_assigns_ncu_rows_of_a_subset():
    """--cases/--new: ncu's rows are those of the chosen cases only, in cases.py's order."""
    from gpu_check.bank_probe import ncu_csv
    from gpu_check.triton_corpus.measure import assign_runs
    chosen = list(C.CASES)[-3:]
    record = {"cases": {c: {"kernel": ENTRIES[c]["kernel"]} for c in chosen}}
    launches = [(ENTRIES[c]["kernel"], {ncu_csv.LD: 7 * k + run}) for k, c in enumerate(chosen) for run in range(2)]
    problems = []
    assign_runs(record, ncu_csv.parse(ncu_csv.synthesize(launches)), 2, problems, chosen)
    assert problems == []
    assert [[r[ncu_csv.LD] for r in record["cases"][c]["runs"]] for c in chosen] == [[0, 1], [7, 8], [14, 15]]


def test_a_merged_batch_replays_through_the_same_path(tmp_path):
    """measure's files -> merge -> measurements -> the replay's comparison, end to end, with the
    model's own outputs standing in for the GPU's (a dry run of the plumbing, not a measurement)."""
    from gpu_check.triton_corpus.merge import merge
    cases = ["liger_flce_element_mul", "fat_rotary"]
    src = tmp_path / "measured"
    src.mkdir()
    arrays, rec = {}, {}
    for c in cases:
        r, finals = R.run_case(CORPUS, ENTRIES[c])
        arrays.update({f"{c}/{k}": v for k, v in finals.items()})
        rec[c] = {"kernel": ENTRIES[c]["kernel"], "ptx_identical": False, "ptx_code_identical": True,
                  "runs": [{"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": r.global_totals["ld"]["sectors"]}]}
    np.savez_compressed(src / "outputs.npz", **arrays)
    (src / "results.json").write_text(json.dumps({"date": "2026-12-07", "cases": rec}))
    dest = merge(src, tmp_path / "h200")
    got = R.measurements(tmp_path / "h200")
    assert sorted(got) == sorted(cases) and (dest / "results.json").is_file()
    for c in cases:
        stored, npz, _ = got[c]
        _, finals = R.run_case(CORPUS, ENTRIES[c])
        with np.load(npz) as z:
            for k, v in finals.items():
                want = z[f"{c}/{k}"] if f"{c}/{k}" in z.files else C.inputs(c)[int(k[3:])]
                assert want.tobytes() == v.tobytes()
        assert stored["unchanged"]               # the inputs the kernel only reads are not stored
