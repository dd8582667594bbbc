"""`layoutsim triton`: Triton kernels on the model (layoutsim.triton; Triton is imported only here,
when the command runs).

    layoutsim triton run kernels.py:softmax_rows --grid 64 --arg x.npy --arg zeros:f32:64x100 \\
        --arg i32:100 --arg i32:100 --meta BLOCK=128 [--json] [--racecheck]
    layoutsim triton layouts kernels.py:matmul --arg zeros:f16:64x64 ... --meta BM=64 ...

--arg is spelt as for `ptx run` (FILE.npy, zeros/ones/arange:DTYPE:SHAPE, TYPE:VALUE), or
desc:BLOCK:ARRAY for a host tensor descriptor (desc:64x64:x.npy), one per kernel parameter that is
not given by --meta; a scalar is passed as a Python number (Triton types
it: i32 when it fits, else i64; floats fp32). --meta NAME=VALUE gives constexprs and launch
options (num_warps, num_stages, num_ctas, maxnreg): VALUE an integer, a float, True or False.
The report is `ptx run`'s, its source lines the kernel's Python lines. --json prints `ptx run
--json`'s object with "triton": {"kernel","signature","constexprs","num_warps","shared","config",
"cached","triton_version","num_ctas"} and "outputs". `layouts` --json: {"kernel","arch",
"encodings":[...],"shared_accesses":[...],"scratch":[...]} (layoutsim.triton.layouts, shared_costs).
"""
from ..errors import LayoutsimError, printable
from . import print_json
from ._options import refuse


def register(sub):
    about = ("Compile a Triton kernel for an NVIDIA target without a GPU and run it on the model, or list "
             "the layouts Triton chose.")
    ps = sub.add_parser("triton", help="run Triton kernels on the model (needs Triton)", description=about) \
        .add_subparsers(dest="triton_command", metavar="SUBCOMMAND", required=True)
    for name, text in (("run", "run one launch of a Triton kernel"),
                       ("layouts", "list the layouts (ttgir encodings) Triton chose, as lane maps")):
        r = ps.add_parser(name, help=text, description=text)
        r.add_argument("kernel", metavar="FILE.py:KERNEL", help="the file and the @triton.jit kernel in it")
        r.add_argument("--arg", action="append", default=[], metavar="ARG",
                       help="one per kernel parameter, in order, spelt as for ptx run: FILE.npy, zeros:DTYPE:SHAPE, "
                            "ones:DTYPE:SHAPE, arange:DTYPE:SHAPE, TYPE:VALUE; desc:BLOCK:ARRAY for a "
                            "TensorDescriptor (desc:64x64:a.npy)")
        r.add_argument("--meta", action="append", default=[], metavar="NAME=VALUE",
                       help="a constexpr or launch option (num_warps, num_stages, num_ctas, maxnreg), e.g. BLOCK=128")
        r.add_argument("--arch", help="the target Triton compiles for: sm_90's arch-specific target (default), "
                       "sm_90, sm_100's arch-specific target (Blackwell: tcgen05), sm_120's (RTX 50: block-scaled "
                       "mma.sync), sm_89, sm_80")
        r.add_argument("--config", type=int, help="an @triton.autotune kernel: the index of the config to run")
        r.add_argument("--json", action="store_true", help="machine-readable output")
        if name == "run":
            r.add_argument("--grid", required=True, help="X[,Y[,Z]] programs (CTAs)")
            r.add_argument("--out", help="directory for the final buffers (argN.npy)")
            r.add_argument("--racecheck", action="store_true", help="report shared-memory hazards between warps")
            r.add_argument("--initcheck", action="store_true", help="report reads of never-written shared memory")
            r.add_argument("--ctas", type=int, help="run a sample of this many CTAs (counts extrapolated)")
            r.add_argument("--top", type=int, default=20, help="lines in the report (default 20)")
            r.add_argument("--all", action="store_true", help="list every PTX line, in program order")
            r.add_argument("--max-steps", type=int, help="stop after this many scheduler steps")
            r.add_argument("--timeout", type=float, metavar="SECONDS", help="stop after this much wall time")
        else:
            r.add_argument("--lanes", action="store_true", help="print each encoding's full lane table")
        r.set_defaults(run=run)


def meta_value(text):
    name, sep, v = str(text).partition("=")
    if not sep or not name.isidentifier():
        raise LayoutsimError(f"--meta {text!r}: give NAME=VALUE, e.g. BLOCK=128")
    if v in ("True", "False"):
        return name, v == "True"
    for conv in (lambda s: int(s, 0), float):
        try:
            return name, conv(v)
        except ValueError:
            pass
    raise LayoutsimError(f"--meta {text!r}: VALUE must be an integer, a float, True or False")


def triton_arg(text, i, budget, parse_arg):
    """One --arg: as for ptx run, or desc:BLOCK:ARRAY, a host tensor descriptor (Triton's
    TensorDescriptor.from_tensor) over ARRAY with block shape BLOCK (e.g. desc:64x64:zeros:f16:128x64)."""
    if not str(text).startswith("desc:"):
        return parse_arg(text, i, budget)
    _, block, rest = str(text).split(":", 2) if str(text).count(":") >= 2 else (None, None, None)
    try:
        dims = [int(b) for b in block.split("x")] if block else None
    except ValueError:
        dims = None
    if not dims or not rest:
        raise LayoutsimError(f"--arg {text!r}: give desc:BLOCK:ARRAY, e.g. desc:64x64:zeros:f16:128x64 or "
                             f"desc:64x64:a.npy")
    import numpy as np
    arr = parse_arg(rest, i, budget)
    if not isinstance(arr, np.ndarray):
        raise LayoutsimError(f"--arg {text!r}: a descriptor is over an array (FILE.npy, zeros/ones/arange:DTYPE:SHAPE)")
    from ..triton.descriptors import descriptor
    return descriptor(arr, dims, name=f"--arg {text!r}")


def run(args):
    from .ptx import check_out_dir, parse_arg, write_outputs
    from ..triton.loader import load
    meta = dict(meta_value(m) for m in args.meta)
    budget = [0]
    values = [triton_arg(a, i, budget, parse_arg) for i, a in enumerate(args.arg)]
    if args.triton_command == "layouts":
        return _layouts(args, load(args.kernel), values, meta)
    from ..ptx.launch import dims
    from ..ptx.state import PtxFault
    from ..triton import launch
    if args.top < 1:
        raise LayoutsimError(f"--top {args.top}: give a number of lines >= 1")
    refuse(args, ("top", "all") if args.json else ("top",) if args.all else (),
           "with --json" if args.json else "with --all", "the JSON lists every line" if args.json else
           "--all lists every line")
    if args.out is not None:
        check_out_dir(args.out)
    grid = dims(args.grid, "--grid")
    kernel = load(args.kernel)
    opts = {k: getattr(args, k) for k in ("racecheck", "initcheck", "ctas", "max_steps", "timeout")
            if getattr(args, k) not in (None, False)}
    try:
        r = launch(kernel, grid, *values, arch=args.arch, config=args.config, options=opts, **meta)
    except PtxFault as e:
        if args.json and e.run is not None:
            print_json(dict(e.run.to_json(), outputs=[]))
        raise
    import numpy as np
    outputs = write_outputs(args.out, [v if isinstance(v, np.ndarray) else getattr(v, "base", None)
                                       for v in values]) if args.out is not None else []
    if args.json:
        print_json(dict(r.to_json(), triton=r.extra["triton"], outputs=outputs))
    else:
        print(printable(r.format(top=args.top, all_lines=args.all)))
        for path in outputs:
            print(f"wrote {path}")
    return 0


def _layouts(args, kernel, values, meta):
    from ..triton import compile_for
    from ..triton.layouts import format_text
    from ..triton.shared_costs import describe
    c = compile_for(kernel, *values, arch=args.arch, config=args.config, **meta)
    doc = describe(c)
    if args.json:
        print_json(doc)
    else:
        print(printable(format_text(doc, lanes=args.lanes)))
    return 0
