"""Every MMA a Blackwell kernel executed in layoutsim.ptx, against MMA-Sim (PyPI `mmasim`,
arXiv:2511.10909, validated by its authors bitwise on B200) bit for bit, MMA by MMA: the kernel runs
with record_mmas=True (Run.mmas: layoutsim.ptx.events.Mma, each MMA's raw A, B, C, scales and the D
the executor computed), and MMA-Sim computes D from the same A, B, C and scales
(tests/numerics/mmasim_oracle.py: compare_records). The records also show how the kernel chained
its MMAs: per accumulator (CTA(s) and TMEM address), each MMA's C is the D before it, or zeros where
a new accumulation starts (enable-input-d false, or a tcgen05.st of zeros).

Used by the per-MMA tests (tests/ptx/test_tcgen05_cute.py, tests/triton_frontend/test_triton_sm100*.py,
their ORACLE_KERNELS) and by tests/blackwell_crosscheck.py (the counts). MMA-Sim needs torch; without
either the tests skip (CI installs neither)."""
import importlib.util
import pathlib

import numpy as np
import pytest

HAVE_MMASIM = all(importlib.util.find_spec(m) is not None for m in ("mmasim", "torch"))
needs_mmasim = pytest.mark.skipif(not HAVE_MMASIM, reason="MMA-Sim (pip install mmasim, with torch) is the "
                                                          "per-MMA oracle")
_ORACLE = []


def oracle():
    """tests/numerics/mmasim_oracle.py, loaded once by path (tests/numerics need not be on sys.path)."""
    if not _ORACLE:
        path = pathlib.Path(__file__).parent / "numerics" / "mmasim_oracle.py"
        spec = importlib.util.spec_from_file_location("mmasim_oracle", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _ORACLE.append(mod)
    return _ORACLE[0]


def chains(records):
    """The accumulations of the recorded MMAs: [(CTAs, TMEM address, [record indices])] in execution
    order; asserts that each MMA's C is its accumulator's previous D (or zeros: a new one)."""
    out, last = [], {}
    for i, rec in enumerate(records):
        key = (rec.ctas, rec.taddr)
        j = last.get(key)
        if j is not None and np.array_equal(rec.c, records[out[j][2][-1]].d.astype(rec.c.dtype)):
            out[j][2].append(i)
            continue
        assert not rec.c.any(), f"MMA {i} ({rec.name}, CTAs {rec.ctas}) reads a C that no recorded MMA wrote"
        last[key] = len(out)
        out.append((rec.ctas, rec.taddr, [i]))
    return out


def final(records, chain):
    """The last D of an accumulation, in D's format (raw bits)."""
    rec = records[chain[2][-1]]
    return rec.d.astype(rec.c.dtype)


def summary(kernel, run, expect_mmas):
    """{"kernel", "mmas", "chains", "kinds": compare_records(...)} of one run; asserts that the run
    recorded `expect_mmas` MMAs (every MMA the kernel issues: its tiles times its K-steps)."""
    recs = run.mmas
    assert recs is not None and len(recs) == expect_mmas, (kernel, None if recs is None else len(recs))
    return {"kernel": kernel, "mmas": len(recs), "chains": len(chains(recs)),
            "kinds": oracle().compare_records(recs)}


def assert_agrees(s):
    """Every MMA of a summary bit for bit MMA-Sim's."""
    for kind, row in s["kinds"].items():
        assert row["differ"] == 0, (s["kernel"], kind, row)
