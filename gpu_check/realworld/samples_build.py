"""Build tests/data/realworld/samples/ from a cuda-samples checkout: PTX, seeded inputs, manifest, licence.

    git clone https://github.com/NVIDIA/cuda-samples
    python -m gpu_check.realworld.samples_build --src cuda-samples [--commit SHA] [--only GLOB,...]
                                                [--dir DIR] [--check] [--json] [--reuse]

--src: the checkout (the directory holding Samples/, Common/ and LICENSE); its commit names the
manifest's package (NVIDIA/cuda-samples@<commit>): git's HEAD there, or --commit for a copy without
.git. No source file is committed here, only nvcc's PTX of it. nvcc writes absolute source paths
into the PTX, so the checkout is linked at BUILD_DIR/cuda-samples and compiled there (build.py's
way), with the samples' own include directory Common/ (helper_cuda.h, ...), as their CMake build
gives it. The PTX kept is cut to the entries the cases launch (a sample's file instantiates many
templates: reduction_kernel.cu 213 entries, the tensor-core GEMMs' fixed-size kernels are most of
their PTX): the others are removed whole, with the module variables only they named; every .func,
the header and the debug sections stay, so the kept entries are byte for byte nvcc's. --only keeps the cases whose names match one of the globs (a partial corpus, for
trying cases out in another --dir). --check writes nothing and exits 1 when a file would change.
Exit 2: no nvcc, no checkout, a compile error or an argument mismatch (one line).
"""
import argparse
import dataclasses
import fnmatch
import re
import sys
from pathlib import Path

from . import build as B
from .llmc_build import checkout_commit
from .samples import CASES, PACKAGE

DATA = B.DATA / "samples"
BUILD_DIR = "/tmp/layoutsim-samples"
SOURCE = f"{BUILD_DIR}/cuda-samples"          # a link to the checkout
FLAGS = ("-ptx", "-lineinfo", "-std=c++17", f"-I{SOURCE}/Common")
LICENSE = "LICENSE.cuda-samples.txt"


def nvcc_command(case):
    return (f"cd {BUILD_DIR} && nvcc {' '.join(FLAGS)} -arch={case.arch} -o {B.ptx_file(case.stem, case.arch)} "
            f"{SOURCE}/{case.source}")


ENTRY = re.compile(r"^(?:// \.globl[^\n]*\n)?(?:\.visible |\.weak )?\.entry\s+([\w$]+)\(", re.M)
FUNCTION = re.compile(r"^(?:\.visible |\.weak |\.extern )?\.(?:entry|func)\b", re.M)
VARIABLE = re.compile(r"^(?:\.visible |\.weak |\.extern )?\.(?:global|const|shared)\b[^;]*?([\w$]+)(?:\[\d*\])*(?:\s*=[^;]*)?;\n",
                      re.M)


def _block_end(text, start):
    """The end of the {...} block that follows `start`."""
    depth, i = 0, text.index("{", start)
    while True:
        depth += (text[i] == "{") - (text[i] == "}")
        if depth == 0:
            return i + 1
        i += 1


def keep_entries(text, names):
    """The PTX with only the entries `names` (and .func, header, debug sections as they were);
    module variables declared before the first function that nothing kept names are dropped."""
    spans = [(m.start(), _block_end(text, m.end()), m.group(1)) for m in ENTRY.finditer(text)]
    missing = set(names) - {n for _, _, n in spans}
    if missing:
        raise RuntimeError(f"no entry {sorted(missing)[0]} in the PTX")
    out, at = [], 0
    for a, b, name in spans:
        if name not in names:
            out.append(text[at:a])
            at = b
    out.append(text[at:])
    cut = "".join(out)
    first = FUNCTION.search(cut)
    head, body = (cut[:first.start()], cut[first.start():]) if first else (cut, "")
    used = set(re.findall(r"[\w$]+", body))
    head = VARIABLE.sub(lambda m: m.group(0) if m.group(1) in used else "", head)
    return head + body


def cut_to_entries(ptx, cases):
    """({(stem, arch): PTX cut to its cases' entries}, the cases with entry (full name, 0))."""
    named = [dataclasses.replace(c, entry=(B.pick_entry(c, ptx[c.stem, c.arch]), 0)) for c in cases]
    cut = {key: keep_entries(text, {c.entry[0] for c in named if (c.stem, c.arch) == key})
           for key, text in ptx.items()}
    return cut, tuple(named)


def selected(only):
    if not only:
        return CASES
    globs = [g for g in only.split(",") if g]
    cases = tuple(c for c in CASES if any(fnmatch.fnmatchcase(c.name, g) for g in globs))
    if not cases:
        raise ValueError(f"--only {only}: no case matches")
    return cases


def planned_files(src, commit, cases, log=print, reuse=False):
    if not (Path(src) / "Common" / "helper_cuda.h").is_file():
        raise FileNotFoundError(f"{src}/Common/helper_cuda.h is missing: not a cuda-samples checkout")
    Path(BUILD_DIR).mkdir(parents=True, exist_ok=True)
    B.link_at(Path(SOURCE), src)
    ptx, cases = cut_to_entries(B.compile_all(log, reuse, cases, nvcc_command, BUILD_DIR), cases)
    return B.corpus_files(ptx, cases, Path(src) / "LICENSE", LICENSE, f"{PACKAGE}@{commit}", nvcc_command)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.samples_build",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True, help="a cuda-samples checkout (holding Samples/, Common/ and LICENSE)")
    ap.add_argument("--commit", help="the checkout's commit (default: git rev-parse HEAD in --src)")
    ap.add_argument("--only", help="comma-separated globs of case names (default: every case)")
    ap.add_argument("--dir", default=str(DATA), help="the corpus directory (default tests/data/realworld/samples)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    ap.add_argument("--json", action="store_true", help='print {"changed": [files], "written": bool}')
    ap.add_argument("--reuse", action="store_true", help="keep the PTX BUILD_DIR holds from the same nvcc command")
    args = ap.parse_args(argv)
    return B.build_and_write(
        "samples_build", Path(args.dir),
        lambda log: planned_files(args.src, checkout_commit(args.src, args.commit), selected(args.only), log,
                                  args.reuse), args.check, args.json)


if __name__ == "__main__":
    sys.exit(main())
