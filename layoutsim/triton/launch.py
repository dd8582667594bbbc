"""layoutsim.triton.launch: `kernel[grid](*args, **meta)` on the model.

The kernel is compiled with Triton for the target (compile.py), its PTX runs in layoutsim.ptx,
and every array argument gets the launch's final content back. The PTX parameters are the
kernel's non-constexpr arguments in order, then the two pointers Triton 3.x adds to every kernel
(global scratch and profile scratch): as Triton's CUDA launcher does, each is a buffer of
size x CTAs when the kernel asks for scratch, else a null pointer. With num_ctas > 1 (sm_90) each
program is a thread-block cluster of num_ctas CTAs along x, as that launcher runs it. A fault
names the kernel parameter whose buffer an access left.
"""
import dataclasses
import inspect
import re

import numpy as np

from .. import ptx
from ..errors import LayoutsimError
from ..ptx.state import PtxFault
from . import args as A
from . import descriptors
from .compile import capability, compile_kernel, jit_function, specialise, triton_modules

RUN_OPTIONS = ("racecheck", "initcheck", "ctas", "jobs", "max_steps", "timeout", "progress", "record_mmas")


def layers(kernel):
    """[(kind, wrapper)] from the outside in, down to the JITFunction: autotune and heuristics."""
    triton, _ = triton_modules()
    from triton.runtime.autotuner import Autotuner, Heuristics
    out, k = [], kernel
    while not isinstance(k, triton.runtime.jit.JITFunction):
        if isinstance(k, Autotuner):
            out.append(("autotune", k))
        elif isinstance(k, Heuristics):
            out.append(("heuristics", k))
        else:
            return out, jit_function(k)
        k = k.fn
    return out, k


def configs(kernel):
    """The autotune configs of a kernel ([] for a plain @triton.jit one)."""
    wrappers, _ = layers(kernel)
    return next((list(w.configs) for kind, w in wrappers if kind == "autotune"), [])


def pick_config(tuner, config):
    """The one Config `config` names: an index, or a dict of its meta-parameters and options."""
    cfgs = list(tuner.configs)
    if config is None:
        if len(cfgs) == 1:
            return cfgs[0]
        raise LayoutsimError(f"kernel {tuner.fn.__name__ if hasattr(tuner.fn, '__name__') else ''} is autotuned over "
                             f"{len(cfgs)} configs: give config=INDEX (0..{len(cfgs) - 1}), config=dict(...) of one, "
                             f"or config='all' for each in turn")
    if isinstance(config, (int, np.integer)) and not isinstance(config, bool):
        if not 0 <= config < len(cfgs):
            raise LayoutsimError(f"config={config}: the kernel has {len(cfgs)} autotune configs (0..{len(cfgs) - 1})")
        return cfgs[int(config)]
    if isinstance(config, dict):
        hits = [c for c in cfgs if all(c.all_kwargs().get(k) == v for k, v in config.items())]
        if len(hits) != 1:
            shown = "; ".join(str(c) for c in cfgs[:6])
            raise LayoutsimError(f"config={config}: {'no' if not hits else len(hits)} autotune config(s) match; "
                                 f"the configs: {shown}")
        return hits[0]
    raise LayoutsimError(f"config={config!r}: give an index, a dict of a config's values, or 'all'")


def launch(kernel, grid, *args, arch=None, config=None, options=None, **meta):
    """Run `kernel[grid](*args, **meta)` on the model; returns the layoutsim.ptx Run (costs per
    Python line), or a list of Runs for config='all'. arch: compile.ARCHS (default: sm_90's
    arch-specific target, as on an H100/H200; sm_100a: Blackwell's tcgen05).
    options: keywords of layoutsim.ptx.run (racecheck, initcheck, ctas, jobs, max_steps, timeout,
    record_mmas).
    Array arguments (numpy arrays, CPU torch tensors, bits(raw, fmt)) get their final content."""
    wrappers, fn = layers(kernel)
    tuner = next((w for kind, w in wrappers if kind == "autotune"), None)
    if config == "all" and tuner is not None:
        return [launch_config(kernel, wrappers, fn, c, grid, args, meta, arch, options) for c in tuner.configs]
    wrappers, fn, cfg = choose(kernel, config)
    return launch_config(kernel, wrappers, fn, cfg, grid, args, meta, arch, options)


def launch_config(kernel, wrappers, fn, cfg, grid, args, meta, arch, options):
    opts = dict(options or {})
    bad = [k for k in opts if k not in RUN_OPTIONS]
    if bad:
        raise LayoutsimError(f"options: unknown {bad[0]!r}; give {', '.join(RUN_OPTIONS)}")
    given, meta = bind(fn, wrappers, cfg, args, meta)
    if cfg is not None and cfg.pre_hook is not None:         # as the autotuner runs it before a launch
        cfg.pre_hook({**given, **meta})
    stands, arrays = [], {}
    for p in fn.params:
        s, arr = descriptors.argument(given[p.name], p.name)
        stands.append(s)
        if arr is not None:
            arrays[p.name] = arr
    bound, signature, constexprs, attrs, parsed = specialise(fn, stands, meta, capability(arch))
    compiled = compile_kernel(fn, signature, constexprs, attrs, parsed, arch)
    g = grid({**given, **{k: v for k, v in meta.items()}}) if callable(grid) else grid
    g = _grid(g)
    if g is None:
        return None                                 # an empty grid: Triton launches nothing either
    # num_ctas > 1 (sm_90): each program is a cluster of num_ctas CTAs along x, as Triton's CUDA
    # launcher runs it (gridDimX = grid x * num_ctas, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    # (num_ctas, 1, 1); its scratch is per CTA)
    cluster = (compiled.num_ctas, 1, 1) if compiled.num_ctas != 1 else None
    g = (g[0] * compiled.num_ctas,) + g[1:]
    values, names, back = ptx_arguments(fn, signature, given, arrays, compiled.tensordesc_meta)
    n = int(np.prod(g))
    for size, align, what in ((compiled.global_scratch_size, compiled.global_scratch_align, "global"),
                              (compiled.profile_scratch_size, compiled.profile_scratch_align, "profile")):
        values.append(np.zeros(n * size, np.uint8) if size > 0 else np.uint64(0))
    names += ["global scratch", "profile scratch"]
    try:
        r = ptx.run(compiled.ptx, compiled.name, g, 32 * compiled.num_warps, values, arch=compiled.arch,
                    shared_bytes=compiled.shared, cluster=cluster, **opts)
    except PtxFault as e:
        raise named(e, names) from None
    for k, target in back:
        np.copyto(target, r.buffers[k].reshape(target.shape), casting="no")
    r.extra = {"triton": {"kernel": fn.__name__, "signature": compiled.signature,
                          "constexprs": compiled.constexprs, "num_warps": compiled.num_warps,
                          "shared": compiled.shared, "num_ctas": compiled.num_ctas,
                          "config": str(cfg) if cfg is not None else None, "cached": compiled.cached, "triton_version": compiled.triton_version}}
    r.triton = compiled
    return r


def ptx_arguments(fn, signature, given, arrays, tensordesc_meta):
    """(the PTX arguments of the kernel's parameters, a name for each, [(PTX index, array to write
    its final content into)]): constexprs take none, a host tensor descriptor several
    (descriptors.expand), any other parameter one."""
    values, names, back = [], [], []
    metas = iter(tensordesc_meta or [])
    for p in fn.params:
        t = signature[p.name]
        if t == "constexpr":
            continue
        if t.startswith("tensordesc"):
            desc = arrays[p.name]
            more, more_names, owner = descriptors.expand(desc, next(metas, None), p.name)
            back.append((len(values), owner))
            values += more
            names += more_names
            continue
        if p.name in arrays:
            back.append((len(values), arrays[p.name]))
            values.append(arrays[p.name])
        else:
            values.append(A.scalar_value(given[p.name], t, p.name))
        names.append(p.name)
    _share_tensors(values)
    return values, names, back


def _share_tensors(values):
    """One array object per memory among the tensor maps' tensors: descriptors over the same array
    then share one tensor in the model (layoutsim.ptx places a map's tensor once per array object),
    as they share it on a GPU."""
    seen = {}
    for k, v in enumerate(values):
        buf = getattr(v, "buffer", None)
        if isinstance(buf, np.ndarray):
            key = (buf.__array_interface__["data"][0], buf.nbytes, buf.dtype.str)
            if key in seen:
                values[k] = dataclasses.replace(v, buffer=seen[key])
            else:
                seen[key] = buf


def named(fault, names):
    """The fault with each PTX `argument N` it mentions called by the kernel parameter it is."""
    def sub(m):
        i = int(m.group(1))
        return f"parameter {names[i]} (argument {i})" if i < len(names) else m.group(0)
    msg = re.sub(r"\bargument (\d+)\b", sub, str(fault))
    return PtxFault(msg, run=fault.run, fault=dict(fault.fault, message=msg))


def choose(kernel, config):
    """(wrappers, JITFunction, the Config to run or None) of a kernel and a config= value."""
    wrappers, fn = layers(kernel)
    tuner = next((w for kind, w in wrappers if kind == "autotune"), None)
    if tuner is None and config is not None:
        raise LayoutsimError(f"config={config!r}: kernel {fn.__name__} is not autotuned")
    return wrappers, fn, (pick_config(tuner, config) if tuner is not None else None)


def bind(fn, wrappers, cfg, args, meta):
    """({parameter: value} with defaults, the remaining launch options) as kernel[grid](*args,
    **meta) binds them: the config's values, then the heuristics, then the config's pre_hook."""
    names = [p.name for p in fn.params]
    if len(args) > len(names):
        raise LayoutsimError(f"kernel {fn.__name__}({', '.join(names)}) takes {len(names)} arguments; "
                             f"{len(args)} given")
    meta = dict(meta)
    if cfg is not None:
        for k, v in cfg.all_kwargs().items():
            meta.setdefault(k, v)
    for kind, w in reversed(wrappers):           # heuristics nearest the kernel first, as Triton runs them
        if kind == "heuristics":
            for v, heur in w.values.items():
                meta[v] = heur({**dict(zip(w.arg_names, args)), **meta})
    given = dict(zip(names, args))
    for k in list(meta):
        if k in names:
            if k in given:
                raise LayoutsimError(f"kernel {fn.__name__}: parameter {k} given twice")
            given[k] = meta.pop(k)
    missing = [p.name for p in fn.params if p.name not in given and not p.has_default]
    if missing:
        raise LayoutsimError(f"kernel {fn.__name__}({', '.join(names)}): missing argument(s) {', '.join(missing)}")
    for p in fn.params:
        if p.name not in given:
            given[p.name] = p.default
    return given, meta


def _grid(g):
    if isinstance(g, (int, np.integer)):
        g = (g,)
    if not isinstance(g, (tuple, list)) or not 1 <= len(g) <= 3:
        raise LayoutsimError(f"grid {g!r}: give a tuple of 1 to 3 CTA counts, or a function of the meta-parameters")
    try:
        g = tuple(int(x) for x in g)
    except (TypeError, ValueError):
        raise LayoutsimError(f"grid {g!r}: give whole numbers") from None
    if min(g) < 0:
        raise LayoutsimError(f"grid {g!r}: a negative CTA count")
    return None if 0 in g else g


def signature_of(kernel):
    """inspect.Signature of the @triton.jit function under any wrappers."""
    return inspect.signature(layers(kernel)[1].fn)
