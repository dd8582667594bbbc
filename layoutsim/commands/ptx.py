"""`layoutsim ptx run`: execute a kernel's PTX (or a .cu compiled with nvcc) on the model.

    layoutsim ptx run k.cu --kernel transpose --grid 4,4 --block 32,8 \\
        --arg in.npy --arg zeros:f32:128x128 --out results/
    layoutsim ptx run k.ptx --kernel saxpy --grid 4 --block 256 \\
        --arg i32:1000 --arg f32:2.0 --arg x.npy --arg y.npy --json

Arguments (--arg, in the kernel's parameter order): FILE.npy (an array: a global buffer),
zeros:DTYPE:SHAPE / ones:DTYPE:SHAPE / arange:DTYPE:SHAPE (arrays; SHAPE like 128x64),
TYPE:VALUE scalars passed by value (i8 i16 i32 i64 u8 u16 u32 u64 f32 f64, e.g. i32:5, f32:0.5),
tmap:BUF:DIMS:BOX[:SWIZZLE[:STRIDES]] a CUtensorMap (cuTensorMapEncodeTiled's fields; for a
`__grid_constant__ CUtensorMap` parameter or a pointer to one): BUF the index of the --arg holding
the tensor or a FILE.npy of its own, DIMS and BOX innermost first like 200x120 and 64x64, SWIZZLE
none (default), 32B, 64B or 128B, STRIDES the byte strides of dimensions 1.. (default dense), e.g.
tmap:a.npy:200x120:64x64:128B; the element size is the tensor's dtype's.
tex:FILE.npy[:KEY=VALUE,...] a cudaTextureObject_t over the array (x its last axis, or the one before
the channels): channels=1|2|4, filter=point|linear, address=wrap|clamp|mirror|border (or one per
axis, x/y/z: clamp/border), read=element|normalized, normalized=0|1 (coordinates), layered=0|1,
cubemap=0|1, e.g. tex:img.npy:filter=linear,address=border,normalized=1; surf:FILE.npy[:channels=N,
layered=0|1] a cudaSurfaceObject_t (its final content is written like an array argument's).
--symbol NAME=ARG (repeatable) is what the host copies into a __constant__/__device__ variable
before the launch (cudaMemcpyToSymbol, from byte 0): ARG a FILE.npy, zeros/ones/arange:DTYPE:SHAPE
or TYPE:VALUE.
The report lists the kernel's shared-memory instructions sorted by excess wavefronts (what
bank conflicts cost beyond the ideal), then its global-memory instructions sorted by excess
sectors (beyond what their bytes need), with their CUDA source lines; --all lists every line.
--initcheck adds the reads of never-written shared memory; --show-line LINE the lanes and
addresses of a line's first warp executions (--picture FILE draws the first one).
--json prints {"schema","kernel","arch","grid","block","cluster","shared_wavefronts","shared_ideal",
"global","warp_instructions","sampled","notes","hazards","initcheck","fault","seconds",
"sass_source","instructions":[{"line","cuda","text","executions","wavefronts","ideal","excess",
"kind","sass","requests","sectors","ideal_sectors","excess_sectors","global_kind","note"}],
"gmma_wavefronts","tensor_maps":[{"arg","buffer","dims","box","swizzle","elem_bytes",
"strides_bytes","offset"}],"fidelity":{"warp_instructions","exact","approximate","unknown",
"refused","documented","documented_instructions","approximate_instructions","unknown_instructions","contraction"},"printf","assertions",
"graph_conditionals":[{"handle","value"}],"outputs"} (+ "accesses", "picture" with --show-line/--picture).
What the kernel's printf prints goes to stdout before the report (in --json: "printf"); a failed
assert prints the CUDA runtime's line on stderr and stops the run as a fault of kind "assert".
A fault (out of bounds, misaligned, deadlock, assert, ...: layoutsim.ptx.faults.KINDS) stops the run
with exit code 2 and one line on stderr; with --json stdout has the report so far, its "fault"
{"kind","message","thread","cta","warp","lane","ptx_line","ptx","cuda","address","space",
"buffer":{"space","name","arg","start","bytes","offset"}} (a deadlock adds "waits"). --max-steps and
--timeout stop a run the same way; --json then prints {"fault":{"kind":"step_limit"|"time_limit",
"message","steps"},"outputs":[]}.
"""
import math
import sys
from pathlib import Path

from .. import archs
from ..errors import LayoutsimError, printable, suggest
from ..formats import numpy_dtype
from . import print_json
from ._options import refuse

DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16",
          "i8": "int8", "s8": "int8", "i16": "int16", "s16": "int16", "i32": "int32", "s32": "int32",
          "i64": "int64", "s64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
          "u64": "uint64"}
SCALARS = ("i8", "i16", "i32", "i64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f32", "f64")
MAX_DIMS = 32               # numpy's own limit is 64 (and an error that is not one line)


def _buffer_dtypes():
    import numpy as np
    return {np.dtype(v) for v in DTYPES.values() if v != "bfloat16"}   # .npy cannot name bfloat16


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
    r.add_argument("--kernel", required=True, help="entry name as in the PTX (extern \"C\" or mangled), or the C++ "
                   "kernel's name: scale, ns::scale, scale<float>, 'void scale<float>(float*)'")
    r.add_argument("--grid", required=True, help="X[,Y[,Z]] CTAs")
    r.add_argument("--block", required=True, help="X[,Y[,Z]] threads per CTA")
    r.add_argument("--arg", action="append", default=[], metavar="ARG",
                   help="one per kernel parameter, in order: FILE.npy, zeros:DTYPE:SHAPE, "
                        "ones:DTYPE:SHAPE, arange:DTYPE:SHAPE, or TYPE:VALUE (i32:5, f32:0.5, u64:7)")
    r.add_argument("--symbol", action="append", default=[], metavar="NAME=ARG",
                   help="what the host copies into a __constant__/__device__ variable before the launch "
                        "(cudaMemcpyToSymbol, from byte 0; repeatable): NAME as in the PTX, ARG a FILE.npy, "
                        "zeros/ones/arange:DTYPE:SHAPE or TYPE:VALUE, e.g. --symbol c_Kernel=kernel.npy")
    r.add_argument("--arch", default="sm_90", help="sm_80, sm_90 (default), ...")
    r.add_argument("--shared-bytes", type=int, default=0, help="dynamic shared memory per CTA")
    r.add_argument("--out", help="directory for the final buffers (argN.npy)")
    r.add_argument("--ctas", type=int, help="run a sample of this many CTAs (counts extrapolated)")
    r.add_argument("--cluster", help="X[,Y[,Z]] CTAs per thread-block cluster (sm_90+; default: the kernel's "
                   ".reqnctapercluster, else none); the grid must be a multiple of it, at most 8 CTAs (16 "
                   "non-portable)")
    r.add_argument("--jobs", type=int, default=1, help="processes to run CTAs in (default 1)")
    r.add_argument("--racecheck", action="store_true", help="report shared-memory hazards between warps")
    r.add_argument("--initcheck", action="store_true",
                   help="report reads of shared memory no thread has written (as compute-sanitizer's initcheck)")
    r.add_argument("--show-line", metavar="LINE",
                   help="list the lanes and addresses of this line's first warp executions: a PTX line "
                        "number or FILE.cu:LINE")
    r.add_argument("--picture", metavar="FILE",
                   help="with --show-line: draw its first execution to FILE (.svg, .html, .png): shared "
                        "memory over banks, global memory over sectors")
    r.add_argument("--top", type=int, default=20, help="lines in the report (default 20)")
    r.add_argument("--all", action="store_true", help="list every PTX line, in program order")
    r.add_argument("--nvcc-flag", action="append", default=[], metavar="FLAG",
                   help="extra nvcc flag for a .cu (repeatable), one flag with its value each, after '=': "
                        "-std=c++NN, -IDIR, -DNAME[=VALUE], -UNAME, --expt-*, --extended-lambda, "
                        "-maxrregcount=N, -O0..-O3, -G, -Xptxas=-O0..-O3; e.g. --nvcc-flag=-std=c++17 "
                        "--nvcc-flag='-I include'; any other flag is refused")
    r.add_argument("--max-steps", type=int, help="stop after this many scheduler steps (default 50000000): "
                   "one line naming the PTX/CUDA lines the warps were running, exit 2")
    r.add_argument("--timeout", type=float, metavar="SECONDS",
                   help="stop after this much wall time (same line, exit 2); default none")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    r.add_argument("--json", action="store_true", help="machine-readable output")
    r.set_defaults(run=run)


def run(args):
    from .. import ptx
    from ..ptx.state import PtxFault
    from ..ptx.watch import RunLimit
    if args.top < 1:
        raise LayoutsimError(f"--top {args.top}: give a number of lines >= 1")
    refuse(args, () if str(args.file).endswith(".cu") else ("nvcc_flag",), f"to {args.file}",
           "nvcc flags go with a .cu file")
    refuse(args, ("top", "all", "quiet") if args.json else ("top",) if args.all else (),
           "with --json" if args.json else "with --all", "the JSON lists every line, and prints no progress"
           if args.json else "--all lists every line")
    if args.picture is not None and not args.show_line:
        raise LayoutsimError(f"--picture {args.picture}: give the line to draw with --show-line LINE")
    if args.picture is not None:               # a picture that cannot be written is refused before the run
        from ..files import check_target
        if Path(args.picture).suffix.lower() not in (".svg", ".html", ".htm", ".png"):
            raise LayoutsimError(f"--picture {args.picture}: name a .svg, .html or .png file")
        check_target(args.picture, "picture")
    if args.out is not None:                  # --out '' is refused by files.py, not skipped
        check_out_dir(args.out)
    archs.nvidia_only(args.arch, "ptx run")        # before nvcc sees an AMD arch
    text = read_source(args.file, args.arch, args.nvcc_flag)
    budget = [0]
    values = [parse_arg(a, i, budget) for i, a in enumerate(args.arg)]
    symbols = parse_symbols(args.symbol, budget)
    if args.out is not None:                            # every output checked before the run, not after it
        check_outputs(args.out, values)
    if args.jobs < 1:
        raise LayoutsimError(f"--jobs {args.jobs}: give at least 1")
    progress = None if (args.quiet or args.json) else _progress()
    try:
        r = ptx.run(text, args.kernel, args.grid, args.block, values, arch=args.arch,
                    shared_bytes=args.shared_bytes, ctas=args.ctas, jobs=args.jobs,
                    racecheck=args.racecheck, initcheck=args.initcheck, max_steps=args.max_steps,
                    timeout=args.timeout, progress=progress, cluster=args.cluster, symbols=symbols or None)
    except RunLimit as e:
        # a step or time limit: under --json a report holding only its `fault` record, then the line
        if args.json:
            print_json({"fault": {"kind": e.kind, "message": str(e), "steps": e.steps}, "outputs": []})
        raise
    except PtxFault as e:
        # a fault: the buffers as they were, the report so far with its `fault` under --json, and
        # the one line on stderr with exit code 2 (cli.main), as for any other error
        outputs = write_outputs(args.out, e.run.buffers) if args.out is not None and e.run is not None else []
        if not args.json and e.run is not None:
            _printed(e.run)
        if args.json:
            report = e.run.to_json() if e.run is not None else {"fault": e.fault}
            print_json(dict(report, outputs=outputs))
        raise
    shown = show_line(r, args.show_line, args.picture) if args.show_line else {}
    outputs = write_outputs(args.out, r.buffers) if args.out is not None else []
    if args.json:
        print_json(dict(r.to_json(), outputs=outputs, **shown))
    else:
        _printed(r)
        print(printable(r.format(top=args.top, all_lines=args.all)))    # CUDA lines from files: escaped
        if shown:
            print(printable("\n".join(access_lines(shown["accesses"]))))
            if "picture" in shown:
                print(f"wrote {shown['picture']['file']}")
        for path in outputs:
            print(f"wrote {path}")
    return 0


def _printed(r):
    """The kernel's printf output on stdout, as the program would print it; failed asserts' lines
    on stderr, where the CUDA runtime prints them."""
    if r.printf:
        sys.stdout.write(r.printf)
        sys.stdout.flush()
    for line in r.assertions:
        print(line, file=sys.stderr)


def show_line(r, line, picture):
    """--show-line (and --picture): {"accesses": Run.accesses(line)[, "picture": its record]}."""
    key = int(line) if str(line).isdigit() else line
    out = {"accesses": r.accesses(key)}
    if picture:
        out["picture"] = r.render_access(key, picture)
    return out


def access_lines(recs):
    """The text of --show-line: each PTX line, then each of its sampled warp executions with its
    cost and the lanes' addresses (shared: CTA-relative offsets; global: "from" the first active
    lane's address, each lane's offset from it), 8 lanes a row."""
    out, last = [], None
    for r in recs:
        if r["ptx_line"] != last:
            last = r["ptx_line"]
            cuda = f" ({r['cuda']['file'].rsplit('/', 1)[-1]}:{r['cuda']['line']})" if r["cuda"] else ""
            n = sum(x["ptx_line"] == last for x in recs)
            out.append(f"line {last}{cuda} {r['ptx']} ({r['op']}): first {n} warp execution(s)")
        cost = (f"{r['wavefronts']} wavefronts (ideal {r['ideal']})" if r["space"] == "shared" else
                f"{r['requests']} request(s), {r['sectors']} sectors (ideal {r['ideal_sectors']})")
        who = f"CTA {tuple(r['cta'])} warp {r['warp']}" if r["cta"] is not None else "a warp"
        addr = r["addresses"]
        base = next((a for a in addr if a is not None), 0) if r["space"] == "global" else None
        out.append(f"  {who}, lanes {r['mask']:#010x}: {cost}"
                   + (f", from {base:#x}:" if base is not None else ":"))
        for k in range(0, 32, 8):
            cells = ["-" if a is None else (f"{a:#x}" if base is None else f"{a - base:+d}") for a in addr[k:k + 8]]
            out.append(f"    lanes {k:2d}-{k + 7:2d}: " + " ".join(c.rjust(8) for c in cells))
    return out


def _progress():
    """A progress line on stderr each time the run reports (every ~2 s of wall time)."""
    def cb(status):
        print(status.line(), file=sys.stderr, flush=True)
    return cb


def read_source(path, arch, flags=()):
    """PTX text of FILE.ptx, or of FILE.cu compiled by layoutsim.ptx.compile_cu (nvcc, safely)."""
    from ..files import read_regular
    p = Path(path)
    if not p.exists():
        raise LayoutsimError(f"{path}: no such file")
    if p.suffix not in (".cu", ".ptx"):
        raise LayoutsimError(f"{path}: give a .ptx file or a .cu file (compiled with nvcc)")
    if p.suffix == ".cu":
        from ..ptx.nvcc import compile_cu       # (nvcc's driver and subprocess: for a .cu only)
        return compile_cu(p, arch, flags)
    # bytes that are not UTF-8 become lone surrogates, which the loader refuses naming their line
    return read_regular(path, "kernel source").decode("utf-8", "surrogateescape")


def parse_symbols(specs, budget):
    """--symbol NAME=ARG values: {name: array or numpy scalar}; ARG as an --arg array or scalar."""
    import re
    out = {}
    for s in specs:
        name, eq, value = str(s).partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_$%][\w$]*", name) or not value:
            raise LayoutsimError(f"--symbol {s!r}: give NAME=ARG, NAME a variable of the PTX (e.g. c_Kernel=k.npy)")
        if name in out:
            raise LayoutsimError(f"--symbol {name}: given twice")
        if value.startswith(("tmap:", "tex:", "surf:")):
            raise LayoutsimError(f"--symbol {s!r}: a variable takes an array or a scalar, not a tensor map or "
                                 f"texture/surface object")
        try:
            out[name] = parse_arg(value, "@", budget)
        except LayoutsimError as e:           # parse_arg's lines name --arg @: say --symbol NAME
            raise LayoutsimError(str(e).replace("--arg @", f"--symbol {name}")) from None
    return out


def parse_arg(text, i, budget=None):
    """One --arg value: an array, a scalar or a tensor map. budget: [bytes of the arrays parsed
    so far], so that all of them together are bounded before the next one is allocated."""
    import numpy as np
    s = str(text)
    budget = [0] if budget is None else budget
    if s.startswith("tmap:"):
        return tensor_map_arg(s, i)
    if s.startswith(("tex:", "surf:")):
        return object_arg(s, i, budget)
    if s.endswith(".npy"):
        from ..files import read_npy
        if not Path(s).exists():
            raise LayoutsimError(f"--arg {i} {s!r}: no such .npy file")

        def accept(dt, shape, nbytes):
            if dt not in _buffer_dtypes():
                raise LayoutsimError(f"--arg {i} {s!r}: an array of {dt} is not a buffer; give one of "
                                     f"{', '.join(k for k in DTYPES if k != 'bf16')} (little-endian)")
            _take(budget, nbytes, i, s)
        return read_npy(s, f"--arg {i} array", accept=accept)
    parts = s.split(":")
    if parts[0] in ("zeros", "ones", "arange"):
        if len(parts) != 3:
            raise LayoutsimError(f"--arg {i} {s!r}: give {parts[0]}:DTYPE:SHAPE, e.g. {parts[0]}:f32:128x64")
        dt = dtype(parts[1], i)
        try:
            shape = tuple(int(x) for x in parts[2].lower().split("x"))
        except ValueError:
            shape = ()
        if not shape or min(shape) < 1 or len(shape) > MAX_DIMS:
            raise LayoutsimError(f"--arg {i} {s!r}: SHAPE must be 1 to {MAX_DIMS} positive integers like 128x64")
        n = math.prod(shape)                   # Python ints: np.prod wraps in int64 (2**32 x 2**32 -> 0)
        _take(budget, n * dt.itemsize, i, s)
        if parts[0] == "zeros":
            return np.zeros(shape, dt)
        if parts[0] == "ones":
            return np.ones(shape, dt)
        out = np.empty(n, dt)
        for k in range(0, n, 1 << 20):       # in pieces: np.arange(n) would be an int64 copy of it all
            out[k:k + (1 << 20)] = np.arange(k, min(n, k + (1 << 20))).astype(dt)
        return out.reshape(shape)
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
                         f"arange:DTYPE:SHAPE, tmap:..., tex:FILE.npy[:...], surf:FILE.npy[:...] or TYPE:VALUE "
                         f"with TYPE one of {', '.join(SCALARS)}")


def tensor_map_arg(s, i):
    """tmap:BUF:DIMS:BOX[:SWIZZLE[:STRIDES]] -> layoutsim.ptx.TensorMapArg."""
    from ..ptx import TensorMapArg
    parts = s.split(":")[1:]
    if not 3 <= len(parts) <= 5:
        raise LayoutsimError(f"--arg {i} {s!r}: give tmap:BUF:DIMS:BOX[:SWIZZLE[:STRIDES]], e.g. "
                             f"tmap:0:200x120:64x64:128B (BUF: an --arg index or a FILE.npy)")

    def sizes(text, what):
        try:
            v = tuple(int(x) for x in text.lower().split("x"))
        except ValueError:
            v = ()
        if not v or min(v) < 1:
            raise LayoutsimError(f"--arg {i} {s!r}: {what} {text!r}: give positive integers like 64x64, "
                                 f"innermost first")
        return v
    buf = parts[0]
    if buf.endswith(".npy"):
        buf = parse_arg(buf, i)
    else:
        try:
            buf = int(buf)
        except ValueError:
            raise LayoutsimError(f"--arg {i} {s!r}: BUF {buf!r}: give the index of the --arg holding the "
                                 f"tensor or a FILE.npy") from None
    return TensorMapArg(buffer=buf, dims=sizes(parts[1], "DIMS"), box=sizes(parts[2], "BOX"),
                        swizzle=parts[3] if len(parts) > 3 else "none",
                        strides_bytes=sizes(parts[4], "STRIDES") if len(parts) > 4 else None)


OBJECT_KEYS = {"tex": {"channels": int, "filter": str, "address": str, "read": str, "normalized": bool,
                       "layered": bool, "cubemap": bool},
               "surf": {"channels": int, "layered": bool}}


def object_arg(s, i, budget):
    """tex:FILE.npy[:KEY=VALUE,...] / surf:FILE.npy[:...] -> layoutsim.ptx.TextureArg / SurfaceArg."""
    from ..ptx import SurfaceArg, TextureArg
    kind, _, rest = s.partition(":")
    path, _, opts = rest.partition(":")
    keys = OBJECT_KEYS[kind]
    if not path.endswith(".npy"):
        raise LayoutsimError(f"--arg {i} {s!r}: give {kind}:FILE.npy[:KEY=VALUE,...] (keys: {', '.join(keys)})")
    kw = {}
    for item in filter(None, opts.split(",")):
        k, eq, v = item.partition("=")
        if not eq or k not in keys:
            raise LayoutsimError(f"--arg {i} {s!r}: {item!r}: give KEY=VALUE with KEY one of {', '.join(keys)}"
                                 f"{suggest(k, list(keys))}")
        if keys[k] is str:
            kw[k] = tuple(v.split("/")) if k == "address" and "/" in v else v
        elif v not in (("0", "1") if keys[k] is bool else ("1", "2", "4")):
            raise LayoutsimError(f"--arg {i} {s!r}: {k}={v!r}: valid "
                                 f"{'0, 1' if keys[k] is bool else '1, 2, 4'}")
        else:
            kw[k] = keys[k](int(v))
    arr = parse_arg(path, i, budget)
    return (TextureArg if kind == "tex" else SurfaceArg)(arr, **kw)


def _take(budget, nbytes, i, s):
    """Count an array's bytes against the launch's global-memory limit before allocating it."""
    from ..ptx.launch import check_global_bytes
    budget[0] += nbytes
    check_global_bytes(budget[0], f"--arg {i} {s!r} ({nbytes} bytes"
                       + (f", {budget[0]} with the arrays before it)" if budget[0] > nbytes else ")"))


def dtype(name, i):
    """The numpy dtype of one of the documented names (DTYPES) only: np.dtype() of any other
    text parses numpy's own type language (structured and sub-array types, and a SyntaxError)."""
    n = DTYPES.get(name)
    if n is None:
        raise LayoutsimError(f"--arg {i}: unknown dtype {name!r}{suggest(name, list(DTYPES))}; valid: "
                             f"{', '.join(DTYPES)}")
    return numpy_dtype(n)


def check_out_dir(directory):
    """--out DIR: an existing folder (no symbolic link), or one to create whose parent exists
    (files.make_dir's rule), checked before the kernel is read."""
    import os

    from ..files import check_dir
    full = check_dir(directory, "--out folder", missing_ok=True)
    if not os.path.isdir(os.path.dirname(full)):
        raise LayoutsimError(f"cannot create --out folder {directory}: folder {os.path.dirname(full)} does "
                             f"not exist (create it first)")
    return full


def _out_paths(directory, values):
    """DIR/argN.npy of every argument whose final content is written (arrays, and tensor maps
    that bring their own tensor), in argument order."""
    import numpy as np
    return [(i, Path(directory) / f"arg{i}.npy") for i, v in enumerate(values)
            if isinstance(v, np.ndarray) or isinstance(getattr(v, "buffer", None), np.ndarray)
            or type(v).__name__ == "SurfaceArg"]


def check_outputs(directory, values):
    """Refuse, before the run, any DIR/argN.npy that write_outputs could not replace."""
    from ..files import check_target
    if Path(check_out_dir(directory)).is_dir():
        for _, path in _out_paths(directory, values):
            check_target(path, "output array")


def write_outputs(directory, buffers):
    """Write every array argument's final content to DIR/argN.npy, all or nothing
    (layoutsim.files.write_all: regular files only, atomically, modes kept); DIR is created if
    missing, its parent never."""
    import numpy as np

    from ..files import make_dir, write_all
    d = Path(make_dir(directory, "--out folder"))
    items = [(d / f"arg{i}.npy", (lambda f, b=b: np.save(f, b, allow_pickle=False)), "output array")
             for i, b in enumerate(buffers) if b is not None]
    return [str(p) for p in write_all(items)]
