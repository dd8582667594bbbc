"""The descriptors measurement as a list of tasks, so that a fault costs one task, not the run.

A task is one launch group: the canonical, random or reserved-bit descriptors of one probe (all
of its cases, or a part of them once a fault has been bisected), or one TMA box, copied with the
tensor map as the kernel parameter ("tma") or from global memory ("tma-global", the cross-check).
The plan (every probe's descriptors, every box) is drawn once and kept as JSON, so worker
processes (isolate.py) run exactly the tasks they are handed; `run_here` runs them in this
process (dry runs, tests, the CI fake). `assemble` turns the parts into the corpus and results.

Phases, safest first: canonical descriptors (CuTe's tiles), random ones (drawn so that every
candidate reading stays inside the id region), descriptors with unused bits set, TMA boxes
through the parameter (the sanity box first), then the global-memory cross-check (every
GLOBAL_EVERY-th box), then the boxes that test the innermost-coordinate rule (plan.COORD_PROBES:
an aligned control, then the offsets the second H200 run faulted on); boxes whose destination sits
on a 1024-byte boundary (what every library uses) go first.
"""
import time
from dataclasses import asdict, dataclass

import numpy as np

from layoutsim import smem

from ..checks.common import Result
from . import corpus, plan, run
from .kernels import Probe

WGMMA_PHASES = ("canonical", "random", "reserved")
TMA_PHASES = {"tma": "param", "tma-global": "global", "tma-coords": "param"}
PHASES = WGMMA_PHASES + tuple(TMA_PHASES)
GLOBAL_EVERY = 5


class CampaignMismatch(RuntimeError):
    """The GPU put shared memory elsewhere than the plan was drawn for."""


@dataclass(frozen=True)
class Task:
    phase: str
    probe: int              # index into Campaign.probes; -1 for a TMA box
    cases: tuple            # the probe's case indices in this phase, or (TMA box index,)

    @property
    def key(self):
        return f"{self.phase}.{self.probe}.{'_'.join(map(str, self.cases))}"

    @classmethod
    def from_key(cls, key):
        phase, probe, cases = key.split(".")
        return cls(phase, int(probe), tuple(int(c) for c in cases.split("_")))

    def label(self, campaign):
        if self.phase in TMA_PHASES:
            c = campaign.tma[self.cases[0]]
            return (f"{self.phase} box {self.cases[0]} {c.box} x {c.elem_bytes} B {c.swizzle} dst +{c.dst}")
        n = len(self.cases)
        if n == 1:
            return f"{self.phase} {campaign.probes[self.probe].name}: descriptor {self.cases[0]}"
        part = "" if n == len(campaign.cases[self.probe][self.phase]) else f" (cases {self.cases[0]}..{self.cases[-1]})"
        return f"{self.phase} {campaign.probes[self.probe].name}: {n} descriptors{part}"

    def singles(self):
        return [Task(self.phase, self.probe, (c,)) for c in self.cases]

    def to_json(self):
        return [self.phase, self.probe, list(self.cases)]

    @classmethod
    def from_json(cls, x):
        return cls(x[0], int(x[1]), tuple(int(c) for c in x[2]))


class Campaign:
    """Every probe's descriptors per phase and every TMA box, drawn for shared memory at `base`."""

    def __init__(self, base=plan.BASE, seed=plan.SEED, probes=None, tma=None, drawn=None):
        self.base, self.seed = int(base), int(seed)
        self.probes = list(plan.probes() if probes is None else probes)
        self.tma = list(plan.tma_cases(seed) if tma is None else tma)
        if drawn is None:
            drawn = []
            for p in self.probes:
                safe, risky = plan.cases(p, self.base, self.seed)
                drawn.append({"canonical": [c for c in safe if c.kind == "canonical"],
                              "random": [c for c in safe if c.kind == "random"], "reserved": risky})
        self.cases = drawn

    def boxes(self, phase, every=1):
        """Indices of the TMA boxes of a TMA phase (every `every`-th), destinations on 1024 bytes first."""
        mine = [j for j, c in enumerate(self.tma) if c.coord_probe == (phase == "tma-coords")][::every]
        return sorted(mine, key=lambda j: self.tma[j].dst % 1024 != 0)

    def tasks(self, phases=PHASES):
        out = []
        for ph in phases:
            if ph in TMA_PHASES:
                out += [Task(ph, -1, (j,)) for j in self.boxes(ph, GLOBAL_EVERY if ph == "tma-global" else 1)]
            else:
                out += [Task(ph, i, tuple(range(len(c[ph])))) for i, c in enumerate(self.cases) if c[ph]]
        return out

    def to_json(self):
        return {"base": self.base, "seed": self.seed,
                "probes": [[p.entry, p.under, p.trans] for p in self.probes],
                "cases": [{ph: [[int(c.desc), c.kind, c.note] for c in cs] for ph, cs in d.items()}
                          for d in self.cases],
                "tma": [asdict(c) for c in self.tma]}

    @classmethod
    def from_json(cls, x):
        probes = [Probe(e, u, bool(t)) for e, u, t in x["probes"]]
        tma = [plan.TmaCase(tuple(c["box"]), c["elem_bytes"], c["swizzle"], c["dst"], tuple(c["coords"]),
                            tuple(c["gdims"]), bool(c.get("coord_probe", False))) for c in x["tma"]]
        drawn = [{ph: [plan.Case(int(v), k, n) for v, k, n in cs] for ph, cs in d.items()} for d in x["cases"]]
        return cls(x["base"], x["seed"], probes, tma, drawn)


def execute(lab, campaign, task):
    """Run one task on a lab: its raw observations as {name: array}."""
    if task.phase in TMA_PHASES:
        landed, base = run.tma_landed(lab, campaign.tma[task.cases[0]], TMA_PHASES[task.phase])
        return {"landed": landed, "base": np.array(base)}
    probe = campaign.probes[task.probe]
    base = lab.smem_base(probe)
    if base != campaign.base:
        raise CampaignMismatch(f"{probe.name}: dynamic shared memory at {base:#x}, the plan was drawn for "
                           f"{campaign.base:#x}")
    cases = campaign.cases[task.probe][task.phase]
    values = np.array([cases[i].desc for i in task.cases], np.uint64)
    obs, bad = run.observe(lab, probe, values, base)
    return {"obs": obs, "bad": bad}


def finding(campaign, task, kind, message):
    """A task that did not give data: what it was, down to the descriptor or box when it is one."""
    f = {"kind": kind, "task": task.label(campaign), "phase": task.phase, "message": message}
    if task.phase in TMA_PHASES:
        f["tma_case"] = asdict(campaign.tma[task.cases[0]])
        f["tma_case_index"] = task.cases[0]
    else:
        cs = campaign.cases[task.probe][task.phase]
        f["probe"] = campaign.probes[task.probe].name
        f["descriptors"] = [f"{cs[i].desc:#018x}" for i in task.cases]
        if len(task.cases) == 1:
            f["decoded"] = str(smem.Descriptor.decode(cs[task.cases[0]].desc))
    return f


def run_here(lab, campaign, todo, log=print, seconds=None):
    """Every task in this process: ({task key: part}, findings). A fault that ends the context
    ends the run (the rest are reported as not run); isolate.run recovers from it instead."""
    t0 = time.perf_counter()
    parts, findings = {}, []
    for n, task in enumerate(todo):
        if seconds is not None and time.perf_counter() - t0 > seconds:
            findings += [finding(campaign, t, "not run", "time budget spent") for t in todo[n:]]
            break
        try:
            parts[task.key] = execute(lab, campaign, task)
        except Exception as e:   # noqa: BLE001 - a failing task is a finding; the others go on
            findings.append(finding(campaign, task, "fault" if not lab.healthy() else "error",
                                    f"{type(e).__name__}: {str(e).strip()[:400]}"))
            log(f"[descriptors] {task.label(campaign)}: {findings[-1]['kind'].upper()} {findings[-1]['message']}")
            if not lab.healthy():
                findings += [finding(campaign, t, "not run", "an earlier fault ended the context")
                             for t in todo[n + 1:]]
                break
    return parts, findings


def assemble(campaign, parts, findings, environment, log=print, fit=True):
    """(corpus.Corpus, [Result]) from the parts the tasks left (keyed by Task.key) and the findings;
    with `fit`, the corpus says which readings explain it (corpus.fit_text)."""
    rec = corpus.Corpus(environment=environment, seed=campaign.seed)
    results = []
    by = {}
    for key, part in parts.items():
        t = Task.from_key(key)
        by.setdefault((t.phase, t.probe), []).append((t.cases, part))
    for ph in WGMMA_PHASES:
        mine = []
        for i, probe in enumerate(campaign.probes):
            got = sorted((c, k, part) for cases, part in by.get((ph, i), []) for k, c in enumerate(cases))
            if not got:
                continue
            cs = campaign.cases[i][ph]
            values = np.array([cs[c].desc for c, _, _ in got], np.uint64)
            kinds = [cs[c].kind for c, _, _ in got]
            obs = np.stack([part["obs"][k] for _, k, part in got])
            bad = np.array([part["bad"][k] for _, k, part in got], np.int64)
            rec.add_probe(probe, campaign.base, values, kinds, obs, bad)
            mine.append(run.compare(probe, values, kinds, obs, bad, ph))
        if mine:
            failing = [f"{r.entry} {r.check.split()[0]}" for r in mine if r.status != "pass"]
            log(f"[descriptors] {ph}: {len(mine)} probes, {sum(r.cases for r in mine)} descriptors, "
                f"{sum(r.mismatches for r in mine)} of {sum(r.compared for r in mine)} addresses differ"
                + (f"; differing: {', '.join(failing[:6])}{' ...' if len(failing) > 6 else ''}" if failing else ""))
        results += mine
    for ph, via in TMA_PHASES.items():
        got = sorted((cases[0], part) for cases, part in by.get((ph, -1), []))
        if got:
            cases = [campaign.tma[j] for j, _ in got]
            landed = [part["landed"] for _, part in got]
            bases = [int(part["base"]) for _, part in got]
            rec.add_tma(cases, landed, bases, via)
            results.append(run.tma_compare(cases, landed, bases, via))
            r = results[-1]
            log(f"[descriptors] TMA ({r.check}): {r.cases} boxes, {r.mismatches} of {r.compared} "
                f"slots differ")
    # the coordinate rule's boxes: a fault is the measurement (the model predicts which fault)
    rule = [j for j, c in enumerate(campaign.tma) if c.coord_probe]
    ran = {cases[0] for cases, _ in by.get(("tma-coords", -1), [])}
    faulted = {f["tma_case_index"] for f in findings if f["phase"] == "tma-coords" and f["kind"] == "fault"}
    if ran | faulted:
        seen = [j for j in rule if j in ran | faulted]
        results.append(run.fault_compare([campaign.tma[j] for j in seen], [j in faulted for j in seen]))
    for f in findings:
        if f["phase"] == "tma-coords" and f["kind"] == "fault":
            continue
        results.append(Result("descriptors", f.get("probe", "cp.async.bulk.tensor (TMA)"), f["task"],
                              status="error", note=f"{f['kind']}: {f['message']}"))
    rec.notes = list(findings)
    rec.fit_log = corpus.fit_text(rec) if fit else ""
    return rec, results
