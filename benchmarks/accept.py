"""Acceptance over a whole project: compile every .cu under a directory to PTX and load every kernel.

    python benchmarks/accept.py [DIR ...] [--project NAME[=ROOT] ...] [--arch sm_90 [sm_80 ...]] [-I DIR ...]
                                [--nvcc-arg=ARG ...] [--timeout 120] [--jobs N] [--examples 1] [--json]

--project judges a registry project whole, from its pip package (gpu_check/realworld/projects.py:
cub = nvidia-cuda-cccl's CUB through our instantiating translation units, cutlass = nvidia-cutlass's
CuTe tutorials, warp = warp-lang's runtime kernels warp/native/*.cu), with that project's own include
directories and nvcc flags (-I and --nvcc-arg apply to the DIRs). Each project is summarised on its
own; --json then prints {"projects": [{"name", "package", "dirs", "includes", "archs"}]}.

Every `*.cu` under the DIRs is compiled on its own (nvcc -ptx -lineinfo -std=c++17 -arch=ARCH, the -I
directories and --nvcc-arg flags given; one nvcc per file, at most --jobs at a time, default the
CPUs here, each stopped after --timeout seconds). A file nvcc refuses (it needs the project's build
system, a library's headers, another target) counts as "failed to compile" and is not judged
further. Every `.entry` of the PTX nvcc printed is then loaded and linked by layoutsim.ptx for the
same arch (load, the target check and Program: parsing, calls inlined, every instruction compiled
from its table row), which is what `layoutsim ptx run` does before it executes anything.

Printed per arch: files compiled / failed to compile, kernels accepted / refused, % accepted, and
the refusals grouped by construct (the refusal text with its line numbers, names and numbers
taken out), each group with its count and one example: the refusal and the CUDA source line it
names. A refusal that is not a LayoutsimError (a crash of the executor) is its own group, marked
CRASH. --json prints the same as one JSON object. Exit 0, or 2 on a bad argument (one line).
Nothing is written: the PTX lives in a temporary directory.
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

NVCC_FLAGS = ("-ptx", "-lineinfo", "-std=c++17")
MAX_FILES = 5000
ENTRY = re.compile(r"^\s*(?:\.(?:visible|weak)\s+)?\.entry\s+([\w$.]+)", re.M)
WHERE = re.compile(r"^line \d+(?: \(([^:()]+):(\d+)\))?: ")
FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', re.M)


def compile_one(nvcc, src, arch, includes, extra, out_dir, timeout):
    """(ptx text or None, one-line reason when it failed)."""
    out = Path(out_dir) / (re.sub(r"[^\w.-]", "_", str(src)) + f".{arch}.ptx")
    cmd = [nvcc, *NVCC_FLAGS, f"-arch={arch}", *[f"-I{d}" for d in includes], *extra, "-o", str(out), str(src)]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=Path(src).parent)
    except subprocess.TimeoutExpired:
        return None, f"nvcc ran past {timeout} s"
    if r.returncode or not out.is_file():
        lines = [x for x in (r.stderr or r.stdout).splitlines() if "error" in x.lower()] or \
            (r.stderr or r.stdout).strip().splitlines() or ["nvcc failed"]
        return None, lines[0].strip()[:300]
    text = out.read_text(errors="surrogateescape")
    out.unlink()
    return text, None


def load_entries(ptx, arch):
    """[(entry, None | (kind, message))] for every .entry of the PTX: kind "refused" for a
    LayoutsimError, "crash" for anything else."""
    from layoutsim.errors import LayoutsimError
    from layoutsim.ptx.module import load
    from layoutsim.ptx.program import Program
    from layoutsim.ptx.runner import check_target
    names = ENTRY.findall(ptx)
    if not names:
        return []
    try:
        module = load(ptx)
        check_target(module.target, arch)
    except LayoutsimError as e:
        return [(n, ("refused", str(e).splitlines()[0])) for n in names]
    except Exception as e:   # noqa: BLE001 - a crash is what this script reports
        return [(n, ("crash", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")) for n in names]
    out = []
    for n in names:
        try:
            Program(module, n, arch)
            out.append((n, None))
        except LayoutsimError as e:
            out.append((n, ("refused", str(e).splitlines()[0])))
        except Exception as e:   # noqa: BLE001
            out.append((n, ("crash", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")))
    return out


def job(nvcc, src, arch, includes, extra, out_dir, timeout):
    """One file for one arch: {"file", "arch", "error" | "kernels": [...], "files": {id: path}}."""
    ptx, err = compile_one(nvcc, src, arch, includes, extra, out_dir, timeout)
    if ptx is None:
        return {"file": str(src), "arch": arch, "error": err}
    from layoutsim import archs
    return {"file": str(src), "arch": arch, "kernels": load_entries(ptx, archs.normalize(arch)),   # sm_90a runs on sm_90
            "files": dict(FILE.findall(ptx))}


def construct(message):
    """The refusal without its location, names and numbers: what groups refusals by construct."""
    m = WHERE.sub("", message)
    m = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", m)
    m = re.sub(r"%[\w$.]+|\b_Z[\w$]+|\$[\w$]+|\b0x[0-9a-fA-F]+|\b\d+\b", "…", m)
    return m[:160]


def source_line(message, files, root):
    """The CUDA line a refusal names ('line 12 (k.cu:34): ...'), as text, when its file is readable."""
    m = WHERE.match(message)
    if not m or not m.group(1):
        return None
    name, line = m.group(1), int(m.group(2))
    for path in files.values():
        p = Path(path) if Path(path).is_absolute() else Path(root) / path
        if p.name == name and p.is_file():
            lines = p.read_text(errors="replace").splitlines()
            if 0 < line <= len(lines):
                return f"{p.name}:{line}: {lines[line - 1].strip()[:200]}"
    return None


def summarise(results, arch, root, examples, n_files):
    rs = [r for r in results if r["arch"] == arch]
    compiled = [r for r in rs if "kernels" in r]
    kernels = [(r, k, why) for r in compiled for k, why in r["kernels"]]
    groups = defaultdict(list)
    for r, k, why in kernels:
        if why:
            groups[(why[0], construct(why[1]))].append((r, k, why[1]))
    accepted = sum(1 for _, _, why in kernels if why is None)
    out = {"arch": arch, "files": n_files, "not_judged": n_files - len(rs), "compiled": len(compiled), "failed_to_compile": len(rs) - len(compiled),
           "files_without_kernels": sum(1 for r in compiled if not r["kernels"]),
           "kernels": len(kernels), "accepted": accepted, "refused": len(kernels) - accepted,
           "percent_accepted": round(100.0 * accepted / len(kernels), 2) if kernels else None,
           "refusals": [], "compile_failures": [{"file": os.path.relpath(r["file"], root), "error": r["error"]}
                                                for r in rs if "error" in r]}
    for (kind, key), items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        ex = []
        for r, k, msg in items[:examples]:
            ex.append({"file": os.path.relpath(r["file"], root), "kernel": k, "refusal": msg,
                       "cuda": source_line(msg, r["files"], Path(r["file"]).parent)})
        out["refusals"].append({"construct": key, "kind": kind, "kernels": len(items),
                                "files": len({r["file"] for r, _, _ in items}), "examples": ex})
    return out


def text(summary):
    s = summary
    pct = "n/a" if s["percent_accepted"] is None else f"{s['percent_accepted']:.1f} %"
    lines = [f"{s['arch']}: {s['files']} files: {s['compiled']} compiled, {s['failed_to_compile']} failed to compile, "
             f"{s['not_judged']} not judged in --max-seconds "
             f"({s['files_without_kernels']} compiled with no kernel); {s['kernels']} kernels: {s['accepted']} "
             f"accepted, {s['refused']} refused ({pct} accepted)"]
    for g in s["refusals"]:
        lines.append(f"  {g['kernels']:5d} kernels in {g['files']:3d} files{' CRASH' if g['kind'] == 'crash' else ''}: "
                     f"{g['construct']}")
        for e in g["examples"]:
            lines.append(f"        e.g. {e['file']} {e['kernel']}: {e['refusal'][:200]}")
            if e["cuda"]:
                lines.append(f"             {e['cuda']}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python benchmarks/accept.py", description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="*", help="the project's directories: every .cu below them is compiled")
    ap.add_argument("--project", action="append", default=[], help="a registry project judged whole: NAME or "
                    "NAME=ROOT (where its package is unpacked): cub, cutlass, warp (repeatable)")
    ap.add_argument("--arch", nargs="+", default=["sm_90"], help="targets (default sm_90), e.g. sm_90 sm_80 sm_90a")
    ap.add_argument("-I", "--include", action="append", default=[], help="an include directory for nvcc (repeatable)")
    ap.add_argument("--nvcc-arg", action="append", default=[], help="one more nvcc flag (repeatable; give it as "
                                                                    "--nvcc-arg=--expt-relaxed-constexpr)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds one nvcc may run (default 120)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="files compiled at once (default: the CPUs)")
    ap.add_argument("--max-seconds", type=float, default=None,
                    help="stop after this long: the files not compiled by then are counted as not judged")
    ap.add_argument("--examples", type=int, default=1, help="examples printed per refusal group (default 1)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    from layoutsim import archs
    from layoutsim.errors import LayoutsimError
    groups, problem = [], None
    if args.dir:
        groups.append({"name": None, "package": None, "dirs": [Path(d) for d in args.dir], "includes": args.include,
                       "nvcc_args": list(args.nvcc_arg)})
    for spec in args.project:
        try:
            from gpu_check.realworld.projects import resolve
            name, p = resolve(spec)
            groups.append({"name": name, **p})
        except (KeyError, FileNotFoundError) as e:
            problem = problem or str(e).strip("'\"")
    dirs = [d for g in groups for d in g["dirs"]]
    bad_dir = next((d for d in dirs if not Path(d).is_dir()), None)
    nvcc = shutil.which("nvcc")
    problem = (problem or ("give a DIR or --project NAME" if not groups else None) or
               (f"{bad_dir} is not a directory" if bad_dir is not None else
                "nvcc not found on PATH" if nvcc is None else
                f"--jobs {args.jobs}: give 1 to {4 * (os.cpu_count() or 1)}" if not 1 <= args.jobs <= 4 * (os.cpu_count() or 1) else
                f"--timeout {args.timeout}: give 1 to 3600 seconds" if not 1 <= args.timeout <= 3600 else
                f"--examples {args.examples}: give 0 to 20" if not 0 <= args.examples <= 20 else None))
    if problem is None:
        try:
            for a in args.arch:
                archs.nvidia_only(a, "--arch")
        except LayoutsimError as e:
            problem = str(e)
    bad = [d for d in args.include if not Path(d).is_dir()]
    if problem is None and bad:
        problem = f"-I {bad[0]}: not a directory"
    for g in groups if problem is None else ():
        g["root"] = Path(os.path.commonpath([str(Path(d).resolve()) for d in g["dirs"]]))
        g["files"] = sorted({p.resolve() for d in g["dirs"] for p in Path(d).rglob("*.cu") if p.is_file()})
        g["includes"] = [str(Path(d).resolve()) for d in g["includes"]]
    n_files = sum(len(g.get("files", ())) for g in groups)
    if problem is None and n_files > MAX_FILES:
        problem = f"{n_files} .cu files (at most {MAX_FILES})"
    if problem:
        print(f"accept: {problem}", file=sys.stderr)
        return 2
    results = {}
    with tempfile.TemporaryDirectory(prefix="layoutsim-accept-") as tmp, \
            cf.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futs = {pool.submit(job, nvcc, f, a, g["includes"], g["nvcc_args"], tmp, args.timeout): i
                for a in args.arch for i, g in enumerate(groups) for f in g["files"]}
        try:
            for k, fut in enumerate(cf.as_completed(futs, timeout=args.max_seconds), 1):
                results.setdefault(futs[fut], []).append(fut.result())
                if not args.json and k % 25 == 0:
                    print(f"  ... {k}/{len(futs)}", file=sys.stderr, flush=True)
        except cf.TimeoutError:               # the files not judged yet are reported as such
            for fut in futs:
                fut.cancel()
            for fut, i in futs.items():
                if fut.done() and not fut.cancelled() and fut.result() not in results.get(i, []):
                    results.setdefault(i, []).append(fut.result())
    for i, g in enumerate(groups):
        g["summaries"] = [summarise(results.get(i, []), a, g["root"], args.examples, len(g["files"])) for a in args.arch]
    if args.json:
        docs = [{"name": g["name"], "package": g["package"], "dirs": [str(d) for d in g["dirs"]],
                 "nvcc_flags": [*NVCC_FLAGS, *g["nvcc_args"]], "includes": g["includes"], "archs": g["summaries"]}
                for g in groups]
        print(json.dumps(docs[0] if not args.project else {"projects": docs}, indent=1))
    else:
        print("\n\n".join((f"project {g['name']} ({g['package']}):\n" if g["name"] else "") +
                           "\n\n".join(text(s) for s in g["summaries"]) for g in groups))
    return 0


if __name__ == "__main__":
    sys.exit(main())
