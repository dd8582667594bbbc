"""The kernels of Triton's own tutorials (github.com/triton-lang/triton, python/tutorials/, MIT licence),
read from the tutorial files without running them.

The files are not in this repository: each is looked for, byte for byte the version of FILES (its
commit and the sha256 of its bytes), at

    <folder>/triton-tutorials/<first 12 digits of the commit>/<path>

(<folder> is .triton-src/, where the wheels of registry.WHEELS are; `--wheels` of build/measure),
and `python -m gpu_check.triton_corpus.tutorials [--folder .triton-src]` prints the commands that
fetch the missing ones (one `curl` from raw.githubusercontent.com each). A file that is missing or
has other bytes is refused in one line saying how to get it. A tutorial's kernels are loaded by
registry.functions, the rules of the wheels: its `triton` imports, its literal assignments and its
@triton.jit functions (autotune and launch_metadata left out: a case names the config it runs), under
the virtual file name of its path in Triton's repository (python/tutorials/03-matrix-multiplication.py),
the name Triton writes into the PTX's line table.

The versions are from 2025 (Triton 3.3/3.4 era; every one whose kernels the corpus runs compiles with
Triton 3.6.0): 01, 02, 03, 04, 05 and 08 are the versions whose host code takes the device from
`triton.runtime.driver.active.get_active_torch_device()`; 06 is a version with block-pointer kernels
only (`_attn_fwd` and the backward's `_attn_bwd_preprocess` and `_attn_bwd`; no host descriptors);
09 is the one with device-side
`tl.make_tensor_descriptor` (`matmul_kernel_descriptor_persistent`) beside the experimental-descriptor
kernels that Triton 3.6 no longer has.
"""
import argparse
import hashlib
import sys
from pathlib import Path

from . import registry

REPOSITORY = "triton-lang/triton"
FOLDER = "triton-tutorials"
LICENCE = "LICENSE"

# path in triton-lang/triton: (commit, sha256 of the file's bytes)
FILES = {
    "python/tutorials/01-vector-add.py": (
        "545699290b851e70231ee3017481851170f1583d", "842430949e0ccde4fbce07606cce3ac4bac36bf21b2b12619a31b795ca4029b3"),
    "python/tutorials/02-fused-softmax.py": (
        "fd237c7cf9a7262f32fedbaa5027ab2736ead134", "310c1b12948e1081e032e8c8544bba81d99c0577ad0d896d7ec8c90b44b1e09c"),
    "python/tutorials/03-matrix-multiplication.py": (
        "7649d87cce6c12361bb9da234b9b227b2880b499", "540a224365e974e8a407282924101723aa9ba62233bf64d1556cd5627572abed"),
    "python/tutorials/04-low-memory-dropout.py": (
        "7fd4724371b3a1ab786c0610df19c7683cb6a23b", "43ea69769349d20654fe7bb983e60ad9c38591d195891caf3a56053d9b0ab788"),
    "python/tutorials/05-layer-norm.py": (
        "545699290b851e70231ee3017481851170f1583d", "31cda7bf7bb9b637ea662b789188d37ff5981c3973626d4e2a293db633f3bb87"),
    "python/tutorials/06-fused-attention.py": (
        "7fd4724371b3a1ab786c0610df19c7683cb6a23b", "ee9299b8f054dc30cec5ab5968f9be755e294c8766e4a06ed79156c761527a71"),
    "python/tutorials/08-grouped-gemm.py": (
        "7649d87cce6c12361bb9da234b9b227b2880b499", "a0e1a521044fd34006316680a94c7e225e634217e3c4a38a096ff8552eb47966"),
    "python/tutorials/09-persistent-matmul.py": (
        "02936a198800b2c0180cf63f2a69e776bcca6d7d", "c810c438155e960bca46bd93389e585c63cc7430d0536de567d6a534f4c1a1e2"),
    LICENCE: (
        "24cadfe56158a57dc374d5c85884970678b16ab6", "f3e401368bc660e609ed1bb68f3726de9f2568ef2a4c97843d409a453bc35209"),
}


def local_path(path, folder=".triton-src"):
    """Where the pinned version of `path` is looked for."""
    commit = FILES[path][0]
    return Path(folder) / FOLDER / commit[:12] / path


def url(path):
    """The raw file of the pinned version on GitHub."""
    return f"https://raw.githubusercontent.com/{REPOSITORY}/{FILES[path][0]}/{path}"


def fetch_command(path, folder=".triton-src"):
    return f"curl -fsSL --create-dirs -o {local_path(path, folder)} {url(path)}"


def read(path, folder=".triton-src"):
    """The bytes of the pinned version of `path`, checked against FILES' sha256."""
    if path not in FILES:
        raise KeyError(f"{path}: not a pinned tutorial file (gpu_check/triton_corpus/tutorials.py FILES)")
    p = local_path(path, folder)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: missing; {fetch_command(path, folder)}")
    data = p.read_bytes()
    if hashlib.sha256(data).hexdigest() != FILES[path][1]:
        raise ValueError(f"{p}: not the pinned version (sha256 differs); {fetch_command(path, folder)}")
    return data


def missing(folder=".triton-src"):
    """The pinned files not (or not byte for byte) in `folder`."""
    out = []
    for path in FILES:
        try:
            read(path, folder)
        except (FileNotFoundError, ValueError):
            out.append(path)
    return out


_LOADED = {}


def load(path, folder=".triton-src"):
    """The namespace of one tutorial (registry.functions' rules), loaded once per folder."""
    key = (path, str(Path(folder).resolve()))
    if key not in _LOADED:
        module = "triton_tutorials." + Path(path).stem.replace("-", "_").replace(".", "_")
        _LOADED[key] = registry.functions(read(path, folder).decode("utf-8"), path, module)
    return _LOADED[key]


def describe(path):
    """`triton-tutorials python/tutorials/....py@<commit 12>`: a case's source in the manifest."""
    return f"{FOLDER} {path}@{FILES[path][0][:12]}"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.triton_corpus.tutorials",
                                 description="print the commands that fetch the pinned Triton tutorial files missing")
    ap.add_argument("--folder", default=".triton-src")
    a = ap.parse_args(argv)
    gone = missing(a.folder)
    for path in gone:
        print(fetch_command(path, a.folder))
    if not gone:
        print(f"every pinned tutorial file is in {Path(a.folder) / FOLDER}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
