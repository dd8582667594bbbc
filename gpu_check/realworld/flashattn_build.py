"""Build FlashAttention-2's forward kernel from the PyPI sdist: its PTX and the layout of the
`Flash_fwd_params` struct it takes by value, both as the compiler makes them.

    pip download --no-deps --no-binary :all: flash-attn==2.8.3.post2 && tar xzf flash_attn-2.8.3.post2.tar.gz
    python -m gpu_check.realworld.flashattn_build --package-root flash_attn-2.8.3.post2 [--torch-include DIR] [--check] [--json]

The sdist's csrc/flash_attn/src/flash_fwd_hdim64_fp16_sm80.cu instantiates run_mha_fwd_hdim64 for
fp16, which launches flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false,
half_t>, ...> over every combination of its run-time switches (dropout, even sizes, local, alibi,
softcap, returned softmax): 20+ kernels. We compile ONE of them, the one run_flash_fwd picks for a
non-causal fp16 hdim-64 forward without dropout whose seqlens are multiples of 128 (Is_even_MN and
Is_even_K true, every other switch false): a two-line translation unit of ours (KERNEL_UNIT) that
includes the sdist's flash_fwd_launch_template.h and takes that kernel's address, with the sdist's
nvcc flags (setup.py's nvcc_flags) except -std=c++20 (the installed torch 2.14's headers need
C++20; flash.h includes them for at::PhiloxCudaState) and with -lineinfo added (PTX .loc lines
only). The PTX goes to tests/data/realworld/flashattn/flash_fwd_hdim64_fp16.sm_90.ptx.gz (the
whole nvcc output: the one entry and nothing else), beside the sdist's LICENSE.

The struct layout: a host program (LAYOUT_UNIT, generated in BUILD_DIR from the field names of
flash.h's Qkv_params and Flash_fwd_params) prints offsetof/sizeof of every field, the struct's
size and alignment, and the kernel traits (kBlockM, kBlockN, kNThreads, kSmemSize) to
params_layout.json; gpu_check/realworld/flashattn_case.py packs the struct from it.

The sdist and torch's include directory are linked at BUILD_DIR so the PTX names the same paths on
every machine. --check writes nothing and exits 1 when a file would change. Exit 2: no nvcc, no
sdist, no torch headers, a compile error (one line).
"""
import argparse
import gzip
import importlib.util
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from .build import DATA as REALWORLD, build_and_write, link_at

PACKAGE = "flash-attn==2.8.3.post2"
DATA = REALWORLD / "flashattn"
BUILD_DIR = "/tmp/layoutsim-realworld/flashattn"
ARCH = "sm_90"
PTX = f"flash_fwd_hdim64_fp16.{ARCH}.ptx.gz"
LAYOUT = "params_layout.json"
LICENSE = "LICENSE.flash-attn.txt"
# the one template instance (run_flash_fwd's choice; see the module text)
TRAITS = "Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t>"
KERNEL = (f"flash_fwd_kernel<{TRAITS}, /*Is_dropout*/ false, /*Is_causal*/ false, /*Is_local*/ false, "
          f"/*Has_alibi*/ false, /*Is_even_MN*/ true, /*Is_even_K*/ true, /*Is_softcap*/ false, "
          f"/*Return_softmax*/ false>")
KERNEL_UNIT = ('#include "namespace_config.h"\n#include "flash_fwd_launch_template.h"\n'
               f"namespace FLASH_NAMESPACE {{\nvoid *layoutsim_kernel() {{ return (void *)&{KERNEL}; }}\n}}\n")
# setup.py's nvcc_flags (flash-attn 2.8.3.post2), -std=c++17 -> c++20 for torch's headers, -lineinfo added
FLAGS = ("-O3", "-std=c++20", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__",
         "-U__CUDA_NO_HALF2_OPERATORS__", "-U__CUDA_NO_BFLOAT16_CONVERSIONS__", "--expt-relaxed-constexpr",
         "--expt-extended-lambda", "--use_fast_math", "-lineinfo")
INCLUDES = ("-Ifa/csrc/flash_attn", "-Ifa/csrc/flash_attn/src", "-Ifa/csrc/cutlass/include", "-Itorch",
            "-Itorch/torch/csrc/api/include")
PTX_COMMAND = (f"cd {BUILD_DIR} && nvcc -ptx -arch={ARCH} {' '.join(FLAGS)} {' '.join(INCLUDES)} "
               f"-o kernel.{ARCH}.ptx kernel.cu")
LAYOUT_COMMAND = (f"cd {BUILD_DIR} && nvcc -std=c++20 --expt-relaxed-constexpr -Wno-deprecated-declarations "
                  f"{' '.join(INCLUDES)} -o layout layout.cu && ./layout")
STRUCTS = ("Qkv_params", "Flash_fwd_params")


def torch_include(given=None):
    if given:
        return Path(given)
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("torch not found (its headers define at::PhiloxCudaState): pip install torch, "
                                "or give --torch-include")
    return Path(list(spec.submodule_search_locations)[0]) / "include"


def field_names(flash_h):
    """The data members of Qkv_params and Flash_fwd_params, in declaration order, from flash.h."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", flash_h, flags=re.S)
    names = []
    for struct in STRUCTS:
        m = re.search(r"struct\s+" + struct + r"\b[^{]*\{(.*?)\n\};", text, re.S)
        if m is None:
            raise RuntimeError(f"flash.h: struct {struct} not found")
        for decl in m.group(1).split(";"):
            decl = " ".join(decl.split())
            if not decl or decl.startswith(("using ", "typedef ")) or "(" in decl:
                continue
            first, *rest = decl.split(",")
            names.append(re.findall(r"\w+", first)[-1])
            names += [re.findall(r"\w+", r)[0] for r in rest]
    return names


def layout_unit(names):
    """A host program printing the struct's layout and the kernel traits as JSON."""
    lines = ['#include "namespace_config.h"', '#include "flash.h"', '#include "kernel_traits.h"',
             "#include <cstddef>", "#include <cstdio>", "#include <type_traits>",
             "using P = FLASH_NAMESPACE::Flash_fwd_params;", f"using K = {TRAITS};",
             "template <class T> const char *kind() {",
             '  if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>) return "bool";',
             '  else if constexpr (std::is_convertible_v<T, const volatile void *>) return "pointer";',
             '  else if constexpr (std::is_floating_point_v<std::remove_cv_t<T>>) return "float";',
             '  else if constexpr (std::is_integral_v<std::remove_cv_t<T>>) return std::is_signed_v<T> ? "int" : "uint";',
             '  else return "bytes";', "}", "int main() {",
             '  printf("{\\"struct\\": \\"Flash_fwd_params\\", \\"size\\": %zu, \\"align\\": %zu,\\n", sizeof(P), alignof(P));',
             '  printf(" \\"traits\\": {\\"kHeadDim\\": %d, \\"kBlockM\\": %d, \\"kBlockN\\": %d, \\"kNWarps\\": %d, '
             '\\"kNThreads\\": %d, \\"kSmemSize\\": %d},\\n", K::kHeadDim, K::kBlockM, K::kBlockN, K::kNWarps, '
             "K::kNThreads, K::kSmemSize);", '  printf(" \\"fields\\": [\\n");']
    for i, n in enumerate(names):
        sep = "," if i + 1 < len(names) else ""
        lines.append(f'  printf("  {{\\"name\\": \\"{n}\\", \\"offset\\": %zu, \\"size\\": %zu, \\"kind\\": \\"%s\\"}}{sep}\\n", '
                     f"offsetof(P, {n}), sizeof(((P *)nullptr)->{n}), kind<decltype(((P *)nullptr)->{n})>());")
    lines += ['  printf(" ]}\\n");', "  return 0;", "}"]
    return "\n".join(lines) + "\n"


def prepare(root, torch_inc):
    root = Path(root)
    if not (root / "csrc" / "flash_attn" / "src" / "flash_fwd_launch_template.h").is_file():
        raise FileNotFoundError(f"{root}/csrc/flash_attn/src/flash_fwd_launch_template.h is missing: not the "
                                f"unpacked {PACKAGE} sdist")
    if not (Path(torch_inc) / "ATen" / "cuda" / "CUDAGeneratorImpl.h").is_file():
        raise FileNotFoundError(f"{torch_inc}/ATen/cuda/CUDAGeneratorImpl.h is missing: give torch's include "
                                f"directory (--torch-include)")
    b = Path(BUILD_DIR)
    b.mkdir(parents=True, exist_ok=True)
    link_at(b / "fa", root)
    link_at(b / "torch", torch_inc)
    (b / "kernel.cu").write_text(KERNEL_UNIT)
    names = field_names((root / "csrc" / "flash_attn" / "src" / "flash.h").read_text())
    (b / "layout.cu").write_text(layout_unit(names))
    return names


def _run(cmd, what):
    r = subprocess.run(["nice", "sh", "-c", cmd], capture_output=True, text=True)
    if r.returncode:
        msg = [x for x in (r.stderr or r.stdout).splitlines() if "error" in x] or [f"exit {r.returncode}"]
        raise RuntimeError(f"{what}: {msg[0]}")
    return r.stdout


def planned_files(root, torch_inc, log=print):
    names = prepare(root, torch_inc)
    t0 = time.time()
    layout = json.loads(_run(LAYOUT_COMMAND, "the layout program"))
    if [f["name"] for f in layout["fields"]] != names:
        raise RuntimeError("the layout program's fields are not flash.h's")
    log(f"struct layout: {layout['size']} bytes, {len(names)} fields ({time.time() - t0:.0f} s)")
    t0 = time.time()
    _run(PTX_COMMAND, "the PTX")
    ptx = (Path(BUILD_DIR) / f"kernel.{ARCH}.ptx").read_bytes()
    log(f"compiled the kernel to PTX in {time.time() - t0:.0f} s ({len(ptx)} bytes; {PTX_COMMAND})")
    entries = re.findall(rb"\.entry\s+([\w$]+)\(", ptx)
    if len(entries) != 1:
        raise RuntimeError(f"the PTX holds {len(entries)} entries, not one")
    lic = Path(root) / "LICENSE"
    if not lic.is_file():
        raise FileNotFoundError(f"{lic} is missing: the sdist's licence is kept beside its PTX")
    layout.update(package=PACKAGE, kernel=entries[0].decode(), template=KERNEL, arch=ARCH, ptx=PTX,
                  nvcc=PTX_COMMAND, layout_program=LAYOUT_COMMAND)
    return {PTX: gzip.compress(ptx, 9, mtime=0), LICENSE: lic.read_bytes(),
            LAYOUT: (json.dumps(layout, indent=1) + "\n").encode()}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.realworld.flashattn_build", description=__doc__.splitlines()[0])
    ap.add_argument("--package-root", required=True, help=f"the unpacked {PACKAGE} sdist (holding csrc/ and LICENSE)")
    ap.add_argument("--torch-include", help="torch's include directory (default: the installed torch's)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a committed file would change")
    ap.add_argument("--json", action="store_true", help='print {"changed": [files], "written": bool}')
    args = ap.parse_args(argv)
    return build_and_write("flashattn_build", DATA, lambda log: planned_files(
        args.package_root, torch_include(args.torch_include), log), args.check, args.json)

if __name__ == "__main__":
    sys.exit(main())
