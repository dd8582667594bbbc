"""What ptxas makes of every memory, matrix and special-function PTX instruction of the corpus on
sm_90: the SASS that really runs, so the executor costs that (layoutsim/ptx/data/lowering_sm90.json).

    python -m gpu_check.kernel_corpus.lowering [--check] [--nvdisasm PATH] [--json]

Method: every sm_90 PTX file of the corpus is rewritten so that each instruction carries its own
PTX line as debug location (its `.loc`/`.file` directives are replaced by `.file 1 "kernel.ptx"`
and `.loc 1 <line> 0` before each instruction), assembled with `ptxas -arch=sm_90 -lineinfo`,
and disassembled with `nvdisasm -g`, which names the PTX line of every SASS instruction. The SASS
of the rewritten file is checked to be the same instruction sequence as that of the file as
committed, so the rewriting changed nothing but the line table. For each kept PTX instruction
the file lists the SASS instructions ptxas attributed to its line, in program order (a PTX line
inside a loop ptxas unrolled appears once per copy; instructions predicated @!PT, which never
execute, are left out), and `rules` sums them per PTX opcode. `sass_sha256` fingerprints the
code itself (each function's .text bytes), so the file can be checked against another machine's
ptxas without running this there: the GPU job records the same fingerprint of what ptxas makes on
the GPU machine (h200.json `ptxas_sass_sha256`, from cuobjdump's listing).
nvdisasm comes from PATH, /usr/local/cuda/bin, or the copy bundled with `pip install triton`. It
only reads the line table and names the instructions, so its version is recorded but `--check`
does not count it as a change (the H200 machine's nvdisasm is 13.0, the bundled one 13.1).
"""
import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from ..sfu.patch import text_sections
from . import corpus as C

OUT = Path(__file__).resolve().parents[2] / "layoutsim" / "ptx" / "data" / "lowering_sm90.json"
# PTX instructions whose SASS the executor costs or models: memory, matrix, special functions
KEEP = re.compile(r"^(ld|st|ldu|ldmatrix|stmatrix|wmma|mma|cp\.async|atom|red|ex2|rcp|rsqrt|lg2|sin|cos|tanh|sqrt"
                  r"|div\.approx|div\.full)\b")
_INSTR = re.compile(r"^\{?\s*(@!?%\w+\s+)?[a-z]")
_SASS = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_LINE = re.compile(r'//## File "kernel\.ptx", line (\d+)')
_FUNC = re.compile(r"^\.text\.(\w+):")
_LISTING_FUNC = re.compile(r"Function : (\S+)")
_LISTING_WORD = re.compile(r"/\* (0x[0-9a-f]{16}) \*/")


def find_nvdisasm():
    from gpu_check.build import tool
    p = tool("nvdisasm")
    if p:
        return p
    try:
        import triton
        cand = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "nvdisasm"
        return str(cand) if cand.exists() else None
    except ImportError:
        return None


def with_ptx_lines(ptx):
    """The PTX with every instruction's debug location set to its own line in `ptx`."""
    out, depth = [], 0
    for i, line in enumerate(ptx.splitlines(), start=1):
        s = line.strip()
        if s.startswith((".loc", ".file")):
            out.append("")
            continue
        if depth > 0 and _INSTR.match(s) and not s.endswith(":"):
            out.append(f"\t.loc 1 {i} 0")
        if not s.startswith("//"):
            depth += s.count("{") - s.count("}")
        out.append(line)
        if s.startswith(".address_size"):
            out.append('.file 1 "kernel.ptx"')
    return "\n".join(out) + "\n"


def ptx_instruction(line):
    """('ld.shared.v4.u32', full text) of a PTX instruction line, without predicate and braces."""
    s = line.strip().lstrip("{").strip()
    s = re.sub(r"^@!?%\w+\s+", "", s)
    return s.split()[0].rstrip(";") if s else "", s.rstrip("}").strip()


def disassemble(cubin, nvdisasm, with_lines):
    """{function: [(ptx line or None, 'OPCODE.MODS', operands)]} in program order."""
    cmd = [nvdisasm, "-c"] + (["-g"] if with_lines else []) + [str(cubin)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[:200]}")
    funcs, cur, line = {}, None, None
    for text in r.stdout.splitlines():
        m = _FUNC.match(text.strip())
        if m:
            cur, line = m.group(1), None
            funcs[cur] = []
            continue
        m = _LINE.search(text)
        if m:
            line = int(m.group(1))
            continue
        m = _SASS.search(text)
        if m and cur and (m.group(1) or "").strip() != "@!PT":      # @!PT: never executes (ptxas padding)
            funcs[cur].append((line, m.group(2), " ".join(m.group(3).split())))
    return funcs


def sass_sha256(cubin):
    """{function: SHA-256 of its .text section} of a cubin: the SASS exactly as assembled."""
    return {name[len(".text."):]: hashlib.sha256(cubin[off:off + size]).hexdigest()
            for name, off, size in text_sections(cubin)}


def listing_sha256(listing):
    """The same fingerprints from a `cuobjdump -sass` listing: every instruction's two 64-bit
    encoding words, little-endian, in address order (the bytes of the .text section)."""
    words, cur = {}, None
    for line in listing.splitlines():
        m = _LISTING_FUNC.search(line)
        if m:
            cur = m.group(1)
            words[cur] = bytearray()
            continue
        if cur is not None:
            for w in _LISTING_WORD.findall(line):
                words[cur] += int(w, 16).to_bytes(8, "little")
    return {f: hashlib.sha256(bytes(b)).hexdigest() for f, b in words.items()}


def lower_file(ptx_path, nvdisasm, work):
    """({entry: [{line, ptx, op, sass: [...]}]}, {entry: SASS fingerprint}) for one PTX file."""
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    ptx = Path(ptx_path).read_text()
    lined = Path(work) / "lined.ptx"
    lined.write_text(with_ptx_lines(ptx))
    cubins = {}
    for name, src, extra in (("lined", lined, ["-lineinfo"]), ("plain", ptx_path, [])):
        out = Path(work) / f"{name}.cubin"
        r = subprocess.run([ptxas, "-arch=sm_90", *extra, "-o", str(out), str(src)], capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"ptxas -arch=sm_90 {src}: {r.stderr.strip()[:300]}")
        cubins[name] = out
    lined_sass = disassemble(cubins["lined"], nvdisasm, True)
    plain_sass = disassemble(cubins["plain"], nvdisasm, False)
    for f in plain_sass:
        if [x[1:] for x in lined_sass.get(f, [])] != [x[1:] for x in plain_sass[f]]:
            raise RuntimeError(f"{ptx_path}: {f}: the line-tagged PTX assembles to different SASS")
    lines = ptx.splitlines()
    out = {}
    for f, instrs in lined_sass.items():
        by_line = defaultdict(list)
        for line, op, _ in instrs:
            if line is not None:
                by_line[line].append(op)
        rows = []
        for line in sorted(by_line):
            op, text = ptx_instruction(lines[line - 1])
            if KEEP.match(op):
                rows.append({"line": line, "ptx": text, "op": op, "sass": by_line[line]})
        out[f] = rows
    return out, sass_sha256(cubins["plain"].read_bytes())


_SASS_MEM = re.compile(r"^(LDS|STS|LDSM|STSM|LDG|STG|LD|ST|LDGSTS|ATOMS|ATOMG|ATOM|RED|REDG|MUFU|HMMA|IMMA|LDL|STL)\b")


def rules(kernels):
    """{ptx op: {"instances": n, "sass": {memory/SFU/MMA SASS opcode: count}}} over the corpus."""
    acc = {}
    for per_file in kernels.values():
        for rows in per_file.values():
            for r in rows:
                a = acc.setdefault(r["op"], {"instances": 0, "sass": Counter()})
                a["instances"] += 1
                a["sass"].update(op for op in r["sass"] if _SASS_MEM.match(op))
    return {k: {"instances": v["instances"], "sass": dict(sorted(v["sass"].items()))} for k, v in sorted(acc.items())}


def tool_version(path):
    r = subprocess.run([path, "--version"], capture_output=True, text=True)
    lines = [x for x in r.stdout.splitlines() if "release" in x]
    return lines[-1].strip() if lines else None


def generate(directory=C.DATA, nvdisasm=None):
    nvdisasm = nvdisasm or find_nvdisasm()
    if not nvdisasm:
        raise FileNotFoundError("nvdisasm not found (PATH, /usr/local/cuda/bin, or pip install triton)")
    manifest = C.load_manifest(directory)
    files = sorted({e["ptx"]["sm_90"] for e in manifest})
    kernels, fingerprints = {}, {}
    with tempfile.TemporaryDirectory(prefix="lowering_") as work:
        for f in files:
            kernels[f], fingerprints[f] = lower_file(Path(directory) / f, nvdisasm, work)
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    return {"schema": 1, "arch": "sm_90",
            "what": "SASS that ptxas -arch=sm_90 emits for each memory, matrix and special-function PTX instruction "
                    "of the kernel corpus (tests/data/kernels/*.sm_90.ptx), by PTX line; rules: the same summed "
                    "per PTX opcode (memory, MUFU and MMA SASS only)",
            "source": {"ptxas": tool_version(ptxas), "nvdisasm": tool_version(nvdisasm),
                       "generator": "python -m gpu_check.kernel_corpus.lowering",
                       "method": "each instruction tagged with its PTX line (.loc), ptxas -lineinfo, nvdisasm -g; "
                                 "SASS sequence checked equal to the untagged build"},
            "sass_sha256": fingerprints, "kernels": kernels, "rules": rules(kernels)}


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
    ap.add_argument("--json", action="store_true",
                    help='print {"file": path, "changed": bool, "differences": [dotted paths, at most 20]} on stdout')
    args = ap.parse_args(argv)
    if shutil.which("ptxas") is None and not Path("/usr/local/cuda/bin/ptxas").exists():
        print("lowering: ptxas not found on PATH", file=sys.stderr)
        return 2
    try:
        doc = generate(nvdisasm=args.nvdisasm)
    except (FileNotFoundError, RuntimeError) as e:
        print(f"lowering: {e}", file=sys.stderr)
        return 2
    text = json.dumps(doc, indent=1) + "\n"
    diff = differences(json.loads(OUT.read_text()), doc) if OUT.is_file() else ["(no file)"]
    changed = bool(diff)
    if changed and not args.check:
        OUT.parent.mkdir(parents=True, exist_ok=True)
        C.write_atomic(OUT, text)
    if args.json:
        print(json.dumps({"file": str(OUT), "changed": changed, "differences": diff}))
    else:
        n = sum(len(rows) for f in doc["kernels"].values() for rows in f.values())
        print(f"{OUT}: {n} PTX instructions in {len(doc['kernels'])} files, {len(doc['rules'])} opcodes"
              + (" (differs)" if args.check and changed else " (written)" if changed else " (unchanged)"))
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
