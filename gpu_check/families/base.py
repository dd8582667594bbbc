"""What every family spec has: the kernel's identity, where it runs, its word layout's sizes.

A spec is one generated kernel for one catalog instruction. Its family module gives it both
sides of the kernel's word layout -- `source()` for the device, packing and unpacking for the
host -- and the layout probes and their comparison, so everything one family knows is in one
file. The catalog (`layoutsim.get`) and `layoutsim.packing` are the only sources of layout.
"""
from dataclasses import dataclass

import numpy as np

from layoutsim import archs

from ..codegen import cuda, ident


@dataclass
class Probe:
    """One layout probe: the input words of its cases and what the comparison needs to know."""
    check: str
    inp: np.ndarray        # (cases, in_words) uint32
    meta: dict


class Spec:
    """One generated kernel: its source and the host side of its word layout."""
    kind = ""                       # stable key: recorded dumps name a spec by (kind, catalog entry)
    catalog_families = ()           # the catalog instruction families it checks
    backend = "cuda"                # code generator and compiler: "cuda" (nvcc) or "hip" (clang)
    checked_by = ("layouts",)       # check groups that run the kernel
    default_entries = None          # names checked unless --only / --all-wgmma (None: every entry)
    named_by_entry = False          # kernel name = the entry's (else kind + entry)
    threads = 32 * cuda.WARPS_PER_BLOCK
    cases_per_block = cuda.WARPS_PER_BLOCK
    needs = ()                      # extra headers: "wmma"
    smem_bytes = 0
    aux = np.zeros(1, np.uint32)

    def __init__(self, instr):
        self.instr = instr
        self.entry = instr.name

    @classmethod
    def supports(cls, instr):
        return instr.family in cls.catalog_families

    @property
    def name(self):
        return ident(self.entry if self.named_by_entry else f"{self.kind}_{self.entry}")

    def available(self, target):
        return archs.target_runs(target, self.instr.archs, self.instr.arch_specific)

    def grid(self, ncases):
        return max(1, min(-(-ncases // self.cases_per_block), 8192))

    def source(self):
        return cuda.kernel(self.name, self.threads, self.body())

    # the layouts group ---------------------------------------------------------------------
    def probes(self, rng):
        """[Probe]: the cases of one launch that test the layout."""
        raise NotImplementedError

    def compare(self, check, inp, out, meta, aux):
        """Result of one probe, from its input words and what the kernel wrote."""
        raise NotImplementedError


class RegionSpec(Spec):
    """A warp kernel working in its own slice of shared memory, `region_bytes` per warp."""
    region_bytes = 0

    @property
    def region_words(self):
        return self.region_bytes // 4

    @property
    def smem_bytes(self):
        return cuda.WARPS_PER_BLOCK * self.region_bytes
