"""`gpu-check run --group descriptors` (registered in gpu_check.checks.GROUPS): build the probes,
measure every phase, compare with layoutsim.smem, and with --record keep the corpus under
RECORD/descriptors/ (what tests/data/descriptors keeps).

On the GPU each phase runs in worker processes (isolate.py: a fault costs one task, not the
session's context; the workers have contexts of their own, so the session's may stay open); a
backend without pycuda (the CI fake) gets the CPU emulation (emulate.FakeLab) in this process."""
import os
import tempfile

from layoutsim.files import make_dir, write_atomic

from ..checks.common import Result

NEEDS_KERNELS = False          # the group builds its own probe module (lab.build)


def run(session):
    return measure(session.backend, session.record, session.log)


def measure(backend, record=None, log=print, seconds=None):
    from . import isolate, plan, tasks
    from .lab import build
    arch = getattr(backend, "arch", "sm_90")
    if getattr(backend, "vendor", "nvidia") != "nvidia" or arch != "sm_90":
        return [Result("descriptors", "wgmma / TMA", "descriptors", status="skip",
                       note=f"wgmma descriptors and TMA are sm_90 features; this GPU is {arch}")]
    campaign = tasks.Campaign()
    todo = campaign.tasks()
    if getattr(backend, "drv", None) is None:
        from .emulate import FakeLab
        lab = FakeLab()
        env = lab.environment()
        parts, findings = tasks.run_here(lab, campaign, todo, log, seconds)
    else:
        cubin, _, _ = build(plan.probes())
        with tempfile.TemporaryDirectory(prefix="desc_work_") as work:
            path = os.path.join(work, "probes.cubin")
            write_atomic(path, cubin, "cubin")
            parts, findings, env = isolate.run(campaign, {"kind": "cuda", "cubin": path}, todo, work, log=log,
                                               seconds=seconds)
    rec, results = tasks.assemble(campaign, parts, findings, env, log=log)
    if record:
        folder = make_dir(os.path.join(record, "descriptors"), "--record folder", parents=True)
        rec.save(os.path.join(folder, f"descriptors_{arch}.npz"))
    return results
