"""compile_for: what Triton produces for a launch (PTX, ttgir, metadata), without running it."""
from . import args as A
from .compile import capability, compile_kernel, specialise
from .launch import layers, pick_config


def compile_for(kernel, *args, arch="sm_90a", config=None, **meta):
    """The Compiled of `kernel[grid](*args, **meta)` for arch (no grid needed: nothing runs)."""
    wrappers, fn = layers(kernel)
    tuner = next((w for kind, w in wrappers if kind == "autotune"), None)
    meta = dict(meta)
    if tuner is not None:
        for k, v in pick_config(tuner, config).all_kwargs().items():
            meta.setdefault(k, v)
    for kind, w in reversed(wrappers):
        if kind == "heuristics":
            for v, heur in w.values.items():
                meta[v] = heur({**dict(zip(w.arg_names, args)), **meta})
    names = [p.name for p in fn.params]
    given = dict(zip(names, args))
    for k in list(meta):
        if k in names:
            given[k] = meta.pop(k)
    stands = [A.stand_in(given.get(p.name, p.default), p.name)[0] for p in fn.params]
    _, signature, constexprs, attrs, parsed = specialise(fn, stands, meta, capability(arch))
    return compile_kernel(fn, signature, constexprs, attrs, parsed, arch)
