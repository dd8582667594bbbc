"""Coalescing: the coalescing probe measured under ncu, compared with layoutsim.memory.

The measurement is `python -m gpu_check.coalesce_probe.measure --out DIR`, which runs every
pattern of the coalescing corpus under Nsight Compute and writes DIR/coalesce_corpus.json
(patterns, raw counters, control counts, SASS, environment). This group runs it, reads that
file and compares every measured requests / sectors / wavefronts / ideal-sectors value with the
model's current rules (layoutsim.memory.nvidia.RULES): one result per op. Without ncu the group
is skipped with a note. With `--record DIR` the probe writes into DIR/coalescing/.
"""
import json
from pathlib import Path

from .banks import ncu_path, probe_and_compare, results_per_op, run_probe
from .common import Mismatch


NEEDS_KERNELS = False


def skip_reason():
    if ncu_path() is None:
        return "ncu (Nsight Compute) not found on PATH or in /usr/local/cuda/bin: coalescing checks skipped"
    return None


def compare(out_dir):
    """One Result per op: measured counts (coalesce_corpus.json) against the model's rules."""
    from gpu_check.coalesce_probe import corpus, fit
    from layoutsim.memory import nvidia, parse_op
    data = json.loads((Path(out_dir) / "coalesce_corpus.json").read_text())
    pats = data["patterns"]
    done = [p for p in pats if p.get("metrics")]
    controls = fit.controls_of(done, data.get("chunks"))
    pred = corpus.predictions(done) if done else {}

    def check(i, p):
        compared, bad, gaps = 0, [], set()
        family = parse_op(p["op"]).family
        for q in fit.QUANTITIES:
            got = fit.measured(p, q, controls[i])
            if got is None:
                continue
            if (family, q) in nvidia.NOT_MODELLED:    # measured and kept, but no rule claims it
                gaps.add(f"{q} not modelled (layoutsim.memory.nvidia.NOT_MODELLED)")
                continue
            compared += 1
            want = pred[q][i]
            if p["active"] == 0 and p.get("predicated") is False and q == "requests":
                want = 0                       # the warp branched around the instruction
            if int(got) != int(want):
                bad.append(Mismatch(int(p["id"]), f"pattern #{p['id']} {p.get('tag', '')!r} {q}"
                                    + ("" if p["active"] == corpus.FULL else f" active={p['active']:#010x}"),
                                    "s32", int(want), int(got),
                                    note="expected = layoutsim.memory, got = ncu; offsets "
                                         + ",".join(map(str, p["offsets"]))))
        return compared, bad, gaps
    return results_per_op("coalescing", pats, done, check), data.get("environment", {})


def run(session):
    """The probe under ncu, in its own process (the session gives the GPU up first)."""
    return run_probe(session, "coalescing", measure_and_compare)


def measure_and_compare(keep_dir=None, max_seconds=None):
    return probe_and_compare("coalescing", "coalescing corpus", "gpu_check.coalesce_probe.measure",
                             "coalesce_corpus.json", compare, skip_reason(), keep_dir, max_seconds, timeout=900)
