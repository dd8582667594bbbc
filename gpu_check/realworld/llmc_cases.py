"""The llm.c launches: karpathy/llm.c's dev/cuda kernels (MIT), each as its file's host launcher
launches it.

Every dev/cuda file is a benchmark: main() fixes GPT-2 sizes (B = 8, T = 1024, C = 768, V = 50257)
and calls the file's `<op>_forward<k>` (or dispatch) function with each block size of its list
{32, ..., 1024}; that function computes the grid (and dynamic shared memory) from the sizes and
launches kernel k. A case here is one such launch with small sizes (`argv` records them): the grid
and shared bytes are that launcher's formula over those sizes, the block one of main()'s block
sizes. The files are compiled as published: layernorm, softmax, crossentropy, adamw and attention
are float; gelu, residual, encoder and fused_residual #define ENABLE_BF16 themselves (floatX is
__nv_bfloat16, an x128 holds 8 of them).

Inputs as the kernels see them in a model: activations uniform in [-2, 2), weights around 1 and
biases small, token ids in [0, V), probabilities positive (about 1/V, as a softmax gives), AdamW's
second moment v >= 0.
"""
import numpy as np

from gpu_check.kernel_corpus.cases import Arg, scalar

from .cases import Case

PACKAGE = "karpathy/llm.c"      # the manifest adds @<commit> of the checkout built
ACT, WEIGHT, BIAS = ("uniform", -2, 2), ("uniform", 0.5, 1.5), ("uniform", -0.1, 0.1)
BF16 = "bfloat16"
X128_BF16 = 8                   # Packed128<__nv_bfloat16>::size


def cdiv(a, b):
    return -(-a // b)


def _i(*values):
    return tuple(scalar("int32", v) for v in values)


def _case(name, file, kernel, argv, grid, block, args, what, shared=0):
    return Case(name, f"dev/cuda/{file}.cu", (kernel, 0), "sm_90", argv, (grid, 1, 1),
                block if isinstance(block, tuple) else (block, 1, 1), shared, args, what)


def _layernorm_args():
    """layernorm_forward<k>'s kernel arguments (out, mean, rstd, inp, weight, bias, N, C): N = B*T rows."""
    B, T, C = 2, 32, 128
    N = B * T
    args = (Arg("float32", (N, C), "out"), Arg("float32", (N,), "out"), Arg("float32", (N,), "out"),
            Arg("float32", (N, C), "in", ACT), Arg("float32", (C,), "in", WEIGHT), Arg("float32", (C,), "in", BIAS),
            *_i(N, C))
    return B, T, C, N, args


def _softmax(name, kernel, block, grid_of, shared_of, what):
    """softmax_forward<k>(out, inp, N, C, block_size): N = B*T rows of C logits."""
    B, T, V = 2, 32, 256
    N = B * T
    return _case(name, "softmax_forward", kernel, (f"B={B}", f"T={T}", f"V={V}", f"block_size={block}"),
                 grid_of(N, block), block,
                 (Arg("float32", (N, V), "out"), Arg("float32", (N, V), "in", ACT), *_i(N, V)), what,
                 shared_of(block))


def _bf16_pointwise(name, file, kernel, n_in, block, per_thread, what):
    """gelu/residual_forward<k>(out, inp[, inp2], N, block_size): grid ceil_div(N, block * per_thread)."""
    B, T, C = 2, 32, 128
    N = B * T * C
    ins = tuple(Arg(BF16, (N,), "in", ACT) for _ in range(n_in))
    return _case(name, file, kernel, (f"B={B}", f"T={T}", f"C={C}", f"block_size={block}"),
                 cdiv(N, block * per_thread), block, (Arg(BF16, (N,), "out"), *ins, *_i(N)), what)


def _encoder(name, kernel, block, per_thread, what):
    """encoder_forward<k>(out, inp, wte, wpe, B, T, C, block_size): grid ceil_div(B*T*C, block * per_thread)."""
    B, T, C, V = 2, 32, 128, 512
    return _case(name, "encoder_forward", kernel, (f"B={B}", f"T={T}", f"C={C}", f"V={V}", f"block_size={block}"),
                 cdiv(B * T * C, block * per_thread), block,
                 (Arg(BF16, (B, T, C), "out"), Arg("int32", (B, T), "in", ("ints", 0, V - 1)),
                  Arg(BF16, (V, C), "in", ACT), Arg(BF16, (T, C), "in", ACT), *_i(B, T, C)), what)


def _attention_sizes():
    B, T, C, NH = 1, 32, 64, 4
    return B, T, C, NH, C // NH, (f"B={B}", f"T={T}", f"C={C}", f"NH={NH}")


def _attention1():
    """attention_forward1's three launches (block_size 256): preatt (B, NH, T, T) from inp (B, T, 3C)."""
    B, T, C, NH, _, argv = _attention_sizes()
    argv += ("block_size=256",)
    inp = Arg("float32", (B, T, 3 * C), "in", ACT)
    return (
        _case("llmc_attention_query_key_kernel1", "attention_forward", "_Z27attention_query_key_kernel1", argv,
              cdiv(B * NH * T * T, 256), 256, (Arg("float32", (B, NH, T, T), "out"), inp, *_i(B, T, C, NH)),
              "llm.c attention_forward1: one thread per (b, h, t, t2) causal query-key dot product, "
              "strided float loads of q and k rows, -INFINITY above the diagonal"),
        _case("llmc_attention_softmax_kernel1", "attention_forward", "_Z25attention_softmax_kernel1", argv,
              cdiv(B * T * NH, 256), 256,
              (Arg("float32", (B, NH, T, T), "out"), Arg("float32", (B, NH, T, T), "in", ACT), *_i(B, T, NH)),
              "llm.c attention_forward1: one thread per (b, t, h) row, a serial causal softmax (expf, max, sum)"),
        _case("llmc_attention_value_kernel1", "attention_forward", "_Z23attention_value_kernel1", argv,
              cdiv(B * T * NH, 256), 256,
              (Arg("float32", (B, T, C), "out"), Arg("float32", (B, NH, T, T), "in", ("uniform", 0, 0.1)), inp,
               *_i(B, T, C, NH)),
              "llm.c attention_forward1: one thread per (b, t, h) accumulating att @ v over the causal prefix"),
    )


def _attention3():
    """attention_forward3's kernels (block_size 256): permute, softmax_forward_kernel5, unpermute."""
    B, T, C, NH, HS, argv = _attention_sizes()
    argv += ("block_size=256",)
    qkv = tuple(Arg("float32", (B, NH, T, HS), "out") for _ in range(3))
    return (
        _case("llmc_permute_kernel", "attention_forward", "_Z14permute_kernel", argv, cdiv(B * NH * T * HS, 256), 256,
              (*qkv, Arg("float32", (B, T, 3, NH, HS), "in", ACT), *_i(B, T, NH, HS)),
              "llm.c attention_forward3: inp (B, T, 3, NH, HS) split into q, k, v (B, NH, T, HS), one float each"),
        _case("llmc_softmax_forward_kernel5", "attention_forward", "_Z23softmax_forward_kernel5", argv,
              cdiv(B * NH * T * 32, 256), 256,
              (Arg("float32", (B * NH, T, T), "out"), scalar("float32", 1.0 / np.sqrt(np.float32(HS))),
               Arg("float32", (B * NH, T, T), "in", ACT), *_i(B * NH, T)),
              "llm.c attention_forward3: a warp per row, causal online softmax with float4 loads, "
              "cooperative-groups warp reductions, backwards over the row"),
        _case("llmc_unpermute_kernel", "attention_forward", "_Z16unpermute_kernel", argv, cdiv(B * T * C, 256), 256,
              (Arg("float32", (B, NH, T, HS), "in", ACT), Arg("float32", (B, T, NH, HS), "out"), *_i(B, T, NH, HS)),
              "llm.c attention_forward3: (B, NH, T, HS) back to (B, T, NH, HS), one float per thread"),
    )


def _adamw():
    """adamw_dispatch2 (block 512, grid ceil_div(n, 512)) with main()'s t = 10, lr 1e-3, betas 0.9,
    0.999, eps 1e-8, weight decay 0; the bias corrections 1 - beta^t in float, as adamw() computes them."""
    n = 4096
    b1, b2 = np.float32(0.9), np.float32(0.999)
    f32 = lambda v: scalar("float32", float(np.float32(v)))  # noqa: E731
    return _case("llmc_adamw_kernel2", "adamw", "_Z13adamw_kernel2", (f"num_parameters={n}", "t=10"), cdiv(n, 512),
                 512, (Arg("float32", (n,), "inout", ("uniform", -1, 1)), Arg("float32", (n,), "in", ("uniform", -0.1, 0.1)),
                       Arg("float32", (n,), "inout", ("uniform", -0.01, 0.01)),
                       Arg("float32", (n,), "inout", ("uniform", 0, 1e-4)),
                       scalar("int64", n), f32(1e-3), f32(b1), f32(b2), f32(1 - b1 ** 10), f32(1 - b2 ** 10),
                       f32(1e-8), f32(0.0)),
                 "llm.c adamw_kernel2: one thread per parameter, lerp moment updates, sqrtf, "
                 "a 64-bit element count")


def _layernorm_cases():
    B, T, C, N, args = _layernorm_args()
    argv = (f"B={B}", f"T={T}", f"C={C}", "block_size=128")
    return (
        _case("llmc_layernorm_forward_kernel3", "layernorm_forward", "_Z25layernorm_forward_kernel3", argv,
              cdiv(N * 32, 128), 128, args,
              "llm.c layernorm_forward3: a warp per row, cooperative-groups cg::reduce for the mean and "
              "variance, __stcs streaming stores"),
        _case("llmc_layernorm_forward_kernel5", "layernorm_forward", "_Z25layernorm_forward_kernel5", argv,
              N, 128, args,
              "llm.c layernorm_forward5: a block per row, one pass of sum and sum of squares, warp "
              "reductions then a shared-memory reduction over the warps"),
    )


def _fused_residual5():
    """fused_residual_forward5 (block_size 256): block (32, 8), grid ceil_div(N, 8), shared
    (2 + 8) * C bf16 (weight, bias and a row per warp)."""
    B, T, C = 2, 32, 256
    N, block_y = B * T, 256 // 32
    return _case("llmc_fused_residual_forward_kernel5", "fused_residual_forward", "_Z30fused_residual_forward_kernel5",
                 (f"B={B}", f"T={T}", f"C={C}", "block_size=256"), cdiv(N, block_y), (32, block_y, 1),
                 (Arg(BF16, (N, C), "out"), Arg(BF16, (N, C), "out"), Arg(BF16, (N,), "out"), Arg(BF16, (N,), "out"),
                  Arg(BF16, (N, C), "in", ACT), Arg(BF16, (N, C), "in", ACT), Arg(BF16, (C,), "in", WEIGHT),
                  Arg(BF16, (C,), "in", BIAS), *_i(N, C)),
                 "llm.c fused_residual_forward5 (bf16): residual add and layernorm in one pass, weight, bias "
                 "and each warp's row staged in dynamic shared memory as 128-bit x128 packs",
                 shared=(2 + block_y) * C * 2)


def _crossentropy():
    B, T, V = 2, 32, 256
    return _case("llmc_crossentropy_forward_kernel1", "crossentropy_forward", "_Z28crossentropy_forward_kernel1",
                 (f"B={B}", f"T={T}", f"V={V}", "block_size=128"), cdiv(B * T, 128), 128,
                 (Arg("float32", (B, T), "out"), Arg("float32", (B, T, V), "in", ("uniform", 0.1 / V, 2.0 / V)),
                  Arg("int32", (B, T), "in", ("ints", 0, V - 1)), *_i(B, T, V)),
                 "llm.c crossentropy_forward1: one thread per token, a gathered probability and -logf")


CASES = (
    *_layernorm_cases(),
    _softmax("llmc_softmax_forward_kernel4", "_Z23softmax_forward_kernel4", 128, lambda n, b: n,
             lambda b: b // 32 * 4,
             "llm.c softmax_forward4: a block per row, warp shuffles then shared memory for max and sum"),
    _softmax("llmc_softmax_forward_online_kernel1", "_Z30softmax_forward_online_kernel1", 32, lambda n, b: cdiv(n, b),
             lambda b: 0, "llm.c softmax_forward_online1: one thread per row, the online (running max) softmax"),
    _softmax("llmc_softmax_forward_kernel7", "_Z23softmax_forward_kernel7", 128, lambda n, b: n,
             lambda b: 2 * b // 32 * 4,
             "llm.c softmax_forward7: a block per row, unrolled 8-wide loads, warp and shared-memory reductions"),
    _bf16_pointwise("llmc_gelu_forward_kernel1", "gelu_forward", "_Z20gelu_forward_kernel1", 1, 128, 1,
                    "llm.c gelu_forward1 (bf16): tanh GELU, one element per thread"),
    _bf16_pointwise("llmc_gelu_forward_kernel2", "gelu_forward", "_Z20gelu_forward_kernel2", 1, 128, X128_BF16,
                    "llm.c gelu_forward2 (bf16): 128-bit x128 loads (8 bf16) with __ldcs, __stcs stores"),
    _bf16_pointwise("llmc_residual_forward_kernel1", "residual_forward", "_Z24residual_forward_kernel1", 2, 128, 1,
                    "llm.c residual_forward1 (bf16): out = inp1 + inp2 through float, one element per thread"),
    _bf16_pointwise("llmc_residual_forward_kernel2", "residual_forward", "_Z24residual_forward_kernel2", 2, 128,
                    X128_BF16, "llm.c residual_forward2 (bf16): 128-bit x128 packs, streaming loads and stores"),
    _encoder("llmc_encoder_forward_kernel2", "_Z23encoder_forward_kernel2", 128, 1,
             "llm.c encoder_forward2 (bf16): token and position embeddings gathered and added, one element per thread"),
    _encoder("llmc_encoder_forward_kernel3", "_Z23encoder_forward_kernel3", 128, X128_BF16,
             "llm.c encoder_forward3 (bf16): the gather in 128-bit x128 packs"),
    _fused_residual5(),
    _adamw(),
    _crossentropy(),
    *_attention1(),
    *_attention3(),
)
BY_NAME = {c.name: c for c in CASES}
