"""The Triton corpus: each case is a kernel, its fixed inputs, its meta-parameters and its grid.

A kernel is ("local", FUNCTION) from gpu_check/triton_corpus/kernels.py (written here) or
(PACKAGE, MODULE, FUNCTION) from a wheel on PyPI (registry.py; the wheels are looked for in
.triton-src/ or --wheels DIR). Inputs come from numpy's PCG64 with the case's seed, so the model
here and the GPU get the same bytes; every array argument is recorded after the launch.
"""
import re

import numpy as np

from layoutsim.formats import numpy_dtype

from . import registry

KERNELS_FILE = "gpu_check/triton_corpus/kernels.py"       # its virtual name in the PTX line table
MAX_OUTPUT_BYTES = 1 << 20
_FILE = re.compile(r"^\s*\.file\s.*$", re.M)
_DEBUG_SECTION = re.compile(r"^\s*\.section\s+\.debug_\w+\s*\{.*?^\s*\}", re.M | re.S)


def code_of(ptx):
    """The PTX without what names the machine that compiled it: the `.file` paths (Triton's own
    modules are named where Triton is installed, the kernel's file where it was read) and the DWARF
    sections, whose lengths follow those paths. Two compiles with equal code_of are the same kernel."""
    return _DEBUG_SECTION.sub("", _FILE.sub("", ptx))


def _rows(shape, dtype="float32"):
    return lambda rng: rng.standard_normal(shape).astype(numpy_dtype(dtype))


def _zeros(shape, dtype="float32"):
    return lambda rng: np.zeros(shape, numpy_dtype(dtype))


# name: (kernel, [args: array makers (functions of rng) or numbers], meta, grid)
CASES = {
    "vector_add": (("local", "vector_add"), [_rows(1000), _rows(1000), _zeros(1000), 1000], {"BLOCK": 256}, (4,)),
    "softmax_rows": (("local", "softmax_rows"), [_rows((64, 100)), _zeros((64, 100)), 100, 100],
                     {"BLOCK": 128}, (64,)),
    "matmul_f16": (("local", "matmul"), [_rows((64, 64), "float16"), _rows((64, 64), "float16"),
                                         _zeros((64, 64)), 64, 64, 64, 64, 64, 64],
                   {"BM": 64, "BN": 64, "BK": 32}, (1, 1)),
    "matmul_tf32": (("local", "matmul"), [_rows((64, 64)), _rows((64, 64)), _zeros((64, 64)), 64, 64, 64, 64, 64, 64],
                    {"BM": 64, "BN": 64, "BK": 32}, (1, 1)),
    "exp_div": (("local", "exp_div"), [_rows(1000), _rows(1000), _zeros(1000), 1000], {"BLOCK": 256}, (4,)),
    "liger_rms_norm_fwd": (("liger-kernel", "liger_kernel/ops/rms_norm.py", "_rms_norm_forward_kernel"),
                           [_zeros((16, 256)), 256, _rows((16, 256)), 256, _rows(256), 1, _zeros(16), 1, 256,
                            1e-6, 0.0, 0, True], {"BLOCK_SIZE": 256, "num_warps": 4}, (16,)),
    "liger_swiglu_fwd": (("liger-kernel", "liger_kernel/ops/swiglu.py", "_swiglu_forward_kernel"),
                         [_rows((16, 256)), _rows((16, 256)), _zeros((16, 256)), 256, 1.0, 256],
                         {"BLOCK_SIZE": 256, "num_warps": 4}, (16,)),
    "liger_geglu_fwd": (("liger-kernel", "liger_kernel/ops/geglu.py", "_geglu_tanh_forward_kernel"),
                        [_rows((16, 256)), _rows((16, 256)), _zeros((16, 256)), 256, 256],
                        {"BLOCK_SIZE": 256, "num_warps": 4}, (16,)),
    "liger_block_rms_norm_fwd": (("liger-kernel", "liger_kernel/ops/rms_norm.py", "_block_rms_norm_forward_kernel"),
                                 [_zeros((32, 256)), 256, _rows((32, 256)), 256, _rows(256), 1, _zeros(32), 1, 32,
                                  256, 1e-6, 0.0, 0, True], {"BLOCK_SIZE": 256, "BLOCK_ROW": 16, "num_warps": 4}, (2,)),
    "liger_swiglu_bwd": (("liger-kernel", "liger_kernel/ops/swiglu.py", "_swiglu_backward_kernel"),
                         [_rows((16, 256)), _rows((16, 256)), _rows((16, 256)), 256, 1.0, 256],
                         {"BLOCK_SIZE": 256, "num_warps": 4}, (16,)),
    "liger_geglu_bwd": (("liger-kernel", "liger_kernel/ops/geglu.py", "_geglu_tanh_backward_kernel"),
                        [_rows((16, 256)), _rows((16, 256)), _rows((16, 256)), 256, 256],
                        {"BLOCK_SIZE": 256, "num_warps": 4}, (16,)),
    # logits 8 x 500 (their gradient written in place), int64 targets, no weight/z-loss/accuracy
    # outputs (dummies), mean reduction: cross_entropy_forward's launch with those options
    "liger_cross_entropy": (("liger-kernel", "liger_kernel/ops/cross_entropy.py", "liger_cross_entropy_kernel"),
                            [_rows((8, 500)), 500, lambda rng: rng.integers(0, 500, 8).astype(np.int64), 1,
                             _zeros(1), _zeros(8), _zeros(8), 1, _zeros(8), 0, _zeros(8, "int64"), 0, 500, 8, 8.0,
                             0.0, -100, 0.0, 0.0, "mean", None, False, False, False, 512, False, False, True],
                            {"num_warps": 8}, (8,)),
    "flaggems_rms_norm": (("flag-gems", "flag_gems/ops/rms_norm.py", "rms_norm_kernel"),
                          [_zeros((16, 256)), _zeros(16), _rows((16, 256)), _rows(256), 256, 1, 256, 1, 256, 1e-5],
                          {"BLOCK_SIZE": 256}, (16,)),
    # fla's autotuned kernels run one of their configs: the meta-parameters and num_warps given
    "fla_l2norm_fwd": (("fla-core", "fla/modules/norm/l2norm.py", "l2norm_fwd_kernel"),
                       [_rows((64, 128)), _zeros((64, 128)), _zeros(64), 1e-6, 64],
                       {"D": 128, "BD": 128, "NB": 1, "BT": 16, "num_warps": 4}, (4,)),
    "fla_l2norm_fwd_row": (("fla-core", "fla/modules/norm/l2norm.py", "l2norm_fwd_kernel_row"),
                           [_rows((16, 300)), _zeros((16, 300)), _zeros(16), 1e-6, 300],
                           {"BD": 512, "num_warps": 4}, (16,)),
    "fla_sigmoid_fwd": (("fla-core", "fla/modules/activations/ops.py", "sigmoid_fwd_kernel"),
                        [_rows((16, 200)), _zeros((16, 200)), 200, 200, 3200],
                        {"D": 200, "B": 512, "num_warps": 4}, (7,)),
    "liger_layer_norm_fwd": (("liger-kernel", "liger_kernel/ops/layer_norm.py", "_layer_norm_forward_kernel"),
                             [_zeros((16, 256)), 256, _rows((16, 256)), 256, _rows(256), 1, _rows(256), 1,
                              _zeros(16), 1, _zeros(16), 1, 256, 1e-5], {"BLOCK_SIZE": 256, "num_warps": 4}, (16,)),
}
SEED = 2026


def kernel(case, wheels=".triton-src", root="."):
    """The kernel object of a case (loaded as registry.py describes)."""
    src = CASES[case][0]
    if src[0] == "local":
        from pathlib import Path
        ns = registry.local(Path(root) / KERNELS_FILE, KERNELS_FILE)
        return ns[src[1]], "layoutsim (this repository)"
    ns = registry.load(src[0], src[1], wheels)
    return ns[src[2]], f"{src[0]} {registry.WHEELS[src[0]]}"


def inputs(case):
    """The case's arguments: fresh arrays (from its seed) and numbers, in the kernel's order."""
    rng = np.random.Generator(np.random.PCG64([SEED, sorted(CASES).index(case)]))
    return [a(rng) if callable(a) else a for a in CASES[case][1]]


def meta(case):
    return dict(CASES[case][2])


def grid(case):
    return CASES[case][3]
