"""The Triton corpus: each case is a kernel, its fixed inputs, its meta-parameters and its grid.

A kernel is ("local", FUNCTION) from gpu_check/triton_corpus/kernels.py (written here),
(PACKAGE, MODULE, FUNCTION) from a wheel on PyPI (registry.py; the wheels are looked for in
.triton-src/ or --wheels DIR) or ("triton-tutorials", PATH, FUNCTION) from a file of Triton's own
tutorials at the commit tutorials.py pins (looked for in .triton-src/triton-tutorials/). Inputs come
from numpy's PCG64 with the case's seed, so the model here and the GPU get the same bytes; every
array argument is recorded after the launch, but for an Addresses argument (a table of device
addresses, which differ between the GPU and the model: recorded as the zeros it was given).
"""
import re
import zlib

import numpy as np

from layoutsim.formats import numpy_dtype

from . import registry
from .inputs import (Addresses, Desc, DescInput, _ints, _rows, _scaled, _shifted, _uniform,  # noqa: F401
                     _values, _zeros)

KERNELS_FILE = "gpu_check/triton_corpus/kernels.py"       # its virtual name in the PTX line table
MAX_OUTPUT_BYTES = 1 << 20
_FILE = re.compile(r"^\s*\.file\s.*$", re.M)
_DEBUG_SECTION = re.compile(r"^\s*\.section\s+\.debug_\w+\s*\{.*?^\s*\}", re.M | re.S)


def code_of(ptx):
    """The PTX without what names the machine that compiled it: the `.file` paths (Triton's own
    modules are named where Triton is installed, the kernel's file where it was read) and the DWARF
    sections, whose lengths follow those paths. Two compiles with equal code_of are the same kernel."""
    return _DEBUG_SECTION.sub("", _FILE.sub("", ptx))


def addresses(case):
    """{argument index: Addresses} of a case."""
    return {i: a for i, a in enumerate(CASES[case][1]) if isinstance(a, Addresses)}


ALIGN = 256


def _grouped(groups, dtype="float16", b_transposed=False, lo=0.0, hi=1.0):
    """A grouped GEMM's problems in one int32 argument, as (maker, A offsets, B offsets, C offsets, lds):
    the [M, N, K] of every group (the kernel's group_gemm_sizes), then at 256-byte aligned offsets
    each group's A (M x K), B (K x N, or N x K with b_transposed) and C (M x N, zeros), A and B
    uniform in [lo, hi) as the tutorial's torch.rand. The tables of pointers (Addresses) point into it:
    the kernel cannot tell where its matrices were allocated, and the corpus passes arrays only as
    kernel arguments."""
    size = np.dtype(numpy_dtype(dtype)).itemsize
    at = -(-12 * len(groups) // ALIGN) * ALIGN
    offs = {"a": [], "b": [], "c": []}
    for m, n, k in groups:
        for key, count in (("a", m * k), ("b", k * n), ("c", m * n)):
            offs[key].append(at)
            at += -(-count * size // ALIGN) * ALIGN
    total = at

    def make(rng):
        buf = np.zeros(total, np.uint8)
        buf[:12 * len(groups)] = np.asarray(groups, np.int32).reshape(-1).view(np.uint8)
        for g, (m, n, k) in enumerate(groups):
            for key, shape in (("a", (m, k)), ("b", (n, k) if b_transposed else (k, n))):
                v = rng.uniform(lo, hi, shape).astype(numpy_dtype(dtype))
                buf[offs[key][g]:offs[key][g] + v.nbytes] = v.reshape(-1).view(np.uint8)
        return buf.view(np.int32)

    lds = [x for m, n, k in groups for x in (k, k if b_transposed else n, n)]
    return make, offs["a"], offs["b"], offs["c"], lds


def grouped_views(groups, buf, dtype="float16", b_transposed=False):
    """[(A, B, C)] of each group, as views into an argument _grouped made (for references and checks)."""
    _, oa, ob, oc, _ = _grouped(groups, dtype, b_transposed)
    raw, t = np.ascontiguousarray(buf).reshape(-1).view(np.uint8), numpy_dtype(dtype)
    size = np.dtype(t).itemsize
    out = []
    for g, (m, n, k) in enumerate(groups):
        a = raw[oa[g]:oa[g] + m * k * size].view(t).reshape(m, k)
        b = raw[ob[g]:ob[g] + k * n * size].view(t).reshape((n, k) if b_transposed else (k, n))
        c = raw[oc[g]:oc[g] + m * n * size].view(t).reshape(m, n)
        out.append((a, b, c))
    return out


# grouped GEMM problems (M, N, K) of the tutorial cases: full tiles of 64 x 64 x 32 for the kernel
# that assumes them, and a partial M tile (96) for the TMA kernel, whose descriptors clip it
GROUPS = ((128, 128, 64), (64, 64, 128), (64, 128, 32))
GROUPS_TMA = ((128, 128, 128), (96, 128, 64), (128, 256, 64))
_G, _GA, _GB, _GC, _GLDS = _grouped(GROUPS)
_T, _TA, _TB, _TC, _TLDS = _grouped(GROUPS_TMA, b_transposed=True)

TUTORIAL = {"01": "python/tutorials/01-vector-add.py", "02": "python/tutorials/02-fused-softmax.py",
            "03": "python/tutorials/03-matrix-multiplication.py", "04": "python/tutorials/04-low-memory-dropout.py",
            "05": "python/tutorials/05-layer-norm.py", "06": "python/tutorials/06-fused-attention.py",
            "08": "python/tutorials/08-grouped-gemm.py", "09": "python/tutorials/09-persistent-matmul.py"}


def _tut(number, function):
    return ("triton-tutorials", TUTORIAL[number], function)


class TritonDtype:
    """A `tl.<name>` constexpr argument (a kernel's X_dtype): resolved by launch_inputs, where
    Triton is installed; the PTX replay never needs it (a constexpr is no PTX parameter)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tl.{self.name}"


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

    # ---- added 2026-12-07 (s30-triton-corpus): the priorities from the same packages and
    # flash-attn-triton 0.1.1 (attention forward with dropout and backward, rotary) ----
    "liger_layer_norm_bwd": (("liger-kernel", "liger_kernel/ops/layer_norm.py", "_layer_norm_backward_kernel"),
                             [_rows((16, 256)), 256, _rows(256), _rows(16), 1, _uniform(16, 0.5, 2.0), 1,
                              _zeros((16, 256)), 256, _zeros((2, 256)), 256, _zeros((2, 256)), 256, _rows((16, 256)),
                              256, 16, 256, 8], {"BLOCK_SIZE": 256, "num_warps": 4}, (2,)),
    "liger_rms_norm_bwd": (("liger-kernel", "liger_kernel/ops/rms_norm.py", "_rms_norm_backward_kernel"),
                           [_rows((16, 256)), 256, _zeros((16, 256)), 256, _rows((16, 256)), 256, TritonDtype("float32"),
                            _rows(256), 1, _uniform(16, 0.5, 2.0), 1, _zeros((2, 256)), 256, 16, 256, 0.0, 8, 0, True],
                           {"BLOCK_SIZE": 256, "num_warps": 4}, (2,)),
    # q (2, 8, 4, 64) and k (2, 8, 2, 64) rotated in place, cos/sin (1, 8, 64): rope_forward's launch
    "liger_rope": (("liger-kernel", "liger_kernel/ops/rope.py", "_triton_rope"),
                   [_rows((2, 8, 4, 64)), 256, _rows((2, 8, 2, 64)), 128, _rows((1, 8, 64)), 64, _rows((1, 8, 64)), 64,
                    8, 2, 1, 4, 2, 64, 4, 2, 64, 64, 64], {"BLOCK_SIZE": 4, "BACKWARD_PASS": False}, (16,)),
    "liger_softmax_fwd": (("liger-kernel", "liger_kernel/ops/softmax.py", "_softmax_single_block_forward_kernel"),
                          [_zeros((16, 500)), 500, _rows((16, 500)), 500, 500], {"BLOCK_SIZE": 512, "num_warps": 4},
                          (16,)),
    "liger_softmax_bwd": (("liger-kernel", "liger_kernel/ops/softmax.py", "_softmax_single_block_backward_kernel"),
                          [_rows((16, 500)), 500, _uniform((16, 500), 0.0, 0.01), 500, _zeros((16, 500)), 500, 500],
                          {"BLOCK_SIZE": 512, "num_warps": 4}, (16,)),
    # fused linear cross-entropy's backward: the logits' gradient scaled in place by grad_output
    "liger_flce_element_mul": (("liger-kernel", "liger_kernel/ops/utils.py", "element_mul_kernel"),
                               [_rows((8, 500)), 500, _values([0.75], "float32"), 500], {"BLOCK_SIZE": 512,
                                                                                           "num_warps": 8}, (8,)),
    # mm_kernel_general with flag_gems' first tuned config (64x64x64, 5 stages... 3 here): f16 in and
    # out, K = 200 (three full K blocks and the peeled masked one)
    "flaggems_mm_f16": (("flag-gems", "flag_gems/ops/mm.py", "mm_kernel_general"),
                        [_rows((128, 200), "float16"), _rows((200, 128), "float16"), _zeros((128, 128), "float16"),
                         128, 128, 200, 200, 1, 128, 1, 128, 1],
                        {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8, "num_stages": 3, "num_warps": 4},
                        (4,)),
    # fp8 (e4m3) block-scaled matmul, bf16 out: fp8_matmul's launch (its module constants)
    "flaggems_fp8_matmul": (("flag-gems", "flag_gems/ops/fp8_matmul.py", "_fp8_matmul_kernel"),
                            [_rows((64, 256), "float8_e4m3fn"), _rows((128, 256), "float8_e4m3fn"),
                             _zeros((64, 128), "bfloat16"), _uniform((64, 2), 0.01, 0.1), _uniform((1, 2), 0.01, 0.1),
                             64, 128, 256, 256, 1, 256, 1, 128, 1, 2, 1, 2, 1],
                            {"GROUP_K": 128, "BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 128, "GROUP_SIZE_M": 4,
                             "num_stages": 3, "num_warps": 4}, (2,)),
    # grouped GEMM, persistent: 4 programs walk the tiles of 3 groups (rows 0-48, 48-112, 112-160)
    "flaggems_grouped_mm": (("flag-gems", "flag_gems/ops/group_gemm.py", "grouped_mm_kernel"),
                            [_rows((160, 64), "float16"), _rows((3, 64, 64), "float16"), _zeros((160, 64), "float16"),
                             _values([48, 112, 160], "int32"), 3, 160, 64, 64, 64, 1, 64, 1, 64, 1],
                            {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 4, "num_stages": 4,
                             "num_warps": 4}, (4,)),
    "flaggems_softmax": (("flag-gems", "flag_gems/ops/softmax.py", "softmax_kernel_inner"),
                         [_zeros((16, 1000)), _rows((16, 1000)), 16, 1000], {"TILE_N": 256, "ONE_TILE_PER_CTA": False,
                                                                             "num_warps": 4}, (16,)),
    # philox dropout (p = 0.25): output and bool mask; 4096 elements, 512 x 4 per program
    "flaggems_dropout": (("flag-gems", "flag_gems/ops/dropout.py", "dropout_forward_kernel"),
                         [_rows(4096), _zeros(4096), _zeros(4096, "bool"), 4096, 0.25, 1234, 0],
                         {"BLOCK": 512, "num_warps": 4}, (2,)),
    "flaggems_layer_norm_fwd": (("flag-gems", "flag_gems/ops/layernorm.py", "layer_norm_persistent_kernel"),
                                [_rows((16, 300)), _zeros((16, 300)), _rows(300), _rows(300), _zeros(16), _zeros(16),
                                 16, 300, 1e-5], {"TILE_N": 512, "num_warps": 4}, (16,)),
    "flaggems_layer_norm_bwd": (("flag-gems", "flag_gems/ops/layernorm.py", "layer_norm_backward_kernel"),
                                [_rows((16, 300)), _rows((16, 300)), _rows(300), _rows(16), _uniform(16, 0.5, 2.0),
                                 _zeros((16, 300)), 16, 300], {"BLOCK_ROW_SIZE": 4, "BLOCK_COL_SIZE": 128,
                                                               "num_warps": 4}, (4,)),
    "flaggems_layer_norm_bwd_wb": (("flag-gems", "flag_gems/ops/layernorm.py", "weight_bias_backward_kernel"),
                                   [_rows((16, 300)), _rows((16, 300)), _rows(16), _uniform(16, 0.5, 2.0), _zeros(300),
                                    _zeros(300), 16, 300], {"BLOCK_ROW_SIZE": 8, "BLOCK_COL_SIZE": 64,
                                                            "num_warps": 4}, (5,)),
    # the two-stage sum of flag_gems' sum(): 3000 elements, 64 per program, then the 47 partial sums
    "flaggems_sum_1": (("flag-gems", "flag_gems/ops/sum.py", "sum_kernel_1"),
                       [_rows(3000), _zeros(47), 3000], {"BLOCK_SIZE": 64}, (47,)),
    "flaggems_sum_2": (("flag-gems", "flag_gems/ops/sum.py", "sum_kernel_2"),
                       [_rows(47), _zeros(1), 47], {"BLOCK_MID": 64}, (1,)),
    # gated linear attention, chunk_gla_fwd's intra-chunk kernels: B 1, T 64, H 2, K 32, chunk 64 in 4
    # sub-chunks of 16 (log gates small and negative)
    "fla_gla_fwd_A_inter": (("fla-core", "fla/ops/gla/chunk.py", "chunk_gla_fwd_A_kernel_intra_sub_inter"),
                            [_rows((1, 64, 2, 32)), _rows((1, 64, 2, 32)), _uniform((1, 64, 2, 32), -0.2, 0.0),
                             _zeros((1, 64, 2, 64)), None, None, 0.17677669, 64],
                            {"H": 2, "K": 32, "BT": 64, "BC": 16, "BK": 32, "NC": 4, "IS_VARLEN": False,
                             "num_warps": 4, "num_stages": 2}, (1, 16, 2)),
    "fla_gla_fwd_A_intra": (("fla-core", "fla/ops/gla/chunk.py", "chunk_gla_fwd_A_kernel_intra_sub_intra"),
                            [_rows((1, 64, 2, 32)), _rows((1, 64, 2, 32)), _uniform((1, 64, 2, 32), -0.2, 0.0),
                             _zeros((1, 64, 2, 64)), None, None, 0.17677669, 64],
                            {"H": 2, "K": 32, "BT": 64, "BC": 16, "BK": 32, "IS_VARLEN": False, "num_warps": 2,
                             "num_stages": 2}, (1, 4, 2)),
    # its output kernel: o = (q * exp2(g)) @ h * scale + tril(A) @ v, f16 q/v/h, f32 gates and A (tl.dot:
    # f16 wgmma), one chunk of 64, K 32, V 64, 2 heads
    "fla_gla_fwd_o": (("fla-core", "fla/ops/gla/chunk.py", "chunk_gla_fwd_kernel_o"),
                      [_rows((1, 64, 2, 32), "float16"), _rows((1, 64, 2, 64), "float16"),
                       _uniform((1, 64, 2, 32), -0.2, 0.0), _scaled((1, 1, 2, 32, 64), 0.1, "float16"),
                       _zeros((1, 64, 2, 64), "float16"), _scaled((1, 64, 2, 64), 0.1), None, None, 0.17677669,
                       64], {"H": 2, "HV": 2, "K": 32, "V": 64, "BT": 64, "BK": 32, "BV": 64,
                             "STATE_V_FIRST": False, "IS_VARLEN": False, "USE_GRAPH": False, "num_warps": 4,
                             "num_stages": 2}, (1, 2)),
    "fla_chunk_local_cumsum": (("fla-core", "fla/ops/utils/cumsum.py", "chunk_local_cumsum_scalar_kernel"),
                               [_rows((2, 100, 2)), _zeros((2, 100, 2)), None, None, None, 100],
                               {"B": 2, "H": 2, "BT": 64, "REVERSE": False, "HAS_SCALE": False, "IS_VARLEN": False,
                                "num_warps": 2}, (8,)),
    # FA2 tutorial-style attention, causal, with dropout p = 0.1: Z 1, H 2, N_CTX 128, HEAD_DIM 64, f16
    "fat_attn_fwd": (("flash-attn-triton", "flash_attn_triton/triton_kernel/attention_kernel.py", "_attn_fwd"),
                     [_rows((1, 2, 128, 64), "float16"), _rows((1, 2, 128, 64), "float16"),
                      _rows((1, 2, 128, 64), "float16"), 0.125, 0.1, 1234, _zeros((1, 2, 128)),
                      _zeros((1, 2, 128, 64), "float16"), 16384, 8192, 64, 1, 16384, 8192, 64, 1, 16384, 8192, 64, 1,
                      16384, 8192, 64, 1, 1, 2, 128],
                     {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 32, "STAGE": 3, "USE_DROPOUT": True, "IS_BF16": False,
                      "num_stages": 3, "num_warps": 4}, (2, 2)),
    "fat_attn_bwd_preprocess": (("flash-attn-triton", "flash_attn_triton/triton_kernel/attention_kernel.py",
                                 "_attn_bwd_preprocess"),
                                [_rows((1, 2, 128, 64), "float16"), _rows((1, 2, 128, 64), "float16"),
                                 _zeros((1, 2, 128)), 1, 2, 128], {"BLOCK_M": 128, "HEAD_DIM": 64}, (1, 2)),
    # the backward with the forward's log-sum-exp rows M (log2 units) and delta as inputs, K scaled by
    # sm_scale / ln 2 as the package's backward passes it, dropout p = 0.1
    "fat_attn_bwd": (("flash-attn-triton", "flash_attn_triton/triton_kernel/attention_kernel.py", "_attn_bwd"),
                     [_rows((1, 2, 128, 64), "float16"), _scaled((1, 2, 128, 64), 0.18, "float16"),
                      _rows((1, 2, 128, 64), "float16"), 0.125, _rows((1, 2, 128, 64), "float16"),
                      _zeros((1, 2, 128, 64)), _zeros((1, 2, 128, 64), "float16"), _zeros((1, 2, 128, 64), "float16"),
                      _uniform((1, 2, 128), 6.0, 9.0), _rows((1, 2, 128)), 0.1, 1234, 16384, 8192, 64, 1, 2, 128],
                     {"BLOCK_M1": 16, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 16, "BLK_SLICE_FACTOR": 1,
                      "HEAD_DIM": 64, "USE_DROPOUT": True, "CAUSAL": True, "IS_BF16": False, "num_warps": 4,
                      "num_stages": 3}, (2, 1, 2)),
    "fat_rotary": (("flash-attn-triton", "flash_attn/ops/triton/rotary.py", "rotary_kernel"),
                   [_zeros((2, 32, 2, 64)), _rows((2, 32, 2, 64)), _rows((32, 16)), _rows((32, 16)), None, 0, 32, 32,
                    32, 4096, 128, 64, 1, 4096, 128, 64, 1],
                   {"BLOCK_K": 32, "IS_SEQLEN_OFFSETS_TENSOR": False, "IS_VARLEN": False, "INTERLEAVED": False,
                    "CONJUGATE": False, "BLOCK_M": 8}, (4, 2, 2)),
    # int8 activations x 2-bit weights packed four to a byte, int32 accumulation (s8 wgmma): one of
    # the kernel's autotune configs; M 128, N 128, K 512
    "liger_mm_int8int2": (("liger-kernel", "liger_kernel/ops/experimental/mm_int8int2.py", "matmul_kernel"),
                          [_ints((128, 512), -128, 127, "int8"), _ints((128, 128), 0, 255, "uint8"),
                           _zeros((128, 128), "int32"), 128, 128, 512, 512, 1, 128, 1, 128, 1],
                          {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                           "num_stages": 4, "num_warps": 4}, (2,)),
    # flag_gems' Hopper matmul: the shapes divide the tiles, so it takes its TMA path (device-side
    # tensor descriptors, tl.make_tensor_descriptor, in Triton's global scratch)
    "flaggems_mm_hopper_tma": (("flag-gems", "flag_gems/runtime/backend/_nvidia/hopper/ops/mm.py", "mm_kernel_general"),
                               [_rows((128, 128), "float16"), _rows((128, 128), "float16"),
                                _zeros((128, 128), "float16"), 128, 128, 128, 128, 1, 128, 1, 128, 1],
                               {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8, "num_stages": 3,
                                "num_warps": 4}, (4,)),

    # ---- added 2026-12-07 (triton-tutorials): the kernels of Triton's own tutorials (tutorials.py
    # pins each file's commit), each in one of its autotune configs or the launch its host code makes,
    # at small sizes ----
    # 01: x + y, 3000 elements in blocks of 1024 (the tutorial's BLOCK_SIZE), torch.rand inputs
    "tut_vector_add": (_tut("01", "add_kernel"), [_uniform(3000, 0, 1), _uniform(3000, 0, 1), _zeros(3000), 3000],
                       {"BLOCK_SIZE": 1024}, (3,)),
    # 02: the persistent row softmax as its host code launches it on an H100 (BLOCK_SIZE the next power of
    # two of 781 columns, 8 warps, num_stages 4 for > 200 KB of shared memory): 48 rows on 16 programs
    "tut_fused_softmax": (_tut("02", "softmax_kernel"), [_zeros((48, 781)), _rows((48, 781)), 781, 781, 48, 781],
                          {"BLOCK_SIZE": 1024, "num_stages": 4, "num_warps": 8}, (16,)),
    # 03: C = A @ B, f16 out, grouped tile order; M 200 (the last M tile wraps, % M, and is masked
    # on store) and K 160 (the last K step masked) in the config 64 x 128 x 32, 4 stages, 4 warps
    "tut_matmul_f16": (_tut("03", "matmul_kernel"),
                       [_rows((200, 160), "float16"), _rows((160, 256), "float16"), _zeros((200, 256), "float16"),
                        200, 256, 160, 160, 1, 256, 1, 256, 1],
                       {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8,
                        "ACTIVATION": "", "num_stages": 4, "num_warps": 4}, (8,)),
    # the fused leaky_relu epilogue (ACTIVATION="leaky_relu"), config 128 x 64 x 64
    "tut_matmul_leaky_relu": (_tut("03", "matmul_kernel"),
                              [_rows((128, 192), "float16"), _rows((192, 128), "float16"),
                               _zeros((128, 128), "float16"), 128, 128, 192, 192, 1, 128, 1, 128, 1],
                              {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                               "ACTIVATION": "leaky_relu", "num_stages": 4, "num_warps": 4}, (2,)),
    # its fp8 unit test: e5m2 A and B, B pre-transposed (b.T: stride_bk 1), f16 out, in a config it
    # keeps for fp8 (128 x 128 x 128, 4 stages, 4 warps)
    "tut_matmul_fp8e5m2": (_tut("03", "matmul_kernel"),
                           [_rows((128, 256), "float8_e5m2"), _rows((128, 256), "float8_e5m2"),
                            _zeros((128, 128), "float16"), 128, 128, 256, 256, 1, 1, 256, 128, 1],
                           {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 8,
                            "ACTIVATION": "", "num_stages": 4, "num_warps": 4}, (1,)),
    # the same kernel on e4m3 (the kernel takes any fp8; the tutorial's own test uses e5m2)
    "tut_matmul_fp8e4m3": (_tut("03", "matmul_kernel"),
                           [_rows((128, 256), "float8_e4m3fn"), _rows((128, 256), "float8_e4m3fn"),
                            _zeros((128, 128), "float16"), 128, 128, 256, 256, 1, 1, 256, 128, 1],
                           {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 8,
                            "ACTIVATION": "", "num_stages": 4, "num_warps": 4}, (1,)),
    # 04: dropout with a given int32 keep mask, p = 0.5, and the seeded one (tl.rand, philox; seed 123)
    "tut_dropout": (_tut("04", "_dropout"), [_rows(2000), _ints(2000, 0, 1, "int32"), _zeros(2000), 2000, 0.5],
                    {"BLOCK_SIZE": 1024}, (2,)),
    "tut_seeded_dropout": (_tut("04", "_seeded_dropout"), [_rows(2000), _zeros(2000), 2000, 0.5, 123],
                           {"BLOCK_SIZE": 1024}, (2,)),
    # 05: layer norm in f16 as its test makes the data (x = -2.3 + 0.5 randn, w and b rand), 16 rows of 1000:
    # BLOCK_SIZE 1024 and 4 warps by its host heuristics
    "tut_layer_norm_fwd": (_tut("05", "_layer_norm_fwd_fused"),
                           [_shifted((16, 1000), -2.3, 0.5, "float16"), _zeros((16, 1000), "float16"),
                            _uniform(1000, 0, 1, "float16"), _uniform(1000, 0, 1, "float16"), _zeros(16), _zeros(16),
                            1000, 1000, 1e-5], {"BLOCK_SIZE": 1024, "num_warps": 4}, (16,)),
    # (its backward's dx kernel, _layer_norm_bwd_dx_fused, is left out: its partial dw/db sums under a
    # spin lock differed between two identical launches on the GPU (an H100, 2026-12-07), and the
    # model's run of its lock did not end: docs/triton.md)
    # the second stage: the 8 partial rows summed (BLOCK_SIZE_M 32, BLOCK_SIZE_N 128 as its host code)
    "tut_layer_norm_bwd_dwdb": (_tut("05", "_layer_norm_bwd_dwdb"),
                                [_scaled((8, 1000), 0.5, "float16"), _scaled((8, 1000), 0.5, "float16"),
                                 _zeros(1000, "float16"), _zeros(1000, "float16"), 8, 1000],
                                {"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 128}, (8,)),
    # 06: flash attention forward (block pointers), causal (STAGE 3: the off-band loop, then the masked
    # on-band one), f16 q/k/v normal(0, 0.5) and sm_scale 0.5 as its test: Z 1, H 2, N_CTX 256, HEAD_DIM 64,
    # config 128 x 64, 3 stages, 4 warps
    "tut_attn_fwd": (_tut("06", "_attn_fwd"),
                     [_scaled((1, 2, 256, 64), 0.5, "float16"), _scaled((1, 2, 256, 64), 0.5, "float16"),
                      _scaled((1, 2, 256, 64), 0.5, "float16"), 0.5, _zeros((1, 2, 256)),
                      _zeros((1, 2, 256, 64), "float16"), 32768, 16384, 64, 1, 32768, 16384, 64, 1,
                      32768, 16384, 64, 1, 32768, 16384, 64, 1, 1, 2, 256],
                     {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "STAGE": 3, "num_stages": 3, "num_warps": 4},
                     (2, 2)),
    # its fp8 forward benchmark: e5m2 q, k and v, v stored transposed (v.permute(0, 1, 3, 2).contiguous():
    # stride_vk 1, stride_vn N_CTX), e5m2 out, not causal (STAGE 1), sm_scale 1.3, randn inputs; N_CTX 128,
    # config 64 x 32, 3 stages, 4 warps
    "tut_attn_fwd_fp8": (_tut("06", "_attn_fwd"),
                         [_rows((1, 2, 128, 64), "float8_e5m2"), _rows((1, 2, 128, 64), "float8_e5m2"),
                          _rows((1, 2, 64, 128), "float8_e5m2"), 1.3, _zeros((1, 2, 128)),
                          _zeros((1, 2, 128, 64), "float8_e5m2"), 16384, 8192, 64, 1, 16384, 8192, 64, 1,
                          16384, 8192, 1, 128, 16384, 8192, 64, 1, 1, 2, 128],
                         {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 32, "STAGE": 1, "num_stages": 3,
                          "num_warps": 4}, (2, 2)),
    # its backward as _attention.backward launches it: delta = rowsum(o * do) (PRE_BLOCK 128), then dK, dV
    # and dQ (32/128/128/32 blocks, BLK_SLICE_FACTOR 2, 4 warps, 5 stages) with K pre-scaled by
    # sm_scale / ln 2 (normal(0, 0.36)) and M the forward's log2-sum-exp rows (here uniform in [8, 10],
    # about what these q and k give), delta small, sm_scale 0.5
    "tut_attn_bwd_preprocess": (_tut("06", "_attn_bwd_preprocess"),
                                [_scaled((1, 2, 256, 64), 0.5, "float16"), _rows((1, 2, 256, 64), "float16"),
                                 _zeros((1, 2, 256)), 1, 2, 256], {"BLOCK_M": 128, "HEAD_DIM": 64}, (2, 2)),
    "tut_attn_bwd": (_tut("06", "_attn_bwd"),
                     [_scaled((1, 2, 256, 64), 0.5, "float16"), _scaled((1, 2, 256, 64), 0.36, "float16"),
                      _scaled((1, 2, 256, 64), 0.5, "float16"), 0.5, _rows((1, 2, 256, 64), "float16"),
                      _zeros((1, 2, 256, 64), "float16"), _zeros((1, 2, 256, 64), "float16"),
                      _zeros((1, 2, 256, 64), "float16"), _uniform((1, 2, 256), 8.0, 10.0),
                      _scaled((1, 2, 256), 0.1), 32768, 16384, 64, 1, 2, 256],
                     {"BLOCK_M1": 32, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 32, "BLK_SLICE_FACTOR": 2,
                      "HEAD_DIM": 64, "num_warps": 4, "num_stages": 5}, (2, 1, 2)),
    # 08: grouped GEMM, f16, three problems (GROUPS) of full 64 x 64 x 32 tiles on NUM_SM = 4 programs
    # (the tutorial's config 64 x 64 x 32 with 84 or 128 programs; 4 here, so programs take several tiles);
    # the tables of A, B and C pointers point into argument 3, which holds the sizes and the matrices
    "tut_grouped_gemm": (_tut("08", "grouped_matmul_kernel"),
                         [Addresses(3, _GA), Addresses(3, _GB), Addresses(3, _GC), _G,
                          _values(_GLDS, "int32"), len(GROUPS)],
                         {"NUM_SM": 4, "BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32}, (4,)),
    # its TMA variant: device-side tensor descriptors per group (tl.make_tensor_descriptor on the loaded
    # pointers), B given N x K, f16 (FP8 False), config 128 x 128 x 64, 3 stages, 4 warps, NUM_SM 3
    "tut_grouped_gemm_tma": (_tut("08", "grouped_matmul_tma_kernel"),
                             [Addresses(3, _TA), Addresses(3, _TB), Addresses(3, _TC), _T,
                              _values(_TLDS, "int32"), len(GROUPS_TMA)],
                             {"NUM_SM": 3, "BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "FP8": False,
                              "num_stages": 3, "num_warps": 4}, (3,)),
    # 09: the persistent matmul (tl.range(..., flatten=True)) as its validate() calls it, B = b.T of an
    # N x K array (stride_bk 1): M 256, N 256, K 128, config 128 x 128 x 64, 3 stages, 4 warps, on
    # NUM_SMS = 2 programs (4 tiles, two each); f16, and fp8 e4m3 in and out (its --prec fp8)
    "tut_matmul_persistent": (_tut("09", "matmul_kernel_persistent"),
                              [_rows((256, 128), "float16"), _rows((256, 128), "float16"),
                               _zeros((256, 256), "float16"), 256, 256, 128, 128, 1, 1, 128, 256, 1],
                              {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                               "NUM_SMS": 2, "num_stages": 3, "num_warps": 4}, (2,)),
    "tut_matmul_persistent_fp8": (_tut("09", "matmul_kernel_persistent"),
                                  [_rows((256, 128), "float8_e4m3fn"), _rows((256, 128), "float8_e4m3fn"),
                                   _zeros((256, 256), "float8_e4m3fn"), 256, 256, 128, 128, 1, 1, 128, 256, 1],
                                  {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64, "GROUP_SIZE_M": 8,
                                   "NUM_SMS": 2, "num_stages": 3, "num_warps": 4}, (2,)),
    # its TMA kernel with device-side descriptors (tl.make_tensor_descriptor, Triton's global scratch):
    # B is N x K, epilogue split in two halves (EPILOGUE_SUBTILE), no warp specialization (Hopper)
    "tut_matmul_descriptor_persistent": (_tut("09", "matmul_kernel_descriptor_persistent"),
                                         [_rows((256, 128), "float16"), _rows((256, 128), "float16"),
                                          _zeros((256, 256), "float16"), 256, 256, 128],
                                         {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64,
                                          "GROUP_SIZE_M": 8, "EPILOGUE_SUBTILE": True, "NUM_SMS": 2,
                                          "WARP_SPECIALIZE": False, "num_stages": 3, "num_warps": 4}, (2,)),
    "tut_matmul_descriptor_persistent_fp8": (_tut("09", "matmul_kernel_descriptor_persistent"),
                                             [_rows((256, 128), "float8_e4m3fn"), _rows((256, 128), "float8_e4m3fn"),
                                              _zeros((256, 256), "float8_e4m3fn"), 256, 256, 128],
                                             {"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 128,
                                              "GROUP_SIZE_M": 8, "EPILOGUE_SUBTILE": False, "NUM_SMS": 2,
                                              "WARP_SPECIALIZE": False, "num_stages": 3, "num_warps": 4}, (2,)),

    # ---- added 2026-12-07 (host tensor descriptors): kernels that take triton.tools.tensor_descriptor
    # .TensorDescriptor arguments, built by the package's host code (the CUtensorMaps Triton's launcher
    # encodes) with the block shapes its pre_hook sets for the config ----
    # flag_gems' Hopper matmul as general_mm launches it for TMA-compatible operands: f16, A and B row-major,
    # config 64 x 64 x 64, 3 stages, 4 warps; M 128, N 128, K 192
    "flaggems_mm_host_tma": (("flag-gems", "flag_gems/runtime/backend/_nvidia/hopper/ops/mm.py",
                              "mm_kernel_general_host_tma"),
                             [Desc(_rows((128, 192), "float16"), (64, 64)), Desc(_rows((192, 128), "float16"), (64, 64)),
                              Desc(_zeros((128, 128), "float16"), (64, 64)), 128, 128, 192, 192, 1, 128, 1, 128, 1],
                             {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8, "A_ROW_MAJOR": True,
                              "B_ROW_MAJOR": True, "dtype": "float16", "num_stages": 3, "num_warps": 4}, (4,)),
    # the same with a column-major B (b = bt.T: its descriptor is over bt, N x K, block BLOCK_N x BLOCK_K,
    # loaded and transposed in the kernel), bf16, config 64 x 128 x 64, 3 stages, 4 warps
    "flaggems_mm_host_tma_bt": (("flag-gems", "flag_gems/runtime/backend/_nvidia/hopper/ops/mm.py",
                                 "mm_kernel_general_host_tma"),
                                [Desc(_rows((128, 128), "bfloat16"), (64, 64)),
                                 Desc(_rows((256, 128), "bfloat16"), (128, 64)),
                                 Desc(_zeros((128, 256), "bfloat16"), (64, 128)), 128, 256, 128, 128, 1, 1, 128, 256, 1],
                                {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8, "A_ROW_MAJOR": True,
                                 "B_ROW_MAJOR": False, "dtype": "bfloat16", "num_stages": 3, "num_warps": 4}, (4,)),
    # flag_gems' Hopper W8A8 block-FP8 matmul (DeepSeek-style 128 x 128 scale blocks) as
    # general_w8a8_block_fp8_matmul launches it without a tuned config (its fixed meta: 64 x 128 x 128,
    # GROUP_M 32, 2 stages, 4 warps): e4m3 A (M x K) and B (N x K), f32 scales As (M x K/128) and
    # Bs (N/128 x K/128), f16 out; M 128, N 256, K 256
    "flaggems_w8a8_block_fp8_host_tma": (("flag-gems", "flag_gems/runtime/backend/_nvidia/hopper/ops/"
                                          "w8a8_block_fp8_matmul.py", "w8a8_block_fp8_matmul_kernel_host_tma"),
                                         [Desc(_rows((128, 256), "float8_e4m3fn"), (64, 128)),
                                          Desc(_rows((256, 256), "float8_e4m3fn"), (128, 128)),
                                          Desc(_zeros((128, 256), "float16"), (64, 128)),
                                          _uniform((128, 2), 0.01, 0.1), _uniform((2, 2), 0.01, 0.1),
                                          128, 256, 256, 128, 128, 256, 1, 256, 1, 256, 1, 2, 1, 2, 1],
                                         {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 32,
                                          "A_ROW_MAJOR": True, "B_ROW_MAJOR": True, "dtype": "float8_e4m3fn",
                                          "num_stages": 2, "num_warps": 4}, (4,)),
    # liger's fused SwiGLU MLP forward (ops/mlp.py) as its host code launches it in training: 3D
    # descriptors, A, G and U slices of one B x S x 3H tensor (three maps over one array, 256 and 512
    # bytes into its rows), bf16; B 1, S 128, dim 128, hidden 128; config 64 x 128 x 64, GROUP_SIZE_M 8,
    # 4 warps, 2 stages; gate_multiplier 1.0
    "liger_swiglu_mlp_fwd": (("liger-kernel", "liger_kernel/ops/mlp.py", "_swiglu_kernel_forward"),
                             [Desc(_scaled((1, 128, 128), 0.5, "bfloat16"), (1, 64, 64)),
                              Desc(_scaled((128, 128), 0.1, "bfloat16"), (128, 64)),
                              Desc(_scaled((128, 128), 0.1, "bfloat16"), (128, 64)),
                              Desc(_zeros((1, 128, 384), "bfloat16"), (1, 64, 128), lambda a: a[..., :128]),
                              Desc(3, (1, 64, 128), lambda a: a[..., 128:256]),
                              Desc(3, (1, 64, 128), lambda a: a[..., 256:]), 128, 128, 128, 128],
                             {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_SIZE_M": 8, "gate_multiplier": 1.0,
                              "num_warps": 4, "num_stages": 2}, (2, 1)),
    # its backward as swiglu_backward_dGU launches it with that forward config: dO @ Wd, then dG and dU
    # written over G and U in place (desc_dG is over the same slice of the B x S x 3H tensor as desc_G)
    "liger_swiglu_mlp_bwd_dgu": (("liger-kernel", "liger_kernel/ops/mlp.py", "_swiglu_kernel_backward_dGU"),
                                 [Desc(_scaled((1, 128, 128), 0.5, "bfloat16"), (1, 64, 64)),
                                  Desc(_scaled((128, 128), 0.1, "bfloat16"), (64, 128)),
                                  Desc(_scaled((1, 128, 384), 0.5, "bfloat16"), (1, 64, 128), lambda a: a[..., 128:256]),
                                  Desc(2, (1, 64, 128), lambda a: a[..., 256:]),
                                  Desc(2, (1, 64, 128), lambda a: a[..., 128:256]),
                                  Desc(2, (1, 64, 128), lambda a: a[..., 256:]), 128, 128, 128],
                                 {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_SIZE_M": 8,
                                  "gate_multiplier": 1.0, "down_multiplier": 1.0, "num_warps": 4, "num_stages": 2},
                                 (2, 1)),
    # and swiglu_backward_dI: dI = dG @ Wg + dU @ Wu, dG and dU slices of the 3H tensor, in the config
    # 64 x 128 x 64 of its autotune list (GROUP_SIZE_M 8, 4 warps, 2 stages)
    "liger_swiglu_mlp_bwd_di": (("liger-kernel", "liger_kernel/ops/mlp.py", "_swiglu_kernel_backward_dI"),
                                [Desc(_scaled((1, 128, 384), 0.5, "bfloat16"), (1, 64, 64), lambda a: a[..., 128:256]),
                                 Desc(_scaled((128, 128), 0.1, "bfloat16"), (64, 128)),
                                 Desc(0, (1, 64, 64), lambda a: a[..., 256:]),
                                 Desc(_scaled((128, 128), 0.1, "bfloat16"), (64, 128)),
                                 Desc(_zeros((1, 128, 128), "bfloat16"), (1, 64, 128)), 128, 128, 128, 128],
                                {"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_SIZE_M": 8, "num_warps": 4,
                                 "num_stages": 2}, (2, 1)),
}
SEED = 2026


def kernel(case, wheels=".triton-src", root="."):
    """(The kernel object of a case, where it came from): loaded as registry.py describes (a
    tutorial's file as tutorials.py pins it, from `wheels`/triton-tutorials/)."""
    src = CASES[case][0]
    if src[0] == "local":
        from pathlib import Path
        ns = registry.local(Path(root) / KERNELS_FILE, KERNELS_FILE)
        return ns[src[1]], "layoutsim (this repository)"
    if src[0] == "triton-tutorials":
        from . import tutorials
        return tutorials.load(src[1], wheels)[src[2]], tutorials.describe(src[1])
    ns = registry.load(src[0], src[1], wheels)
    return ns[src[2]], f"{src[0]} {registry.WHEELS[src[0]]}"


# The first 17 cases' seeds: their index in this sorted list (how they were measured). Every later
# case is seeded by the CRC-32 of its name, so adding a case changes no other case's inputs.
FIRST_CASES = sorted(["vector_add", "softmax_rows", "matmul_f16", "matmul_tf32", "exp_div", "liger_rms_norm_fwd",
                      "liger_swiglu_fwd", "liger_geglu_fwd", "liger_block_rms_norm_fwd", "liger_swiglu_bwd",
                      "liger_geglu_bwd", "liger_cross_entropy", "flaggems_rms_norm", "fla_l2norm_fwd",
                      "fla_l2norm_fwd_row", "fla_sigmoid_fwd", "liger_layer_norm_fwd"])


def seed_key(case):
    return FIRST_CASES.index(case) if case in FIRST_CASES else zlib.crc32(case.encode())


def inputs(case):
    """The case's arguments: fresh arrays (from its seed), DescInputs and numbers, in the kernel's order."""
    rng = np.random.Generator(np.random.PCG64([SEED, seed_key(case)]))
    out = []
    for a in CASES[case][1]:
        if isinstance(a, Desc):
            owner = out[a.source].owner if isinstance(a.source, int) else a.source(rng)
            out.append(DescInput(owner, a))
        else:
            out.append(a(rng) if callable(a) else a)
    return out


def launch_inputs(case, descriptors=True):
    """inputs(case) with each TritonDtype made the `tl` dtype it names and (descriptors) each
    DescInput a TensorDescriptor over the numpy view (needs Triton)."""
    import triton.language as tl
    from layoutsim.triton.descriptors import descriptor
    return [getattr(tl, a.name) if isinstance(a, TritonDtype) else
            descriptor(a.base, a.block_shape, a.shape, a.strides) if descriptors and isinstance(a, DescInput) else a
            for a in inputs(case)]


def output(value):
    """The array a case argument's final content is recorded as (a DescInput: the array it lies in),
    or None for a number."""
    if isinstance(value, DescInput):
        return value.owner
    return value if isinstance(value, np.ndarray) else None


def meta(case):
    return dict(CASES[case][2])


def grid(case):
    return CASES[case][3]
