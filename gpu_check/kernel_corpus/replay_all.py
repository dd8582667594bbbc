"""Every committed corpus replayed through the executor, without a GPU: one summary for CI.

    python -m gpu_check.kernel_corpus.replay_all [--corpus NAME,...] [--limit N] [--json]

For each corpus of parts.PARTS: every launch with a committed GPU measurement run by
layoutsim.ptx on the same PTX and inputs (launches.py: each corpus's own replay code; the
textures' textures/replay.py), its outputs compared byte for byte with the GPU's and
its ncu totals (parts.TOTALS) with the min..max of the GPU's runs; launches the corpus plans but
nobody measured yet are counted as such, and a corpus with no measurement at all is skipped with
the command that makes it. --limit N: the first N measured launches of each corpus (a quick look).
Exit 0 when every replayed launch is bit-identical and its costs inside the range (or exactly a
difference the corpus documents: check.UNMODELLED, triton_corpus/replay.py EXPLAINED,
realworld/cub_capture.py UNEXPLAINED, samples and tk_cases EXPLAINED_COSTS; outputs: textures/replay.py
KNOWN), 1 otherwise,
2 on bad arguments. The per-launch tests with their documented exceptions are the tests of each
corpus (tests/gpu_check/test_*replay*.py, tests/ptx/test_*replay*.py, tests/triton_frontend/).
"""
import argparse
import json
import sys

import numpy as np

from layoutsim.errors import LayoutsimError, one_line
from layoutsim.files import pipe_safe_stdout

from . import check as CHECK
from . import launches as L
from . import parts as P


def totals_of(run):
    """A Run's totals under the ncu metric names parts.TOTALS compares."""
    return {P.TOTALS[k]: v for k, v in P.run_totals(run).items()}


def model(part, name, recorded):
    """(outputs keyed as the reader keys the GPU's, totals or None) of one launch on the executor."""
    if part == "textures":                      # the probes build their module and arguments themselves
        from gpu_check.textures import replay as R
        meta, arrays = R.load(P.BY_NAME["textures"].data)
        case = next(c for c in meta["cases"] if c["name"] == name)
        got, surf = R.run_case(case, arrays[f"{name}/texels"], arrays[f"{name}/in"])
        return {"out": got[:len(recorded.outputs["out"])], **({} if surf is None else {"surface": surf})}, None
    r, outputs = L.setup(part, name).run()
    if part in ("clusters", "constructs"):      # probes: no ncu totals recorded
        return outputs, None
    # costs are ptxas's SASS: without ptxas or committed lowering data for this PTX, not compared
    return outputs, (totals_of(r) if r.sass_source is not None else None)


def documented(part, name):
    """{metric: (model, GPU min, GPU max)}: the cost differences the corpus documents for a launch
    (check.UNMODELLED for the kernel corpus, triton_corpus.replay.EXPLAINED for Triton, cub_capture.UNEXPLAINED,
    realworld.samples.EXPLAINED_COSTS)."""
    if part == "kernels":
        return {m: (got, gpu, gpu) for m, (got, gpu) in CHECK.UNMODELLED.get(name, {}).items()}
    if part == "triton":
        from gpu_check.triton_corpus.replay import EXPLAINED
        return {m: v[:3] for (case, m), v in EXPLAINED.items() if case == name}
    if part == "cub":
        from gpu_check.realworld.cub_capture import UNEXPLAINED
        return {m: v[:3] for (case, m), v in UNEXPLAINED.items() if case == name}
    if part == "samples":
        from gpu_check.realworld.samples import EXPLAINED_COSTS
        return {m: v[:3] for (case, m), v in EXPLAINED_COSTS.items() if case == name}
    if part == "tk":
        from gpu_check.realworld.tk_cases import EXPLAINED_COSTS
        return {m: v[:3] for (case, m), v in EXPLAINED_COSTS.items() if case == name}
    return {}


def known_words(part, name, want, got):
    """Whether a launch's outputs differ exactly as its corpus documents: the textures' replay.KNOWN
    (words; the sampler rules not found yet), the Triton corpus's replay.MODEL_GAPS of kind "outputs"."""
    def differing(k, view):
        w = np.ascontiguousarray(want[k]).reshape(-1).view(view)
        return int((np.ascontiguousarray(got[k]).reshape(-1).view(view)[:len(w)] != w).sum()) if k in got else -1
    if part == "textures":
        from gpu_check.textures import replay as R
        return "surface" not in want and name in R.KNOWN and differing("out", np.uint32) == R.KNOWN[name]
    if part == "triton":                # a documented wrong output (triton_corpus.replay.MODEL_GAPS)
        from gpu_check.triton_corpus.replay import MODEL_GAPS
        return MODEL_GAPS.get(name, ("",))[0] == "outputs"
    return False


def constructs_differences(name):
    """The constructs compare through their own replay (printf lines, assert lines, racy words)."""
    from gpu_check.constructs import replay as R
    doc = json.loads((P.BY_NAME["constructs"].data / "constructs.json").read_text())
    return R.differences(doc, next(x for x in doc["launches"] if x["name"] == name))


def replay_part(part, limit=None, log=lambda s: None):
    """parts' summary of one corpus replayed on the executor."""
    s = P.new_summary(part)
    try:
        recorded = part.read(part.data)
    except (OSError, ValueError, KeyError) as e:
        s["errors"] += 1
        s["problems"].append(f"the committed measurement cannot be read: {one_line(str(e))}")
        return s
    planned = part.planned() if part.planned else list(recorded)
    s["not_measured"] = len([n for n in planned if n not in recorded])
    if not recorded:
        s["skipped"] = (f"not yet measured: {part.command} on the GPU, then commit it under "
                        f"{part.data.relative_to(P.ROOT) if part.data.is_relative_to(P.ROOT) else part.data}")
        return s
    for name in list(recorded)[:limit]:
        rec = recorded[name]
        try:
            if part.name == "constructs":
                diffs = constructs_differences(name)
                P.tally(s, name, not diffs, "; ".join(diffs) or None, None)
                continue
            outputs, totals = model(part.name, name, rec)
        except Exception as e:   # noqa: BLE001 - a refusal or a crash of one launch is reported, not fatal
            s["launches"] += 1
            s["errors"] += 1
            s["problems"].append(f"{name}: {type(e).__name__}: {one_line(str(e))}")
            continue
        same, diff = P.identical(rec.outputs, outputs)
        P.tally(s, name, same, diff, P.outside_range(rec.ncu, totals, documented(part.name, name)),
                not same and known_words(part.name, name, rec.outputs, outputs))
        log(f"  {part.name} {name}: {'bit-identical' if same else diff}")
    return s


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.kernel_corpus.replay_all", description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help=f"comma-separated corpora: {', '.join(P.BY_NAME)} (default all)")
    ap.add_argument("--limit", type=int, help="the first N measured launches of each corpus")
    ap.add_argument("--json", action="store_true", help="the summaries as JSON on stdout")
    ap.add_argument("--verbose", action="store_true", help="a line per launch (on stderr)")
    with pipe_safe_stdout():
        a = ap.parse_args(argv)
        try:
            if a.limit is not None and a.limit < 1:
                raise LayoutsimError(f"--limit must be at least 1, not {a.limit}")
            parts = P.select(a.corpus)
        except LayoutsimError as e:
            print(f"replay_all: {one_line(str(e))}", file=sys.stderr)
            return 2
        log = (lambda s: print(s, file=sys.stderr, flush=True)) if a.verbose else (lambda s: None)
        out = []
        for part in parts:
            out.append(replay_part(part, a.limit, log))
            if not a.json:
                print(P.summary_line(out[-1]), flush=True)
                for p in out[-1]["problems"][:5]:
                    print(f"    {p}")
        good = all(P.ok(s) or s["skipped"] for s in out)
        if a.json:
            print(json.dumps({"corpora": out, "ok": good}, indent=1))
        return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
