"""Every corpus of the project, one row each: where its GPU measurement is committed, the command
that measures it (its own measure module), what that command needs on the GPU machine, and a
reader that turns a measurement folder (the committed one, or a fresh one) into launches:

    {launch: Launch(outputs={key: array}, ncu=[{metric: value} per ncu run])}

`gpu-check run --group kernels` (group.py) measures every part afresh and compares it with the
committed folder through `compare`; `python -m gpu_check.kernel_corpus.replay_all` (no GPU) runs
the executor over every committed launch (replay_all.py). Outputs are compared as raw bytes;
ncu totals (TOTALS) against the min..max of the committed runs (some vary from run to run).
"""
import importlib.util
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from layoutsim.files import measured_data, source_tree

from . import corpus as C
from . import ncu as N

ROOT = source_tree()          # the checkout (committed PTX and data are not installed)
# the totals compared, by the names the reports use (Nsight Compute metrics, all CTAs)
TOTALS = {"shared ld wavefronts": N.SHARED_LD, "shared st wavefronts": N.SHARED_ST,
          "global ld sectors": N.GLOBAL_SECTORS["ld"], "global st sectors": N.GLOBAL_SECTORS["st"]}


def run_totals(run):
    """The executor's values of TOTALS for one layoutsim.ptx Run, by the same names."""
    g = run.global_totals or {}
    return {"shared ld wavefronts": run.shared_wavefronts["ld"], "shared st wavefronts": run.shared_wavefronts["st"],
            "global ld sectors": g.get("ld", {}).get("sectors", 0), "global st sectors": g.get("st", {}).get("sectors", 0)}


@dataclass
class Launch:
    outputs: dict                                   # key -> array (compared as bytes)
    ncu: list = field(default_factory=list)         # [{metric: value}] one per ncu run


@dataclass(frozen=True)
class Part:
    name: str
    what: str
    data: Path                   # the committed measurement
    module: str                  # python -m <module> --out DIR [args]: its measure command
    args: tuple                  # the arguments group.py adds (fewer ncu runs than a full measurement)
    read: object                 # folder -> {launch: Launch} ({} when the folder holds no measurement)
    needs: object = None         # () -> why it cannot run on this machine, or None
    planned: object = None       # () -> [launch] that should be measured (those not in `read` await it)
    costs: bool = True           # its measurement runs ncu (the probes' do not)

    @property
    def command(self):
        return f"python -m {self.module} --out OUT"


# ---- readers --------------------------------------------------------------------------------
def _json(path, default=None):
    return json.loads(Path(path).read_text()) if Path(path).is_file() else default


def read_corpus(folder):
    """tests/data/kernels layout (manifest.json, <case>.h200.npz, h200.json)."""
    folder = Path(folder)
    doc = _json(folder / "h200.json", {})
    manifest = {e["name"]: e for e in C.load_manifest(folder)} if doc and (folder / C.MANIFEST).is_file() else {}
    cases = {n: r for n, r in doc.get("cases", {}).items() if n in manifest and (folder / C.h200_file(n)).is_file()}
    return {name: Launch({f"arg{i}": a for i, a in enumerate(C.load_arrays(folder / C.h200_file(name), manifest[name]))
                          if a is not None},
                         [r for r in doc.get("ncu_runs", {}).get("cases", {}).get(name) or [rec.get("ncu")] if r])
            for name, rec in cases.items()}


def read_triton(folder):
    from gpu_check.triton_corpus import replay as R
    folder = Path(folder)
    out = {}
    for case, (rec, npz, _) in R.measurements(folder).items():
        with np.load(npz) as z:
            outputs = {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith(case + "/")}
        out[case] = Launch(outputs, [r for r in rec.get("runs", []) if r])
    return out


def read_captured(group):
    """The reader of a captured group's folder (hopper_cases.Group: "hopper", "tk")."""
    return lambda folder: _read_captured(group, folder)


def _read_captured(group, folder):
    from gpu_check.realworld.hopper_cases import group as group_named
    folder = Path(folder)
    doc = _json(folder / "h200.json", {"cases": {}})
    out = {}
    for c in group_named(group).cases:
        npz = folder / f"{c.name}.buffers.npz"
        if not npz.is_file():
            continue
        with np.load(npz) as z:
            outputs = {k: z[k] for k in z.files if k.startswith("after")}
        out[c.name] = Launch(outputs, [r for r in doc["cases"].get(c.name, {}).get("ncu_runs", []) if r])
    return out


def cub_launch_id(rec):
    return f"{rec['launch']}-{rec['label']}"


def read_cub(folder):
    from gpu_check.realworld import cub_capture as K
    folder = Path(folder)
    if not (folder / "capture.json").is_file():
        return {}
    doc, contents = K.load(folder)
    out = {}
    for i, rec in enumerate(doc["launches"]):
        runs = [run[i] for run in doc.get("ncu_runs", []) if i < len(run) and run[i]]
        out[cub_launch_id(rec)] = Launch({f"alloc{a}": contents[sha] for a, sha in rec["out"].items()}, runs)
    return out


def _npz_launches(path, sep, key):
    """{launch: Launch} of an npz whose arrays are named <launch><sep><what>; key(what) -> the
    output's key, or None to leave the array out."""
    if not Path(path).is_file():
        return {}
    out = {}
    with np.load(path) as z:
        for k in z.files:
            name, what = k.rsplit(sep, 1)
            if key(what) is not None:
                out.setdefault(name, Launch({})).outputs[key(what)] = z[k]
    return out


def read_clusters(folder):
    return _npz_launches(Path(folder) / "clusters.npz", ".", lambda i: f"buf{i}")


def read_constructs(folder):
    f = Path(folder) / "constructs.json"
    if not f.is_file():
        return {}
    from gpu_check.constructs.replay import compared
    out = {}
    for x in json.loads(f.read_text())["launches"]:
        outs = [a for a in x["args"] if a[0] == "out"]
        out[x["name"]] = Launch({f"out{k}": compared(x["name"], np.asarray(v, a[1]))
                                 for k, (a, v) in enumerate(zip(outs, x["outputs"] or []))})
    return out


def read_flashattn(folder):
    """flashattn.h200.npz (every buffer after the launch) and flashattn.h200.json (the ncu runs)."""
    from gpu_check.realworld import flashattn_case as F, flashattn_measure as M
    folder = Path(folder)
    if not (folder / M.NPZ).is_file():
        return {}
    doc = _json(folder / M.JSON, {})
    with np.load(folder / M.NPZ) as z:
        outputs = {n: z[n] for n in F.ARRAYS if n in z.files}
    return {doc.get("case", F.NAME): Launch(outputs, [r for r in doc.get("ncu_runs", []) if r])}


def read_textures(folder):
    return _npz_launches(Path(folder) / "textures.npz", "/", lambda what: what if what in ("out", "surface") else None)


# ---- what each part needs on the GPU machine ---------------------------------------------------
def _module(name):
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def needs_triton():
    from gpu_check.triton_corpus.registry import WHEELS
    missing = [m for m in ("torch", "triton") if not _module(m)]
    if missing:
        return f"{' and '.join(missing)} not installed (the Triton corpus launches through Triton)"
    wheels = ROOT / ".triton-src"
    absent = [w for w in WHEELS.values() if not (wheels / w).is_file()]
    return f"{wheels.name}/ lacks {absent[0]} (carry .triton-src)" if absent else None


def _no_c_compiler():
    return None if shutil.which("gcc") or shutil.which("cc") else "no C compiler for the capture shim"


def needs_hopper():
    from gpu_check.realworld.hopper_cases import HOPPER, binary_name
    absent = [binary_name(e.stem) for e in HOPPER.examples if not (HOPPER.bin / binary_name(e.stem)).is_file()]
    if absent:
        return f"build/hopper/{absent[0]} is missing ({HOPPER.build}, then carry build/hopper)"
    return _no_c_compiler()


def needs_tk():
    from gpu_check.realworld import tk_build
    if not (tk_build.SOURCE / "include" / "kittens.cuh").is_file():
        return f"{tk_build.SOURCE.name}/ is missing (python -m gpu_check.realworld.tk_build --prepare, then carry it)"
    if shutil.which("nvcc") is None:
        return "nvcc not found (ThunderKittens is compiled on the GPU machine)"
    return _no_c_compiler()


def needs_cub():
    from gpu_check.realworld.cub_build import BINARY_DIR
    if not (BINARY_DIR / "cub_launches").is_file():
        return ("build/cub_launches/cub_launches is missing (python -m gpu_check.realworld.cub_build, then carry "
                "build/cub_launches)")
    return None


def needs_pycuda():
    return None if _module("pycuda") else "pycuda not installed"


def needs_nvcc():
    return needs_pycuda() or (None if shutil.which("nvcc") else "nvcc not found (the constructs are compiled here)")


def _planned_triton():
    from gpu_check.triton_corpus import cases
    return list(cases.CASES)


def _planned_captured(group):
    def planned():
        from gpu_check.realworld.hopper_cases import group as group_named
        return [c.name for c in group_named(group).cases]
    return planned


def _planned_clusters():
    from gpu_check.clusters import cases
    return [c["name"] for c in cases.cases()]


def _planned_flashattn():
    from gpu_check.realworld import flashattn_case as F
    return [F.NAME] if F.available()[0] else []


def _planned_corpus(folder):
    return lambda: [e["name"] for e in C.load_manifest(folder)] if (Path(folder) / C.MANIFEST).is_file() else []


REALWORLD = measured_data("realworld")
PARTS = (
    Part("kernels", "the project's kernel corpus", C.DATA, "gpu_check.kernel_corpus.measure", (),
         read_corpus, planned=_planned_corpus(C.DATA)),
    Part("cute", "CUTLASS's CuTe tutorials", REALWORLD, "gpu_check.realworld.measure", (),
         read_corpus, planned=_planned_corpus(REALWORLD)),
    Part("triton", "the Triton corpus", measured_data("triton_corpus") / "h200", "gpu_check.triton_corpus.measure",
         ("--runs", "1"), read_triton, needs_triton, _planned_triton),
    Part("hopper", "CUTLASS 3.x Hopper examples", REALWORLD / "hopper", "gpu_check.realworld.hopper_measure",
         ("--ncu-runs", "1"), read_captured("hopper"), needs_hopper, _planned_captured("hopper")),
    Part("tk", "ThunderKittens' Hopper kernels", REALWORLD / "tk", "gpu_check.realworld.tk_measure",
         ("--ncu-runs", "1"), read_captured("tk"), needs_tk, _planned_captured("tk")),
    Part("cub", "CUB's device-wide algorithms", REALWORLD / "cub", "gpu_check.realworld.cub_measure",
         ("--ncu-runs", "1"), read_cub, needs_cub),
    Part("flashattn", "FlashAttention-2's forward kernel", REALWORLD / "flashattn",
         "gpu_check.realworld.flashattn_measure", ("--ncu-runs", "1"), read_flashattn, needs_pycuda, _planned_flashattn),
    Part("llmc", "llm.c's dev/cuda kernels", REALWORLD / "llmc", "gpu_check.realworld.llmc_measure", ("--ncu-runs", "1"),
         read_corpus, needs_pycuda, planned=_planned_corpus(REALWORLD / "llmc")),
    Part("samples", "NVIDIA cuda-samples' kernels", REALWORLD / "samples", "gpu_check.realworld.samples_measure",
         ("--ncu-runs", "1"), read_corpus, needs_pycuda, planned=_planned_corpus(REALWORLD / "samples")),
    Part("clusters", "the cluster probes", measured_data("clusters"), "gpu_check.clusters.measure", (),
         read_clusters, needs_pycuda, _planned_clusters, costs=False),
    Part("constructs", "issue 24's constructs", measured_data("constructs"), "gpu_check.constructs.measure", (),
         read_constructs, needs_nvcc, costs=False),
    Part("textures", "texture and surface probes", measured_data("textures"), "gpu_check.textures.measure", (),
         read_textures, needs_pycuda, costs=False),
)
BY_NAME = {p.name: p for p in PARTS}


def select(names):
    """The parts named (comma-separated; None: all), or a LayoutsimError naming the valid ones."""
    from layoutsim.errors import LayoutsimError
    if not names:
        return list(PARTS)
    want = [n.strip() for n in names.split(",") if n.strip()]
    bad = [n for n in want if n not in BY_NAME]
    if bad:
        raise LayoutsimError(f"unknown corpus {bad[0]!r}; valid: {', '.join(BY_NAME)}")
    return [p for p in PARTS if p.name in want]


# ---- comparing ------------------------------------------------------------------------------------
def identical(want, got):
    """(whether every output of `want` is in `got` with the same bytes, the first difference or None)."""
    for k, w in want.items():
        g = got.get(k)
        if g is None:
            return False, f"{k}: missing"
        wb, gb = np.ascontiguousarray(w).reshape(-1).view(np.uint8), np.ascontiguousarray(g).reshape(-1).view(np.uint8)
        if wb.size != gb.size:
            return False, f"{k}: {gb.size} bytes, {wb.size} recorded"
        bad = np.flatnonzero(wb != gb)
        if bad.size:
            return False, f"{k}: {bad.size} of {wb.size} bytes differ, first at byte {bad[0]}"
    return True, None


def outside_range(recorded_runs, totals, documented=None):
    """[one line per total of `totals` ({metric: value}) outside the recorded runs' min..max];
    None when there is nothing to compare (no recorded runs or no totals). documented: {metric:
    (value, recorded min, recorded max)} of the differences a corpus documents; a total that is
    exactly that is not outside (a line "documented: ..." says so), one that moved is."""
    if not recorded_runs or not totals:
        return None
    out, compared = [], 0
    for name, metric in TOTALS.items():
        vs = [int(r[metric]) for r in recorded_runs if r.get(metric) is not None]
        if not vs or totals.get(metric) is None:
            continue
        compared += 1
        got = (int(totals[metric]), min(vs), max(vs))
        if not got[1] <= got[0] <= got[2]:
            known = (documented or {}).get(metric) == got
            out.append(f"{'documented: ' if known else ''}{name}: {got[0]}, recorded {got[1]}..{got[2]} over {len(vs)} runs")
    return out if compared else None


def new_summary(part):
    return {"part": part.name, "what": part.what, "launches": 0, "bit_identical": 0, "bits_documented": 0,
            "costs_compared": 0,
            "costs_in_range": 0, "costs_documented": 0, "not_measured": 0, "errors": 0, "skipped": None, "problems": []}


def tally(summary, name, same, diff, outside, documented=False):
    """Adds one launch's outcome (identical?, its first difference, outside_range's lines or None;
    documented: the outputs differ exactly as the corpus documents, e.g. textures/replay.py KNOWN)."""
    summary["launches"] += 1
    summary["bit_identical"] += bool(same)
    summary["bits_documented"] += bool(not same and documented)
    if diff:
        summary["problems"].append(f"{name}: {'documented: ' if documented else ''}{diff}")
    if outside is not None:
        summary["costs_compared"] += 1
        summary["costs_in_range"] += not outside
        summary["costs_documented"] += bool(outside) and all(x.startswith("documented: ") for x in outside)
        if outside:
            summary["problems"].append(f"{name}: {'; '.join(outside)}")


def summary_line(s):
    if s["skipped"]:
        return f"[{s['part']}]{' ' * max(1, 11 - len(s['part']))}skipped: {s['skipped']}"
    line = (f"[{s['part']}]{' ' * max(1, 11 - len(s['part']))}{s['launches']} launches, {s['bit_identical']} bit-identical, "
            f"costs in range {s['costs_in_range']}/{s['costs_compared']}"
            + (f" ({s['costs_documented']} documented differences)" if s.get("costs_documented") else ""))
    if s.get("bits_documented"):
        line = line.replace(" bit-identical,", f" bit-identical ({s['bits_documented']} documented differences),", 1)
    if s["not_measured"]:
        line += f", {s['not_measured']} not yet measured"
    if s["errors"]:
        line += f", {s['errors']} errors"
    return line


def ok(s):
    return not s["skipped"] and not s["errors"] and s["bit_identical"] + s.get("bits_documented", 0) == s["launches"] \
        and s["costs_in_range"] + s.get("costs_documented", 0) == s["costs_compared"]
