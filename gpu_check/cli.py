"""gpu-check: run the real instructions on a GPU and compare every bit with layoutsim.

    gpu-check run [--only PATTERN] [--cases N] [--group G,...] [--corpus C,...] [--report FILE] [--record DIR] [--json]
    gpu-check discover [--record DIR] [--json]
    gpu-check discover --apply FILE [--json]            a recorded discover file into the catalog
    gpu-check report FILE [--markdown PATH] [--json]
    gpu-check replay FILE [--only PATTERN] [--json]      recorded layout dumps, no GPU needed
    gpu-check amd [--keep DIR] [--json]                   build + disassemble the HIP kernels, no GPU
    gpu-check source [--target T] [--out FILE]            the generated CUDA source (default: the sm_90 GPU's)

Exit codes: 0 everything matched; 1 a mismatch, a failed check or an error (a readable diff is
printed); 2 nothing could be run (no GPU, no pycuda, no ncu for --group banks/coalescing, no compiler) or
bad arguments, with a one-line explanation.
"""
import argparse
import json
import sys
from pathlib import Path

from layoutsim.archs import target_of_device
from layoutsim.errors import LayoutsimError, one_line, printable
from layoutsim.files import check_dir, check_target, make_dir, pipe_safe_stdout, write_atomic


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"gpu-check: {one_line(message)} (gpu-check --help lists the commands and options)", file=sys.stderr)
        sys.exit(2)


def _log(json_mode):
    out = sys.stderr if json_mode else sys.stdout

    def log(s):
        print(s, file=out, flush=True)
    return log


def _fail(msg):
    print(f"gpu-check: {one_line(msg)}", file=sys.stderr)
    return 2


def make_backend(name="cuda"):
    if name == "hip":
        from .backends.hip import HipBackend
        return HipBackend()
    if name == "ptxsim":
        from .backends.ptxsim import PtxsimBackend
        return PtxsimBackend()
    from .backends.cuda import CudaBackend
    return CudaBackend()


# ---- run -----------------------------------------------------------------------------------
def cmd_run(args):
    from .backends import Unavailable
    from .run import GROUPS, Session
    groups = tuple(g.strip() for g in args.group.split(",") if g.strip()) if args.group else GROUPS
    bad = [g for g in groups if g not in GROUPS]
    if bad:
        return _fail(f"unknown group {bad[0]!r}; valid: {', '.join(GROUPS)}")
    if args.backend == "ptxsim":
        groups, why = _ptxsim_groups(args, groups)
        if why:
            return _fail(why)
    if args.corpus is not None:
        if "kernels" not in groups:
            return _fail("--corpus picks corpora of the group kernels, which this run does not include")
        from .kernel_corpus.parts import select
        select(args.corpus)                          # an unknown name: one LayoutsimError line
    if args.cases is not None and args.cases < 1:
        return _fail(f"--cases must be at least 1, not {args.cases}")
    if args.only:
        import layoutsim
        from layoutsim.errors import suggest
        from .families import select
        if not any(select(e, args.only) for e in layoutsim.listing()):
            names = [n for e in layoutsim.listing() for n in (e.name, *e.aliases)]
            return _fail(f"no catalog entry matches --only {args.only!r}{suggest(args.only, names)}; "
                         f"`layoutsim list` shows them")
    if len(groups) == 1:
        from .checks import skip_reason
        reason = skip_reason(groups[0])
        if reason:
            return _fail(reason)
    if args.report is not None:                      # '' too: files.py refuses it
        check_target(args.report, "report")          # before the run, not after it
    if args.record is not None:
        make_dir(args.record, "--record folder")
    log = _log(args.json)
    try:
        backend = make_backend(args.backend)
    except Unavailable as e:
        return _fail(f"{e}; nothing was run")
    from . import report as R
    session = Session(backend, only=args.only, cases=args.cases, seed=args.seed, record=args.record, log=log,
                      groups=groups, wgmma_all=args.all_wgmma, bank_seconds=args.bank_seconds, corpora=args.corpus)
    log(f"gpu-check run on {R.environment_line(session.env)}")
    if session.env.get("simulated"):
        log(f"note: {session.env['backend']}")
    try:
        session.run()
    except Exception as e:   # noqa: BLE001 - e.g. the compiler is missing: one line, exit 2
        from .build import BuildError
        if isinstance(e, (BuildError, Unavailable)):
            return _fail(str(e))
        raise
    results = session.results
    code = 1 if any(r.status in ("fail", "error") for r in results) or not _checked(results) else 0
    rep = R.make_report(["gpu-check", *sys.argv[1:]] if args.argv is None else args.argv, session.env,
                        session.build_stats, results, session.group_info, session.sass, exit_code=code)
    if args.report:
        R.write_json(args.report, rep)
    if args.json:
        json.dump(rep, sys.stdout, indent=1, default=R._jsonable)
        print()
    else:
        print(R.summary_table(rep))
        for g, info in rep["groups"].items():
            for n in info.get("notes", []):
                print(f"note ({g}): {n}")
        d = R.diffs_text(results)
        if d:
            print(d)
        if args.report:
            print(f"report written to {args.report}")
    if not _checked(results):
        print("gpu-check: nothing was compared (every check skipped): a run that checks nothing is a failure",
              file=sys.stderr)
    return code


# The groups that launch the catalog kernels through the backend; the others measure the GPU
# itself (ncu, their own modules), which a model run must not mix into its report.
PTXSIM_GROUPS = ("layouts", "numerics")


def _ptxsim_groups(args, groups):
    """(groups, None) for a run on the ptxsim backend, or (groups, why it cannot run)."""
    if args.record is not None:
        return groups, ("--record with --backend ptxsim: the executor's outputs are the model checking "
                        "itself, not measurements; nothing may be recorded from them")
    if not args.group:
        return PTXSIM_GROUPS, None
    other = [g for g in groups if g not in PTXSIM_GROUPS]
    if other:
        return groups, (f"--backend ptxsim runs the groups that launch the catalog kernels "
                        f"({', '.join(PTXSIM_GROUPS)}); {other[0]!r} measures a GPU")
    return groups, None


# ---- discover ------------------------------------------------------------------------------
def cmd_discover(args):
    from . import build as B
    from . import discover as D
    from .backends import Unavailable
    log = _log(args.json)
    if args.apply is not None:                        # --apply '' is an error, not a GPU run
        if args.record is not None:
            return _fail("--record with --apply: --apply writes the catalog from a file already recorded")
        path, added = D.apply(args.apply)
        if args.json:
            json.dump({"catalog": str(path), "added": added}, sys.stdout, indent=1)
            print()
        log(f"[discover] {path.name}: the maps of {args.apply} applied ({len(added)} new: "
            f"{', '.join(added[:4])}{', ...' if len(added) > 4 else ''})")
        return 0
    if args.record is not None:
        make_dir(args.record, "--record folder")
    try:
        backend = make_backend("cuda")
    except Unavailable as e:
        return _fail(f"{e}; nothing was run")
    try:
        entries, env = D.run(backend, lambda specs, target: B.compile_specs(specs, target), log=log)
    except B.BuildError as e:
        return _fail(str(e))
    if args.json:
        json.dump({"environment": env, "entries": entries}, sys.stdout, indent=1)
        print()
    else:
        for e in entries:
            print(D.format_map(e))
            if e.get("same_as"):
                print(f"  same table as catalog: {', '.join(e['same_as'])}")
    if args.record:
        path = D.save(entries, env, Path(args.record) / "layouts" / "wmma_discovered.json")
        log(f"discovered maps written to {path}")
    bad = [e["name"] for e in entries if not e["valid"]]
    if bad:
        log(f"discover: {len(bad)} fragments are not a uniform cover of their matrix: {', '.join(bad[:4])}")
        return 1
    log(f"[discover] {len(entries)} wmma fragments measured")
    return 0


# ---- report / replay / amd / source ---------------------------------------------------------
def cmd_report(args):
    from . import report as R
    for path, what in ((args.markdown, "markdown"), (args.confirmed, "confirmed entries")):
        if path is not None:
            check_target(path, what)
    rep = R.load(args.file)
    if args.confirmed and (rep.get("environment") or {}).get("simulated"):
        return _fail(f"{args.file} is a --backend ptxsim run (the model checking itself): it confirms nothing")
    if args.json:
        json.dump({"environment": rep.get("environment"), "groups": rep.get("groups"), "totals": rep.get("totals")},
                  sys.stdout, indent=1)
        print()
    else:
        R.print_report(rep)
    if args.markdown:
        write_atomic(args.markdown, R.markdown(rep, report_path=args.file, full=args.full), "markdown")
        print(f"markdown written to {args.markdown}", file=sys.stderr if args.json else sys.stdout)
    if args.confirmed:
        R.write_json(args.confirmed, R.confirmed(rep, args.file), "confirmed entries")
        print(f"confirmed entries written to {args.confirmed}", file=sys.stderr if args.json else sys.stdout)
    t = rep["totals"]
    if not t["checks"] or not t["compared"]:
        print(f"gpu-check: the report {args.file} compared nothing: a run that checks nothing is a failure",
              file=sys.stderr)
        return 1
    return 1 if t["failed"] or t["errors"] else 0


def _print_results(args, results, head, text):
    """--json: `head`, the totals and every result; else text(totals) and the diffs. Returns the
    exit code: 1 when a check failed or errored, or when nothing was compared at all."""
    from . import report as R
    from .run import summarize
    totals = summarize(results)
    if args.json:
        json.dump({**head, "totals": totals, "results": [r.to_json() for r in results]}, sys.stdout, indent=1,
                  default=R._jsonable)
        print()
    else:                                   # strings of a recorded file: escaped (errors.printable)
        print(printable(text(totals)))
        d = R.diffs_text(results)
        if d:
            print(printable(d))
    if not _checked(results):
        print(f"gpu-check {args.command}: nothing was compared: checking nothing is a failure", file=sys.stderr)
        return 1
    return 1 if totals["failed"] or totals["errors"] else 0


def cmd_replay(args):
    from . import record
    from . import report as R
    manifest, results = record.replay(args.file, args.only)       # a bad file: one LayoutsimError
    if args.only and not results:
        return _fail(f"no recorded entry of {args.file} matches --only {args.only!r}")
    env = manifest.get("environment")
    return _print_results(args, results, {"environment": env}, lambda t: (
        f"replay of {args.file}: recorded on {R.environment_line(env or {})}\n"
        f"{t['entries']} entries, {t['checks']} checks, {t['cases']} cases, {t['mismatches']} mismatches, "
        f"{t['errors']} errors"))


def _checked(results):
    """Whether any result compared something (pass or fail): zero checks is a failure, not a pass."""
    return any(r.status in ("pass", "fail") and r.compared > 0 for r in results)


def cmd_amd(args):
    from .backends import Unavailable
    from .backends import hip as H
    if args.keep is not None:
        check_dir(args.keep, "--keep folder")    # a real folder: clang writes there, so no symbolic link
    try:
        results, info = H.compile_and_check(outdir=args.keep)
    except Unavailable as e:
        return _fail(str(e))
    built = dict.fromkeys(k.rsplit("_w", 1)[0] for k in info["objects"])
    return _print_results(args, results, {"tools": info}, lambda t: (
        f"[amd]      {t['checks']} WMMA/SWMMAC/MFMA kernels ({t['entries']} entries) built for {'/'.join(built)} and "
        f"disassembled: {t['failed']} wrong, {t['errors']} build errors"
        + (f", {t['skipped']} skipped (no installed clang builds for {'/'.join(info['skipped_targets'])})"
           if t["skipped"] else "") + " (not run: no AMD GPU)"))


def cmd_source(args):
    from . import families as F
    if args.target not in F.TARGETS:
        return _fail(f"unknown target {args.target!r}; valid: {', '.join(F.TARGETS)}")
    src = F.cuda_module_source(F.nvidia_specs(args.target, args.only))
    if args.out is not None:
        write_atomic(args.out, src, "CUDA source")
    else:
        sys.stdout.write(src)
    return 0


def parser():
    from .checks import GROUPS
    p = _Parser(prog="gpu-check", description=__doc__.split("\n\n")[0],
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    r = sub.add_parser("run", help="run every check group on this GPU")
    r.add_argument("--only", help="catalog entries to check: glob or substring of a name or alias, ',' for several")
    r.add_argument("--cases", type=int, help="numerics cases per instruction (default: the numerics corpus budget, "
                                             "layoutsim.numerics.corpus.suggested_cases, else 512)")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--group", help=f"comma-separated groups: {', '.join(GROUPS)} (default all)")
    r.add_argument("--corpus", help="group kernels: only these corpora, comma-separated (kernels, cute, triton, "
                                    "hopper, tk, cub, clusters, constructs, textures; default all)")
    r.add_argument("--report", help="write the JSON report here (atomically; the folder must exist)")
    r.add_argument("--record", help="write measured data under this directory (created if missing), laid out "
                                    "like tests/data/ (layouts/layouts_<arch>.npz, numerics/..., banks/...)")
    r.add_argument("--all-wgmma", action="store_true", help="every wgmma N, not the default selection")
    r.add_argument("--bank-seconds", type=float, help="time budget of the bank and coalescing probes under ncu, "
                   "each (their defaults: 140 and 120)")
    r.add_argument("--backend", choices=("cuda", "hip", "ptxsim"), default="cuda",
                   help="ptxsim: no GPU; nvcc's PTX of the kernels executed by layoutsim.ptx (a dry run "
                        "of the harness: the model checking itself, never a GPU measurement)")
    r.add_argument("--json", action="store_true", help="print the JSON report on stdout (progress on stderr)")
    r.set_defaults(run=cmd_run, argv=None)
    d = sub.add_parser("discover", help="measure nvcuda::wmma fragment maps")
    d.add_argument("--record", help="write layouts/wmma_discovered.json under this directory (e.g. tests/data)")
    d.add_argument("--apply", metavar="FILE", help="no GPU: make the maps of a --record file "
                   "(layouts/wmma_discovered.json) the catalog's (layoutsim/isa/data/nvcuda_wmma_sm_90.json) "
                   "in a source checkout only (layoutsim imported from a git work tree; an installed copy "
                   "is never changed); every entry is checked as the catalog reads it first, and nothing "
                   "is written if one fails, a map the catalog has is missing or measured differently")
    d.add_argument("--json", action="store_true")
    d.set_defaults(run=cmd_discover)
    rp = sub.add_parser("report", help="print a JSON report; --markdown writes the docs/validation page")
    rp.add_argument("file")
    rp.add_argument("--markdown", help="write a markdown summary here (e.g. docs/validation/h200.md)")
    rp.add_argument("--full", action="store_true", help="markdown: a table of every entry, not only what differs")
    rp.add_argument("--confirmed", help="write the entries every check confirmed (layoutsim/isa/data/confirmed.json)")
    rp.add_argument("--json", action="store_true")
    rp.set_defaults(run=cmd_report)
    rr = sub.add_parser("replay", help="compare a recorded layout dump with the catalog (no GPU)")
    rr.add_argument("file")
    rr.add_argument("--only")
    rr.add_argument("--json", action="store_true")
    rr.set_defaults(run=cmd_replay)
    a = sub.add_parser("amd", help="build the HIP WMMA/SWMMAC/MFMA kernels for their AMD targets and check "
                                   "the disassembly")
    a.add_argument("--keep", help="keep the .hip sources and objects in this directory")
    a.add_argument("--json", action="store_true")
    a.set_defaults(run=cmd_amd)
    s = sub.add_parser("source", help="print the generated CUDA source")
    s.add_argument("--target", default=target_of_device("sm_90"))
    s.add_argument("--only")
    s.add_argument("--out")
    s.set_defaults(run=cmd_source)
    return p


def main(argv=None):
    with pipe_safe_stdout():
        args = parser().parse_args(argv)
        if not getattr(args, "command", None):
            parser().print_help()
            return 2
        try:
            return args.run(args)
        except LayoutsimError as e:
            return _fail(str(e))
        except KeyboardInterrupt as e:      # Ctrl-C: one line and 130 (128 + SIGINT), as `layoutsim`
            _fail("interrupted" + (f": {e}" if str(e) else ""))
            return 130


if __name__ == "__main__":
    sys.exit(main())
