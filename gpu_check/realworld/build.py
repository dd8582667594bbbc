"""Build tests/data/realworld/ from the pip package: PTX, seeded inputs, manifest, the package's licence.

    pip install nvidia-cutlass==4.2.0.0
    python -m gpu_check.realworld.build [--package-root DIR] [--dir DIR] [--check] [--json] [--reuse]

--package-root: the directory holding the installed package (cutlass_library/ and
nvidia_cutlass-4.2.0.0.dist-info/; default: where Python finds cutlass_library). nvcc writes the
absolute path of every source into the PTX, so the package's source tree is linked at BUILD_DIR and
compiled there: the same PTX on every machine with nvcc 13.0. Every example file a case names is
compiled once for its target with the manifest's command; each case's entry is the PTX's n-th
entry whose name starts with the case's prefix, and its arguments must match that entry's .param
list (count, and each by-value struct's size). --check writes nothing and exits 1 when a file
would change. Exit 2: no nvcc, no package, a compile error or an argument mismatch (one line).
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from gpu_check.kernel_corpus import corpus as C
from gpu_check.kernel_corpus.build import differs, nvcc_version
from gpu_check.kernel_corpus.cases import fill

from .cases import CASES, PACKAGE

DATA = C.measured_data("realworld")
BUILD_DIR = "/tmp/layoutsim-realworld"
SOURCE = f"{BUILD_DIR}/cutlass"               # a link to cutlass_library/source
FLAGS = ("-ptx", "-lineinfo", "-std=c++17", "--expt-relaxed-constexpr", f"-I{SOURCE}/include",
         f"-I{SOURCE}/tools/util/include")
LICENSE = "LICENSE.cutlass.txt"
DIST_INFO = "nvidia_cutlass-4.2.0.0.dist-info"
ENTRY = re.compile(r"\.entry\s+([\w$]+)\(")


def ptx_file(stem, arch):
    return f"{stem}.{arch}.ptx"


def nvcc_command(case):
    return (f"cd {BUILD_DIR} && nvcc {' '.join(FLAGS)} -arch={case.arch} -o {ptx_file(case.stem, case.arch)} "
            f"{SOURCE}/{case.source}")


def package_root(given=None):
    if given:
        return Path(given)
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"cutlass_library not found: pip install {PACKAGE}, or give --package-root")
    return Path(list(spec.submodule_search_locations)[0]).parent


def link_source(root):
    src = Path(root) / "cutlass_library" / "source"
    if not (src / "include" / "cute").is_dir():
        raise FileNotFoundError(f"{src}/include/cute is missing: not the {PACKAGE} package")
    Path(BUILD_DIR).mkdir(parents=True, exist_ok=True)
    link_at(Path(SOURCE), src)


def link_at(link, target):
    """Make `link` a symbolic link to `target` (resolved), unless it already is one."""
    if link.is_symlink() and Path(os.readlink(link)) == Path(target).resolve():
        return
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(Path(target).resolve())


def compile_all(log=print, reuse=False, cases=CASES, command=nvcc_command, build_dir=BUILD_DIR):
    """{(stem, arch): PTX text} for every (source, arch) the cases name, each compiled by
    command(case) into build_dir. reuse: keep a PTX that build_dir holds from the same nvcc
    command (<ptx>.cmd says which)."""
    out = {}
    for case in cases:
        key = (case.stem, case.arch)
        if key in out:
            continue
        ptx, cmd = Path(build_dir) / ptx_file(*key), command(case)
        stamp = ptx.with_name(ptx.name + ".cmd")
        if reuse and ptx.is_file() and stamp.is_file() and stamp.read_text() == cmd:
            out[key] = ptx.read_text()
            log(f"reused {ptx} ({case.source} for {case.arch})")
            continue
        stamp.unlink(missing_ok=True)
        r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        if r.returncode:
            msg = [x for x in (r.stderr or r.stdout).splitlines() if "error" in x] or ["nvcc failed"]
            raise RuntimeError(f"{case.source} for {case.arch}: {msg[0]}")
        out[key] = ptx.read_text()
        stamp.write_text(cmd)
        log(f"compiled {case.source} for {case.arch}")
    return out


def pick_entry(case, ptx):
    """The case's entry name, its arguments checked against the entry's parameters."""
    from layoutsim.ptx import load
    prefix, index = case.entry
    names = [n for n in ENTRY.findall(ptx) if n.startswith(prefix)]
    if index >= len(names):
        raise RuntimeError(f"{case.name}: {len(names)} entries start with {prefix}, no entry {index}")
    name = names[index]
    params = load(ptx).entry(name).params
    given = [a for a in case.args if getattr(a, "param", True)]      # not the arrays only a struct points to
    if len(params) != len(given):
        raise RuntimeError(f"{case.name}: {name[:40]}... takes {len(params)} parameters, the case gives {len(given)}")
    for i, (p, a) in enumerate(zip(params, given)):
        if a.role in ("bytes", "struct") and p.size != len(a.data):
            raise RuntimeError(f"{case.name}: parameter {i} is {p.size} bytes, the case gives {len(a.data)}")
    return name


def manifest_entry(case, kernel, version, package=PACKAGE, command=nvcc_command):
    return {"name": case.name, "package": package, "source": case.source, "argv": list(case.argv),
            "ptx": {case.arch: ptx_file(case.stem, case.arch)}, "kernel": kernel, "grid": list(case.grid),
            "block": list(case.block), "shared_bytes": case.shared_bytes,
            "args": [C.arg_entry(a) for a in case.args], "nvcc": command(case), "nvcc_version": version,
            "inputs": C.inputs_file(case.name), "what": case.what}


def inputs(case):
    return {f"arg{i}": fill(a.fill, a.dtype, a.shape, f"{case.name}/arg{i}")
            for i, a in enumerate(case.args) if a.is_array}


def planned_files(root, log=print, reuse=False):
    link_source(root)
    return corpus_files(compile_all(log, reuse), CASES, Path(root) / DIST_INFO / "licenses" / "LICENSE.txt", LICENSE)


def corpus_files(ptx, cases, licence, licence_name, package=PACKAGE, command=nvcc_command):
    """{file name: bytes} of a corpus: the PTX ({(stem, arch): text}), each case's inputs, the
    manifest (each case's entry picked from its PTX) and the licence (kept as licence_name)."""
    files = {ptx_file(*k): text.encode() for k, text in ptx.items()}
    version = nvcc_version()
    manifest = []
    for case in cases:
        manifest.append(manifest_entry(case, pick_entry(case, ptx[case.stem, case.arch]), version, package, command))
        files[C.inputs_file(case.name)] = C.npz_bytes(inputs(case))
    files[C.MANIFEST] = (json.dumps(manifest, indent=1) + "\n").encode()
    if not Path(licence).is_file():
        raise FileNotFoundError(f"{licence} is missing: the source's licence is kept beside its PTX")
    files[licence_name] = Path(licence).read_bytes()
    return files


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.build", description=__doc__.splitlines()[0])
    ap.add_argument("--package-root", help=f"where {PACKAGE} is installed (default: found by Python)")
    ap.add_argument("--dir", default=str(DATA), help="the corpus directory (default tests/data/realworld)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    ap.add_argument("--json", action="store_true", help='print {"changed": [files], "written": bool}')
    ap.add_argument("--reuse", action="store_true", help="keep the PTX BUILD_DIR holds from the same nvcc command")
    args = ap.parse_args(argv)
    return build_and_write("build", Path(args.dir), lambda log: planned_files(package_root(args.package_root), log,
                                                                           args.reuse), args.check, args.json)


def build_and_write(prog, directory, plan, check, as_json):
    """A build command's common part: nvcc must be on PATH; plan(log) -> {name: bytes} (its failure
    one line, exit 2); then write_planned. Progress goes to stderr with as_json."""
    if shutil.which("nvcc") is None:
        print(f"{prog}: nvcc not found on PATH (the corpus is compiled with nvcc 13.0)", file=sys.stderr)
        return 2
    log = (lambda s: print(s, file=sys.stderr)) if as_json else print
    try:
        files = plan(log)
    except (RuntimeError, FileNotFoundError, OSError, ValueError) as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 2
    return write_planned(directory, files, check, as_json)


def write_planned(directory, files, check, as_json):
    """Write the files ({name: bytes}) that differ into `directory` (none with check), print what
    changed (one JSON object with as_json); the exit status: 1 when check finds a change."""
    changed = [n for n, data in sorted(files.items()) if differs(directory, n, data)]
    if not check:
        directory.mkdir(parents=True, exist_ok=True)
        for n in changed:
            C.write_atomic(directory / n, files[n])
    if as_json:
        print(json.dumps({"changed": changed, "written": not check}))
    else:
        print(f"{len(files)} files, {len(changed)} {'differ from the build' if check else 'written'}"
              + (": " + ", ".join(changed) if changed else ""))
    return 1 if (check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
