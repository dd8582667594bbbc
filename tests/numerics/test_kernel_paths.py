"""The kernel's three paths compute the same bits (kernel.py: the vector path in float64 or
float32 lanes, the scalar fast path, the general path).

The scalar paths are the ones checked against the Fraction reference (test_reference_agreement)
and, on sm_90, against the H200 corpus; the vector path is what layoutsim.mma runs for most
instructions. Here every float instruction form of the catalog, under every arch profile with
a distinct arithmetic and under every candidate behaviour cases.candidates lists for it, runs
the generator's discriminating and random cases (specials, subnormals, overflow, cancellation)
through each path the kernel would take, and the raw D bits must be equal.
"""
import warnings

import numpy as np
import pytest

from layoutsim.isa.registry import all_entries
from layoutsim.numerics import cases, kernel, vector
from layoutsim.numerics.api import UnverifiedProfileWarning, kernel_inputs, resolve
from layoutsim.numerics.plan import make_plan
from layoutsim.numerics.profiles import profile_for

WGMMA_N = (8, 24)          # wgmma: the narrowest, an odd multiple of 8 ...
WGMMA_WIDE = "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"   # ... and the widest, once


def _forms():
    """(name, arch) for each float form and distinct profile arithmetic."""
    out, seen = [], set()
    for e in all_entries():
        if e.family not in ("mma", "wgmma", "wmma") or e.vendor == "amd" and e.family != "wmma":
            continue
        inst = e.instruction()
        if e.family == "wgmma" and (inst.shape[1] not in WGMMA_N and e.name != WGMMA_WIDE
                                       or e.name.endswith(".a_reg")):
            continue
        for arch in e.archs:
            try:
                prof = profile_for(arch)
                plan = make_plan(inst, prof)
            except Exception:        # noqa: BLE001 (no arithmetic model for this form)
                continue
            if plan.kind != "float":
                continue
            key = (plan.shape, plan.a, plan.b, plan.c, plan.d,
                   tuple(v for _, v, _ in prof.parameters()))
            if key not in seen:
                seen.add(key)
                out.append((e.name, arch))
    return out


FORMS = _forms()


def _paths(plan, A, B, C):
    """{path name: raw D} for every path the kernel may take on this plan."""
    a, b, c, cfg = kernel_inputs(plan, A, B, C)
    nb, M, K = a.shape
    N = b.shape[2]
    out = {}
    scalar = np.zeros(c.shape, np.uint32)
    kernel._chunk(a, b, c, cfg, scalar, 0, nb)
    out["scalar"] = scalar
    if vector.vector_ok(cfg, M, N, K):
        for name, dt in (("vector f64", np.float64), ("vector f32", np.float32)):
            if dt is np.float32 and not vector.f32_ok(cfg):
                continue
            d = np.zeros(c.shape, np.uint32)
            vector._vchunk(a, b, c, cfg, d, 0, nb, dt)
            out[name] = d
    return out


def test_forms_cover_every_family_and_the_vector_path():
    fams = {name.split(".")[0] for name, _ in FORMS}
    assert {"mma", "wgmma"} <= fams and any(a.startswith("gfx") for _, a in FORMS), FORMS


@pytest.mark.parametrize("name,arch", FORMS)
def test_every_path_gives_the_same_bits(name, arch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnverifiedProfileWarning)
        A, B, C = cases.generate(name, 24, seed=11, arch=arch)
    inst, prof = resolve(name, arch)
    base = make_plan(inst, prof)
    vector_runs = 0
    for label, variant in [("profile", prof)] + cases.candidates(base):
        plan = make_plan(inst, variant)
        if plan.kind != "float":
            continue
        results = _paths(plan, A, B, C)
        ref = results.pop("scalar")
        vector_runs += len(results)
        for path, d in results.items():
            bad = np.argwhere(d != ref)
            assert not len(bad), (f"{name} {arch} [{label}]: {path} differs from the scalar path "
                                  f"in {len(bad)} results, first at {tuple(bad[0])}: "
                                  f"{d[tuple(bad[0])]:#x} vs {ref[tuple(bad[0])]:#x}")
    if base.shape[1] % vector.V == 0 and base.shape[0] % vector.ROWS == 0:
        assert vector_runs, f"{name} {arch}: the vector path never ran"
