"""Layout checks: does the hardware put every element where the catalog says?

Each kernel spec (one per family and catalog entry, `gpu_check.families`) gives its probes; the
probes of one spec run as one launch (many cases). `compare` turns (inputs, outputs) into a
Result using only the catalog and exact arithmetic, and is the same code whether the outputs
come from the GPU now or from a dump recorded earlier (tests/data/layouts, replayed in CI). The
probes of each family are described in its module.
"""
import numpy as np

from ..record import LayoutRecorder
from .common import Result

NEEDS_KERNELS = True
SEED = 20250


def probes(spec, rng=None):
    """The spec's probes, from the group's fixed seed (so a run is reproducible)."""
    return spec.probes(rng if rng is not None else np.random.default_rng(SEED))


def compare(spec, check, inp, out, meta=None, aux=None):
    return spec.compare(check, inp, out, meta or {}, spec.aux if aux is None else aux)


def run(session):
    """Every built kernel the group checks: its probes in one launch, each probe compared."""
    rec = LayoutRecorder() if session.record else None
    results = []
    for spec in session.specs_checked_by("layouts"):
        ps = probes(spec)
        inp = np.concatenate([p.inp for p in ps], axis=0)
        n = len(inp)
        try:
            out = session.backend.launch(session.module_of(spec), spec, inp, n).reshape(n, spec.out_words)
        except Exception as e:   # noqa: BLE001 - a launch failure is a result, reported
            results.append(Result("layouts", spec.entry, spec.kind, cases=n, status="error",
                                  note=f"launch failed: {str(e).strip().splitlines()[0] if str(e) else e!r}"))
            continue
        start, meta = 0, []
        for p in ps:
            k = len(p.inp)
            results.append(compare(spec, p.check, inp[start:start + k], out[start:start + k], p.meta))
            meta.append((p.check, start, k, p.meta))
            start += k
        if rec is not None:
            rec.add(spec, meta, inp, out)
    if rec is not None and rec.records:
        path = rec.save(session.record / "layouts" / f"layouts_{session.arch}.npz", session.env)
        session.group_info.setdefault("layouts", {})["recorded"] = str(path)
    return results
