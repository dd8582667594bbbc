"""Recorded layout dumps: what the GPU returned, replayable through the same comparison code.

One compressed .npz per run (tests/data/layouts/layouts_<arch>.npz): for every kernel launch
`r<NNN>_in` (the input words), `r<NNN>_out` (the words the GPU wrote) and `r<NNN>_aux`, plus
`manifest`, a JSON string: the environment (GPU, compute capability, driver, CUDA, date), the
kernel kind and catalog entry of each record, its word layout, and the probes (check name, first
case, case count, parameters) inside it. `replay(path)` rebuilds each spec from the catalog and
runs `checks.layouts.compare` on the recorded words.
"""
import json
from pathlib import Path

import numpy as np

import layoutsim

from . import families

FORMAT_VERSION = 1


class StaleRecord(Exception):
    pass


def spec_for(kind, entry):
    return families.spec_class(kind)(layoutsim.get(entry))


class LayoutRecorder:
    def __init__(self):
        self.records = []

    def add(self, spec, probes, inp, out):
        """probes: [(check, first case, cases, meta)]"""
        self.records.append({"kind": spec.kind, "entry": spec.entry, "in_words": spec.in_words,
                             "out_words": spec.out_words,
                             "probes": [{"check": c, "start": s, "cases": n, "meta": m} for c, s, n, m in probes],
                             "inp": np.asarray(inp, np.uint32), "out": np.asarray(out, np.uint32),
                             "aux": np.asarray(spec.aux, np.uint32)})

    def save(self, path, env):
        """Write the dump to `path`, creating its folder (the recorder owns the --record tree)."""
        from layoutsim.files import make_dir, write_atomic
        path = Path(path)
        make_dir(path.parent, "--record folder", parents=True)     # inside the --record tree
        arrays, manifest = {}, []
        for i, r in enumerate(self.records):
            key = f"r{i:03d}"
            arrays[f"{key}_in"] = r["inp"]
            arrays[f"{key}_out"] = r["out"]
            arrays[f"{key}_aux"] = r["aux"]
            manifest.append({k: v for k, v in r.items() if k not in ("inp", "out", "aux")} | {"key": key})
        arrays["manifest"] = np.array(json.dumps({"format": FORMAT_VERSION, "environment": env,
                                                  "records": manifest}))
        write_atomic(path, lambda f: np.savez_compressed(f, **arrays), "layout dump")
        return path


def load(path):
    """(manifest, records) of a dump, every field checked first (gpu_check.inputs)."""
    from .inputs import load_dump
    return load_dump(path, tuple(families.BY_KIND))


def replay(path, only=None):
    """Results of re-comparing a recorded dump with the current catalog."""
    from .checks import layouts
    from .checks.common import Result
    manifest, records = load(path)
    results = []
    for r in records:
        if only and not any(p in r["entry"] for p in str(only).split(",")):
            continue
        try:
            spec = spec_for(r["kind"], r["entry"])
        except Exception as e:   # noqa: BLE001 - an entry renamed or removed from the catalog
            results.append(Result("layouts", r["entry"], "replay", status="error",
                                  note=f"cannot rebuild the spec: {e}"))
            continue
        if (spec.in_words, spec.out_words) != (r["in_words"], r["out_words"]):
            results.append(Result("layouts", r["entry"], "replay", status="error",
                                  note=f"recorded word layout ({r['in_words']}, {r['out_words']}) differs from "
                                       f"the current kernel ({spec.in_words}, {spec.out_words}): record again"))
            continue
        inp = r["inp"].reshape(-1, spec.in_words)
        out = r["out"].reshape(-1, spec.out_words)
        if not r["probes"]:
            results.append(Result("layouts", r["entry"], "replay", status="error",
                                  note="the record holds no probes: nothing to compare"))
        for p in r["probes"]:
            s, n = p["start"], p["cases"]
            if n == 0:                      # a check of nothing must not count as a pass
                results.append(Result("layouts", r["entry"], p["check"], status="error",
                                      note="the recorded probe holds no cases: nothing to compare"))
                continue
            try:
                results.append(layouts.compare(spec, p["check"], inp[s:s + n], out[s:s + n], p.get("meta", {}),
                                               r["aux"]))
            except Exception as e:   # noqa: BLE001 - a hand-made or damaged probe: reported, not raised
                results.append(Result("layouts", r["entry"], p["check"], status="error",
                                      note=f"cannot compare the recorded probe: {type(e).__name__}: {e}"))
    return manifest, results
