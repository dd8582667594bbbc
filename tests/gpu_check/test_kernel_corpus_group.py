"""`gpu-check run --group kernels` over every corpus (gpu_check/kernel_corpus/group.py, parts.py)
and the CI summary `python -m gpu_check.kernel_corpus.replay_all`, without a GPU.

The GPU side runs on test_kernel_corpus's pycuda stand-in, with each corpus's measure command
replaced by a stand-in that writes the committed measurement (tests/data/...) into its folder:
a run that reproduces the committed bytes must count every launch bit-identical; one changed byte
must fail that launch, named; a corpus whose prerequisite is missing is skipped with the reason.
The replay side runs the executor over the first committed launch of a few corpora (the expected
values are the committed H200 measurements themselves)."""
import dataclasses
import json
import shutil

import numpy as np
import pytest

from gpu_check import cli
from gpu_check.checks.common import Result
from gpu_check.kernel_corpus import check, group, ncu as N, parts as P, replay_all
from gpu_check.run import Session
from test_kernel_corpus import PtxBackend

COPIED = ("triton", "clusters", "constructs")          # corpora whose measurement is committed


def _copy_committed(part, out, flip=False):
    for f in part.data.iterdir():
        if f.is_file():
            shutil.copy(f, out / f.name)
        elif f.is_dir():                            # a later batch (triton_corpus/h200/<batch>/)
            shutil.copytree(f, out / f.name)
    if flip:                                        # one byte of the first buffer of the first case
        with np.load(out / "clusters.npz") as z:
            arrays = {k: z[k].copy() for k in z.files}
        first = sorted(arrays)[0]
        arrays[first].reshape(-1).view(np.uint8)[0] ^= 1
        np.savez_compressed(out / "clusters.npz", **arrays)
        return first.rsplit(".", 1)[0]
    return None


@pytest.fixture
def stand_ins(monkeypatch):
    """Every part either copied from its committed data or skipped; check.run (the in-process
    corpora, tested in test_kernel_corpus.py) returns two results."""
    monkeypatch.setattr(N, "ncu_path", lambda: None)
    monkeypatch.setattr(check, "run", lambda backend, *a, **k: [
        Result("kernels", "k1", "recorded", cases=1, compared=4).finish(),
        Result("kernels", "k1", "model", cases=1, compared=4).finish()])
    monkeypatch.setattr(P, "PARTS", tuple(
        p if p.name in group.IN_PROCESS else dataclasses.replace(p, needs=None) if p.name in COPIED
        else dataclasses.replace(p, needs=lambda: "the stand-in lacks it") for p in P.PARTS))
    state = {"flip": False, "flipped": None}

    def runner(part, out):
        state["flipped"] = _copy_committed(part, out, state["flip"] and part.name == "clusters") or state["flipped"]
        return 0, ""
    monkeypatch.setattr(group, "measure_runner", runner)
    return state


def _session():
    lines = []
    s = Session(PtxBackend(), groups=("kernels",), log=lines.append)
    s.run()
    return s, lines, {p["part"]: p for p in s.group_info["kernels"]["parts"]}


def test_every_corpus_runs_in_one_group_with_a_line_and_a_summary_each(stand_ins):
    s, lines, parts = _session()
    assert list(parts) == ["cute", "kernels", "triton", "hopper", "tk", "cub", "flashattn", "llmc", "samples", "clusters",
                           "constructs", "textures"]
    for name in parts:                            # a start line and a summary line per corpus
        assert sum(f"{name}:" in line for line in lines) == 2, name
    committed = {n: P.BY_NAME[n].read(P.BY_NAME[n].data) for n in COPIED}
    for name in COPIED:
        p = parts[name]
        assert p["launches"] == p["bit_identical"] == len(committed[name]) > 0, (name, p["problems"], p["skipped"])
        assert p.get("costs_skipped", "").startswith("ncu (Nsight Compute) not found") == P.BY_NAME[name].costs
    assert parts["kernels"]["launches"] == parts["kernels"]["bit_identical"] == 1
    for name in ("hopper", "tk", "cub", "flashattn", "llmc", "samples", "textures"):
        assert parts[name]["skipped"] == "the stand-in lacks it"
    assert not [r for r in s.results if r.status in ("fail", "error")]


def test_a_changed_byte_fails_that_launch(stand_ins):
    stand_ins["flip"] = True
    s, _, parts = _session()
    bad = [r for r in s.results if r.status == "fail"]
    assert [r.entry for r in bad] == [f"clusters/{stand_ins['flipped']}"]
    assert "buf0: 1 of" in bad[0].note and "first at byte 0" in bad[0].note
    assert parts["clusters"]["bit_identical"] == parts["clusters"]["launches"] - 1


def test_a_measure_command_that_measures_nothing_is_an_error_not_a_crash(stand_ins, monkeypatch):
    monkeypatch.setattr(group, "measure_runner", lambda part, out: (2, "no GPU"))
    s, _, parts = _session()
    assert parts["triton"]["errors"] == 1 and "exited 2 and measured nothing: no GPU" in parts["triton"]["problems"][0]


def test_the_cli_report_carries_the_parts(stand_ins, monkeypatch, capsys):
    monkeypatch.setattr(cli, "make_backend", lambda name="cuda": PtxBackend())
    assert cli.main(["run", "--group", "kernels", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    parts = {p["part"]: p for p in rep["groups"]["kernels"]["parts"]}
    assert parts["hopper"]["skipped"] and parts["clusters"]["bit_identical"] > 0
    assert cli.main(["run", "--group", "kernels"]) == 0
    text = capsys.readouterr().out
    assert "kernels: [clusters]" in text and "kernels: [hopper]     skipped: the stand-in lacks it" in text


def test_record_keeps_each_run_under_its_data_folder(stand_ins, tmp_path):
    s = Session(PtxBackend(), groups=("kernels",), log=lambda s: None, record=tmp_path)
    s.run()
    assert (tmp_path / "clusters" / "clusters.npz").is_file()
    assert (tmp_path / "triton_corpus" / "h200" / "results.json").is_file()


# ---- the comparisons ------------------------------------------------------------------------------
def test_costs_compare_with_the_recorded_range():
    runs = [{N.SHARED_LD: 10, N.SHARED_ST: 4}, {N.SHARED_LD: 12, N.SHARED_ST: 4}]
    assert P.outside_range(runs, {N.SHARED_LD: 11, N.SHARED_ST: 4}) == []
    assert P.outside_range(runs, {N.SHARED_LD: 13, N.SHARED_ST: 4}) == \
        ["shared ld wavefronts: 13, recorded 10..12 over 2 runs"]
    assert P.outside_range([], {N.SHARED_LD: 1}) is None and P.outside_range(runs, None) is None
    # a difference the corpus documents (e.g. check.UNMODELLED) stands only as exactly those numbers
    assert P.outside_range(runs, {N.SHARED_LD: 13}, {N.SHARED_LD: (13, 10, 12)}) == \
        ["documented: shared ld wavefronts: 13, recorded 10..12 over 2 runs"]
    assert not P.outside_range(runs, {N.SHARED_LD: 14}, {N.SHARED_LD: (13, 10, 12)})[0].startswith("documented")


def test_outputs_compare_as_bytes():
    a = np.array([1.0, -0.0], np.float32)
    assert P.identical({"x": a}, {"x": a.copy()}) == (True, None)
    assert P.identical({"x": a}, {"x": np.array([1.0, 0.0], np.float32)})[1] == "x: 1 of 8 bytes differ, first at byte 7"
    assert P.identical({"x": a}, {})[1] == "x: missing"


# ---- replay_all -------------------------------------------------------------------------------------
def test_replay_all_on_a_subset(capsys):
    assert replay_all.main(["--corpus", "kernels,constructs,hopper", "--limit", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {s["part"]: s for s in doc["corpora"]}
    assert doc["ok"] and list(got) == ["kernels", "hopper", "constructs"]          # parts.PARTS order
    assert got["kernels"]["launches"] == got["kernels"]["bit_identical"] == 1
    assert got["kernels"]["costs_in_range"] == got["kernels"]["costs_compared"] == 1
    assert got["constructs"]["bit_identical"] == 1
    assert got["hopper"]["launches"] == got["hopper"]["bit_identical"] == 1
    # costs are compared where the SASS is known (ptxas here, or committed lowering data)
    assert got["hopper"]["costs_in_range"] == got["hopper"]["costs_compared"] == (1 if shutil.which("ptxas") else 0)


def test_replay_all_text_and_errors(capsys):
    assert replay_all.main(["--corpus", "cub,textures"]) == 0
    out = capsys.readouterr().out.splitlines()
    heads = [line for line in out if not line.startswith(" ")]
    assert [line.split()[0] for line in heads] == ["[cub]", "[textures]"]
    # the texture cases: 107 bit-identical, 1 (3D linear filtering) differing in exactly the words
    # replay.KNOWN records
    assert "108 launches, 107 bit-identical (1 documented differences)" in heads[1]
    assert sum("_linear" in line and "documented: " in line for line in out) == 1
    assert replay_all.main(["--corpus", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown corpus 'nope'; valid: kernels, cute" in err
    assert replay_all.main(["--limit", "0"]) == 2


def test_corpus_picks_the_corpora(stand_ins, monkeypatch, capsys):
    monkeypatch.setattr(cli, "make_backend", lambda name="cuda": PtxBackend())
    assert cli.main(["run", "--group", "kernels", "--corpus", "clusters,cute", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [p["part"] for p in rep["groups"]["kernels"]["parts"]] == ["cute", "clusters"]
    for argv, needle in ((["--group", "kernels", "--corpus", "nope"], "unknown corpus 'nope'; valid: kernels"),
                         (["--group", "layouts", "--corpus", "cute"], "--corpus picks corpora of the group kernels")):
        assert cli.main(["run", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err, err
