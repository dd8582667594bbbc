"""gpu_check/coalesce_probe without a GPU: the corpus, the CUDA source (compiled for sm_80 and
sm_90 when nvcc is here), the SASS reader, the fit, a dry run, and the GPU path of the driver
against a stand-in for ncu (tests/memory/fake_ncu.py), including refused metrics and a time
budget that runs out; then the `coalescing` gpu-check group's comparison."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_check import needs
from gpu_check.bank_probe import common
from gpu_check.checks import coalescing
from gpu_check.coalesce_probe import corpus, fit, measure
from layoutsim.memory import nvidia, parse_op

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(os.path.dirname(corpus.__file__), "probe.cu")


@pytest.fixture(scope="module")
def patterns():
    return corpus.generate()


@pytest.fixture(autouse=True)
def _fake_gpu(monkeypatch):
    """The fake ncu and probe stand in for the GPU, so the driver's check for one passes."""
    monkeypatch.setattr(needs, "gpu_missing", lambda: None)


def test_corpus(patterns):
    assert len(patterns) >= 600 and patterns == corpus.generate()
    assert [p["id"] for p in patterns] == list(range(len(patterns)))
    counts = common.per_op(patterns)
    assert set(counts) == set(corpus.OPS) and min(counts.values()) >= 12
    for p in patterns:
        w = parse_op(p["op"]).width
        assert len(p["offsets"]) == 32 and all(0 <= o < corpus.BUFFER and o % w == 0 for o in p["offsets"]), p
    for op in corpus.OPS:
        mine = [p for p in patterns if p["op"] == op]
        assert {"stride", "offset", "duplicate", "gather", "mask"} <= {p["family"] for p in mine}, op
        assert 0 in {p["active"] for p in mine}, op                      # a warp with no active lane
    assert {parse_op(op).family for op in corpus.OPS} == set(nvidia.RULES)


def _same_rule(fam, q, r, knob):
    """Knobs that do not change this family's count: one sector per lane (or per lane pair and
    line) ignores request groups and replays; replays are for atomics and reductions only; a
    line's pass limit only splits tag-bank wavefronts of atom.cas; how passes add up only matters
    for tag-bank wavefronts with more than one pass (replay rounds, atom.cas)."""
    return ((q == "sectors" and knob in ("requests", "replay") and r.sectors in ("per_lane", "pair_lines"))
            or (knob == "replay" and fam not in ("atom", "red"))
            or (knob == "line_pass" and (fam != "atom" or r.wavefronts != "tag_banks"))
            or (knob == "passes" and (r.wavefronts != "tag_banks" or fam not in ("atom", "red")
                                      # the red patterns repeat addresses too evenly to tell
                                      # the sums apart: nvidia.OPEN["red replay passes"]
                                      or fam == "red"
                                      # atom.cas by sectors takes at most 2 passes a line, and no
                                      # pattern of the corpus puts them where the sums differ
                                      or (r.replay == "none" and r.line_pass == "sectors")))
            # ld.cg's patterns (and cp.async.cg's, whose ideal is neither) give distinct bytes and
            # distinct sectors the same ideal: nvidia.OPEN["ld.cg ideal"]
            or (q == "ideal_sectors" and fam in ("ld.cg", "cp.async.cg") and knob == "ideal"
                and r.ideal in ("unique", "min_sectors")))


def test_corpus_tells_every_candidate_setting_apart(patterns):
    """Per family and measured quantity, no two candidate settings predict the same numbers
    (except where they are the same rule for that family, _same_rule)."""
    fams = {}
    for p in patterns:
        fams.setdefault(parse_op(p["op"]).family, []).append(p)
    for fam, pats in fams.items():
        for q, (_, knobs) in fit.QUANTITIES.items():
            seen = {}
            for r in fit._settings(knobs):
                key = tuple(getattr(r, k) for k in knobs if not _same_rule(fam, q, r, k))
                if q == "sectors" and r.sectors == "per_address" and r.replay == "address" and fam in ("atom", "red"):
                    key = ("per_lane",)      # every (round, address) is one lane
                seen.setdefault(tuple(fit.predict(pats, r)[q]), set()).add(key)
            assert all(len(keys) == 1 for keys in seen.values()), (fam, q, [k for k in seen.values() if len(k) > 1])


def test_probe_source_has_a_kernel_for_every_op():
    src = open(PROBE).read()
    table = re.findall(r'\bK\((coalesce_probe_[a-z0-9_]+), \d+\)', src)
    assert sorted(table) == sorted([corpus.kernel_name(op) for op in corpus.OPS] + [corpus.CONTROL])
    assert "BUFFER_BYTES (8u << 20)" in src and corpus.BUFFER == 8 << 20


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_probe_compiles_for_sm80_and_sm90_with_one_global_instruction_per_kernel(tmp_path):
    cmd = ["nvcc", "-O3", "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
           "-o", str(tmp_path / "probe"), PROBE]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "warning" not in p.stderr.lower(), p.stderr[-2000:]
    p = subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-ptx", "-o", str(tmp_path / "probe.ptx"), PROBE],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    bodies = dict(re.findall(r"\.entry (coalesce_probe_\w+)\((.*?)\n}", (tmp_path / "probe.ptx").read_text(), re.S))
    for op in corpus.OPS:
        found = re.findall(r"\b((?:ld|st|atom|red|cp\.async)\.[\w.:]*global[\w.:]*)", bodies[corpus.kernel_name(op)])
        sinks = [f for f in found if f.startswith("st.global.") and parse_op(op).kind != "st"]
        mine = [f for f in found if f not in sinks]
        assert len(sinks) <= 1, (op, found)                  # the guarded sink store of a result
        assert len(mine) == 1 and parse_op(mine[0] + (f".{parse_op(op).width}" if op.startswith("cp.") else "")).name == op, (op, found)
    assert re.findall(r"\b(?:ld|st|atom|red)\.global[\w.]*", bodies[corpus.CONTROL]) == ["st.global.u32"]


SASS = """
        Function : coalesce_probe_ld_global_v4_b32
        /*00e0*/               @P0 LDG.E.128 R4, desc[UR4][R2.64] ;                                  /* 0x0000000402040981 */
        /*0160*/                   STG.E desc[UR4][R2.64], R7 ;                                      /* 0x0000000702007986 */
        Function : coalesce_probe_ld_global_b32
        /*00d0*/              @!P0 BRA 0xf0 ;                                                        /* 0x0000000000048947 */
        /*00e0*/                   LDG.E R5, desc[UR4][R2.64] ;                                      /* 0x0000000402057981 */
        /*0160*/                   STG.E desc[UR4][R2.64], R5 ;                                      /* 0x0000000502007986 */
        Function : coalesce_probe_red_global_add_u32
        /*00d0*/                   REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;                      /* 0x000000050200798e */
        Function : coalesce_probe_cp_async_ca_shared_global_16
        /*0140*/                   LDGSTS.E.128 [R5], desc[UR6][R2.64] ;                             /* 0x0000000002057fae */
        /*0160*/                   LDGDEPBAR ;                                                       /* 0x00000000000079af */
        /*01f0*/                   STG.E desc[UR6][R2.64], R5 ;                                      /* 0x0000000502007986 */
        Function : coalesce_probe_atom_global_add_noftz_f16
        /*0120*/                   LDG.E R7, desc[UR4][R2.64] ;                                      /* 0x0000000402077981 */
        /*0180*/                   ATOMG.E.CAS.STRONG.GPU PT, R6, [R2], R7, R6 ;                     /* 0x00000007020673a9 */
"""


def test_sass_reader_and_check():
    funcs = measure.sass_global_ops(SASS)   # seen in cuobjdump -sass of probe.cu for sm_90 (CUDA 13.1)
    assert funcs["coalesce_probe_ld_global_v4_b32"] == [("LDG.E.128", True), ("STG.E", False)]
    assert funcs["coalesce_probe_ld_global_b32"] == [("LDG.E", False), ("STG.E", False)]
    assert funcs["coalesce_probe_cp_async_ca_shared_global_16"] == [("LDGSTS.E.128", False), ("STG.E", False)]
    assert measure.sass_check("ld.global.v4.b32", funcs["coalesce_probe_ld_global_v4_b32"]) == (True, True)
    assert measure.sass_check("ld.global.b32", funcs["coalesce_probe_ld_global_b32"]) == (True, False)
    assert measure.sass_check("red.global.add.u32", funcs["coalesce_probe_red_global_add_u32"]) == (True, False)
    assert measure.sass_check("cp.async.ca.shared.global.16", funcs["coalesce_probe_cp_async_ca_shared_global_16"])[0]
    assert not measure.sass_check("atom.global.add.u32", funcs["coalesce_probe_atom_global_add_noftz_f16"])[0]
    assert not measure.sass_check("st.global.b32", funcs["coalesce_probe_ld_global_b32"])[0]


def test_budget_line_and_plan():
    b = measure.Budget()
    for name, n, per in (("full", 5, 0.2), ("full", 21, 0.2), ("core", 21, 0.05), ("core", 151, 0.05)):
        b.add(name, n, 3.0 + n * per)
    assert abs(b.startup() - 3.0) < 1e-9
    assert abs(b.per_launch("full") - 0.2) < 1e-9 and abs(b.per_launch("core") - 0.05) < 1e-9
    assert measure.plan_full(100, 200.0, b, 150) == 100                     # everything fits FULL
    n = measure.plan_full(1000, 120.0, b, 150)
    assert 0 < n < 1000 and n * 0.2 + (1000 - n) * 0.05 + 8 * 3.0 <= 120 - measure.MARGIN   # 7 chunks + 1


def _check_outputs(out, rules=None, measured=None):
    data = json.loads((out / "coalesce_corpus.json").read_text())
    pats = data["patterns"]
    done = [p for p in pats if p.get("metrics")]
    assert len(pats) == len(corpus.generate()) and (measured is None or len(done) == measured)
    assert {"id", "op", "family", "tag", "offsets", "active", "kernel", "predicated", "model_at_measurement",
            "metrics", "chunk"} <= set(done[0])
    for fam, info in data["fit"].items():          # the fake GPU plays `rules` or the model's own
        assert (rules or nvidia.RULES[fam]).python() in info["matching"], (fam, info)
    assert len(os.listdir(out)) <= 7
    return data


def test_dry_run_recovers_simulated_rules(tmp_path, capsys):
    simulate = "requests=per_128B,sectors=per_address,wavefronts=lines,ideal=unique,empty_request=1"
    rc = measure.main(["--out", str(tmp_path), "--dry-run", "--nvcc", "no-such-nvcc", "--simulate", simulate])
    out = capsys.readouterr().out
    assert rc == 0 and "DRY RUN" in out
    _check_outputs(tmp_path, nvidia.parse_rules(simulate), len(corpus.generate()))
    summary = (tmp_path / "summary.txt").read_text()
    assert "to adopt: RULES['ld'] = " + nvidia.parse_rules(simulate).python() in summary
    assert f"ld ({sum(parse_op(p['op']).family == 'ld' for p in corpus.generate())}): requests fits, sectors fits, wavefronts fits, ideal_sectors fits; a rule set fits all" in out
    assert out.splitlines()[-1].startswith(f"RESULT: {len(corpus.generate())}/{len(corpus.generate())} patterns measured; {len(nvidia.FAMILIES)}/{len(nvidia.FAMILIES)}")
    results, _ = coalescing.compare(tmp_path)           # the model's own rules differ from the simulated
    assert {r.entry for r in results} == set(corpus.OPS) and all(r.status == "fail" for r in results)


def _fake(tmp_path, name):
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\nexec {sys.executable} {os.path.join(HERE, 'fake_ncu.py')} "
                    f"{'ncu' if name == 'ncu' else 'probe'} \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_gpu_path_against_a_fake_ncu(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_SECONDS", "0")
    out = tmp_path / "out"
    rc = measure.main(["--out", str(out), "--ncu", _fake(tmp_path, "ncu"), "--probe", _fake(tmp_path, "probe"),
                       "--nvcc", "no-such-nvcc", "--limit", "120", "--chunk", "60", "--max-seconds", "90"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "ncu refused smsp__sass_sectors_mem_global.sum: dropped, retrying" in text
    data = _check_outputs(out, None, 120)
    env = data["environment"]
    assert env["device"] == "FakeGPU" and env["buffer_base"] == "0x7f0000200000"
    assert "smsp__sass_sectors_mem_global.sum" not in env["metric_sets"]["full"]
    # the ideal family first (IDEAL set), then the calibration chunks of the round-robin order
    assert [c["set"] for c in data["chunks"]][:4] == ["ideal", "full", "full", "core"]
    assert all(c["control"] == {k: 0 for k in c["control"]} for c in data["chunks"])
    results, _ = coalescing.compare(out)
    measured = [r for r in results if r.status != "skip"]
    assert measured and all(r.status == "pass" and r.compared > 0 for r in measured)


def test_second_run_measures_the_listed_ids(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_SECONDS", "0")
    pats = corpus.generate()
    ideal = [p["id"] for p in pats if p["family"] == "ideal"][:3]
    ids = ideal + [900, 5, 77, 5]
    (tmp_path / "ids.txt").write_text(" ".join(map(str, ids)))
    out = tmp_path / "out"
    rc = measure.main(["--out", str(out), "--ncu", _fake(tmp_path, "ncu"), "--probe", _fake(tmp_path, "probe"),
                       "--nvcc", "no-such-nvcc", "--ids", str(tmp_path / "ids.txt"), "--max-seconds", "60"])
    assert rc == 0, capsys.readouterr().out
    data = json.loads((out / "coalesce_corpus.json").read_text())
    assert sorted(p["id"] for p in data["patterns"] if p.get("metrics")) == sorted(set(ids))
    assert [c["set"] for c in data["chunks"]] == ["ideal", "core"]
    assert "memory_l2_theoretical_sectors_global_ideal" in data["patterns"][ideal[0]]["metrics"]


@pytest.mark.parametrize("text, message", [("1 2 x", "no pattern 'x'"), ("3 99999", "no pattern '99999'")])
def test_second_run_refuses_bad_ids(tmp_path, capsys, text, message):
    (tmp_path / "ids.txt").write_text(text)
    assert measure.main(["--out", str(tmp_path / "out"), "--ids", str(tmp_path / "ids.txt"), "--dry-run"]) == 2
    assert message in capsys.readouterr().out


def test_gpu_path_stops_at_the_time_budget(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_SECONDS", "0.02")
    out = tmp_path / "out"
    rc = measure.main(["--out", str(out), "--ncu", _fake(tmp_path, "ncu"), "--probe", _fake(tmp_path, "probe"),
                       "--nvcc", "no-such-nvcc", "--max-seconds", "14"])
    text = capsys.readouterr().out
    data = json.loads((out / "coalesce_corpus.json").read_text())
    done = sum(1 for p in data["patterns"] if p.get("metrics"))
    assert rc == 0 and 4 <= done < len(data["patterns"]), text      # at least the first chunk
    assert any("time budget (14 s under ncu) spent" in p for p in data["problems"])
    assert data["environment"]["ncu_seconds"] <= 14 + 2


def test_compare_reports_a_planted_difference(tmp_path, capsys):
    assert measure.main(["--out", str(tmp_path), "--dry-run", "--nvcc", "no-such-nvcc"]) == 0
    capsys.readouterr()
    path = tmp_path / "coalesce_corpus.json"
    data = json.loads(path.read_text())
    p = next(p for p in data["patterns"] if p["op"] == "st.global.v4.b32" and p["tag"] == "element stride 2")
    p["metrics"]["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] += 1
    measure.write_corpus(str(path), data)
    results, _ = coalescing.compare(tmp_path)
    bad = [r for r in results if r.status == "fail"]
    assert [r.entry for r in bad] == ["st.global.v4.b32"] and bad[0].mismatches == 1
    d = bad[0].details[0]
    assert (d.case, d.expected, d.got) == (p["id"], 32, 33) and "sectors" in d.where
    assert all(r.status == "pass" for r in results if r.entry != "st.global.v4.b32")


def test_merge_joins_two_runs(tmp_path, capsys):
    from gpu_check.coalesce_probe import merge
    runs = []
    for k, ids in enumerate(("0 1 2 900", "2 3 901")):
        (tmp_path / f"ids{k}.txt").write_text(ids)
        assert measure.main(["--out", str(tmp_path / f"r{k}"), "--dry-run", "--nvcc", "no-such-nvcc",
                             "--ids", str(tmp_path / f"ids{k}.txt")]) == 0
        runs.append(str(tmp_path / f"r{k}" / "coalesce_corpus.json"))
    out = tmp_path / "merged.json"
    assert merge.main(runs + ["--out", str(out)]) == 0
    data = json.loads(out.read_text())
    done = {p["id"]: p for p in data["patterns"] if p.get("metrics")}
    assert sorted(done) == [0, 1, 2, 3, 900, 901] and len(data["patterns"]) == len(corpus.generate())
    assert done[2]["run"] == 1 and done[0]["run"] == 0 and len(data["runs"]) == 2
    assert all(data["chunks"][p["chunk"]]["run"] == p["run"] for p in done.values())
    out.rename(tmp_path / "coalesce_corpus.json")
    results, _ = coalescing.compare(tmp_path)
    assert all(r.status in ("pass", "skip") for r in results)
    # runs of different corpus versions are refused in one line
    bad = json.loads(Path(runs[1]).read_text())
    bad["patterns"][2]["offsets"][0] += 4
    Path(runs[1]).write_text(json.dumps(bad))
    assert merge.main(runs + ["--out", str(tmp_path / "x.json")]) == 2
    assert "pattern 2 differs between runs" in capsys.readouterr().err


# ---- completing the committed H200 corpus (plan.py, --complete) -------------------------------
H200 = Path(HERE).parent / "data" / "coalescing"


FIRST_RUN_PATTERNS = 858            # the corpus generator's patterns at the first run (ids 0-857)


@pytest.fixture(scope="module")
def h200():
    return json.loads((H200 / "coalesce_corpus.json").read_text())


@pytest.fixture(scope="module")
def first_run(h200):
    """The first H200 run as it was before the second completed it, rebuilt from the merged
    corpus: its 7 chunks, the patterns it measured (those of run 0, and those the second run
    measured again: its bypass chunk's first-run patterns and its last chunk, the CORE-only
    patterns measured again with the ideal metric), with the CORE counters the first run
    recorded for them (merge.py lists no count that moved, so the values are the first run's)."""
    last = len(h200["chunks"]) - 1
    pats = []
    for p in h200["patterns"]:
        if p["id"] >= FIRST_RUN_PATTERNS:
            continue
        if p.get("run") == 1:
            c = h200["chunks"][p["chunk"]]
            if c["set"] == "bypass" or p["chunk"] == last:
                p = dict(p, metrics={k: v for k, v in p["metrics"].items() if k in measure.CORE}, run=0,
                         chunk=next(i for i, c in enumerate(h200["chunks"]) if c["set"] == "core"))
            else:
                p = {k: v for k, v in p.items() if k not in ("metrics", "chunk", "run")}
        pats.append(p)
    problems = [p.removeprefix("run 0: ") for p in h200["problems"] if p.startswith("run 0: ")]
    return dict(schema=h200["schema"], what=h200["what"].split("; merged from ")[0],
                environment=h200["environment"], chunks=[c for c in h200["chunks"] if c["run"] == 0],
                problems=problems, patterns=pats)


def test_first_run_costs_are_the_h200_runs(h200):
    """FIRST_RUN_COSTS are ncu processes of the committed run (measure_log.txt: 'ncu [full]: 4/4
    patterns in 4.3 s', ...): (launches incl. the control, seconds)."""
    runs = {(c["set"], c["launches"], c["seconds"]) for c in h200["chunks"]}
    assert all((name, n, s) in runs for name, pts in measure.FIRST_RUN_COSTS.items() for n, s in pts)
    log = (H200 / "measure_log.txt").read_text()
    assert "ncu [full]: 4/4 patterns in 4.3 s" in log and "ncu [core]: 150/150 patterns in 25.1 s" in log


def test_plan_completes_the_h200_corpus(patterns, h200, first_run):
    """The plan of the second run (measure_log_run2.txt: 'plan: 646 patterns (160 ideal, 55
    bypass, 314 core, 117 ideal)'), from the first run; after it nothing is left to measure."""
    from gpu_check.coalesce_probe import plan
    assert plan.check_earlier(patterns, h200) is None and plan.complete(patterns, h200) == []
    assert "plan: 646 patterns (160 ideal, 55 bypass, 314 core, 117 ideal)" in (H200 / "measure_log_run2.txt").read_text()
    assert sum(1 for p in first_run["patterns"] if p.get("metrics")) == 552
    assert plan.check_earlier(patterns, first_run) is None
    todo = plan.complete(patterns, first_run)
    ids = [p["id"] for p, _ in todo]
    assert sorted(ids) == sorted(p["id"] for p in h200["patterns"] if p.get("run") == 1)
    done = {p["id"]: p for p in first_run["patterns"] if p.get("metrics")}
    assert len(ids) == len(set(ids))
    # exactly what is missing: the 306 unmeasured first-run ids and the 198 follow-ups (858 on) ...
    missing = {i for i in range(len(patterns)) if i not in done}
    assert len(missing) == 306 + 198 and missing <= set(ids) and min(i for i in missing if i >= 858) == 858
    # ... plus patterns measured with CORE only that the richer sets explain; never a FULL one
    again = [i for i in ids if i in done]
    assert all(len(done[i]["metrics"]) == 12 for i in again)
    assert plan.groups(todo) == [("ideal", 160), ("bypass", 55), ("core", 314), ("ideal", 117)]
    sets = dict(zip(ids, (s for _, s in todo)))
    fam = {p["id"]: parse_op(p["op"]).family for p in patterns}
    assert all(sets[p["id"]] == "ideal" for p in patterns if p["family"] == "ideal" and fam[p["id"]] != "cp.async.cg")
    assert {i for i in ids if fam[i] == "cp.async.cg"} == {p["id"] for p in patterns if fam[p["id"]] == "cp.async.cg"
                                                          and len((done.get(p["id"]) or {"metrics": {}})["metrics"]) <= 12}
    # the ideal-sector metric on repeated addresses and partial warps: the audit's broadcast among them
    ideal = [patterns[i] for i in ids if sets[i] in ("ideal", "bypass")]
    bcast = [p for p in ideal if p["op"] == "ld.global.b32" and len(set(p["offsets"])) == 1 and p["active"] == corpus.FULL]
    assert bcast and sum(len(set(p["offsets"])) < 32 for p in ideal) >= 100
    assert sum(p["active"] not in (0, corpus.FULL) for p in ideal) >= 100
    assert len({p["op"] for p in ideal}) == len(corpus.OPS)


def test_the_plan_fits_the_time_budget(patterns, first_run):
    """At the first H200 run's costs (IDEAL/BYPASS priced as its FULL set, 0.40 s a launch, an upper
    bound) the plan takes under the 240 s the GPU command gives it, so with compiling, SASS and the
    fit the run stays under 5 minutes."""
    from gpu_check.coalesce_probe import plan
    b = measure.seeded_budget()
    assert abs(b.per_launch("core") - 0.149) < 0.001 and abs(b.per_launch("ideal") - 0.404) < 0.001
    est = plan.estimate(plan.complete(patterns, first_run), b, 150)
    assert 150 < est < 240 - measure.MARGIN - 10        # 10 s for the metric query


def test_bypass_set_puts_ldgsts_counters_first():
    avail = sorted(list(measure.CORE) + list(measure.SASS_PATCHED) + [
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum", "lts__t_sectors_srcunit_tex.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write.sum", "smsp__inst_executed_op_ldgsts.sum",
        "sm__cycles_elapsed.sum"] + [f"l1tex__m_xbar2l1tex_read_sectors_x{i}.sum" for i in range(200)])
    s = measure.metric_sets(avail)["bypass"]
    assert len(s) == measure.MAX_FULL and s[:12] == list(measure.CORE) and s[-4:] == list(measure.SASS_PATCHED)
    assert s[12:15] == ["l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
                        "smsp__inst_executed_op_ldgsts.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_write.sum"]
    assert "sm__cycles_elapsed.sum" not in s


def test_complete_run_on_a_fake_ncu_then_merge(tmp_path, capsys, monkeypatch, first_run):
    """The GPU command of the second run, against the stand-in ncu; then the merge into the corpus."""
    from gpu_check.coalesce_probe import merge
    monkeypatch.setenv("FAKE_NCU_SECONDS", "0")
    out = tmp_path / "out"
    first = tmp_path / "first.json"
    first.write_text(json.dumps(first_run))
    rc = measure.main(["--out", str(out), "--ncu", _fake(tmp_path, "ncu"), "--probe", _fake(tmp_path, "probe"),
                       "--nvcc", "no-such-nvcc", "--complete", str(first), "--max-seconds", "600"])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert re.search(r"plan: 646 patterns \(160 ideal, 55 bypass, 314 core, 117 ideal\); about \d+ s under ncu", text)
    data = json.loads((out / "coalesce_corpus.json").read_text())
    assert [c["set"] for c in data["chunks"]] == ["ideal", "ideal", "bypass", "core", "core", "core", "ideal"]
    assert data["environment"]["completes"]["measured"] == 552
    bypass = data["environment"]["metric_sets"]["bypass"]
    assert "l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ldgsts_cache_access.sum" in bypass
    assert "l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ldgsts_cache_access.sum" in (out / "metrics.txt").read_text()
    files = set(os.listdir(out))                 # + sass.txt where cuobjdump is installed
    assert {"coalesce_corpus.json", "metrics.txt", "ncu.csv", "summary.txt"} <= files <= {
        "coalesce_corpus.json", "metrics.txt", "ncu.csv", "summary.txt", "sass.txt", "build.log"}
    merged = tmp_path / "merged.json"
    assert merge.main([str(first), str(out / "coalesce_corpus.json"), "--out", str(merged)]) == 0
    said = capsys.readouterr().out
    assert said.startswith(f"merge: {len(corpus.generate())} patterns, {len(corpus.generate())} measured, from 2 runs")
    m = json.loads(merged.read_text())
    first = {p["id"]: p for p in first_run["patterns"] if p.get("metrics")}
    pats = {p["id"]: p for p in m["patterns"]}
    full = [i for i, p in first.items() if len(p["metrics"]) > 12]
    assert len(full) == 24 and all(pats[i]["run"] == 0 and pats[i]["metrics"] == first[i]["metrics"] for i in full)
    assert m["runs"][0]["date"].startswith("2026-12-01") and len(m["chunks"]) == len(first_run["chunks"]) + 7
    # the fake GPU plays the model, so the only counts that move are the unexplained LDGSTS.BYPASS ones
    moved = [p for p in m["problems"] if " measured again in run 1 " in p]
    assert moved and all("cp.async.cg" in p and ": wavefronts " in p for p in moved)
    (tmp_path / "m").mkdir()
    merged.rename(tmp_path / "m" / "coalesce_corpus.json")
    results, _ = coalescing.compare(tmp_path / "m")
    assert all(r.status == "pass" for r in results), [(r.entry, r.note) for r in results if r.status != "pass"]


def test_merge_of_a_merge_keeps_every_run(tmp_path):
    from gpu_check.coalesce_probe import merge
    runs = []
    for k, ids in enumerate(("0 1", "2", "1 3")):
        (tmp_path / f"ids{k}.txt").write_text(ids)
        assert measure.main(["--out", str(tmp_path / f"r{k}"), "--dry-run", "--nvcc", "no-such-nvcc",
                             "--ids", str(tmp_path / f"ids{k}.txt")]) == 0
        runs.append(json.loads((tmp_path / f"r{k}" / "coalesce_corpus.json").read_text()))
    m = merge.merge([merge.merge(runs[:2]), runs[2]])
    assert len(m["runs"]) == 3 and m["what"].endswith("; merged from 3 runs") and m["what"].count("merged") == 1
    done = {p["id"]: p["run"] for p in m["patterns"] if p.get("metrics")}
    assert done == {0: 0, 1: 2, 2: 1, 3: 2}
    assert [c["run"] for c in m["chunks"]] == [0, 1, 2]
    assert not [p for p in m["problems"] if "measured again" in p]          # the model twice: nothing moved


def test_complete_refuses_a_foreign_corpus(tmp_path, capsys, h200):
    bad = json.loads(json.dumps(h200))
    bad["patterns"][7]["offsets"][3] += 4
    (tmp_path / "c.json").write_text(json.dumps(bad))
    assert measure.main(["--out", str(tmp_path / "o"), "--dry-run", "--complete", str(tmp_path / "c.json")]) == 2
    assert "pattern 7 (ld.global.b32) differs from corpus.py's" in capsys.readouterr().out
    assert measure.main(["--out", str(tmp_path / "o"), "--dry-run", "--complete", str(tmp_path / "none.json")]) == 2
    assert "cannot read it" in capsys.readouterr().out
