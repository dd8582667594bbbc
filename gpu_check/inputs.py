"""Files given to `gpu-check replay` and `gpu-check report`, checked before they are used.

Both commands take any path. A recorded layout dump is read with layoutsim.files.read_npz (its
sizes, shapes and dtypes checked before anything is inflated); a report is read whole (bounded)
and parsed. Then every field the commands use is checked for type and range, so an empty,
truncated, bit-flipped, ill-typed or hand-made file ends in one LayoutsimError naming the file
and the field, never in a traceback or a silently empty answer.
"""
import json

from layoutsim.errors import LayoutsimError
from layoutsim.files import read_npz, read_regular

MAX_DUMP_BYTES = 1 << 30          # the H200 dump is 73 MB of arrays
# What a replay may be asked to compare: the H200 dump (tests/data/layouts/layouts_sm_90.npz) has
# 106 records, 282 probes (at most 3 in one record) and 6828 cases, and replays in ~3 s of CPU.
# About 10-20x that margin; a crafted 340 kB dump listing 400,000 probes is refused, not run.
MAX_RECORDS = 1024
MAX_PROBES = 4096                 # in the whole dump
MAX_CASES = 1 << 17               # the cases all probes compare together
MAX_REPORT_BYTES = 1 << 28        # the H200 report is 0.4 MB
STATUSES = ("pass", "fail", "skip", "error")
_MISSING = object()


class _Checker:
    """Field access that names the file and the field path in its one-line errors."""

    def __init__(self, path, what):
        self.path, self.what = path, what

    def fail(self, where, msg):
        raise LayoutsimError(f"{self.what} {self.path}: {where}: {msg}")

    def get(self, obj, key, kind, where, default=_MISSING, lo=None):
        if not isinstance(obj, dict):
            self.fail(where, f"is {type(obj).__name__}, not an object")
        if key not in obj:
            if default is _MISSING:
                self.fail(where, f"has no {key!r}")
            return default
        return self.value(obj[key], kind, f"{where}.{key}", lo)

    def value(self, v, kind, where, lo=None):
        ok = {int: isinstance(v, int) and not isinstance(v, bool),
              float: isinstance(v, (int, float)) and not isinstance(v, bool),
              str: isinstance(v, str), dict: isinstance(v, dict), list: isinstance(v, list)}[kind]
        if not ok:
            self.fail(where, f"{_short(v)} is not {kind.__name__}")
        if lo is not None and v < lo:
            self.fail(where, f"{v} is below {lo}")
        return v

    def strings(self, v, where):
        for i, s in enumerate(self.value(v, list, where)):
            self.value(s, str, f"{where}[{i}]")
        return v


def _short(v):
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


# ---- recorded layout dumps ---------------------------------------------------------------------
def load_dump(path, kinds):
    """(manifest, records) of a recorded layout dump; records as gpu_check.record.load gives
    them. kinds: the record kinds this gpu-check can rebuild."""
    arrays = read_npz(path, "recorded dump", MAX_DUMP_BYTES)
    c = _Checker(path, "recorded dump")
    man = arrays.get("manifest")
    if man is None or man.ndim != 0 or man.dtype.kind != "U":
        c.fail("manifest", "missing, or not a text array")
    try:
        manifest = json.loads(str(man))
    except (ValueError, RecursionError) as e:
        c.fail("manifest", f"not JSON ({str(e)[:80]})")
    c.get(manifest, "format", int, "manifest")
    c.get(manifest, "environment", dict, "manifest", default={})
    records, probes, compared = [], 0, 0
    listed = c.get(manifest, "records", list, "manifest")
    if len(listed) > MAX_RECORDS:
        c.fail("manifest.records", f"{len(listed)} records; a dump holds at most {MAX_RECORDS}")
    for i, r in enumerate(listed):
        where = f"records[{i}]"
        kind = c.get(r, "kind", str, where)
        if kind not in kinds:
            c.fail(f"{where}.kind", f"{kind!r} is not one of {', '.join(kinds)}")
        c.get(r, "entry", str, where)
        key = c.get(r, "key", str, where)
        words = {k: c.get(r, k, int, where, lo=1) for k in ("in_words", "out_words")}
        data = {}
        for name, arr in (("inp", f"{key}_in"), ("out", f"{key}_out"), ("aux", f"{key}_aux")):
            a = arrays.get(arr)
            if a is None or a.dtype != "uint32":
                c.fail(where, f"array {arr!r} is missing or not uint32")
            data[name] = a
        cases = {}
        for name, w in (("inp", words["in_words"]), ("out", words["out_words"])):
            if data[name].size % w:
                c.fail(where, f"{data[name].size} {name} words are not whole cases of {w}")
            cases[name] = data[name].size // w
        if cases["inp"] != cases["out"]:
            c.fail(where, f"{cases['inp']} input cases but {cases['out']} output cases")
        listed_probes = c.get(r, "probes", list, where)
        probes += len(listed_probes)
        if probes > MAX_PROBES:
            c.fail(f"{where}.probes", f"{len(listed_probes)} probes bring the dump past {MAX_PROBES} probes, "
                                      f"the most a dump holds")
        for j, p in enumerate(listed_probes):
            pw = f"{where}.probes[{j}]"
            c.get(p, "check", str, pw)
            c.get(p, "meta", dict, pw, default={})
            start, n = c.get(p, "start", int, pw, lo=0), c.get(p, "cases", int, pw, lo=0)
            if start + n > cases["inp"]:
                c.fail(pw, f"cases {start}..{start + n - 1} beyond the {cases['inp']} recorded")
            compared += n
            if compared > MAX_CASES:
                c.fail(pw, f"its {n} cases bring the probes past {MAX_CASES} cases, the most a dump compares")
        records.append(dict(r, **data))
    return manifest, records


# ---- reports ------------------------------------------------------------------------------------
def load_report(path):
    """A gpu-check JSON report, every field that report/markdown/confirmed use checked."""
    from layoutsim.formats import FORMATS
    c = _Checker(path, "report")
    raw = read_regular(path, "report", MAX_REPORT_BYTES)
    try:
        rep = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as e:
        c.fail("file", f"not JSON ({type(e).__name__}: {str(e)[:80]})")
    if not isinstance(rep, dict):
        c.fail("file", f"holds {type(rep).__name__}, not a report object")
    env = c.get(rep, "environment", dict, "report", default={})
    for k in ("date", "gpu", "arch"):
        if env.get(k) is not None:
            c.value(env[k], str, f"environment.{k}")
    c.strings(rep.get("command", []), "command")
    c.get(rep, "build", dict, "report", default={})
    for name, info in c.get(rep, "groups", dict, "report").items():
        where = f"groups.{name}"
        for k in ("entries", "checks", "cases", "compared", "mismatches", "failed", "errors", "skipped"):
            c.get(info, k, int, where, default=0, lo=0)
        c.get(info, "seconds", float, where, default=0)
        c.strings(info.get("notes", []), f"{where}.notes")
    totals = c.get(rep, "totals", dict, "report")
    for k in ("entries", "checks", "cases", "compared", "mismatches", "failed", "errors"):
        c.get(totals, k, int, "totals", lo=0)
    for i, r in enumerate(c.get(rep, "results", list, "report")):
        where = f"results[{i}]"
        for k in ("group", "entry", "check"):
            c.get(r, k, str, where)
        for k in ("cases", "compared", "mismatches"):
            c.get(r, k, int, where, default=0, lo=0)
        if c.get(r, "status", str, where) not in STATUSES:
            c.fail(f"{where}.status", f"{r['status']!r} is not one of {', '.join(STATUSES)}")
        c.get(r, "note", str, where, default="")
        c.strings(r.get("explain", []), f"{where}.explain")
        for j, m in enumerate(c.get(r, "details", list, where, default=[])):
            mw = f"{where}.details[{j}]"
            c.get(m, "case", int, mw)
            c.get(m, "where", str, mw)
            c.get(m, "note", str, mw, default="")
            if c.get(m, "fmt", str, mw) not in FORMATS:
                c.fail(f"{mw}.fmt", f"{m['fmt']!r} is not a format ({', '.join(FORMATS)})")
            for k in ("expected", "got"):
                if c.get(m, k, int, mw, lo=0) >> FORMATS[m["fmt"]].bits:
                    c.fail(f"{mw}.{k}", f"{m[k]} does not fit {m['fmt']}'s {FORMATS[m['fmt']].bits} bits")
    for k, ops in c.get(rep, "sass", dict, "report", default={}).items():
        c.strings(ops, f"sass.{k}")
    return rep
