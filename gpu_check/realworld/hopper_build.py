"""Build the CUTLASS 3.x Hopper examples (hopper_cases.py) from the pip package: the binaries the
H200 runs and the PTX the replay runs, from one nvcc command per example.

    pip install nvidia-cutlass==4.2.0.0
    python -m gpu_check.realworld.hopper_build [--package-root DIR] [--bin DIR] [--dir DIR] [--check]

nvcc compiles each example for sm_90a with `-cudart shared` (the capture shim interposes the
runtime) and `-keep`: the PTX it kept is the PTX of the binary's kernels. The binary, stripped and
xz-compressed, goes to --bin (default build/hopper/, not committed: the lead carries it to the GPU
machine, each well under 3 MB); tests/data/realworld/hopper/<stem>.sm_90a.ptx.gz keeps that PTX
cut down to its cases' GemmUniversal entries (the header, the variables those entries name,
the entries, and the .file table; the example's own reference and random-fill kernels and the
curand tables they use are dropped, every kept line is nvcc's). Sources are compiled in
build.BUILD_DIR (the PTX holds their absolute paths). CUTLASS's reference fills include
curand_kernel.h: where the CUDA toolkit lacks it, the pip package nvidia-curand's include
directory is used (--curand-include). --check writes nothing and exits 1 when a PTX would change.
"""
import argparse
import glob
import gzip
import lzma
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gpu_check.kernel_corpus import corpus as C

from . import build as B
from .hopper_cases import ARCH, EXAMPLES, HOPPER, NVCC_FLAGS, binary_name, ptx_name

DATA = HOPPER.data
BIN = HOPPER.bin
ENTRY = re.compile(r"^(?:// \.globl[^\n]*\n)?(?:\.visible |\.weak )?\.(?:entry|func)\s+([\w$]+)\(", re.M)
# an entry and the byte size of its one by-value parameter (CUTLASS's Params, ThunderKittens' globals)
PARAM = re.compile(r"\.entry\s+([\w$]+)\(\s*\.param\s+\.align\s+\d+\s+\.b8\s+[\w$]+\[(\d+)\]")
DECL = re.compile(r"^\.(?:global|const|shared|extern|visible|weak)\b.*?([\w$]+)(?:\[\d*\])?(?:\s*=.*)?;$")


def curand_include(given=None):
    """A directory holding curand_kernel.h if nvcc's own include directory lacks it, else None."""
    if given:
        return given
    nvcc = shutil.which("nvcc")
    if nvcc and list(Path(nvcc).resolve().parents[1].glob("**/include/curand_kernel.h")):
        return None
    for p in sys.path:
        hits = glob.glob(f"{p}/nvidia/cu*/include/curand_kernel.h")
        if hits:
            return str(Path(hits[0]).parent)
    return None


def nvcc_command(example, keep_dir, binary, curand=None):
    inc = [f"-I{B.SOURCE}/include", f"-I{B.SOURCE}/tools/util/include", f"-I{B.SOURCE}/examples/common"]
    if curand:
        inc.append(f"-I{curand}")
    return ["nvcc", *NVCC_FLAGS, *inc, f"-gencode=arch=compute_{ARCH[3:]},code={ARCH}", "-cudart", "shared",
            "-keep", f"-keep-dir={keep_dir}", "-o", str(binary), f"{B.SOURCE}/{example.source}"]


def _block_end(text, start):
    depth, i = 0, text.index("{", start)
    while True:
        c = text[i]
        depth += (c == "{") - (c == "}")
        if depth == 0:
            return i + 1
        i += 1


def entry_of(case, names, group=HOPPER):
    """The case's entry among `names`: the one entry of the group's kernels holding its Case.entry substrings."""
    hits = [n for n in names if group.match in n and all(s in n for s in case.entry)]
    if len(hits) != 1:
        raise RuntimeError(f"{case.name}: {len(hits)} entries of {case.example} hold {' and '.join(case.entry)}")
    return hits[0]


def case_entries(example, names, group=HOPPER):
    """The entries of the example's cases among `names`."""
    return [entry_of(case, names, group) for case in group.cases if case.example == example.stem]


def slice_ptx(text, example, group=HOPPER):
    """The PTX with only the example's cases' entries (and the top-level variables they name)."""
    blocks = [(m.start(), _block_end(text, m.end()), m.group(1)) for m in ENTRY.finditer(text)]
    if not blocks:
        raise RuntimeError("no .entry in the PTX")
    want = case_entries(example, [name for _, _, name in blocks], group)
    kept = [text[a:b] for a, b, name in blocks if name in want]
    body = "\n".join(kept)
    head = []
    for line in text[:blocks[0][0]].splitlines():
        m = DECL.match(line)
        if m is None or m.group(1) in body:
            head.append(line)
    tail = text[blocks[-1][1]:]
    return "\n".join(head) + "\n" + "\n\n".join(kept) + tail


def build_example(example, command, group=HOPPER, cwd=B.BUILD_DIR, log=print):
    """(PTX slice, xz bytes of the stripped binary); command(keep_dir, binary) is the nvcc command line."""
    with tempfile.TemporaryDirectory(prefix=f"{group.name}-build-") as work:
        binary = Path(work) / example.stem
        r = subprocess.run(command(work, binary), cwd=cwd, capture_output=True, text=True)
        if r.returncode:
            msg = [x for x in (r.stderr or r.stdout).splitlines() if "error" in x] or ["nvcc failed"]
            raise RuntimeError(f"{example.source}: {msg[0]}")
        ptx = list(Path(work).glob("*.ptx"))
        if len(ptx) != 1:
            raise RuntimeError(f"{example.source}: nvcc -keep left {len(ptx)} PTX files")
        subprocess.run(["strip", str(binary)], check=True)
        log(f"compiled {example.source}: {binary.stat().st_size} bytes stripped")
        return slice_ptx(ptx[0].read_text(), example, group), lzma.compress(binary.read_bytes(), preset=9)


def write_example(example, ptx, xz, ptx_dir, bin_dir, group=HOPPER, check=False):
    """Write the example's PTX (gz) into ptx_dir and its binary into bin_dir (not with check);
    whether the PTX differs from the one ptx_dir held."""
    path = Path(ptx_dir) / ptx_name(example.stem, group.arch)
    changed = not path.is_file() or gzip.decompress(path.read_bytes()) != ptx.encode()
    if not check:
        Path(ptx_dir).mkdir(parents=True, exist_ok=True)
        C.write_atomic(path, gzip.compress(ptx.encode(), 9, mtime=0))
        Path(bin_dir).mkdir(parents=True, exist_ok=True)
        C.write_atomic(Path(bin_dir) / binary_name(example.stem), xz)
    return changed


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.hopper_build", description=__doc__.splitlines()[0])
    ap.add_argument("--package-root", help="where nvidia-cutlass is installed (default: found by Python)")
    ap.add_argument("--bin", default=str(BIN), help="where the xz-compressed binaries go (default build/hopper)")
    ap.add_argument("--dir", default=str(DATA), help="where the PTX goes (default tests/data/realworld/hopper)")
    ap.add_argument("--curand-include", help="a directory with curand_kernel.h (default: nvcc's, else pip's)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a PTX would change")
    args = ap.parse_args(argv)
    if shutil.which("nvcc") is None:
        print("hopper_build: nvcc not found on PATH", file=sys.stderr)
        return 2
    try:
        B.link_source(B.package_root(args.package_root))
        changed = []
        curand = curand_include(args.curand_include)
        for ex in EXAMPLES:
            ptx, xz = build_example(ex, lambda keep, binary, ex=ex: nvcc_command(ex, keep, binary, curand))
            if write_example(ex, ptx, xz, args.dir, args.bin, check=args.check):
                changed.append(ptx_name(ex.stem))
    except (RuntimeError, FileNotFoundError, OSError, subprocess.CalledProcessError) as e:
        print(f"hopper_build: {e}", file=sys.stderr)
        return 2
    return report(len(EXAMPLES), changed, args.check)


def report(examples, changed, check):
    """Print a build's one-line summary; its exit status (1 where --check found a PTX that would change)."""
    print(f"{examples} examples, {len(changed)} PTX {'differ' if check else 'written'}"
          + (": " + ", ".join(changed) if changed else ""))
    return 1 if (check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
