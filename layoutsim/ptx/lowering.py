"""What ptxas makes of each PTX instruction: the SASS attributed to every PTX line.

Method: the PTX is rewritten so that each instruction carries its own PTX line as debug location
(its `.loc`/`.file` directives are replaced by `.file 1 "kernel.ptx"` and `.loc 1 <line> 0` before
each instruction), assembled with `ptxas -arch=ARCH -lineinfo`, and disassembled with
`nvdisasm -g`, which names the PTX line of every SASS instruction. The SASS of the rewritten file
is checked to be the same instruction sequence as that of the file as given, so the rewriting
changed nothing but the line table. A PTX line inside a loop ptxas unrolled appears once per
copy; instructions predicated @!PT (never executed: ptxas padding) are left out. The two ptxas runs
(tagged and as given) run side by side. The check first compares the two cubins' code bytes
(every .text.* section and its relocations, read from the ELF): equal bytes are the same SASS, and
the file as given needs no nvdisasm run of its own (nvdisasm is most of a lowering's time: ~0.4 s
CPU of start-up per run, ptxas ~0.03 s on a small kernel; it runs without its dataflow analysis,
NO_DATAFLOW). Only where the bytes differ (or the
ELF is not one this reader knows) is the file as given disassembled too and the instruction
streams compared as text, refusing the lowering when they differ.

Used by the executor at run time (sass.py, for PTX the committed data does not describe) and by
the generator of that data (gpu_check/kernel_corpus/lowering.py).

nvdisasm is not in every CUDA install: it is looked for on PATH, in /usr/local/cuda/bin, in the
`nvidia-cuda-nvdisasm` wheel (`pip install nvidia-cuda-nvdisasm`, or `pip install
layoutsim[sass]`) and in the copy triton bundles. It only reads the line table and names the
instructions.
"""
import glob
import importlib.util
import os
import re
import shutil
import tempfile
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

from .. import sass as SASS

# PTX instructions whose SASS the executor costs or models: memory, matrix, special functions
KEEP = re.compile(r"^(ld|st|ldu|ldmatrix|stmatrix|wmma|mma|cp\.async|atom|red|ex2|rcp|rsqrt|lg2|sin|cos|tanh|sqrt"
                  r"|div\.approx|div\.full)\b")
INSTALL = {"ptxas": "the CUDA toolkit", "nvdisasm": "pip install nvidia-cuda-nvdisasm"}


def install_hint(*missing):
    """'install nvdisasm (pip install nvidia-cuda-nvdisasm)' for the tools named."""
    return "install " + " and ".join(f"{t} ({INSTALL[t]})" for t in missing)

_INSTR = re.compile(r"^\{?\s*(@!?[%$\w]+\s+)?[a-z]")        # a guard may name a predicate without % (`@p`)
_DEBUG = re.compile(r"^\.(loc|file)\s")
TAGGED = "kernel.ptx"        # the file name the rewritten PTX's .loc lines name (nvdisasm -g prints it)


class LoweringError(RuntimeError):
    """ptxas or nvdisasm failed, or the line tagging changed the code."""


def find_ptxas():
    return shutil.which("ptxas") or _existing("/usr/local/cuda/bin/ptxas")


def find_nvdisasm():
    """PATH, /usr/local/cuda/bin, the nvidia-cuda-nvdisasm wheel (nvidia/cu*/bin), triton's copy."""
    p = shutil.which("nvdisasm") or _existing("/usr/local/cuda/bin/nvdisasm")
    if p:
        return p
    for pkg, pattern in (("nvidia", "*/bin/nvdisasm"), ("triton", "backends/nvidia/bin/nvdisasm")):
        try:
            spec = importlib.util.find_spec(pkg)
        except (ImportError, ValueError):
            continue
        for root in (spec.submodule_search_locations or []) if spec else []:
            for cand in sorted(glob.glob(os.path.join(root, pattern)), reverse=True):   # newest cu* first
                if os.access(cand, os.X_OK):
                    return cand
    return None


def _existing(path):
    return path if os.path.exists(path) else None


@lru_cache(maxsize=None)
def tool_version(path):
    """'Cuda compilation tools, release 13.0, V13.0.88' from `path --version`, or None (asked
    once per path and process)."""
    import subprocess                 # (here and below: a run with its lowering cached starts no process)
    r = subprocess.run([path, "--version"], capture_output=True, text=True)
    lines = [x for x in r.stdout.splitlines() if "release" in x]
    return lines[-1].strip() if lines else None


def with_ptx_lines(ptx):
    """The PTX with every instruction's debug location set to its own line in `ptx`."""
    out, depth, open_stmt = [], 0, False
    for i, line in enumerate(ptx.splitlines(), start=1):
        s = line.strip()
        if _DEBUG.match(s):                     # .loc / .file (not .local: a kernel's stack frame)
            out.append("")
            continue
        # a statement nvcc spreads over lines (`call.uni (retval0),` / `vprintf,` / `(` ...) takes
        # its .loc before its first line only: a .loc inside it is a ptxas syntax error
        if depth > 0 and not open_stmt and _INSTR.match(s) and not s.endswith(":"):
            out.append(f"\t.loc 1 {i} 0")
        code = s.split("//", 1)[0].strip()
        if code:
            depth += code.count("{") - code.count("}")
            open_stmt = depth > 0 and not code.endswith((";", "{", "}", ":"))
        out.append(line)
        if s.startswith(".address_size"):
            out.append(f'.file 1 "{TAGGED}"')
    return "\n".join(out) + "\n"


def ptx_instruction(line):
    """('ld.shared.v4.u32', full text) of a PTX instruction line, without predicate and braces."""
    s = line.strip().lstrip("{").strip()
    s = re.sub(r"^@!?[%$\w]+\s+", "", s)
    return s.split()[0].rstrip(";") if s else "", s.rstrip("}").strip()


def _both(cmds):
    """[(returncode, stdout, stderr)] of commands run side by side (the two ptxas runs, then the
    two nvdisasm runs of a lowering: independent, so each pair takes the time of one where two
    CPUs are free); one thread waits on each."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(len(cmds)) as ex:
        return list(ex.map(_result, cmds))


def _result(cmd):
    import subprocess
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


# nvdisasm's dataflow analysis (on by default) only infers the branch-stack targets of indirect
# jumps for their labels (nvdisasm --help, --no-dataflow); the rows keep each PTX line's SASS
# opcodes, and both listings of a fallback comparison are made alike. Off, it costs ~0.1 s less
# CPU per run (0.34-0.39 s against 0.47 s on a small kernel here), and the rows of all 84 sm_90
# corpus PTX files (tests/data/{kernels,realworld,triton_corpus}, tests/ptx/kernels) are unchanged.
NO_DATAFLOW = ("-ndf",)


def _disassemble_cmd(cubin, nvdisasm, with_lines):
    return [nvdisasm, "-c", *NO_DATAFLOW] + (["-g"] if with_lines else []) + [str(cubin)]


def _disassembled(cmd, result):
    code, out, err = result
    if code:
        raise LoweringError(f"{' '.join(cmd)} failed ({code}): {err.strip()[:200]}")
    return SASS.nvdisasm_functions(out, TAGGED)


def _assemble_cmd(ptx_path, cubin, arch, ptxas, lineinfo):
    return [ptxas, f"-arch={arch}", *(["-lineinfo"] if lineinfo else []), "-o", str(cubin), str(ptx_path)]


def _assembled(arch, result):
    code, out, err = result
    if code:
        msg = (err.strip() or out.strip()).splitlines()
        raise LoweringError(f"ptxas -arch={arch} refused the PTX: {msg[0] if msg else code}")


def code_sections(cubin):
    """{name: bytes} of a cubin's code: every .text.* section and the relocations applied to it
    (.rel.text.* / .rela.text.*), with the symbol and string tables those relocations name
    symbols by (when there are any); None when the bytes are not a cubin sass.cubin_sections can
    read (then the caller compares disassemblies)."""
    try:
        sections = SASS.cubin_sections(cubin)
    except ValueError:
        return None
    out = {}
    for name, kind, offset, length in sections:
        if name.startswith((".text.", ".rel.text.", ".rela.text.", ".symtab", ".strtab")):
            if kind == 8:                   # SHT_NOBITS: code without bytes is none this reader knows
                return None
            out[name] = cubin[offset:offset + length]
    if not any(v for k, v in out.items() if k.startswith(".rel")):
        out.pop(".symtab", None), out.pop(".strtab", None)     # nothing in the code names a symbol
    return out


def same_code(a, b):
    """Whether two cubins hold the same functions with byte-identical code and relocations (so
    nvdisasm would list the same instructions); False when either cannot be read."""
    ca, cb = code_sections(a), code_sections(b)
    return ca is not None and bool(ca) and ca == cb


def lower(ptx, arch, ptxas=None, nvdisasm=None, work=None, keep=KEEP):
    """({function: [{line, ptx, op, sass: [SASS opcodes]}]}, the cubin of the PTX as given) for the
    instructions whose PTX opcode matches `keep` (None: every instruction with SASS)."""
    ptxas, nvdisasm = ptxas or find_ptxas(), nvdisasm or find_nvdisasm()
    missing = [n for n, p in (("ptxas", ptxas), ("nvdisasm", nvdisasm)) if not p]
    if missing:
        raise LoweringError(f"{' and '.join(missing)} not found: {install_hint(*missing)}")
    with tempfile.TemporaryDirectory(prefix="layoutsim_lowering_", dir=work) as tmp:
        tmp = Path(tmp)
        (tmp / "plain.ptx").write_text(ptx)
        (tmp / "lined.ptx").write_text(with_ptx_lines(ptx))
        pair = (("lined", True), ("plain", False))
        for result in _both([_assemble_cmd(tmp / f"{n}.ptx", tmp / f"{n}.cubin", arch, ptxas, li) for n, li in pair]):
            _assembled(arch, result)
        cubin = (tmp / "plain.cubin").read_bytes()
        same = same_code(cubin, (tmp / "lined.cubin").read_bytes())
        cmds = [_disassemble_cmd(tmp / f"{n}.cubin", nvdisasm, li) for n, li in (pair[:1] if same else pair)]
        listings = [_disassembled(c, r) for c, r in zip(cmds, _both(cmds))]
    lined = listings[0]
    if not same:                # the bytes differ: are the instruction streams the same?
        for f, plain in listings[1].items():
            if [x[1:] for x in lined.get(f, [])] != [x[1:] for x in plain]:
                raise LoweringError(f"{f}: the line-tagged PTX assembles to different SASS")
    lines = ptx.splitlines()
    out = {}
    for f, instrs in lined.items():
        by_line = defaultdict(list)
        for line, op, _ in instrs:
            if line is not None:
                by_line[line].append(op)
        rows = []
        for line in sorted(by_line):
            op, text = ptx_instruction(lines[line - 1])
            if keep is None or keep.match(op):
                rows.append({"line": line, "ptx": text, "op": op, "sass": by_line[line]})
        out[f] = rows
    return out, cubin
