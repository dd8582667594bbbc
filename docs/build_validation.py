#!/usr/bin/env python3
"""Write docs/validation.md from the gpu-check reports committed in docs/validation/*.json.

    python docs/build_validation.py            # rewrite docs/validation.md
    python docs/build_validation.py --check    # exit 1 if it would change

Each report is rendered by gpu_check's own markdown writer (gpu_check.report.markdown) when
gpu_check is importable, so the page and `gpu-check report` agree; otherwise by a small
fallback that reads the same keys (environment, totals, groups).
"""
import argparse
import glob
import json
import os
import sys

DOCS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(DOCS)

INTRO = """# Validation

What the model has been checked against on real hardware. Every table below is generated
from a JSON report that `gpu-check run --report FILE` wrote on a GPU and that is committed in
`docs/validation/`; `python docs/build_validation.py` turns them into this page.

Nothing here covers AMD hardware: no AMD GPU has been used here. Every AMD fact in layoutsim
(WMMA and MFMA layouts, LDS phases, gfx11 and CDNA arithmetic) comes from AMD's documents and
tools, marked unverified where the tool prints it; the gfx12 and gfx11 WMMA arithmetic is
AMD's own characterisation, and CI replays the raw results AMD captured on gfx1201 and gfx1100
hardware
(`tests/data/numerics/amd/`, see [numerics](numerics.md)).
"""


def _demote(md):
    """Headings one level down, so each report sits under this page's title."""
    out = []
    fence = False
    for line in md.splitlines():
        if line.startswith("```"):
            fence = not fence
        out.append("#" + line if (not fence and line.startswith("#")) else line)
    return "\n".join(out)


def _fallback(report, rel):
    env = report.get("environment", {})
    lines = [f"## gpu-check on {env.get('gpu', 'a GPU')}", "",
             f"JSON report: `{rel}`", "", "| | |", "|---|---|"]
    for k, v in env.items():
        if isinstance(v, (str, int, float)):
            lines.append(f"| {k} | {v} |")
    totals = report.get("totals") or {}
    if totals:
        lines += ["", "| total | value |", "|---|---:|"]
        lines += [f"| {k} | {v} |" for k, v in totals.items() if isinstance(v, (str, int, float))]
    groups = report.get("groups") or {}
    if groups:
        keys = ("entries", "checks", "cases", "compared", "mismatches")
        lines += ["", "| group | " + " | ".join(keys) + " |", "|---|" + "---:|" * len(keys)]
        for g, info in groups.items():
            lines.append(f"| {g} | " + " | ".join(str(info.get(k, "")) for k in keys) + " |")
    return "\n".join(lines) + "\n"


def render_report(path):
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    sys.path.insert(0, ROOT)
    try:
        from gpu_check.report import markdown
    except Exception:                     # gpu_check not importable here: same keys, plainer page
        return _fallback(report, rel)
    try:
        return _demote(markdown(report, rel))
    except Exception as e:                # a report of another format version
        return _fallback(report, rel) + f"\n(gpu_check could not render this report: {e})\n"


def _run_date(path):
    """When the report's run happened (its environment's date), for a chronological page."""
    try:
        with open(path, encoding="utf-8") as f:
            return (json.load(f).get("environment") or {}).get("date") or "", path
    except (OSError, ValueError):
        return "", path


def build(folder):
    paths = sorted(glob.glob(os.path.join(folder, "*.json")), key=_run_date)
    parts = [INTRO]
    if not paths:
        parts.append("No gpu-check report is committed yet: run `gpu-check run --report "
                     "docs/validation/<gpu>.json` on a GPU, commit the file, and rerun "
                     "`python docs/build_validation.py`.\n")
    for p in paths:
        parts.append(render_report(p))
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", default=os.path.join(DOCS, "validation"), help="folder of JSON reports")
    ap.add_argument("--out", default=os.path.join(DOCS, "validation.md"), help="page to write")
    ap.add_argument("--check", action="store_true", help="exit 1 if the page would change")
    args = ap.parse_args(argv)
    text = build(args.reports)
    old = open(args.out, encoding="utf-8").read() if os.path.exists(args.out) else None
    if args.check:
        if old != text:
            print(f"build_validation: {args.out} out of date: run python docs/build_validation.py", file=sys.stderr)
            return 1
        return 0
    if old != text:
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.out)
    n = len(glob.glob(os.path.join(args.reports, "*.json")))
    print(f"build_validation: wrote {args.out} from {n} report(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
