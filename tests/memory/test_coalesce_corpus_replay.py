"""Replay the global-memory counts measured on an H200 (tests/data/coalescing/coalesce_corpus.json,
written by `python -m gpu_check.coalesce_probe.measure` under Nsight Compute in two runs on
2026-12-01 and joined by `python -m gpu_check.coalesce_probe.merge`) through layoutsim.memory
with the rules of layoutsim/memory/nvidia.py.

Expected values: the measurement (each counter minus its ncu process's control launch). The
corpus holds all 1056 patterns of the generator over 31 ops, every one measured: 1056 requests,
1056 sectors, 1056 wavefronts and 356 ideal-sector values, 3524 in all; 3479 of them are claimed
by a stated rule and must match exactly, the 45 LDGSTS.BYPASS (cp.async.cg) wavefronts are
nvidia.NOT_MODELLED (checked to still be a gap, with the numbers it quotes). A pattern without
counts, or the file missing, is an error, not a skip.
"""
import json
from pathlib import Path

import pytest

from gpu_check.checks import coalescing
from gpu_check.coalesce_probe import corpus, fit
from layoutsim.memory import nvidia, parse_op

DIR = Path(__file__).resolve().parent.parent / "data" / "coalescing"
DATA = DIR / "coalesce_corpus.json"
# measured values per family: requests, sectors, wavefronts, ideal sectors
PER_FAMILY = {"ld": (333, 333, 333, 84), "st": (232, 232, 232, 61), "ld.nc": (125, 125, 125, 43),
              "ld.cg": (32, 32, 32, 10), "atom": (148, 148, 148, 57), "red": (68, 68, 68, 22),
              "cp.async": (73, 73, 73, 34), "cp.async.cg": (45, 45, 45, 45)}


@pytest.fixture(scope="module")
def data():
    if not DATA.exists():
        pytest.fail(f"{DATA} is missing: it is the H200 measurement this test replays "
                    "(python -m gpu_check.coalesce_probe.measure --out DIR, then copy DIR/coalesce_corpus.json)")
    return json.loads(DATA.read_text())


@pytest.fixture(scope="module")
def measured(data):
    """[(pattern, family, quantity, measured, model)] for every measured value."""
    done = [p for p in data["patterns"] if p.get("metrics")]
    pred = fit.predict(done, nvidia.RULES)
    out = []
    for i, (p, control) in enumerate(zip(done, fit.controls_of(done, data["chunks"]))):
        for q in fit.QUANTITIES:
            got = fit.measured(p, q, control)
            if got is not None:
                out.append((p, parse_op(p["op"]).family, q, got, pred[q][i]))
    return out


def test_corpus_is_the_h200_measurement(data):
    env = data["environment"]
    assert env["dry_run"] is False, "a dry run is not a measurement"
    assert len(data["runs"]) == 2 and not any(r["dry_run"] for r in data["runs"])
    for run, date in zip(data["runs"], ("2026-12-01T07:4", "2026-12-01T19:1")):
        assert (run["gpu"], run["driver"], run["cuda"]) == ("NVIDIA H200", "580.159.04", "13.0")
        assert run["date"].startswith(date) and run["ncu"].startswith("2025.3.1")
    assert env["driver"] in nvidia.MEASURED and "H200" in nvidia.MEASURED and "2026-12-01" in nvidia.MEASURED
    # every pattern of the generator, every one measured (ids stable: later patterns are appended)
    gen = corpus.generate()
    assert len(data["patterns"]) == len(gen) == 1056
    missing = [p["id"] for p in data["patterns"] if not p.get("metrics")]
    assert not missing, f"patterns without counts: {missing[:20]}"
    assert all({k: p[k] for k in ("op", "offsets", "active", "tag")} ==
               {k: gen[p["id"]][k] for k in ("op", "offsets", "active", "tag")} for p in data["patterns"])
    assert {p["op"] for p in data["patterns"]} == set(corpus.OPS)
    assert not [p for p in data["problems"] if " measured again in run " in p]     # no count moved


def test_model_reproduces_every_measured_count(measured):
    per = {}
    for _, family, q, _, _ in measured:
        per.setdefault(family, [0, 0, 0, 0])[list(fit.QUANTITIES).index(q)] += 1
    assert {f: tuple(v) for f, v in per.items()} == PER_FAMILY
    claimed = [m for m in measured if (m[1], m[2]) not in nvidia.NOT_MODELLED]
    assert len(measured) == 3524 and len(claimed) == 3479
    bad = [(p["id"], p["op"], p["tag"], q, got, model) for p, _, q, got, model in claimed if got != model]
    assert not bad, f"{len(bad)} of {len(claimed)} differ (id, op, tag, quantity, measured, model): {bad[:20]}"


def test_not_modelled_quantities_are_still_gaps(measured):
    for (family, q), why in nvidia.NOT_MODELLED.items():
        rows = [m for m in measured if (m[1], m[2]) == (family, q)]
        assert rows and any(got != model for _, _, _, got, model in rows), \
            f"{family} {q}: the model now reproduces every measured value; remove it from NOT_MODELLED"
    # the numbers NOT_MODELLED quotes: cp.async.cg wavefronts of element strides 1-8 (16-byte elements)
    rows = [(p["tag"], got) for p, f, q, got, _ in measured if (f, q) == ("cp.async.cg", "wavefronts")]
    cg = dict(reversed(rows))                  # a tag measured twice (ideal family) keeps its first
    assert len(rows) == 45
    assert [cg[f"element stride {s}"] for s in range(1, 9)] == [1, 4, 8, 16, 16, 20, 24, 32]
    assert cg["random permutation of a contiguous block"] == 4
    assert "1, 4, 8, 16, 16, 20, 24, 32" in nvidia.NOT_MODELLED[("cp.async.cg", "wavefronts")]


def test_bypass_wavefronts_follow_no_schedule_searched(data):
    """Every scheduler of fit.SCHEDULES misses some LDGSTS.BYPASS wavefront count; the closest
    (8-lane quarters, each one line per wavefront, one line per tag bank) reproduces the 17
    warps whose quarters each stay in one line (the empty warp among them) and misses 18 of the
    28 others."""
    ranked = fit.bypass_schedules(data["patterns"], data["chunks"])
    assert len(ranked) == len(fit.SCHEDULES) == 384 and all(bad for bad, _ in ranked)
    bad, best = ranked[0]
    assert best["group"] == 8 and best["banks"] and best["one_per_group"] and len(bad) == 18
    single = [p for p in data["patterns"] if parse_op(p["op"]).family == "cp.async.cg" and all(
        len({o // 128 for lane, o in enumerate(p["offsets"]) if p["active"] >> lane & 1 and lane // 8 == q}) <= 1
        for q in range(4))]
    assert len(single) == 17 and not {p["id"] for p in single} & set(bad)


def test_tag_bank_hash_is_the_only_one_the_corpus_allows(data):
    """Exhaustive search over every 2-bit XOR hash of line-address bits 0-15 (the probe's 8 MiB
    buffer): under the model's rules exactly one hash (up to relabeling the banks) reproduces
    every claimed wavefront count, replays and atom.cas included: TAG_BANK_MASKS."""
    found = fit.tag_bank_hashes(data["patterns"], data["chunks"], bits=16)
    m0, m1 = nvidia.TAG_BANK_MASKS
    assert found == [tuple(sorted((m0, m1, m0 ^ m1)))]
    lines = [o // 128 for p in data["patterns"] for o in p["offsets"]]
    assert max(lines) < 1 << nvidia.TAG_BANK_BITS == 1 << 16          # bits 16 and up: nvidia.OPEN
    assert max(max(m0, m1).bit_length(), 16) == nvidia.TAG_BANK_BITS


def test_open_items_are_still_open(data):
    """nvidia.OPEN: what the corpus cannot decide, checked to be still undecided."""
    assert set(nvidia.OPEN) == {"tag bank bits", "red replay passes", "ld.cg ideal"}
    result = fit.fit(data["patterns"], data["chunks"])
    red = {r.passes for r in result["red"]["matching"] if r.replay == "address" and r.wavefronts == "tag_banks"}
    assert red == set(nvidia.PASSES)
    ldcg = {r.ideal for r in result["ld.cg"]["matching"]}
    assert ldcg == {"unique", "min_sectors"}
    assert {r.ideal for r in result["ld"]["matching"]} == {"min_sectors"}
    assert {r.passes for r in result["atom"]["matching"]} == {"banks"}


def test_fit_adopts_the_model_rules_for_every_claimed_family(data):
    result = fit.fit(data["patterns"], data["chunks"])
    assert set(result) == set(nvidia.FAMILIES)
    for family, info in result.items():
        if any(f == family for f, _ in nvidia.NOT_MODELLED):
            assert not info["matching"]
        else:
            assert nvidia.RULES[family] in info["matching"], family
            assert info["matching"][0] == nvidia.RULES[family], family       # what fit.report adopts


def test_gpu_check_group_passes_on_the_corpus():
    results, env = coalescing.compare(DIR)
    assert env["gpu"] == "NVIDIA H200"
    assert all(r.status == "pass" for r in results), [(r.entry, r.status, r.note) for r in results if r.status != "pass"]
    assert sum(r.compared for r in results) == 3479
    cg = next(r for r in results if r.entry == "cp.async.cg.shared.global.16")
    assert "wavefronts not modelled" in cg.note
