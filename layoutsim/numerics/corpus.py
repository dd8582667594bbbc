"""Measured corpora: raw inputs and the D bits a real GPU returned, replayed through `mma`.

One `.npz` per (arch, instruction) under tests/data/numerics/<arch>/<canonical name>.npz with
arrays a, b, c, d (raw bits in the formats' raw dtypes, a leading case axis) and `meta`, a
JSON string: format, version, instruction (canonical), arch, vendor, gpu, driver, runtime
(CUDA or ROCm version), date, generator {module, seed, n, layoutsim_version}, and free
`notes` (e.g. what `cuobjdump -sass` showed). tests/data/numerics/README.md is the spec.

    from layoutsim.numerics import corpus
    corpus.save(path, "mma.m16n8k16.f32.f16.f16.f32", "sm_90", a, b, c, d,
                gpu="NVIDIA H200", driver="570.86", runtime="CUDA 12.8", seed=1, n=3000)
    r = corpus.replay(corpus.load(path)); assert r.ok, r.report()

    python -m layoutsim.numerics.corpus budget [--mb 40]     # cases per instruction
    python -m layoutsim.numerics.corpus replay [FILES...]     # check files against the model
"""
import datetime
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import LayoutsimError
from ..files import measured_data
from ..formats import decode, raw_dtype

FORMAT = "layoutsim-numerics-corpus"
VERSION = 1


DATA_DIR = measured_data("numerics")
REQUIRED = ("instruction", "arch", "vendor", "gpu", "driver", "runtime", "date", "generator")


@dataclass
class Corpus:
    instruction: str
    arch: str
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    meta: dict = field(default_factory=dict)
    path: Path = None

    @property
    def n(self):
        return len(self.a)


def in_corpus(entry):
    """Whether measurements of a catalog entry (or Instruction) are kept in the corpus: every
    warp-level MMA (mma.sync, AMD WMMA/SWMMAC), the wgmma m64n8 forms, and every wider wgmma
    form whose numerics the committed report confirms (a claim of confirmation must replay from
    tests/data); other wgmma N are checked on the GPU, not kept (`budget` covers the kept ones)."""
    if entry.family == "wgmma":
        return ".m64n8k" in entry.name or entry.name in confirmed_numerics()
    return entry.family in ("mma", "wmma", "swmmac")


def path_for(instruction, arch, root=DATA_DIR):
    """Where the corpus of an instruction measured on an arch lives."""
    from .api import resolve
    inst, _ = resolve(instruction, arch)
    return Path(root) / str(arch) / f"{inst.name}.npz"


def _check(inst, plan, a, b, c, d):
    M, N, K = plan.shape
    want = {"a": (plan.a, (M, K)), "b": (plan.b, (K, N)), "c": (plan.c, (M, N)), "d": (plan.d, (M, N))}
    n = None
    for name, arr in (("a", a), ("b", b), ("c", c), ("d", d)):
        fmt, shape = want[name]
        arr = np.asarray(arr)
        if arr.dtype != raw_dtype(fmt) or arr.ndim != 3 or tuple(arr.shape[1:]) != shape:
            raise LayoutsimError(f"corpus array {name} of {inst.name} must be {raw_dtype(fmt)} raw "
                                 f"bits of shape (n, {shape[0]}, {shape[1]}); got {arr.dtype} "
                                 f"{tuple(arr.shape)}")
        if n is not None and len(arr) != n:
            raise LayoutsimError(f"corpus arrays of {inst.name} have different case counts")
        n = len(arr)


def save(path, instruction, arch, a, b, c, d, *, gpu, driver, runtime, seed=None, n=None,
         date=None, vendor=None, notes="", **extra):
    """Write one corpus file with layoutsim.files.write_atomic (its folder must exist). Returns its Path."""
    from .. import __version__
    from .api import resolve
    from .plan import make_plan
    inst, prof = resolve(instruction, arch)
    plan = make_plan(inst, prof)
    _check(inst, plan, a, b, c, d)
    from ..archs import normalize, vendor as vendor_of
    arch_n = normalize(arch)
    meta = {"format": FORMAT, "version": VERSION, "instruction": inst.name, "arch": arch_n,
            "vendor": vendor or vendor_of(arch_n), "gpu": gpu, "driver": driver,
            "runtime": runtime,
            "date": date or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "generator": {"module": "layoutsim.numerics.cases", "seed": seed,
                          "n": int(n if n is not None else len(a)), "layoutsim_version": __version__},
            "notes": notes, **extra}
    from ..files import write_atomic
    path = Path(path)
    write_atomic(path, lambda fh: np.savez_compressed(
        fh, a=np.asarray(a), b=np.asarray(b), c=np.asarray(c), d=np.asarray(d),
        meta=np.array(json.dumps(meta, sort_keys=True))), "numerics corpus")
    return path


def load(path):
    """Read and validate one corpus file."""
    path = Path(path)
    with np.load(path, allow_pickle=False) as z:
        missing = [k for k in ("a", "b", "c", "d", "meta") if k not in z.files]
        if missing:
            raise LayoutsimError(f"{path}: not a numerics corpus (missing {', '.join(missing)})")
        meta = json.loads(str(z["meta"]))
        arrays = {k: z[k] for k in ("a", "b", "c", "d")}
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise LayoutsimError(f"{path}: format {meta.get('format')!r} version "
                             f"{meta.get('version')!r}; this layoutsim reads {FORMAT} v{VERSION}")
    absent = [k for k in REQUIRED if k not in meta]
    if absent:
        raise LayoutsimError(f"{path}: metadata lacks {', '.join(absent)}")
    return Corpus(meta["instruction"], meta["arch"], path=path, meta=meta, **arrays)


def files(root=DATA_DIR):
    """Every corpus file under root, sorted."""
    root = Path(root)
    return sorted(root.rglob("*.npz")) if root.is_dir() else []


@dataclass
class Replay:
    corpus: Corpus
    model: np.ndarray
    mismatch: np.ndarray

    @property
    def ok(self):
        return not self.mismatch.any()

    @property
    def count(self):
        return int(self.mismatch.sum())

    def report(self, limit=10):
        c = self.corpus
        fmt = self._dfmt()
        head = (f"{c.instruction} on {c.arch} ({c.meta.get('gpu')}, {c.path}): "
                f"{self.count} of {self.mismatch.size} results differ")
        lines = [head]
        for case, i, j in np.argwhere(self.mismatch)[:limit]:
            meas, got = c.d[case, i, j], self.model[case, i, j]
            w = c.d.dtype.itemsize * 2
            lines.append(f"  case {case} D[{i},{j}]: measured 0x{int(meas):0{w}x} "
                         f"({decode(fmt, meas)!r}) model 0x{int(got):0{w}x} ({decode(fmt, got)!r})")
        return "\n".join(lines)

    def _dfmt(self):
        from .api import resolve
        from .plan import instruction_formats
        inst, _ = resolve(self.corpus.instruction, self.corpus.arch)
        return instruction_formats(inst)[3]


def replay(corp):
    """Run a corpus through layoutsim.mma for its arch; compare raw bits."""
    import warnings
    from .api import UnverifiedProfileWarning, mma
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnverifiedProfileWarning)
        model = mma(corp.instruction, corp.a, corp.b, corp.c, arch=corp.arch, raw=True)
    return Replay(corp, model, model != corp.d)


# ----------------------------------------------------------------------------- budget
def case_bytes(instruction, arch="sm_90"):
    """Uncompressed bytes of one case (a, b, c and d) of an instruction."""
    from .api import resolve
    from .plan import make_plan
    inst, prof = resolve(instruction, arch)
    p = make_plan(inst, prof)
    M, N, K = p.shape
    w = lambda f: raw_dtype(f).itemsize  # noqa: E731
    return M * K * w(p.a) + K * N * w(p.b) + M * N * (w(p.c) + w(p.d))


# The forms on which the profile's parameters are decided get the most cases.
MAIN_FORMS = ("mma.m16n8k16.f32.f16.f16.f32", "mma.m16n8k16.f32.bf16.bf16.f32",
              "mma.m16n8k8.f32.tf32.tf32.f32", "mma.m16n8k32.f32.e4m3.e4m3.f32")
WGMMA_FORMS = ("wgmma.m64n8k16.f32.f16.f16", "wgmma.m64n8k32.f32.e4m3.e4m3",
               "wgmma.m64n8k32.f16.e4m3.e4m3")


WIDE_FILE_BYTES = 400_000     # a wgmma form wider than N = 8: about this much per file


@functools.lru_cache(maxsize=None)
def confirmed_numerics():
    """Canonical names whose numerics the committed GPU report confirmed
    (layoutsim/isa/data/confirmed.json, written by `gpu-check report --confirmed`)."""
    from ..isa.registry import confirmed
    return frozenset(confirmed().get("numerics", ()))


def suggested_cases(instruction, arch="sm_90"):
    """Cases per instruction in the corpus (README): 1500 for the four forms that decide the
    profile, 300 for the other float mma.sync, 400 for f64 (NaN contests), 64 for exact
    integer mma.sync; wgmma at N = 8: 200 for f16->f32 and e4m3 (whose fp8 path differs), 100 for the
    other float forms, 32 for integers; a wider wgmma N: as many as fit WIDE_FILE_BYTES (2 to 100)."""
    from .api import resolve
    from .plan import make_plan
    inst, prof = resolve(instruction, arch)
    p = make_plan(inst, prof)
    names = {inst.name, *inst.aliases}
    if inst.family == "wgmma":
        if inst.shape[1] > 8:
            return max(2, min(100, WIDE_FILE_BYTES // case_bytes(inst.name, arch)))
        return 32 if p.kind == "int" else 200 if names & set(WGMMA_FORMS) else 100
    if p.kind == "int":
        return 64
    if p.kind == "f64":
        return 400              # the NaN-priority contests want more than the arithmetic does
    return 1500 if names & set(MAIN_FORMS) else 300


def budget(arch="sm_90", total_mb=40.0):
    """[(instruction, cases, MB)] for every instruction the corpus keeps (`kept`), and the total."""
    from ..isa.registry import listing
    rows = []
    for e in listing(arch=arch):
        if in_corpus(e):
            n = suggested_cases(e.name, arch)
            rows.append((e.name, n, n * case_bytes(e.name, arch) / 1e6))
    total = sum(r[2] for r in rows)
    return rows, total, total <= total_mb


def main(argv=None):
    from ..script import Parser
    ap = Parser(prog="python -m layoutsim.numerics.corpus")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    b = sub.add_parser("budget", help="suggested cases per instruction and corpus size")
    b.add_argument("--arch", default="sm_90")
    b.add_argument("--mb", type=float, default=40.0)
    r = sub.add_parser("replay", help="replay corpus files through the model")
    r.add_argument("files", nargs="*")
    args = ap.parse_args(argv)
    if args.cmd == "budget":
        rows, total, fits = budget(args.arch, args.mb)
        for name, n, mb in rows:
            print(f"{n:6d}  {mb:7.3f} MB  {name}")
        print(f"{len(rows)} instructions, {total:.1f} MB uncompressed "
              f"({'within' if fits else 'OVER'} the {args.mb:g} MB budget)")
        return 0 if fits else 1
    paths = [Path(p) for p in args.files] or files()
    if not paths:
        print(f"no corpus files under {DATA_DIR}")
        return 0
    bad = 0
    for p in paths:
        rep = replay(load(p))
        print(rep.report() if not rep.ok else f"ok  {rep.corpus.n:6d} cases  {p}")
        bad += not rep.ok
    return 1 if bad else 0


if __name__ == "__main__":
    from ..script import run_script
    raise SystemExit(run_script(main, "python -m layoutsim.numerics.corpus"))
