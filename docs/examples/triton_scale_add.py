"""A Triton kernel for docs/triton.md: out = alpha * x + y over n elements."""
import triton
import triton.language as tl


@triton.jit
def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = offs < n
    x = tl.load(x_ptr + offs, mask=keep)
    y = tl.load(y_ptr + offs, mask=keep)
    tl.store(out_ptr + offs, alpha * x + y, mask=keep)


if __name__ == "__main__":
    print("run it with: layoutsim triton run docs/examples/triton_scale_add.py:scale_add ...")
