"""`gpu-check run`: build every kernel once, then the check groups, each one a progress line."""
import time
from pathlib import Path

import numpy as np

from . import build as B
from . import kernels as K
from .checks import banks as bank_checks
from .checks import layouts
from .checks import numerics as num
from .checks.common import Result
from .record import LayoutRecorder

GROUPS = ("layouts", "numerics", "banks")
NUMERIC_ELEMENT_BUDGET = 1 << 20      # D elements per launch for the numerics group


DEFAULT_CASES = 512


def numeric_cases(spec, wanted=None, arch="sm_90"):
    """Cases for one instruction: --cases when given, else the numerics corpus budget
    (layoutsim.numerics.corpus.suggested_cases); capped for the widest wgmma N."""
    if wanted is None:
        try:
            from layoutsim.numerics.corpus import suggested_cases
            wanted = suggested_cases(spec.entry, arch) if in_corpus(spec) else DEFAULT_CASES
        except Exception:   # noqa: BLE001 - no budget known: the default
            wanted = DEFAULT_CASES
    m, n, _ = spec.instr.shape
    return int(min(wanted, max(1, NUMERIC_ELEMENT_BUDGET // (m * n))))


def in_corpus(spec):
    """Instructions whose measurements go into the numerics corpus: AMD forms, and what
    layoutsim.numerics.corpus.kept says (every mma.sync, wgmma at N = 8, and the wider wgmma
    forms whose numerics the committed report confirms)."""
    if spec.kind == "amd":
        return True
    from layoutsim.numerics.corpus import kept
    return spec.kind in ("mma", "wgmma") and kept(spec.entry, "sm_90")


class Session:
    def __init__(self, backend, only=None, cases=None, seed=1, record=None, log=print, groups=GROUPS,
                 wgmma_all=False, bank_seconds=None):
        self.backend = backend
        self.only = only
        self.cases = cases
        self.seed = seed
        self.record = Path(record) if record else None
        self.log = log
        self.groups = tuple(g for g in GROUPS if g in groups)
        self.wgmma_all = wgmma_all
        self.bank_seconds = bank_seconds
        self.results = []
        self.group_info = {}
        self.env = backend.environment()
        if getattr(backend, "vendor", "nvidia") == "nvidia":
            self.env.setdefault("nvcc", B.nvcc_version())
        self.target = backend.target
        self.arch = backend.arch
        self.sass = {}

    # ---- build -------------------------------------------------------------------------
    def module_of(self, spec):
        return self.modules.get(spec.name, self.module)

    def build(self):
        self.modules = {}
        if getattr(self.backend, "vendor", "nvidia") == "amd":
            return self._build_amd()
        t0 = time.perf_counter()
        specs = K.nvidia_specs(self.target, self.only, self.wgmma_all)
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
        entries of its generation (gfx11 or gfx12)."""
        import tempfile
        from layoutsim.archs import generation
        from .backends import hip as H
        t0 = time.perf_counter()
        gen = generation(self.arch)
        specs = [s for s in K.amd_specs(self.only) if s.gen == gen]
        self.kept, self.module = [], None
        with tempfile.TemporaryDirectory(prefix="gpu_check_hip_") as tmp:
            for (_, wave), ss in sorted(H.groups(specs).items()):
                try:
                    obj = H.compile_group(ss, self.arch, wave, tmp)
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
    def run_layouts(self):
        t0 = time.perf_counter()
        rec = LayoutRecorder() if self.record else None
        out_results = []
        for spec in self.kept:
            probes = layouts.plan(spec)
            inp = np.concatenate([p.inp for p in probes], axis=0)
            n = len(inp)
            try:
                out = self.backend.launch(self.module_of(spec), spec, inp, n).reshape(n, spec.out_words)
            except Exception as e:   # noqa: BLE001 - a launch failure is a result, reported
                out_results.append(Result("layouts", spec.entry, spec.kind, cases=n, status="error",
                                          note=f"launch failed: {str(e).strip().splitlines()[0] if str(e) else e!r}"))
                continue
            start, meta = 0, []
            for p in probes:
                k = len(p.inp)
                out_results.append(layouts.compare(spec, p.check, inp[start:start + k], out[start:start + k], p.meta))
                meta.append((p.check, start, k, p.meta))
                start += k
            if rec is not None:
                rec.add(spec, meta, inp, out)
        if rec is not None and rec.records:
            path = rec.save(self.record / "layouts" / f"layouts_{self.arch}.npz", self.env)
            self.group_info.setdefault("layouts", {})["recorded"] = str(path)
        self._finish_group("layouts", out_results, t0)

    def run_numerics(self):
        t0 = time.perf_counter()
        out_results = []
        try:
            num._api()
        except num.NumericsUnavailable as e:
            self._finish_group("numerics", [Result("numerics", "layoutsim.mma", "random", status="skip",
                                                   note=str(e))], t0)
            return
        specs = {s.entry: s for s in self.kept if s.kind in ("mma", "wgmma")
                 or (s.kind == "amd" and "IDX" not in s.instr.operands)}
        # biggest first, so the pool's tail is short
        jobs = sorted(((e, numeric_cases(s, self.cases, self.arch), self.seed, self.arch) for e, s in specs.items()),
                      key=lambda j: -(j[1] * specs[j[0]].instr.shape[0] * specs[j[0]].instr.shape[1]))
        results = num.host_work_all(jobs, log=self.log)
        while True:
            try:
                entry, a, b, c, d_model = next(results)
            except StopIteration:
                break
            except Exception as e:   # noqa: BLE001 - the model or the generator failed: say so, go on
                out_results.append(Result("numerics", "layoutsim.numerics", "random", status="error",
                                          note=f"case generation / model failed: {e!r}"))
                continue
            spec = specs[entry]
            n = len(a)
            try:
                out = self.backend.launch(self.module_of(spec), spec, spec.pack_inputs(a, b, c), n)
            except Exception as e:   # noqa: BLE001
                out_results.append(Result("numerics", spec.entry, "random", cases=n, status="error",
                                          note=f"launch failed: {e}"))
                continue
            d = spec.unpack_d(out.reshape(n, spec.out_words))
            out_results.append(num.compare(spec, a, b, c, d, self.arch, d_model=d_model))
            if self.record and in_corpus(spec):
                try:
                    ops = self.sass.get(spec.name)
                    num.save_corpus(self.record / "numerics", spec, a, b, c, d, self.env, self.arch, seed=self.seed,
                                    notes=f"cuobjdump -sass: {' '.join(ops)}" if ops else "")
                except Exception as e:   # noqa: BLE001
                    self.group_info.setdefault("numerics", {}).setdefault("record_errors", []).append(
                        f"{spec.entry}: {e}")
        order = {e: i for i, e in enumerate(specs)}
        out_results.sort(key=lambda r: order.get(r.entry, -1))
        self._finish_group("numerics", out_results, t0)

    def run_banks(self):
        t0 = time.perf_counter()
        keep = self.record / "banks" if self.record else None
        release = getattr(self.backend, "release", None)
        if release:
            release()            # the probe runs in its own process, under ncu
        self._finish_group("banks", bank_checks.run(keep, self.bank_seconds), t0)

    def run(self):
        self.build()
        for g in self.groups:
            if self.module is None and g in ("layouts", "numerics"):
                continue
            getattr(self, f"run_{g}")()
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
