"""Build the kernel corpus: PTX for every source and target its cases name (sm_80 and sm_90, or
sm_90a for wgmma/TMA), seeded inputs, manifest.json.

    python -m gpu_check.kernel_corpus.build [--dir DIR] [--check] [--json]

Every .cu named by a case is copied into BUILD_DIR and compiled there with the manifest's exact
nvcc command; the PTX, `<case>.inputs.npz` and manifest.json are written into DIR (default
tests/data/kernels) atomically, and only when their content changed. `--check` writes nothing
and exits 1 when a file differs from what the build would write (e.g. a different nvcc). Both
print the cases still waiting for their H200 run (corpus.pending). Exit 2: no nvcc, a compile
error, or a bad argument (one line).
"""
import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from . import corpus as C
from .cases import CASES, inputs


def nvcc_version(nvcc="nvcc"):
    r = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    m = re.search(r"release [\d.]+, V([\d.]+)", r.stdout)
    return m.group(1) if m else None


def targets(stem):
    """The targets the cases of a source are built for, in the cases' order."""
    return tuple(dict.fromkeys(a for c in CASES if c.stem == stem for a in c.archs))


def compile_sources(directory, stems, log=print):
    """{(stem, arch): PTX text}, compiled in BUILD_DIR with the manifest's commands."""
    build = Path(C.BUILD_DIR)
    build.mkdir(parents=True, exist_ok=True)
    out = {}
    for stem in stems:
        shutil.copyfile(Path(directory) / f"{stem}.cu", build / f"{stem}.cu")
        for arch in targets(stem):
            cmd = C.nvcc_command(stem, arch)
            r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
            if r.returncode:
                msg = (r.stderr or r.stdout).strip().splitlines()
                raise RuntimeError(f"{stem}.cu for {arch}: {msg[0] if msg else 'nvcc failed'} ({cmd})")
            out[stem, arch] = (build / C.ptx_file(stem, arch)).read_text()
        log(f"compiled {stem}.cu for {', '.join(targets(stem))}")
    return out


def planned_files(directory, log=print):
    """{file name: bytes} the build writes."""
    version = nvcc_version()
    stems = sorted({c.stem for c in CASES})
    ptx = compile_sources(directory, stems, log)
    files = {C.ptx_file(s, a): text.encode() for (s, a), text in ptx.items()}
    for c in CASES:
        files[C.inputs_file(c.name)] = C.npz_bytes(inputs(c))
    manifest = [C.manifest_entry(c, version) for c in CASES]
    files[C.MANIFEST] = (json.dumps(manifest, indent=1) + "\n").encode()
    return files


def same_npz(a_bytes, path):
    """Two .npz hold the same arrays, bit for bit (zip metadata aside)."""
    import io
    with np.load(io.BytesIO(a_bytes)) as a, np.load(path) as b:
        return sorted(a.files) == sorted(b.files) and all(
            a[k].dtype == b[k].dtype and a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes()
            for k in a.files)


def differs(directory, name, data):
    p = Path(directory) / name
    if not p.is_file():
        return True
    if name.endswith(".npz"):
        return not same_npz(data, p)
    return p.read_bytes() != data


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.kernel_corpus.build", description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default=str(C.DATA), help="the corpus directory (default tests/data/kernels)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    ap.add_argument("--json", action="store_true", help='print {"changed": [files], "written": bool} on stdout')
    args = ap.parse_args(argv)
    directory = Path(args.dir)
    if not directory.is_dir():
        print(f"build: --dir {directory} is not a directory", file=sys.stderr)
        return 2
    if shutil.which("nvcc") is None:
        print("build: nvcc not found on PATH (the corpus is compiled with nvcc 13.0)", file=sys.stderr)
        return 2
    log = (lambda s: print(s, file=sys.stderr)) if args.json else print
    try:
        files = planned_files(directory, log)
    except (RuntimeError, FileNotFoundError) as e:
        print(f"build: {e}", file=sys.stderr)
        return 2
    changed = [n for n, data in sorted(files.items()) if differs(directory, n, data)]
    if not args.check:
        for n in changed:
            C.write_atomic(directory / n, files[n])
    if args.json:
        print(json.dumps({"changed": changed, "written": not args.check}))
    else:
        verb = "differ from the build" if args.check else "written"
        print(f"{len(files)} files, {len(changed)} {verb}" + (": " + ", ".join(changed) if changed else ""))
    waiting = C.pending(directory) if (directory / C.MANIFEST).is_file() else []
    if waiting:
        print(f"awaiting their H200 run ({len(waiting)}): {', '.join(waiting)}; run {C.MEASURE}",
              file=sys.stderr)
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
