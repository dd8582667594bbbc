"""`layoutsim ptx run`: execute a kernel's PTX (or a .cu compiled with nvcc) on the model.

    layoutsim ptx run k.cu --kernel transpose --grid 4,4 --block 32,8 \\
        --arg in.npy --arg zeros:f32:128x128 --out results/
    layoutsim ptx run k.ptx --kernel saxpy --grid 4 --block 256 \\
        --arg i32:1000 --arg f32:2.0 --arg x.npy --arg y.npy --json

Arguments (--arg, in the kernel's parameter order): FILE.npy (an array: a global buffer),
zeros:DTYPE:SHAPE / ones:DTYPE:SHAPE / arange:DTYPE:SHAPE (arrays; SHAPE like 128x64),
TYPE:VALUE scalars passed by value (i8 i16 i32 i64 u8 u16 u32 u64 f32 f64, e.g. i32:5, f32:0.5).
The report lists the kernel's shared-memory instructions sorted by excess wavefronts (what
bank conflicts cost beyond the ideal) with their CUDA source lines; --all lists every line.
--json prints {"schema","kernel","arch","grid","block","shared_wavefronts","shared_ideal",
"global","warp_instructions","sampled","notes","hazards","fault","seconds","instructions":
[{"line","cuda","text","executions","wavefronts","ideal","excess","kind","sass","requests",
"sectors","note"}],"outputs"}.
"""
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..errors import LayoutsimError, suggest
from . import print_json

DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16",
          "i8": "int8", "s8": "int8", "i16": "int16", "s16": "int16", "i32": "int32", "s32": "int32",
          "i64": "int64", "s64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
          "u64": "uint64"}
SCALARS = ("i8", "i16", "i32", "i64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f32", "f64")
MAX_ARRAY_BYTES = 1 << 31


def register(sub):
    p = sub.add_parser("ptx", help="run a kernel's PTX on the model (outputs bit for bit, bank costs)",
                       description="Execute PTX kernels: outputs bit for bit, per-line shared-memory "
                                   "wavefronts, racecheck.")
    ps = p.add_subparsers(dest="ptx_command", metavar="SUBCOMMAND")
    ps.required = True
    r = ps.add_parser("run", help="run one launch of a kernel",
                      description="Run one launch of a kernel from FILE.ptx, or FILE.cu compiled with "
                                  "nvcc -ptx -lineinfo.")
    r.add_argument("file", help="FILE.ptx, or FILE.cu (compiled with nvcc when it is installed)")
    r.add_argument("--kernel", required=True, help="entry name as in the PTX (extern \"C\" or mangled)")
    r.add_argument("--grid", required=True, help="X[,Y[,Z]] CTAs")
    r.add_argument("--block", required=True, help="X[,Y[,Z]] threads per CTA")
    r.add_argument("--arg", action="append", default=[], metavar="ARG",
                   help="one per kernel parameter, in order: FILE.npy, zeros:DTYPE:SHAPE, "
                        "ones:DTYPE:SHAPE, arange:DTYPE:SHAPE, or TYPE:VALUE (i32:5, f32:0.5, u64:7)")
    r.add_argument("--arch", default="sm_90", help="sm_80, sm_90 (default), ...")
    r.add_argument("--shared-bytes", type=int, default=0, help="dynamic shared memory per CTA")
    r.add_argument("--out", help="directory for the final buffers (argN.npy)")
    r.add_argument("--ctas", type=int, help="run a sample of this many CTAs (counts extrapolated)")
    r.add_argument("--jobs", type=int, default=1, help="processes to run CTAs in (default 1)")
    r.add_argument("--racecheck", action="store_true", help="report shared-memory hazards between warps")
    r.add_argument("--top", type=int, default=20, help="lines in the report (default 20)")
    r.add_argument("--all", action="store_true", help="list every PTX line, in program order")
    r.add_argument("--nvcc-flag", action="append", default=[], metavar="FLAG",
                   help="extra nvcc flag for a .cu (repeatable), e.g. --nvcc-flag=-std=c++17")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.set_defaults(run=run)


def run(args):
    from .. import ptx
    from ..ptx.state import PtxFault
    text = read_source(args.file, args.arch, args.nvcc_flag)
    values = [parse_arg(a, i) for i, a in enumerate(args.arg)]
    if args.jobs < 1:
        raise LayoutsimError(f"--jobs {args.jobs}: give at least 1")
    progress = None if (args.quiet or args.json) else _progress()
    try:
        r = ptx.run(text, args.kernel, args.grid, args.block, values, arch=args.arch,
                    shared_bytes=args.shared_bytes, ctas=args.ctas, jobs=args.jobs,
                    racecheck=args.racecheck, progress=progress)
    except PtxFault as e:
        if args.out and e.run is not None:
            write_outputs(args.out, e.run.buffers)
        raise
    outputs = write_outputs(args.out, r.buffers) if args.out else []
    if args.json:
        print_json(dict(r.to_json(), outputs=outputs))
    else:
        print(r.format(top=args.top, all_lines=args.all))
        for path in outputs:
            print(f"wrote {path}")
    return 0


def _progress():
    state = {"t": time.monotonic()}

    def cb(done, chunk, total, steps):
        now = time.monotonic()
        if now - state["t"] >= 2.0:
            state["t"] = now
            print(f"ptx: CTAs {done}..{done + chunk - 1} of {total} running ({steps} steps in this batch)",
                  file=sys.stderr, flush=True)
    return cb


def read_source(path, arch, flags=()):
    from ..files import read_regular
    p = Path(path)
    if not p.exists():
        raise LayoutsimError(f"{path}: no such file")
    if p.suffix not in (".cu", ".ptx"):
        raise LayoutsimError(f"{path}: give a .ptx file or a .cu file (compiled with nvcc)")
    data = read_regular(path, "kernel source")
    if p.suffix == ".cu":
        return compile_cu(p, arch, flags)
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise LayoutsimError(f"{path}: not a PTX text file") from None


def compile_cu(path, arch, flags=()):
    """nvcc -ptx -lineinfo -arch=ARCH FILE.cu -> PTX text."""
    from ..archs import normalize
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise LayoutsimError(f"{path}: nvcc is not installed; compile it yourself with "
                             f"nvcc -ptx -lineinfo -arch={arch} and give the .ptx")
    a = normalize(arch)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "k.ptx"
        cmd = [nvcc, "-ptx", "-lineinfo", f"-arch={a}", *flags, str(path), "-o", str(out)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            first = next((ln for ln in res.stderr.splitlines() if "error" in ln), res.stderr.strip()[:200])
            raise LayoutsimError(f"{path}: nvcc failed: {first}")
        return out.read_text()


def parse_arg(text, i):
    """One --arg value: an array or a scalar."""
    import numpy as np
    s = str(text)
    if s.endswith(".npy"):
        import io

        from ..files import read_regular
        if not Path(s).exists():
            raise LayoutsimError(f"--arg {i} {s!r}: no such .npy file")
        data = read_regular(s, f"--arg {i} array", MAX_ARRAY_BYTES + 4096)
        try:
            return np.load(io.BytesIO(data), allow_pickle=False)
        except (ValueError, OSError) as e:
            raise LayoutsimError(f"--arg {i} {s!r}: not a readable .npy array ({e})") from None
    parts = s.split(":")
    if parts[0] in ("zeros", "ones", "arange"):
        if len(parts) != 3:
            raise LayoutsimError(f"--arg {i} {s!r}: give {parts[0]}:DTYPE:SHAPE, e.g. {parts[0]}:f32:128x64")
        dt = dtype(parts[1], i)
        try:
            shape = tuple(int(x) for x in parts[2].lower().split("x"))
        except ValueError:
            shape = ()
        if not shape or min(shape) < 1:
            raise LayoutsimError(f"--arg {i} {s!r}: SHAPE must be positive integers like 128x64")
        n = int(np.prod(shape, dtype=np.int64))
        if n * dt.itemsize > MAX_ARRAY_BYTES:
            raise LayoutsimError(f"--arg {i} {s!r}: {n * dt.itemsize} bytes is more than the "
                                 f"{MAX_ARRAY_BYTES} allowed")
        if parts[0] == "zeros":
            return np.zeros(shape, dt)
        if parts[0] == "ones":
            return np.ones(shape, dt)
        return np.arange(n).astype(dt).reshape(shape)
    if len(parts) == 2 and parts[0] in SCALARS:
        t, v = parts
        try:
            if t.startswith("f"):
                return np.dtype(DTYPES[t]).type(float(v))
            iv = int(v, 0)
        except ValueError:
            raise LayoutsimError(f"--arg {i} {s!r}: {v!r} is not a {t} value") from None
        info = np.iinfo(DTYPES[t])
        if not info.min <= iv <= info.max:
            raise LayoutsimError(f"--arg {i} {s!r}: {iv} is outside {t} ({info.min}..{info.max})")
        return np.dtype(DTYPES[t]).type(iv)
    raise LayoutsimError(f"--arg {i} {s!r}: give FILE.npy, zeros:DTYPE:SHAPE, ones:DTYPE:SHAPE, "
                         f"arange:DTYPE:SHAPE or TYPE:VALUE with TYPE one of {', '.join(SCALARS)}")


def dtype(name, i):
    import numpy as np
    n = DTYPES.get(name, name)
    if n == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    try:
        dt = np.dtype(n)
    except TypeError:
        dt = None
    if dt is None or dt.kind not in "biuf":
        raise LayoutsimError(f"--arg {i}: unknown dtype {name!r}{suggest(name, list(DTYPES))}; valid: "
                             f"{', '.join(DTYPES)} or numpy names")
    return dt


def write_outputs(directory, buffers):
    """Write every array argument's final content to DIR/argN.npy (layoutsim.files.write_atomic:
    regular files only, atomically, modes kept)."""
    import numpy as np

    from ..files import make_dir, write_atomic
    d = Path(make_dir(directory, "--out folder"))
    paths = []
    for i, b in enumerate(buffers):
        if b is None:
            continue
        path = d / f"arg{i}.npy"
        write_atomic(path, lambda f, b=b: np.save(f, b, allow_pickle=False), "output array")
        paths.append(str(path))
    return paths
