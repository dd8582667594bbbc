"""The CUTLASS 3.x Hopper GEMM examples of the real-world corpus (pip package nvidia-cutlass==4.2.0.0).

Each example is built as published (its own template configuration; nvcc's flags as CUTLASS's
CMake Release build gives them, for sm_90a, with the CUDA runtime shared so that the capture
shim can interpose it) and run on the H200 with a problem size passed through its own command
line. The launch arguments are not computed here: its host code builds the kernel's Params
(TMA descriptors included), and gpu_check/realworld/hopper_capture.c records them on the GPU
with every buffer they point to (hopper_measure.py). A case is one GemmUniversal launch of an
example: `launch` is its index among the example's captured launches, in order.

  * 48_hopper_warp_specialized_gemm: tf32 (float A, B, C), 128x128x32 tiles on 4x2x1 clusters,
    KernelScheduleAuto (the cooperative warp-specialised kernel: one producer warpgroup issuing
    multicast TMA, two consumer warpgroups), persistent tile scheduler, 7 stages;
    `--m=512 --n=256 --k=64 --iterations=0` (one cluster of 4x2 tiles; no timing loop: one launch).
  * 49_hopper_gemm_with_collective_builder: f16 with f32 accumulation, 128x128x64 tiles on 2x1x1
    clusters; main() runs seven schedules in turn. Kept: the ping-pong warp-specialised kernel
    with the TMA epilogue (launch 4) and the cooperative one with its custom epilogue visitor tree
    (launch 6); `--m=256 --n=128 --k=192` (one 2x1x1 cluster of tiles, three k-tiles).
"""
import importlib
from dataclasses import dataclass
from pathlib import Path

from gpu_check.kernel_corpus.cases import HOPPER_ARCH_SPECIFIC
from layoutsim.files import measured_data

PACKAGE = "nvidia-cutlass==4.2.0.0"
ARCH = HOPPER_ARCH_SPECIFIC          # sm_90a: wgmma, TMA multicast, setmaxnreg
# CUTLASS's CMake Release flags for an example (-O3 -DNDEBUG), -lineinfo as the rest of the corpus
NVCC_FLAGS = ("-O3", "-DNDEBUG", "-lineinfo", "-std=c++17", "--expt-relaxed-constexpr")
KERNEL_MATCH = "GemmUniversal"      # the shim captures (and ncu profiles) launches of these kernels


@dataclass(frozen=True)
class Example:
    stem: str
    source: str            # path in the package's source tree (cutlass_library/source/...)
    argv: tuple            # the command line the measurement runs it with
    launches: int          # GemmUniversal launches one run makes
    dtype: str             # A, B, C and D (row-major A, column-major B, C and D; alpha 1, beta 0)


@dataclass(frozen=True)
class Case:
    name: str
    example: str           # Example.stem
    launch: int            # index among the example's captured GemmUniversal launches
    entry: tuple           # substrings that single out its kernel among the PTX's GemmUniversal entries
    what: str


EXAMPLES = (
    Example("48_hopper_warp_specialized_gemm", "examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu",
            ("--m=512", "--n=256", "--k=64", "--iterations=0"), 1, "float32"),
    Example("49_collective_builder", "examples/49_hopper_gemm_with_collective_builder/49_collective_builder.cu",
            ("--m=256", "--n=128", "--k=192"), 7, "float16"),
)
BY_STEM = {e.stem: e for e in EXAMPLES}

CASES = (
    Case("cutlass48_ws_cooperative_tf32_cluster4x2", "48_hopper_warp_specialized_gemm", 0, ("KernelTmaWarpSpecializedCooperative",),
         "CUTLASS example 48: tf32 GEMM, cooperative warp specialisation (TMA producer warpgroup, two wgmma "
         "consumer warpgroups), multicast TMA on 4x2x1 clusters, persistent scheduler, 7-stage pipeline"),
    Case("cutlass49_ws_pingpong_f16_cluster2x1", "49_collective_builder", 4, ("KernelTmaWarpSpecializedPingpong",),
         "CUTLASS example 49: f16 GEMM, ping-pong warp specialisation (two consumer warpgroups alternating "
         "tiles), TMA epilogue, 2x1x1 clusters"),
    Case("cutlass49_ws_cooperative_evt_f16_cluster2x1", "49_collective_builder", 6, ("KernelTmaWarpSpecializedCooperative", "Sm90Compute"),
         "CUTLASS example 49: f16 GEMM, cooperative warp specialisation, custom epilogue visitor tree "
         "(beta * C + alpha * acc), TMA epilogue, 2x1x1 clusters"),
)
BY_NAME = {c.name: c for c in CASES}


@dataclass(frozen=True)
class Group:
    """A corpus of host programs whose launches the capture shim records (hopper_capture.c): these
    CUTLASS examples, and ThunderKittens' kernels through our harness (tk_cases.py). The build,
    local capture, measurement and replay modules (hopper_*.py) take one."""
    name: str              # "hopper", "tk": `--group` of hopper_local and hopper_measure
    data: Path             # the committed PTX, captures and measurement
    bin: Path              # the xz-compressed binaries (built, carried, not committed)
    arch: str
    match: str             # what the captured kernels' names contain ("": every launch the program makes)
    examples: tuple
    cases: tuple
    build: str             # the command that writes the binaries and the PTX

    @property
    def by_name(self):
        return {c.name: c for c in self.cases}

    @property
    def by_stem(self):
        return {e.stem: e for e in self.examples}


HOPPER = Group("hopper", measured_data("realworld") / "hopper", Path(__file__).resolve().parents[2] / "build" / "hopper",
               ARCH, KERNEL_MATCH, EXAMPLES, CASES, "python -m gpu_check.realworld.hopper_build")


def group(name):
    """The Group named `name` (KeyError for another)."""
    if name == "hopper":
        return HOPPER
    if name == "tk":
        return importlib.import_module("gpu_check.realworld.tk_cases").TK
    raise KeyError(name)


GROUP_NAMES = ("hopper", "tk")


def problem(example):
    """(m, n, k) of the example's command line."""
    opts = dict(a[2:].split("=", 1) for a in example.argv)
    return int(opts["m"]), int(opts["n"]), int(opts["k"])


def binary_name(stem):
    """The stripped example binary, xz-compressed (what the lead carries to the GPU machine)."""
    return f"{stem}.xz"


def ptx_name(stem, arch=ARCH):
    return f"{stem}.{arch}.ptx.gz"
