"""compile_for: what Triton produces for a launch (PTX, ttgir, metadata), without running it."""
from . import descriptors
from .compile import capability, compile_kernel, specialise
from .launch import bind, choose


def compile_for(kernel, *args, arch=None, config=None, **meta):
    """The Compiled of `kernel[grid](*args, **meta)` for arch (no grid needed: nothing runs)."""
    wrappers, fn, cfg = choose(kernel, config)
    given, meta = bind(fn, wrappers, cfg, args, meta)
    stands = [descriptors.argument(given[p.name], p.name)[0] for p in fn.params]
    _, signature, constexprs, attrs, parsed = specialise(fn, stands, meta, capability(arch))
    return compile_kernel(fn, signature, constexprs, attrs, parsed, arch)
