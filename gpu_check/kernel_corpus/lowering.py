"""The committed lowering data of the kernel corpus: what ptxas makes of every memory, matrix and
special-function PTX instruction of the corpus on sm_90, the SASS that really runs, so the executor
costs that (layoutsim/ptx/data/lowering_sm90.json).

    python -m gpu_check.kernel_corpus.lowering [--check] [--nvdisasm PATH] [--json] [--corpus realworld]

--corpus realworld: the same for tests/data/realworld (the CUTLASS PTX of issue 24), into
layoutsim/ptx/data/lowering_sm90_realworld.json; --corpus llmc and --corpus samples for llm.c's and
cuda-samples' corpora (tests/data/realworld/llmc, .../samples), into lowering_sm90_llmc.json and
lowering_sm90_samples.json (the executor reads every one of these files: layoutsim/ptx/sass.py).

The method (each instruction tagged with its own PTX line, ptxas -arch=sm_90 -lineinfo,
nvdisasm -g, SASS checked equal to the untagged build) is layoutsim/ptx/lowering.py, which the
executor also runs for PTX this file does not describe. For each kept PTX instruction the file
lists the SASS instructions ptxas attributed to its line, in program order, and `rules` sums them
per PTX opcode. `ptx_sha256` fingerprints each PTX file's text: the executor uses this file for a
PTX whose text has that hash. `sass_sha256` fingerprints the code itself (each function's .text
bytes), so the file can be checked against another machine's ptxas without running this there:
the GPU job records the same fingerprint of what ptxas makes on the GPU machine (h200.json
`ptxas_sass_sha256`, from cuobjdump's listing). nvdisasm only reads the line table and names the
instructions, so its version is recorded but `--check` does not count it as a change (the H200
machine's nvdisasm is 13.0, the bundled one 13.1, the nvidia-cuda-nvdisasm wheel's 13.5).
"""
import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

from layoutsim import sass as SASS
from layoutsim.ptx import lowering as M

from ..sfu.patch import text_sections
from . import corpus as C

OUT = Path(__file__).resolve().parents[2] / "layoutsim" / "ptx" / "data" / "lowering_sm90.json"
WHAT = {"kernels": "the kernel corpus (tests/data/kernels/*.sm_90.ptx)",
        "realworld": "the real-world corpus (tests/data/realworld, the PTX each case runs)",
        "llmc": "llm.c's dev/cuda corpus (tests/data/realworld/llmc)",
        "samples": "the cuda-samples corpus (tests/data/realworld/samples)"}
CORPORA = {"kernels": (C.DATA, OUT), "realworld": (C.measured_data("realworld"), OUT.with_name("lowering_sm90_realworld.json")),
           "llmc": (C.measured_data("realworld") / "llmc", OUT.with_name("lowering_sm90_llmc.json")),
           "samples": (C.measured_data("realworld") / "samples", OUT.with_name("lowering_sm90_samples.json"))}


def sass_sha256(cubin):
    """{function: SHA-256 of its .text section} of a cubin: the SASS exactly as assembled."""
    return {name[len(".text."):]: hashlib.sha256(cubin[off:off + size]).hexdigest()
            for name, off, size in text_sections(cubin)}


def listing_sha256(listing):
    """The same fingerprints from a `cuobjdump -sass` listing: every instruction's two 64-bit
    encoding words, little-endian, in address order (the bytes of the .text section)."""
    return {f: hashlib.sha256(b).hexdigest() for f, b in SASS.cuobjdump_words(listing).items()}


def lower_file(ptx_path, nvdisasm, work, target="sm_90"):
    """({entry: [{line, ptx, op, sass: [...]}]}, {entry: SASS fingerprint}, PTX text SHA-256) of one
    file; target: ptxas's -arch (sm_90a for the arch-specific wgmma/TMA PTX, which runs on sm_90)."""
    ptx = Path(ptx_path).read_text()
    rows, cubin = M.lower(ptx, target, nvdisasm=nvdisasm, work=work)
    return rows, sass_sha256(cubin), hashlib.sha256(ptx.encode()).hexdigest()


def _counted(op):
    """What `rules` sums: memory SASS, special functions and tensor-core MMAs."""
    return SASS.MEMORY.match(op) or SASS.COUNTED.match(op)


def rules(kernels):
    """{ptx op: {"instances": n, "sass": {memory/SFU/MMA SASS opcode: count}}} over the corpus."""
    acc = {}
    for per_file in kernels.values():
        for rows in per_file.values():
            for r in rows:
                a = acc.setdefault(r["op"], {"instances": 0, "sass": Counter()})
                a["instances"] += 1
                a["sass"].update(op for op in r["sass"] if _counted(op))
    return {k: {"instances": v["instances"], "sass": dict(sorted(v["sass"].items()))} for k, v in sorted(acc.items())}


def generate(directory=C.DATA, nvdisasm=None):
    nvdisasm = nvdisasm or M.find_nvdisasm()
    if not nvdisasm:
        raise FileNotFoundError(f"nvdisasm not found: {M.install_hint('nvdisasm')}")
    ptxas = M.find_ptxas()
    if not ptxas:
        raise FileNotFoundError(f"ptxas not found: {M.install_hint('ptxas')}")
    manifest = C.load_manifest(directory)
    files = {C.run_ptx(e): C.run_arch(e) for e in manifest}
    kernels, fingerprints, hashes = {}, {}, {}
    for f in sorted(files):
        kernels[f], fingerprints[f], hashes[f] = lower_file(Path(directory) / f, nvdisasm, None, files[f])
    return {"schema": 1, "arch": "sm_90",
            "what": "SASS that ptxas -arch=sm_90 emits for each memory, matrix and special-function PTX instruction "
                    f"of {WHAT.get(Path(directory).name, 'the corpus in ' + str(directory))}, by PTX line; rules: "
                    "the same summed per PTX opcode (memory, MUFU and MMA SASS only)",
            "source": {"ptxas": M.tool_version(ptxas), "nvdisasm": M.tool_version(nvdisasm),
                       "generator": "python -m gpu_check.kernel_corpus.lowering",
                       "method": "each instruction tagged with its PTX line (.loc), ptxas -lineinfo, nvdisasm -g; "
                                 "SASS sequence checked equal to the untagged build (layoutsim/ptx/lowering.py)"},
            "ptx_sha256": hashes, "sass_sha256": fingerprints, "kernels": kernels, "rules": rules(kernels)}


def differences(old, new, limit=20):
    """Dotted paths where two lowering documents differ, the disassembler's version aside."""
    out = []

    def walk(a, b, path):
        if len(out) >= limit or path == "source.nvdisasm":
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b), key=str):
                walk(a.get(k), b.get(k), f"{path}.{k}" if path else str(k))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                walk(x, y, f"{path}[{i}]")
        elif a != b:
            out.append(path)
    walk(old, new, "")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.kernel_corpus.lowering", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if the file would change")
    ap.add_argument("--nvdisasm", help="the nvdisasm to use")
    ap.add_argument("--corpus", default="kernels", choices=sorted(CORPORA), help="which corpus (default kernels)")
    ap.add_argument("--json", action="store_true",
                    help='print {"file": path, "changed": bool, "differences": [dotted paths, at most 20]} on stdout')
    args = ap.parse_args(argv)
    try:
        directory, out = CORPORA[args.corpus]
        doc = generate(directory, nvdisasm=args.nvdisasm)
    except (FileNotFoundError, RuntimeError) as e:
        print(f"lowering: {e}", file=sys.stderr)
        return 2
    text = json.dumps(doc, indent=1) + "\n"
    diff = differences(json.loads(out.read_text()), doc) if out.is_file() else ["(no file)"]
    changed = bool(diff)
    if changed and not args.check:
        out.parent.mkdir(parents=True, exist_ok=True)
        C.write_atomic(out, text)
    if args.json:
        print(json.dumps({"file": str(out), "changed": changed, "differences": diff}))
    else:
        n = sum(len(rows) for f in doc["kernels"].values() for rows in f.values())
        print(f"{out}: {n} PTX instructions in {len(doc['kernels'])} files, {len(doc['rules'])} opcodes"
              + (" (differs)" if args.check and changed else " (written)" if changed else " (unchanged)"))
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
