"""The run report: JSON (written atomically), the terminal summary, and docs/validation markdown."""
import datetime
import json
import sys
from pathlib import Path


from layoutsim.errors import printable

from .checks.common import Result

REPORT_FORMAT = 1


def make_report(command, env, build_stats, results, group_info, sass=None, exit_code=None, extra=None):
    from .run import summarize
    groups = {}
    for g, info in group_info.items():
        groups[g] = dict(info)
    totals = summarize(results)
    rep = {
        "format": REPORT_FORMAT,
        "tool": "gpu-check",
        "command": command,
        "environment": env,
        "build": build_stats,
        "groups": groups,
        "totals": totals,
        "exit_code": exit_code,
        "results": [r.to_json() for r in results],
        "sass": sass or {},
    }
    if extra:
        rep.update(extra)
    return rep


def write_json(path, data, what="report"):
    """Write JSON with layoutsim.files.write_atomic (regular files only, the folder must exist)."""
    from layoutsim.files import write_atomic
    write_atomic(path, json.dumps(data, indent=1, default=_jsonable) + "\n", what)
    return Path(path)


def _jsonable(x):
    import numpy as np
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def load(path):
    """A JSON report, every field the commands use checked first (gpu_check.inputs)."""
    from .inputs import load_report
    return load_report(path)


def confirmed(report, report_path):
    """What the catalog may call confirmed: entries whose every check of a group passed.

    Written to layoutsim/isa/data/confirmed.json by `gpu-check report --confirmed`; the
    registry stamps those entries' `confirmed` text with the GPU and the report's path.
    """
    env = report.get("environment", {})
    by_group = {}
    for r in report.get("results", []):
        ok = by_group.setdefault(r["group"], {})
        ok[r["entry"]] = ok.get(r["entry"], True) and r["status"] == "pass"
    return {"gpu": env.get("gpu"), "arch": env.get("arch"), "driver": env.get("driver"),
            "date": str(env.get("date", ""))[:10], "report": str(report_path),
            "layouts": sorted(e for e, ok in by_group.get("layouts", {}).items() if ok),
            "numerics": sorted(e for e, ok in by_group.get("numerics", {}).items() if ok)}


def results_of(report):
    out = []
    for d in report.get("results", []):
        from .checks.common import Mismatch
        r = Result(**{k: v for k, v in d.items() if k in Result.__dataclass_fields__ and k != "details"})
        r.details = [Mismatch(**{k: v for k, v in m.items() if k in Mismatch.__dataclass_fields__})
                     for m in d.get("details", [])]
        out.append(r)
    return out


# ---- text -------------------------------------------------------------------------------------
def summary_table(report):
    from .run import group_status
    head = ("group", "status", "entries", "checks", "cases", "compared", "mismatches", "seconds")
    rows = []
    for g, info in report["groups"].items():
        rows.append((g, group_status(info), info.get("entries", 0), info.get("checks", 0), info.get("cases", 0),
                     info.get("compared", 0), info.get("mismatches", 0), f"{info.get('seconds', 0):.1f}"))
    t = report["totals"]
    rows.append(("total", "FAIL" if t["failed"] or t["errors"] else "ok", t["entries"], t["checks"], t["cases"],
                 t["compared"], t["mismatches"], ""))
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
    fmt = "  ".join(f"{{:{'<' if i < 2 else '>'}{w}}}" for i, w in enumerate(widths))
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines + parts_lines(report))


def parts_lines(report):
    """A line per corpus of a group that runs several (groups.<g>.parts: `kernels`), and its first problems."""
    from .kernel_corpus.parts import summary_line
    out = []
    for g, info in report["groups"].items():
        for s in info.get("parts", []):
            out.append(f"{g}: {summary_line(s)}" + (f"; costs skipped: {s['costs_skipped']}" if s.get("costs_skipped") else ""))
            out += [f"    {p}" for p in s.get("problems", [])[:3]]
    return out


def environment_line(env):
    keys = ("gpu", "compute_capability", "driver", "cuda_driver_api", "nvcc", "pycuda", "date")
    return ", ".join(f"{k}={env[k]}" for k in keys if env.get(k) is not None)


def diffs_text(results, limit=40):
    bad = [r for r in results if r.status in ("fail", "error")]
    out = [r.diff_text() for r in bad[:limit]]
    if len(bad) > limit:
        out.append(f"... {len(bad) - limit} more failing checks (see the JSON report)")
    return "\n".join(out)


def print_report(report, file=None):
    """The terminal summary of a report; every string from the file escaped (errors.printable)."""
    file = file or sys.stdout
    lines = [f"gpu-check report: {environment_line(report.get('environment', {}))}", summary_table(report)]
    lines += [f"note: {g}: {n}" for g, info in report["groups"].items() for n in info.get("notes", [])]
    d = diffs_text(results_of(report))
    if d:
        lines.append(d)
    print(printable("\n".join(lines)), file=file)


# ---- markdown (docs/validation) ---------------------------------------------------------------
def markdown(report, report_path=None, full=False):
    """The docs/validation page of one report: environment, summary, what failed and why, what
    ptxas emitted, what was not run. `full` adds a table of every entry."""
    env = report.get("environment", {})
    stamp = env.get("date") or datetime.date.today().isoformat()
    when = stamp[:10] + (f" {stamp[11:16]} UTC" if len(stamp) >= 16 else "")
    groups_run = ", ".join(report.get("groups") or {}) or "no group"
    lines = [f"# gpu-check on {env.get('gpu', 'a GPU')} ({env.get('arch', '?')}), {when}: {groups_run}",
             ""]
    lines.append("Produced by `" + " ".join(report.get("command") or ["gpu-check", "run"]) + "`"
                 + (f"; JSON report: `{report_path}`" if report_path else "") + ".")
    lines += ["", "| | |", "|---|---|"]
    for k in ("gpu", "compute_capability", "arch", "driver", "cuda_driver_api", "cuda_pycuda_built_with", "nvcc",
              "pycuda", "python", "date"):
        if env.get(k) is not None:
            lines.append(f"| {k} | {env[k]} |")
    lines += ["", "## Summary", "", "```", summary_table(report), "```", ""]
    b = report.get("build") or {}
    if b:
        lines.append(f"Build: target {b.get('target')}, {b.get('kernels')} kernels in one module, "
                     f"{b.get('rejected', 0)} rejected by ptxas, {b.get('wall_s', b.get('seconds', '?'))} s.")
        lines.append("")
    res = results_of(report)
    groups = {}
    for r in res:
        groups.setdefault(r.group, []).append(r)
    for g, rs in groups.items():
        by_entry = {}
        for r in rs:
            by_entry.setdefault(r.entry, []).append(r)
        bad = {e: ers for e, ers in by_entry.items() if any(x.status in ("fail", "error") for x in ers)}
        skipped = {e for e, ers in by_entry.items() if all(x.status == "skip" for x in ers)}
        ok = len(by_entry) - len(bad) - len(skipped)
        checks = sorted({x.check for x in rs})
        lines += [f"## {g}", "", f"{len(by_entry)} entries ({', '.join(checks)}): {ok} match, {len(bad)} differ"
                  + (f", {len(skipped)} skipped" if skipped else "")
                  + f"; {sum(x.cases for x in rs)} cases, {sum(x.compared for x in rs)} elements compared, "
                    f"{sum(x.mismatches for x in rs)} mismatches.", ""]
        if bad:
            lines += ["| differs | check | mismatches / compared | first difference |", "|---|---|---:|---|"]
            for e, ers in bad.items():
                for x in ers:
                    if x.status not in ("fail", "error"):
                        continue
                    first = x.details[0].text() if x.details else x.note
                    lines.append(f"| `{e}` | {x.check} | {x.mismatches} / {x.compared} | {first.replace('|', '/')} |")
            lines.append("")
        if full:
            lines += ["| entry | checks | cases | compared | mismatches | status |", "|---|---|---:|---:|---:|---|"]
            for e, ers in by_entry.items():
                st = "FAIL" if e in bad else ("skipped" if e in skipped else "ok")
                lines.append(f"| `{e}` | {', '.join(x.check for x in ers)} | {sum(x.cases for x in ers)} | "
                             f"{sum(x.compared for x in ers)} | {sum(x.mismatches for x in ers)} | {st} |")
            lines.append("")
        notes = sorted({x.note for x in rs if x.note and x.status == "skip"})
        for n in notes:
            lines += [f"Note: {n}", ""]
    sass = report.get("sass") or {}
    if sass:
        lines += ["## What ptxas emitted", "",
                  "Matrix-related SASS opcodes per generated kernel (`cuobjdump -sass` of the module), kernels "
                  "with the same opcodes grouped:", "", "| SASS | kernels |", "|---|---|"]
        groups = {}
        for k, ops in sorted(sass.items()):
            groups.setdefault(" ".join(ops) or "-", []).append(k)
        for ops, ks in sorted(groups.items()):
            lines.append(f"| {ops} | {', '.join(f'`{k}`' for k in ks)} |")
        lines.append("")
    from .families import amd_targets
    lines += ["## Not run here", "",
              "- AMD WMMA (gfx11/gfx12) and MFMA (CDNA): no AMD GPU; the HIP kernels are only compiled for "
              f"{'/'.join(amd_targets())} "
              "and disassembled (`gpu-check amd`).", ""]
    return printable("\n".join(lines))          # a crafted report's strings stay text in the page
