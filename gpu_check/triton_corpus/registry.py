"""Triton kernels from packages on PyPI, loaded from their wheel without importing the package.

The packages (liger-kernel, ...) import torch at module level; their @triton.jit functions do
not need it. `functions(wheel, member)` reads one module of the wheel and executes only:
  * its top-level imports of `triton...` (one naming a module this Triton lacks, as
    flash-attn-triton's `import triton.tools.experimental_descriptor`, is left out; a kernel
    using it fails to compile naming it) (inside `if`/`try` blocks: the first branch, which is
    the CUDA path these packages take on Triton 3.x, e.g. liger's `from
    triton.language.extra.libdevice import rsqrt`; an `if` on environment variables alone, as
    fla's `if os.environ.get('FLA_USE_FAST_OPS', '0') == '1'`, takes the branch it takes with
    them unset, the package's default, and one on `hasattr(triton.language, ...)` the branch
    this Triton takes);
  * its top-level assignments whose value is a literal or a `tl.constexpr(...)` of one, or an
    attribute of a name a Triton import bound (flag_gems' `uint_to_uniform_float =
    tl.uint_to_uniform_float`);
  * its imports from its own package (`from flag_gems.utils import triton_lang_extension as tle`,
    `from .utils import element_mul_kernel`): the named module of the same wheel is loaded by these
    same rules (once) and bound as a module, or the named object is taken from it where it was kept
    (a @triton.jit helper or a constant), otherwise left unbound;
  * its @triton.jit function definitions, at their own line numbers, with their other decorators
    left out: a package's launch wrappers (flag_gems' @libentry, a caching launcher) and
    @triton.autotune / @heuristics (a case names the config it runs: its meta-parameters and
    num_warps), so the kernel is the @triton.jit function, compiled with the package's own
    `do_not_specialize` (its `launch_metadata=`, a host-side profiling hook, is left out).
A kept statement that reads a name none of these bound (a @triton.jit decorator whose
`do_not_specialize` asks the device, as fla's `chunk_bwd_kernel_dh`) is left out too. A name the
kernels use that is none of these makes Triton's compile fail naming it, so nothing is silently
different from the package. The source is registered under a virtual file name
(`liger_kernel/ops/rms_norm.py`), the name Triton writes into the PTX's line table, so the PTX is
the same on every machine. Which wheel a kernel came from is recorded in each case (WHEELS).
tutorials.py loads the files of Triton's own tutorials by these same rules (`functions`).
"""
import ast
import linecache
import types
import zipfile
from pathlib import Path

WHEELS = {"liger-kernel": "liger_kernel-0.8.5-py3-none-any.whl", "flag-gems": "flag_gems-5.0.2-py3-none-any.whl",
          "fla-core": "fla_core-0.6.0-py3-none-any.whl",
          "flash-attn-triton": "flash_attn_triton-0.1.1-py3-none-any.whl"}
LICENCES = {"liger-kernel": ("liger_kernel-0.8.5.dist-info/licenses/LICENSE",
                             "liger_kernel-0.8.5.dist-info/licenses/NOTICE"),
            "flag-gems": ("flag_gems-5.0.2.dist-info/LICENSE",),
            "fla-core": ("fla_core-0.6.0.dist-info/licenses/LICENSE",),
            "flash-attn-triton": ("flash_attn_triton-0.1.1.dist-info/licenses/LICENSE",)}


def wheel_path(package, folder):
    p = Path(folder) / WHEELS[package]
    if not p.is_file():
        raise FileNotFoundError(f"{p}: missing; pip download --no-deps {package}=={WHEELS[package].split('-')[1]} "
                                f"-d {folder}")
    return p


def read_member(wheel, member):
    with zipfile.ZipFile(wheel) as z:
        return z.read(member).decode("utf-8")


def _is_triton_import(node):
    if isinstance(node, ast.Import):
        return all(a.name.split(".")[0] == "triton" for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] == "triton" and node.level == 0
    return False


def _constant(node):
    v = node.value
    if isinstance(v, ast.Constant):
        return True
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "constexpr" \
            and len(v.args) == 1 and not v.keywords and isinstance(v.args[0], (ast.Constant, ast.UnaryOp)):
        return True
    return isinstance(v, ast.UnaryOp) and isinstance(v.operand, ast.Constant)


def _jit_decorator(d):
    f = d.func if isinstance(d, ast.Call) else d
    return isinstance(f, ast.Attribute) and f.attr == "jit" and isinstance(f.value, ast.Name) and f.value.id == "triton"


def _without_launch_hooks(d):
    """A @triton.jit(...) decorator without `launch_metadata=` (a host-side hook that names what a
    profiler records for a launch, as the persistent-matmul tutorial's `_matmul_launch_metadata`; it
    changes nothing Triton compiles)."""
    if isinstance(d, ast.Call):
        d.keywords = [k for k in d.keywords if k.arg != "launch_metadata"]
    return d


def _is_jit(node):
    return any(_jit_decorator(d) for d in node.decorator_list)


_NO_ENVIRONMENT = types.SimpleNamespace(environ={}, getenv=lambda key, default=None: default)


def _static_test(test, imports):
    """The value of an `if` test that reads only environment variables (os.environ/os.getenv) and
    `hasattr` of what the Triton imports so far bound, with no environment variable set; None for
    any other test."""
    names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    bound = set().union(*(_bound(i) for i in imports)) if imports else set()
    if not names or not names <= {"os", "hasattr"} | bound:
        return None
    ns = {"__builtins__": {"hasattr": hasattr, "__import__": __import__, "ModuleNotFoundError": ModuleNotFoundError},
          "os": _NO_ENVIRONMENT}
    try:
        exec(compile(ast.fix_missing_locations(ast.Module(body=[_unless_missing(i) for i in imports],
                                                          type_ignores=[])), "<imports>", "exec"), ns)
        return bool(eval(compile(ast.Expression(test), "<if>", "eval"), ns))
    except Exception:                          # anything else: no decision
        return None


def _unless_missing(node):
    """`try: <import> except ModuleNotFoundError: pass`, at the import's line."""
    t = ast.Try(body=[node], handlers=[ast.ExceptHandler(type=ast.Name("ModuleNotFoundError", ast.Load()), name=None,
                                                         body=[ast.Pass()])], orelse=[], finalbody=[])
    return ast.fix_missing_locations(ast.copy_location(t, node))


def _to_names(node):
    """An assignment to plain names only (not `os.environ[...] = ...`)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return all(isinstance(t, ast.Name) for t in targets)


def _bound(node):
    """The names an import statement binds."""
    return {a.asname or a.name.split(".")[0] for a in node.names}


def _triton_attribute(node, imports):
    tnames = set().union(*(_bound(i) for i in imports)) if imports else set()
    v = node.value
    while isinstance(v, ast.Attribute):
        v = v.value
    return v is not node.value and isinstance(v, ast.Name) and v.id in tnames


def _keep(body, own, imports=None):
    """The statements kept (see the module docstring); `own` collects the imports from the package,
    `imports` the Triton imports so far."""
    imports = [] if imports is None else imports
    out = []
    for node in body:
        if _is_triton_import(node):
            imports.append(node)
            out.append(_unless_missing(node))
        elif isinstance(node, ast.ImportFrom):
            own.append(node)
        elif isinstance(node, ast.If):
            out.extend(_keep(node.orelse if _static_test(node.test, imports) is False else node.body, own, imports))
        elif isinstance(node, ast.Try):
            out.extend(_keep(node.body, own, imports))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _to_names(node) \
                and (_constant(node) or _triton_attribute(node, imports)):
            if isinstance(node, ast.AnnAssign) and not _triton_attribute(ast.Expr(node.annotation), imports):
                node = ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)  # `x: Foo = 1`
            out.append(node)
        elif isinstance(node, ast.FunctionDef) and _is_jit(node):
            node.decorator_list = [_without_launch_hooks(d) for d in node.decorator_list if _jit_decorator(d)]
            out.append(node)
    return out


def _absolute(node, module_name, is_package):
    """The dotted module an ImportFrom names, relative ones resolved against `module_name`."""
    if not node.level:
        return node.module
    parts = module_name.split(".")
    parts = parts[:len(parts) - node.level + (1 if is_package else 0)]
    return ".".join(parts + ([node.module] if node.module else []))


def functions(source, virtual_name, module_name, resolve=None):
    """{name: object} of the kept statements of `source` executed as module `module_name`;
    resolve(dotted name) gives another module of the same wheel as such a namespace, or None."""
    tree = ast.parse(source, virtual_name)
    own = []
    kept = ast.Module(body=_keep(tree.body, own), type_ignores=[])
    lines = source.splitlines(True)
    linecache.cache[virtual_name] = (len(source), None, lines, virtual_name)   # mtime None: kept
    ns = {"__name__": module_name, "__file__": virtual_name}
    for node in own if resolve else ():
        base = _absolute(node, module_name, virtual_name.endswith("__init__.py"))
        for a in node.names:
            sub = resolve(f"{base}.{a.name}")
            if sub is not None:
                m = types.ModuleType(f"{base}.{a.name}")
                m.__dict__.update({k: v for k, v in sub.items() if k[:2] != "__"})
                ns[a.asname or a.name] = m
                continue
            mod = resolve(base)
            if mod is not None and a.name in mod:
                ns[a.asname or a.name] = mod[a.name]
    for stmt in kept.body:          # one at a time: a definition whose decorator reads a host-side
        try:                        # name (fla's `do_not_specialize=... if IS_NVIDIA_HOPPER`) is left out
            exec(compile(ast.Module(body=[stmt], type_ignores=[]), virtual_name, "exec"), ns)
        except NameError:
            pass
    return ns


def load(package, member, folder):
    """The namespace of one module of a package's wheel (see the module docstring), with the
    modules of the same wheel it imports from loaded the same way."""
    wheel = wheel_path(package, folder)
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    done = {}

    def resolve(dotted):
        path = dotted.replace(".", "/")
        m = next((c for c in (path + ".py", path + "/__init__.py") if c in names), None)
        if m is None:
            return None
        if m not in done:
            done[m] = {}                            # an import cycle sees the module as far as it got
            done[m].update(functions(read_member(wheel, m), m, dotted, resolve))
        return done[m]

    return resolve(member[:-3].replace("/", "."))


def local(path, virtual_name):
    """The same loading for a kernels file of this repository (its own virtual name)."""
    return functions(Path(path).read_text(), virtual_name, virtual_name[:-3].replace("/", "."))
