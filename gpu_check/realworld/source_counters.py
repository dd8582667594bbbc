"""ncu's per-SASS-instruction shared-memory counters of a measurement, summed, beside the launch's
hardware totals: where a total exceeds what its instructions were charged.

    python -m gpu_check.realworld.source_counters RAW_DIR --out FILE.json

RAW_DIR holds what hopper_measure --source-counters wrote (raw/<exe>.source_sass.csv, ncu's source
page with --print-source sass, and raw/<exe>.source_details.csv, the same run's totals). FILE gets,
per executable: the "L1 Wavefronts Shared" (and "... Ideal") summed over its SASS instructions by
address space, access operation and opcode, and the run's totals of shared ld/st wavefronts and
shared ld/st bank conflicts; under "measurement", the GPU, ncu and date of RAW_DIR/../h200.json. A wavefront that a total counts and no instruction was charged is not
the instructions' own (tk_cases.EXPLAINED_COSTS quotes these figures).
"""
import argparse
import csv
import json
import re
import sys
from pathlib import Path

TOTALS = re.compile(r'"(l1tex__(?:data_pipe_lsu_wavefronts|data_bank_conflicts_pipe_lsu)_mem_shared_op_(?:ld|st)\.sum)"'
                    r',"[^"]*","([\d,]+)"')


def _int(text):
    text = (text or "").replace(",", "")
    return int(float(text)) if text not in ("", "-") else 0


def instructions(text):
    """{"space op opcode": [wavefronts, ideal wavefronts, SASS instructions]} of a source page."""
    out = {}
    header = None
    for row in csv.reader(text.splitlines()):
        if row[:1] == ["Address"]:
            header = row
            continue
        if header is None or row[:1] == ["Kernel Name"] or len(row) != len(header):
            continue
        r = dict(zip(header, row))
        w = _int(r.get("L1 Wavefronts Shared"))
        if not w:
            continue
        words = [x for x in r["Source"].split() if not x.startswith("@")]
        key = f"{r.get('Address Space')} {r.get('Access Operation')} {words[0] if words else '?'}"
        acc = out.setdefault(key, [0, 0, 0])
        acc[0] += w
        acc[1] += _int(r.get("L1 Wavefronts Shared Ideal"))
        acc[2] += 1
    return out


def summary(raw_dir):
    raw_dir = Path(raw_dir)
    out = {}
    for page in sorted(raw_dir.glob("*.source_sass.csv")):
        exe = page.name[:-len(".source_sass.csv")]
        details = raw_dir / f"{exe}.source_details.csv"
        totals = {m: _int(v) for m, v in TOTALS.findall(details.read_text())} if details.is_file() else {}
        out[exe] = {"instructions": instructions(page.read_text()), "totals": totals}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.source_counters", description=__doc__.splitlines()[0])
    ap.add_argument("raw_dir")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if not Path(a.raw_dir).is_dir():
        print(f"source_counters: {a.raw_dir} is not a folder", file=sys.stderr)
        return 2
    got = summary(a.raw_dir)
    if not got:
        print(f"source_counters: {a.raw_dir} holds no *.source_sass.csv (hopper_measure --source-counters)", file=sys.stderr)
        return 2
    run = Path(a.raw_dir).parent / "h200.json"          # the same run's record: which GPU, ncu, when
    if run.is_file():
        doc = json.loads(run.read_text())
        got["measurement"] = {k: doc.get(k) for k in ("device", "ncu", "date")}
    from layoutsim.files import write_all
    write_all([(Path(a.out), (json.dumps(got, indent=1, sort_keys=True) + "\n").encode(), "summary")])
    print(f"wrote {a.out}: {len(got) - ('measurement' in got)} executables")
    return 0


if __name__ == "__main__":
    sys.exit(main())
