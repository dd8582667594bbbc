"""Check groups, in the order `gpu-check run` runs them: name -> the module that implements it.

A group is a module (or a package, like `gpu_check.bank_probe`) with

    NEEDS_KERNELS = True | False   # uses the kernels the session built (skipped when none were)
    def run(session) -> [checks.common.Result]
    def skip_reason() -> str | None   # optional: why it cannot run on this machine

`session` (`gpu_check.run.Session`) gives the backend, the built specs
(`session.specs_checked_by(name)`, `session.module_of(spec)`), the options (cases, seed,
record, ...), `session.log` and `session.group_info[name]` for extra report fields. Adding a
group is that module plus one line here; its name is then valid for `gpu-check run --group`.
The modules are imported when a group runs, so importing gpu_check stays light.
"""
import importlib

GROUPS = {
    "layouts": "gpu_check.checks.layouts",     # registers and memory against the catalog
    "numerics": "gpu_check.checks.numerics",   # result bits against layoutsim.mma
    "banks": "gpu_check.checks.banks",         # ncu wavefronts against the bank model
}


def group(name):
    """The module of one check group."""
    return importlib.import_module(GROUPS[name])


def skip_reason(name):
    fn = getattr(group(name), "skip_reason", None)
    return fn() if fn else None
