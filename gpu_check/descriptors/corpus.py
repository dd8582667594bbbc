"""The descriptors corpus: what every probe output saw, kept raw, and the fit of the readings.

One compressed .npz (tests/data/descriptors/descriptors_sm_90.npz once measured):
  p<NN>_desc  uint64 [n]            the descriptor values (absolute start addresses)
  p<NN>_obs   int32  [n, rows, cols] the shared-window byte address each operand element came
                                     from, (M, K) for A and (K, N) for B; -1 = no id recognised
  p<NN>_bad   int32  [n]            B probes: D rows that disagreed with their replica (0 = fine)
  t<NNN>      int32  [slots]        TMA: global element index landed in each element slot of the
                                     region (-1 = nothing)
  manifest    JSON: environment, seed, probes (entry, operand, trans, base, kinds), TMA cases
              (box, element bytes, swizzle, dst, coords, global dims, base, via: the tensor map
              as kernel parameter or in global memory), notes (the tasks that gave no data, and
              why: tasks.finding), fit log.
`fit()` tells which readings of layoutsim.smem explain every observation; `replay()` compares the
corpus with the current model (what the CI test runs).
"""
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from layoutsim import smem
from layoutsim.files import write_atomic

from .kernels import Probe
from .plan import TmaCase

FORMAT = 1


@dataclass
class Corpus:
    environment: dict
    seed: int
    probes: list = field(default_factory=list)      # [{probe, base, values, kinds, obs, bad}]
    tma: list = field(default_factory=list)         # [{case, landed, base, via}]
    notes: list = field(default_factory=list)
    fit_log: str = ""

    def add_probe(self, probe, base, values, kinds, obs, bad):
        self.probes.append({"probe": probe, "base": int(base), "values": np.asarray(values, np.uint64),
                            "kinds": list(kinds), "obs": np.asarray(obs, np.int64),
                            "bad": np.asarray(bad, np.int64)})

    def add_tma(self, cases, landed, bases, via="param"):
        for c, got, b in zip(cases, landed, bases):
            self.tma.append({"case": c, "landed": np.asarray(got, np.int64), "base": int(b), "via": via})

    def save(self, path):
        path = Path(path)
        arrays, man = {}, {"format": FORMAT, "environment": self.environment, "seed": self.seed,
                           "notes": self.notes, "fit": self.fit_log, "probes": [], "tma": []}
        for i, p in enumerate(self.probes):
            key = f"p{i:02d}"
            arrays[f"{key}_desc"] = p["values"]
            arrays[f"{key}_obs"] = p["obs"].astype(np.int32)
            arrays[f"{key}_bad"] = p["bad"].astype(np.int32)
            pr = p["probe"]
            man["probes"].append({"key": key, "entry": pr.entry, "under": pr.under, "trans": pr.trans,
                                  "base": p["base"], "kinds": p["kinds"]})
        for j, t in enumerate(self.tma):
            key = f"t{j:03d}"
            arrays[key] = t["landed"].astype(np.int32)
            man["tma"].append({"key": key, "base": t["base"], "via": t["via"], **asdict(t["case"])})
        arrays["manifest"] = np.array(json.dumps(man))
        write_atomic(path, lambda f: np.savez_compressed(f, **arrays), "descriptors corpus")
        return path


def load(path):
    with np.load(path, allow_pickle=False) as z:
        man = json.loads(str(z["manifest"]))
        c = Corpus(environment=man["environment"], seed=man["seed"], notes=man.get("notes", []),
                   fit_log=man.get("fit", ""))
        for p in man["probes"]:
            k = p["key"]
            c.add_probe(Probe(p["entry"], p["under"], p["trans"]), p["base"], z[f"{k}_desc"], p["kinds"],
                        z[f"{k}_obs"], z[f"{k}_bad"])
        for t in man["tma"]:
            case = TmaCase(tuple(t["box"]), t["elem_bytes"], t["swizzle"], t["dst"], tuple(t["coords"]),
                           tuple(t["gdims"]), bool(t.get("coord_probe", False)))
            c.add_tma([case], [z[t["key"]]], [t["base"]], t.get("via", "param"))
    return c


def _bad_cases(entry, reading):
    from .run import model
    want = model(entry["probe"], entry["values"], reading)
    return np.flatnonzero((want != entry["obs"]).reshape(len(want), -1).any(axis=1))


def fit(corpus, readings=None):
    """{reading: cases it does not explain} for the descriptor probes, and the same for TMA."""
    from .run import tma_model
    readings = readings or smem.candidate_readings()
    desc = {}
    for r in readings:
        desc[r] = sum(len(_bad_cases(p, r)) for p in corpus.probes)
    tma = {}
    for r in smem.tma.candidate_readings():
        tma[r] = sum(int(not np.array_equal(tma_model(t["case"], t["base"], r), t["landed"])) for t in corpus.tma)
    return desc, tma


def fit_text(corpus):
    desc, tma = fit(corpus)
    n = sum(len(p["values"]) for p in corpus.probes)
    lines = [f"fit over {n} descriptors ({len(corpus.probes)} probe runs) and {len(corpus.tma)} TMA boxes:"]
    good = [r for r, bad in desc.items() if bad == 0] if n else []
    lines.append(f"  descriptor readings explaining every case: {len(good)} of {len(desc)}" if n else
                 "  descriptor readings: no descriptors measured")
    for r in good[:8]:
        lines.append(f"    {r.label()}")
    if not good and n:
        r, bad = min(desc.items(), key=lambda kv: kv[1])
        lines.append(f"    none; closest: {r.label()} ({bad} cases unexplained)")
    ind = [f"{k}: {', '.join(sorted({str(getattr(r, k)) for r in good}))}" for k in
           ("strides", "base_offset", "base_offset_32B", "anchor")] if good else []
    if ind:
        lines.append("  settled: " + "; ".join(ind))
    tgood = [r for r, bad in tma.items() if bad == 0]
    lines.append(f"  TMA readings explaining every box: {', '.join(r.label() for r in tgood) or 'none'}")
    if not tgood and tma:
        r, bad = min(tma.items(), key=lambda kv: kv[1])
        lines.append(f"    closest: {r.label()} ({bad} boxes unexplained)")
    return "\n".join(lines)


def replay(path):
    """Results of comparing a recorded corpus with the current model (no GPU)."""
    from .run import compare, tma_compare
    c = load(path)
    results = [compare(p["probe"], p["values"], p["kinds"], p["obs"], p["bad"]) for p in c.probes]
    for via, rule in (("param", False), ("global", False), ("param", True)):
        ts = [t for t in c.tma if t["via"] == via and t["case"].coord_probe == rule]
        if ts:
            results.append(tma_compare([t["case"] for t in ts], [t["landed"] for t in ts], [t["base"] for t in ts],
                                       via))
    return c, results
