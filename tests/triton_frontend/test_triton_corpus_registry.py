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
