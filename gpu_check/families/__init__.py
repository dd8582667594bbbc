"""Kernel specs, one module per instruction family, and the registry that picks them.

A family module holds everything gpu-check knows about checking one kind of instruction: the
kernel's word layout, its source (through a code generator of `gpu_check.codegen`), the host
packing, the layout probes and their comparison. Adding a family is one module with a `Spec`
subclass (see `base.Spec`) and one line in FAMILIES; the catalog entries whose family is in its
`catalog_families` (and that its `supports` accepts) then get its kernel, in every check group
named in its `checked_by`.
"""
import fnmatch
import functools

import layoutsim
from layoutsim import archs

from ..codegen import cuda, hip
from . import amd_mfma, amd_wmma, e2e, ldmatrix, mma, stmatrix, tcgen05, tcgen05_mma, wgmma, wmma_load

# Order: a catalog entry's kernels are built and run in this order.
FAMILIES = (mma.MmaSpec, e2e.E2eSpec, ldmatrix.LdmatrixSpec, stmatrix.StmatrixSpec, wgmma.WgmmaSpec,
            amd_wmma.AmdWmmaSpec, amd_mfma.AmdMfmaSpec, tcgen05.Tcgen05Spec, mma.MmaKindSpec,
            tcgen05_mma.Tcgen05MmaSpec)
BY_KIND = {cls.kind: cls for cls in FAMILIES}
# The targets `gpu-check source --target` and the NVIDIA build accept.
TARGETS = archs.nvidia_targets("sm_80")

cuda_module_source = cuda.module_source
hip_module_source = hip.module_source
wmma_specs = wmma_load.specs


def spec_class(kind):
    """The spec class recorded dumps name by `kind`."""
    return BY_KIND[kind]


def specs_for(instr):
    """Every kernel spec for one catalog instruction, in FAMILIES order."""
    return [cls(instr) for cls in FAMILIES if cls.supports(instr)]


def select(entry, pattern):
    """--only: a glob (fnmatch) or substring of the canonical name or an alias; ',' separates several."""
    names = (entry.name, *entry.aliases)
    for pat in str(pattern).split(","):
        pat = pat.strip()
        if not pat:
            continue
        for n in names:
            if fnmatch.fnmatchcase(n, pat) or (not any(ch in pat for ch in "*?[") and pat in n):
                return True
    return False


@functools.lru_cache(maxsize=None)
def _default_names(cls):
    return frozenset(layoutsim.lookup(n).name for n in cls.default_entries)


def _by_default(entry):
    """Whether an entry is checked without --only / --all-*: the families that limit their
    default selection (`default_entries`) name it."""
    limits = [cls for cls in FAMILIES if entry.family in cls.catalog_families and cls.default_entries is not None]
    return not limits or any(entry.name in _default_names(cls) for cls in limits)


def catalog_specs(backend, target=None, only=None, every=False):
    """Specs of the catalog entries a backend builds: for "cuda" those a compile target runs
    (every entry with `every`, else the families' default selection), for "hip" every AMD entry;
    `only` filters (see `select`)."""
    arch = archs.target_arch(target) if target else None
    families = {f for cls in FAMILIES if cls.backend == backend for f in cls.catalog_families}
    out = []
    for e in layoutsim.listing(arch=arch):
        if e.family not in families or (only and not select(e, only)):
            continue
        if target and not archs.target_runs(target, e.archs, e.arch_specific):
            continue
        if not (every or only or _by_default(e)):
            continue
        out += [s for s in specs_for(e.instruction(arch))
                if s.backend == backend and (target is None or s.available(target))]
    return out


def nvidia_specs(target, only=None, wgmma_all=False):
    return catalog_specs("cuda", target, only, every=wgmma_all)


def amd_specs(only=None, arch=None):
    """Specs of every AMD entry (the compile check), or of the entries on `arch` (a device's),
    with that arch's operand formats (an fp8 MFMA: FNUZ on gfx942, OCP on gfx950)."""
    if arch is None:                  # each entry once, plus its forms with other operand formats
        out = catalog_specs("hip", only=only)
        for e in layoutsim.listing():
            if e.variant is not None and e.vendor == "amd" and (not only or select(e, only)):
                forms = {e.instruction(a).archs: e.instruction(a) for a in e.archs}
                forms.pop(e.instruction().archs, None)
                out += [s for inst in forms.values() for s in specs_for(inst) if s.backend == "hip"]
        return out
    return [s for e in layoutsim.listing(arch=arch) if e.vendor == "amd" and (not only or select(e, only))
            for s in specs_for(e.instruction(arch)) if s.backend == "hip"]


def amd_targets():
    """The compile targets of the AMD kernels (`gpu-check amd`), in build order."""
    return tuple(dict.fromkeys(s.offload_arch for s in amd_specs()))
