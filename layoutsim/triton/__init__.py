"""layoutsim.triton: Triton kernels on the model, bit for bit, with costs per Python line.

    import numpy as np, layoutsim.triton as lt
    r = lt.launch(add_kernel, (4,), x, y, out, n, BLOCK=256)      # as add_kernel[(4,)](x, y, out, n, BLOCK=256)
    out                                   # written back, as the H200 computes it
    print(r.format())                     # shared/global costs per line; the lines are the kernel's Python lines
    lt.launch(tuned, grid, *args, config=0)        # an @triton.autotune kernel: one config, or config="all"
    lt.compile_for(kernel, *args, **meta).ttgir    # what Triton produced (PTX, ttgir) without running it
    with lt.patch():                      # kernel[grid](...) in your own code runs on the model
        my_triton_op(x)

Triton is optional (`pip install "layoutsim[triton]"`, Triton 3.6). Modules: compile (Triton's
binder and compile for a target, the compile cache), args (arrays, torch tensors, raw bits,
scalars), launch (`launch`), loader (FILE.py:KERNEL without running its __main__), ttgir +
layouts (the encodings Triton chose, as lane maps), shared_costs (each shared
encoding's bank cost under the ops that touch it), patch (`patch`, the pytest fixture).
See docs/triton.md.
"""
from .args import bits
from .compile import SUPPORTED, Compiled
from .launch import configs, launch
from .patch import patch
from .prepare import compile_for

__all__ = ["launch", "bits", "configs", "patch", "compile_for", "Compiled", "SUPPORTED"]
