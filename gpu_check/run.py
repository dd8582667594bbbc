"""`gpu-check run`: build every kernel once, then the check groups, each one a progress line."""
import time
from pathlib import Path

from . import build as B
from . import checks
from . import families as F
from .checks.common import Result

GROUPS = tuple(checks.GROUPS)


class Session:
    def __init__(self, backend, only=None, cases=None, seed=1, record=None, log=print, groups=GROUPS,
                 wgmma_all=False, bank_seconds=None, corpora=None):
        self.backend = backend
        self.only = only
        self.cases = cases
        self.seed = seed
        self.record = Path(record) if record else None
        self.log = log
        self.groups = tuple(g for g in GROUPS if g in groups)
        self.wgmma_all = wgmma_all
        self.bank_seconds = bank_seconds
        self.corpora = corpora        # group kernels: comma-separated corpus names (None: all)
        self.results = []
        self.group_info = {}
        self.env = backend.environment()
        if getattr(backend, "vendor", "nvidia") == "nvidia":
            self.env.setdefault("nvcc", B.nvcc_version())
        self.target = backend.target
        self.arch = backend.arch
        self.sass = {}
        self.kept, self.module, self.modules = [], None, {}

    # ---- what the groups use -----------------------------------------------------------
    def module_of(self, spec):
        return self.modules.get(spec.name, self.module)

    def specs_checked_by(self, group):
        """The built kernels a group checks (their families name it in `checked_by`)."""
        return [s for s in self.kept if group in s.checked_by]

    # ---- build -------------------------------------------------------------------------
    def build(self):
        self.modules = {}
        if getattr(self.backend, "vendor", "nvidia") == "amd":
            return self._build_amd()
        t0 = time.perf_counter()
        specs = F.nvidia_specs(self.target, self.only, self.wgmma_all)
        if not specs:
            self.kept, self.module, self.build_stats = [], None, {"target": self.target, "kernels": 0}
            self.log(f"[build]    no catalog entry on {self.arch} matches --only {self.only!r}")
            return
        cubin, kept, rejected, stats = B.compile_specs(specs, self.target)
        self.kept = kept
        self.module = self.backend.load(cubin)
        self.sass = B.sass_summary(cubin)
        by_name = {s.name: s for s in specs}
        for name, msg in rejected.items():
            s = by_name.get(name)
            self.results.append(Result("build", s.entry if s else name,
                                       f"ptxas {self.target} ({s.kind if s else 'kernel'})", status="fail",
                                       note=f"ptxas rejects the instruction the catalog lists for {self.arch}: {msg}"))
        stats["rejected"] = len(rejected)
        stats["wall_s"] = round(time.perf_counter() - t0, 2)
        self.build_stats = stats
        info = self.group_info.setdefault("build", {})
        info.update(summarize([r for r in self.results if r.group == "build"]))
        info.update(entries=len({s.entry for s in specs}), checks=len(specs), seconds=stats["wall_s"],
                    failed=len(rejected))
        self.log(f"[build]    {self.target}: {len(kept)} kernels in one module"
                 f"{' (cached)' if stats.get('cached') else ''}, {len(rejected)} rejected by ptxas "
                 f"({stats['wall_s']:.1f} s)")

    def _build_amd(self):
        """HIP: one code object per wave size, for the GPU's own gfx target, from the catalog
        entries that exist on it (its generation's WMMA/SWMMAC, or its MFMAs)."""
        import tempfile
        from .backends import hip as H
        from .backends import Unavailable
        t0 = time.perf_counter()
        specs = [s for s in F.amd_specs(self.only, self.arch) if self.arch in s.instr.archs]
        self.kept, self.module = [], None
        tools = H.toolchain_for(self.arch) if specs else None
        if specs and tools is None:
            raise Unavailable(H.broken_for(self.arch) or f"no installed clang builds for {self.arch} ({H.INSTALL_HINT})")
        with tempfile.TemporaryDirectory(prefix="gpu_check_hip_") as tmp:
            for (_, wave), ss in sorted(H.groups(specs).items()):
                try:
                    obj = H.compile_group(ss, self.arch, wave, tmp, tools[0])
                except RuntimeError as e:
                    self.results += [Result("build", x.entry, f"clang {self.arch}", status="fail", note=str(e))
                                     for x in ss]
                    continue
                mod = self.backend.load(obj.read_bytes())
                self.module = self.module or mod
                for x in ss:
                    self.modules[x.name] = mod
                self.kept += ss
        stats = {"target": self.arch, "kernels": len(self.kept), "rejected": len(specs) - len(self.kept),
                 "wall_s": round(time.perf_counter() - t0, 2)}
        self.build_stats = stats
        info = self.group_info.setdefault("build", {})
        info.update(summarize([r for r in self.results if r.group == "build"]))
        info.update(entries=len(specs), checks=len(specs), seconds=stats["wall_s"])
        self.log(f"[build]    {self.arch}: {len(self.kept)} HIP kernels ({stats['wall_s']:.1f} s)")

    # ---- groups ------------------------------------------------------------------------
    def run(self):
        if any(checks.group(g).NEEDS_KERNELS for g in self.groups):
            self.build()
        else:                         # no selected group uses the catalog kernels: build nothing
            self.kept, self.module, self.build_stats = [], None, {"target": self.target, "kernels": 0}
        for g in self.groups:
            mod = checks.group(g)
            if self.module is None and mod.NEEDS_KERNELS:
                continue
            t0 = time.perf_counter()
            self._finish_group(g, mod.run(self), t0)
        return self.results

    def _finish_group(self, group, results, t0):
        self.results += results
        secs = time.perf_counter() - t0
        info = self.group_info.setdefault(group, {})
        info.update(summarize(results, group))
        info["seconds"] = round(secs, 2)
        self.log(progress_line(group, info))


def summarize(results, group=None):
    rs = [r for r in results if group is None or r.group == group]
    return {"entries": len({r.entry for r in rs if r.status != "skip"}),
            "checks": len(rs),
            "cases": sum(r.cases for r in rs),
            "compared": sum(r.compared for r in rs),
            "mismatches": sum(r.mismatches for r in rs),
            "failed": sum(r.status == "fail" for r in rs),
            "errors": sum(r.status == "error" for r in rs),
            "skipped": sum(r.status == "skip" for r in rs),
            "notes": sorted({r.note for r in rs if r.status in ("skip", "error") and r.note})[:5]}


def group_status(info):
    if info.get("failed") or info.get("errors"):
        return "FAIL"
    if info.get("skipped") and not info.get("entries"):
        return "skipped"
    return "ok"


def progress_line(group, info):
    st = group_status(info)
    if st == "skipped":
        return f"[{group}]{' ' * max(1, 9 - len(group))}skipped: {'; '.join(info['notes'])}"
    s = (f"[{group}]{' ' * max(1, 9 - len(group))}{info['entries']} entries, {info['cases']} cases, "
         f"{info['compared']} compared, {info['mismatches']} mismatches")
    if info.get("errors"):
        s += f", {info['errors']} errors"
    return s + f" -> {st} ({info.get('seconds', 0):.1f} s)"
