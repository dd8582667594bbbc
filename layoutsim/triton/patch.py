"""patch(): `kernel[grid](...)` in the user's own code runs on the model while it is active.

    with layoutsim.triton.patch():
        out = my_op(x)               # its kernel[grid](x, ...) calls run layoutsim.triton.launch

As a pytest fixture: `pytest -p layoutsim.triton.pytest_plugin`, then a test takes `triton_model`
(the active patch; `triton_model.runs` lists every launch's Run). Arrays are numpy arrays or CPU
torch tensors. An autotuned kernel runs its config `config` (default 0) or, with config='all',
every config in turn on the same arrays.
"""
import contextlib

from .compile import triton_modules


class Patch:
    def __init__(self, arch, config, options):
        self.arch, self.config, self.options = arch, config, options
        self.runs = []

    def call(self, kernel, grid, args, kwargs):
        from .launch import launch
        kwargs = dict(kwargs)
        for k in ("warmup",):
            kwargs.pop(k, None)
        from .launch import configs
        config = self.config if configs(kernel) else None
        r = launch(kernel, grid, *args, arch=self.arch, config=config, options=self.options, **kwargs)
        self.runs.extend(r if isinstance(r, list) else [r] if r is not None else [])
        return r


@contextlib.contextmanager
def patch(arch=None, config=0, options=None):
    """Run every `kernel[grid](...)` on the model inside the block; yields the Patch (its .runs)."""
    triton, _ = triton_modules()
    from triton.runtime.jit import KernelInterface
    p = Patch(arch, config, options)
    old = KernelInterface.__getitem__

    def getitem(self, grid):
        return lambda *args, **kwargs: p.call(self, grid, args, kwargs)
    KernelInterface.__getitem__ = getitem
    try:
        yield p
    finally:
        KernelInterface.__getitem__ = old
