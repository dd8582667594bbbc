"""Compile a @triton.jit kernel for an NVIDIA target on a machine without a GPU.

The signature, constexprs and attributes are Triton's own: its binder
(`triton.runtime.jit.create_function_from_signature`, the function `kernel[grid](...)` calls) is
applied to stand-ins of the arguments, so the same specialisation rules hold (a pointer or int
divisible by 16 gets `tt.divisibility = 16`, an int equal to 1 becomes a constexpr, floats and
bools are never specialised). Array stand-ins report the address the model places them at:
every buffer of layoutsim.ptx is 512-byte aligned, as a CUDA allocation is.

The compile runs `triton.compile(ASTSource(fn, signature, constexprs, attrs),
target=GPUTarget("cuda", capability, 32), options=...)` and is cached by content under
$LAYOUTSIM_CACHE (default ~/.cache/layoutsim)/triton: the key is the kernel's cache key (its
source and every function and global it uses, as Triton hashes them), the specialisation, the
options, the target and Triton's version.
"""
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..archs import target_of_device
from ..errors import LayoutsimError, one_line
from ..files import read_regular, write_atomic

CACHE_FORMAT = 2
SUPPORTED = ("3.6",)               # Triton versions this front end was built and tested against
INSTALL = 'pip install "layoutsim[triton]"'
# --arch names -> the compute capability Triton targets (for 90 Triton emits sm_90's arch-specific
# .target, the default: what a kernel compiled on an H100/H200 gets)
DEFAULT_ARCH = target_of_device("sm_90")
ARCHS = {DEFAULT_ARCH: 90, "sm_90": 90, "sm_89": 89, "sm_80": 80,
         target_of_device("sm_100"): 100,   # Triton emits sm_100a's .target (tcgen05, TMEM) for 100
         target_of_device("sm_120"): 120}   # and sm_120a's for 120 (tl.dot_scaled: block-scaled mma.sync)


def triton_modules():
    """(triton, triton.language), or the one line saying how to install them."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        raise LayoutsimError(f"Triton is not installed: {INSTALL} (Triton {', '.join(SUPPORTED)})") from None
    return triton, tl


def capability(arch):
    """Triton's compute capability of an --arch name (None: the default)."""
    if arch is None:
        return ARCHS[DEFAULT_ARCH]
    if arch not in ARCHS:
        from ..errors import suggest
        raise LayoutsimError(f"arch {arch!r}{suggest(str(arch), list(ARCHS))}: Triton kernels run for "
                             f"{', '.join(ARCHS)}")
    return ARCHS[arch]


@dataclass
class Compiled:
    """What a launch needs of a compile: the PTX, the ttgir, and the launch metadata."""
    name: str
    ptx: str
    ttgir: str
    shared: int
    num_warps: int
    num_ctas: int
    global_scratch_size: int
    global_scratch_align: int
    profile_scratch_size: int
    profile_scratch_align: int
    signature: dict
    constexprs: dict
    arch: str
    triton_version: str
    # per tensordesc parameter, in order: how its launcher expands it (descriptors.py): the TMA
    # encoding Triton chose (swizzle, elem_size, elem_type, block_size, fp4_padded), or None
    tensordesc_meta: list = None
    cached: bool = False

    def to_json(self):
        d = dict(self.__dict__)
        d.pop("cached")
        return d


class _Stand:
    """An array argument as Triton's binder sees it: a dtype and a data pointer."""

    def __init__(self, dtype, ptr):
        self.dtype, self._ptr = dtype, ptr

    def data_ptr(self):
        return self._ptr


def jit_function(kernel):
    """The JITFunction of a kernel (an @triton.autotune / @triton.heuristics wrapper unwrapped)."""
    triton, _ = triton_modules()
    fn = kernel
    while not isinstance(fn, triton.runtime.jit.JITFunction):
        inner = getattr(fn, "fn", None)
        if inner is None:
            raise LayoutsimError(f"{getattr(kernel, '__name__', kernel)!r} is not a @triton.jit kernel")
        fn = inner
    return fn


def specialise(fn, stand_ins, meta, target_cap):
    """Triton's own binding of the arguments: (bound {name: value}, signature, constexprs, attrs,
    options) as JITFunction.run computes them."""
    triton, _ = triton_modules()
    from triton.compiler import make_backend
    from triton.backends.compiler import GPUTarget
    from triton.runtime.jit import create_function_from_signature
    backend = make_backend(GPUTarget("cuda", target_cap, 32))
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    kwargs = dict(meta)
    kwargs.setdefault("debug", bool(fn.debug))
    kwargs.setdefault("instrumentation_mode", "")
    names = [p.name for p in fn.params]
    try:
        bound, spec, _ = binder(*stand_ins, **kwargs)
    except TypeError as e:
        raise LayoutsimError(f"kernel {fn.__name__}({', '.join(names)}): {one_line(str(e))}") from None
    try:
        options = backend.parse_options(kwargs)
    except (ValueError, TypeError) as e:
        raise LayoutsimError(f"kernel {fn.__name__}: {one_line(str(e))}") from None
    n_ctas = getattr(options, "num_ctas", 1)
    if isinstance(n_ctas, bool) or not isinstance(n_ctas, int) or n_ctas < 1 or n_ctas & (n_ctas - 1):
        # Triton's CTA layouts split a tensor over a power-of-two number of CTAs; its passes fail
        # on any other count (printing MLIR diagnostics): refused here in one line instead
        raise LayoutsimError(f"kernel {fn.__name__}: num_ctas={n_ctas!r}: give a power of two (1, 2, 4, 8, 16): "
                             f"Triton splits each tensor over the CTAs of a cluster")
    for k in kwargs:
        if k not in options.__dict__ and k not in names:
            raise LayoutsimError(f"kernel {fn.__name__}: unknown keyword {k!r}: give its parameters "
                                 f"({', '.join(names)}) or launch options (num_warps, num_stages, num_ctas, "
                                 f"maxnreg)")
    signature = {k: v[0] for k, v in zip(names, spec)}
    from triton.runtime.jit import find_paths_if, get_iterable_path
    sigvals = [v[0] for v in spec]
    cpaths = find_paths_if(sigvals, lambda _, val: val == "constexpr")
    constexprs = {p: get_iterable_path(list(bound.values()), p) for p in cpaths}
    attrvals = [v[1] for v in spec]
    apaths = find_paths_if(attrvals, lambda _, x: isinstance(x, str))
    attrs = {p: backend.parse_attr(get_iterable_path(attrvals, p)) for p in apaths}
    return bound, signature, constexprs, attrs, options


def _plain(v):
    """A JSON-able, stable form of a constexpr value for the cache key."""
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    key = getattr(v, "cache_key", None)
    if isinstance(key, str):
        return ["fn", key]
    return repr(v)


def compile_kernel(fn, signature, constexprs, attrs, options, arch):
    """Compiled for the target (cached by content); Triton's refusal as one line with its Python line."""
    triton, _ = triton_modules()
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    arch = arch or DEFAULT_ARCH
    cap = capability(arch)
    opts = dict(options.__dict__)
    key_doc = json.dumps({"fn": fn.cache_key, "name": fn.__name__, "signature": signature,
                          "constexprs": sorted((list(k), _plain(v)) for k, v in constexprs.items()),
                          "attrs": sorted((list(k), v) for k, v in attrs.items()),
                          "options": {k: _plain(v) if not isinstance(v, (list, tuple)) else [_plain(x) for x in v]
                                      for k, v in sorted(opts.items())},
                          "cap": cap, "triton": triton.__version__, "format": CACHE_FORMAT}, sort_keys=True,
                         default=repr)
    key = hashlib.sha256(key_doc.encode()).hexdigest()
    got = _read_cache(key)
    if got is not None:
        return Compiled(**got, cached=True)
    src = ASTSource(fn, signature, constexprs, attrs)
    try:
        k = triton.compile(src, target=GPUTarget("cuda", cap, 32), options=opts)
    except triton.compiler.errors.CompilationError as e:
        raise LayoutsimError(refusal(fn, e)) from None
    except Exception as e:     # noqa: BLE001 - Triton's MLIR/LLVM passes raise RuntimeError and others
        raise LayoutsimError(f"Triton cannot compile {fn.__name__} for {arch}: {one_line(str(e), 400)}") from None
    md = k.metadata
    out = Compiled(name=md.name, ptx=k.asm["ptx"], ttgir=k.asm["ttgir"], shared=int(md.shared),
                   num_warps=int(md.num_warps), num_ctas=int(md.num_ctas),
                   global_scratch_size=int(md.global_scratch_size), global_scratch_align=int(md.global_scratch_align),
                   profile_scratch_size=int(md.profile_scratch_size),
                   profile_scratch_align=int(md.profile_scratch_align), signature=dict(signature),
                   constexprs={".".join(map(str, p)): _plain(v) for p, v in constexprs.items()}, arch=arch,
                   triton_version=triton.__version__,
                   tensordesc_meta=[dict(m) if m is not None else None
                                    for m in (getattr(md, "tensordesc_meta", None) or [])])
    _write_cache(key, out)
    return out


def refusal(fn, e):
    """Triton's CompilationError in one line: FILE:LINE: the message (the kernel's Python line)."""
    node = getattr(e, "node", None)
    path, first = _fn_place(fn)
    line = first + node.lineno - 1 if node is not None and hasattr(node, "lineno") else first
    msg = e.error_message or type(e).__name__
    # a nested error (a helper @jit function) names its own line inside; keep the message's first line
    return f"{Path(path).name}:{line}: Triton refuses {fn.__name__}: {one_line(str(msg), 400)}"


def _fn_place(fn):
    from triton.runtime.jit import get_jit_fn_file_line
    try:
        return get_jit_fn_file_line(fn)
    except (OSError, TypeError):
        return "<kernel>", 1


# ---- the cache ---------------------------------------------------------------------------------
def _cache_file(key):
    root = Path(os.environ.get("LAYOUTSIM_CACHE") or Path.home() / ".cache" / "layoutsim")
    return root / "triton" / f"{key}.json"


def _read_cache(key):
    f = _cache_file(key)
    try:
        if f.is_symlink() or not f.is_file():
            return None
        got = json.loads(read_regular(f, "Triton compile cache", 1 << 28))
    except (OSError, ValueError, UnicodeDecodeError, LayoutsimError):
        return None
    if not isinstance(got, dict) or got.get("format") != CACHE_FORMAT or got.get("key") != key:
        return None
    body = got.get("compiled")
    fields = set(Compiled.__dataclass_fields__) - {"cached"}
    if not isinstance(body, dict) or set(body) != fields:
        return None
    return body


def _write_cache(key, compiled):
    """Best effort: a cache that cannot be written costs the next run a compile, nothing more."""
    f = _cache_file(key)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(f, json.dumps({"format": CACHE_FORMAT, "key": key, "compiled": compiled.to_json()}).encode(),
                     "Triton compile cache")
    except (OSError, LayoutsimError):
        pass
