"""gpu_check/triton_corpus/registry.py on a wheel made here (a package `pkg` written for this test):
which statements of a module it keeps, how it follows the package's own imports, which branch of
an `if` it takes, and that a kernel using a helper module compiles (Triton 3.6.0, sm_90a)."""
import zipfile

import numpy as np
import pytest

from gpu_check.triton_corpus import registry
from triton_needs import needs_triton

FILES = {
    "pkg/__init__.py": "import torch\n",
    "pkg/utils/__init__.py": "from .helpers import twice\nHOST = torch.cuda.is_available()\n",
    "pkg/utils/helpers.py": (
        "import os\nimport triton\nimport triton.language as tl\n"
        "@triton.jit\ndef twice(x):\n    return x * 2\n"
        "uniform = tl.uint_to_uniform_float\n"),
    "pkg/ops/k.py": (
        "import os\nimport torch\nimport triton\nimport triton.language as tl\n"
        "import triton.tools.no_such_module\n"
        "from pkg.utils import helpers as H\nfrom ..utils.helpers import twice, uniform\n"
        "from pkg.utils import HOST\n"
        "os.environ['PKG_SET'] = '1'\n"
        "LIMIT: int = 4\nBLOCK: tl.constexpr = tl.constexpr(64)\n"
        "if os.environ.get('PKG_FAST', '0') == '1':\n"
        "    @triton.jit\n    def act(x):\n        return x * 3.0\n"
        "else:\n"
        "    @triton.jit\n    def act(x):\n        return x + 1.0\n"
        "if hasattr(triton.language, 'no_such_attr'):\n    desc = tl.no_such_attr\n"
        "else:\n    desc = tl.make_tensor_descriptor\n"
        "@triton.jit(do_not_specialize=['n'] if HOST else [])\ndef host_dependent(x, n):\n    pass\n"
        "@triton.jit\ndef kernel(x_ptr, y_ptr, n, B: tl.constexpr):\n"
        "    o = tl.program_id(0) * B + tl.arange(0, B)\n"
        "    v = tl.load(x_ptr + o, mask=o < n)\n"
        "    tl.store(y_ptr + o, act(H.twice(v)), mask=o < n)\n"),
}


@pytest.fixture
def wheels(tmp_path, monkeypatch):
    with zipfile.ZipFile(tmp_path / "pkg-0.1-py3-none-any.whl", "w") as z:
        for name, text in FILES.items():
            z.writestr(name, text)
    monkeypatch.setitem(registry.WHEELS, "pkg", "pkg-0.1-py3-none-any.whl")
    return tmp_path


@needs_triton
def test_a_module_keeps_its_kernels_constants_and_its_own_imports(wheels):
    import triton.language as tl
    ns = registry.load("pkg", "pkg/ops/k.py", wheels)
    assert "torch" not in ns and "os" not in ns and "HOST" not in ns     # host-side names are not kept
    assert ns["LIMIT"] == 4 and ns["BLOCK"] == 64
    assert ns["H"].__name__ == "pkg.utils.helpers" and "twice" in vars(ns["H"])     # a module of the wheel
    assert ns["twice"] is ns["H"].twice                                   # loaded once
    assert ns["uniform"] is tl.uint_to_uniform_float                      # an attribute of a Triton import
    assert "x + 1.0" in ns["act"].src                                     # PKG_FAST unset: the else branch
    assert ns["desc"] is tl.make_tensor_descriptor                        # hasattr as this Triton answers
    assert "host_dependent" not in ns                                     # its decorator reads HOST


@needs_triton
def test_a_kernel_calling_a_helper_module_compiles(wheels):
    from layoutsim.triton import compile_for
    k = registry.load("pkg", "pkg/ops/k.py", wheels)["kernel"]
    c = compile_for(k, np.zeros(100, np.float32), np.zeros(100, np.float32), 100, B=64, arch="sm_90a")
    assert "ld.global" in c.ptx and c.name == "kernel"


def test_environment_and_hasattr_tests_decide_only_what_they_can():
    import ast
    test = lambda text: registry._static_test(ast.parse(text).body[0].value, [])      # noqa: E731
    assert test("os.environ.get('X', '0') == '1'") is False
    assert test("os.getenv('X') is None") is True
    assert test("IS_HOPPER and os.environ.get('X') == '1'") is None                 # another name: undecided
    assert test("hasattr(triton.language, 'dot')") is None                          # no Triton import bound


@needs_triton
def test_a_jit_decorator_keeps_its_kernel_without_its_launch_metadata_hook():
    """The persistent-matmul tutorial's `@triton.jit(launch_metadata=_matmul_launch_metadata)`: the hook is
    a host function (left out), so the keyword goes and the kernel stays."""
    source = ("import triton\nimport triton.language as tl\n"
              "def _meta(grid, kernel, args):\n    return {}\n"
              "@triton.jit(launch_metadata=_meta)\ndef kernel(x_ptr, B: tl.constexpr):\n"
              "    tl.store(x_ptr + tl.arange(0, B), tl.arange(0, B))\n")
    ns = registry.functions(source, "pkg/hooked.py", "pkg.hooked")
    assert "kernel" in ns and "_meta" not in ns
    assert ns["kernel"].launch_metadata is None


def test_a_tutorial_file_is_read_only_in_its_pinned_version(tmp_path, monkeypatch):
    """tutorials.read: the file at <folder>/triton-tutorials/<commit 12>/<path>, refused in one line
    naming the raw GitHub URL at the commit when it is missing or its sha256 differs."""
    import hashlib
    from gpu_check.triton_corpus import tutorials as T
    text = b"import triton\n"
    commit = "0123456789abcdef0123456789abcdef01234567"
    monkeypatch.setitem(T.FILES, "python/tutorials/00-test.py", (commit, hashlib.sha256(text).hexdigest()))
    path = tmp_path / "triton-tutorials" / commit[:12] / "python/tutorials/00-test.py"
    url = f"https://raw.githubusercontent.com/triton-lang/triton/{commit}/python/tutorials/00-test.py"
    with pytest.raises(FileNotFoundError) as e:
        T.read("python/tutorials/00-test.py", tmp_path)
    assert url in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)
    path.parent.mkdir(parents=True)
    path.write_bytes(text + b"# changed\n")
    with pytest.raises(ValueError, match="sha256 differs") as e:
        T.read("python/tutorials/00-test.py", tmp_path)
    assert url in str(e.value)
    path.write_bytes(text)
    assert T.read("python/tutorials/00-test.py", tmp_path) == text
    assert "python/tutorials/00-test.py" not in T.missing(tmp_path)
    assert T.describe("python/tutorials/00-test.py") == f"triton-tutorials python/tutorials/00-test.py@{commit[:12]}"


def test_every_tutorial_case_names_a_pinned_file_and_its_kernel():
    """Each ("triton-tutorials", path, function) case names a file of tutorials.FILES; where the file is
    here, the function is one registry.functions keeps from it."""
    from gpu_check.triton_corpus import cases as C, tutorials as T
    from pathlib import Path
    folder = Path(__file__).resolve().parents[2] / ".triton-src"
    tutorial = {c: C.CASES[c][0] for c in C.CASES if C.CASES[c][0][0] == T.FOLDER}
    assert len(tutorial) >= 20 and all(src[1] in T.FILES for src in tutorial.values())
    here = set(T.FILES) - set(T.missing(folder))
    for case, (_, path, function) in tutorial.items():
        if path in here and _triton_installed():
            assert function in T.load(path, folder), f"{case}: {path} has no @triton.jit {function}"


def _triton_installed():
    import importlib.util
    return importlib.util.find_spec("triton") is not None
