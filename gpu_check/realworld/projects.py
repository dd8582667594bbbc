"""The registry projects benchmarks/accept.py can judge whole (`--project NAME[=ROOT]`): where each
one's CUDA sources and headers are, from the pip package installed (or unpacked at ROOT).

    cub         nvidia-cuda-cccl==13.0.85: CUB's device-wide algorithms, instantiated over common
                types by our translation units gpu_check/realworld/cub/accept/*.cu (CUB's kernels
                are templates: a kernel exists only once a call instantiates it) with the
                package's headers; ROOT holds nvidia/cu13/include/cccl
    cutlass     nvidia-cutlass==4.2.0.0: the CuTe tutorials (examples/cute/tutorial, hopper/
                included) with the package's include/ and tools/util/include; ROOT holds
                cutlass_library/
    warp        warp-lang==1.19.0 (NVIDIA Warp): the runtime's own kernels, warp/native/*.cu (BVH
                and hash-grid builds, sort, scan, reduce, sparse matrices, volumes, ...), with
                warp/native as include directory and the defines and flags of Warp's own nvcc
                build (warp/_src/build_dll.py: -DWP_ENABLE_CUDA=1, -DWP_BUILD_DLL, --extended-lambda,
                ...; mathdx off); ROOT holds warp/ (the unpacked wheel or site-packages)
Each returns {"dirs", "includes", "nvcc_args", "package"}; FileNotFoundError (one line) when the
package is not where it is looked for.
"""
import importlib.util
from pathlib import Path

from .build import package_root as cutlass_root
from .cub_build import PACKAGE as CUB_PACKAGE, package_root as cub_root

HERE = Path(__file__).resolve().parent


def _found(path, package):
    if not Path(path).exists():
        raise FileNotFoundError(f"{path} is missing: pip install {package} (or give --project NAME=ROOT)")
    return Path(path)


def _installed(module, package, name):
    """The folder holding the installed `module` (a package), for a project given without ROOT."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{module} not found: pip install {package} (or give --project {name}=ROOT)")
    return Path(list(spec.submodule_search_locations)[0]).parent


def cub(root=None):
    headers = _found(Path(root or cub_root()) / "nvidia" / "cu13" / "include" / "cccl" / "cub", CUB_PACKAGE).parent
    return {"dirs": [HERE / "cub" / "accept"], "includes": [headers], "nvcc_args": [], "package": CUB_PACKAGE}


def cutlass(root=None):
    package = "nvidia-cutlass==4.2.0.0"
    src = _found(cutlass_root(root) / "cutlass_library" / "source", package)
    return {"dirs": [src / "examples" / "cute" / "tutorial"], "includes": [src / "include", src / "tools" / "util" / "include"],
            "nvcc_args": ["--expt-relaxed-constexpr"], "package": package}


WARP_FLAGS = ("-DNDEBUG", "-DWP_ENABLE_CUDA=1", "-DWP_ENABLE_MATHDX=0", "-DWP_BUILD_DLL", "--extended-lambda",
              "-diag-suppress=221", "-D_GLIBCXX_USE_CXX11_ABI=0")


def warp(root=None):
    package = "warp-lang==1.19.0"
    native = _found(Path(root or _installed("warp", package, "warp")) / "warp" / "native", package)
    return {"dirs": [native], "includes": [native], "nvcc_args": list(WARP_FLAGS), "package": package}


PROJECTS = {"cub": cub, "cutlass": cutlass, "warp": warp}


def resolve(spec):
    """'NAME' or 'NAME=ROOT' -> (name, the project's dict)."""
    name, _, root = spec.partition("=")
    if name not in PROJECTS:
        raise KeyError(f"--project {spec}: one of {', '.join(PROJECTS)}")
    return name, PROJECTS[name](root or None)
