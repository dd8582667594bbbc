"""Triton kernels from packages on PyPI, loaded from their wheel without importing the package.

The packages (liger-kernel, ...) import torch at module level; their @triton.jit functions do
not need it. `functions(wheel, member)` reads one module of the wheel and executes only:
  * its top-level imports of `triton...` (inside `if`/`try` blocks: the first branch, which is
    the CUDA path these packages take on Triton 3.x, e.g. liger's `from
    triton.language.extra.libdevice import rsqrt`);
  * its top-level assignments whose value is a literal or a `tl.constexpr(...)` of one;
  * its @triton.jit function definitions, at their own line numbers, with their other decorators
    left out: a package's launch wrappers (flag_gems' @libentry, a caching launcher) and
    @triton.autotune / @heuristics (a case names the config it runs: its meta-parameters and
    num_warps), so the kernel is the @triton.jit function, compiled with the package's own
    `do_not_specialize`.
A name the kernels use that is none of these makes Triton's compile fail naming it, so nothing
is silently different from the package. The source is registered under a virtual file name
(`liger_kernel/ops/rms_norm.py`), the name Triton writes into the PTX's line table, so the PTX is
the same on every machine. Which wheel a kernel came from is recorded in each case (WHEELS).
"""
import ast
import linecache
import zipfile
from pathlib import Path

WHEELS = {"liger-kernel": "liger_kernel-0.8.5-py3-none-any.whl", "flag-gems": "flag_gems-5.0.2-py3-none-any.whl",
          "fla-core": "fla_core-0.6.0-py3-none-any.whl"}
LICENCES = {"liger-kernel": ("liger_kernel-0.8.5.dist-info/licenses/LICENSE",
                             "liger_kernel-0.8.5.dist-info/licenses/NOTICE"),
            "flag-gems": ("flag_gems-5.0.2.dist-info/LICENSE",),
            "fla-core": ("fla_core-0.6.0.dist-info/licenses/LICENSE",)}


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


def _is_jit(node):
    return any(_jit_decorator(d) for d in node.decorator_list)


def _keep(body):
    out = []
    for node in body:
        if _is_triton_import(node):
            out.append(node)
        elif isinstance(node, ast.If):
            out.extend(_keep(node.body))
        elif isinstance(node, ast.Try):
            out.extend(_keep(node.body))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _constant(node):
            out.append(node)
        elif isinstance(node, ast.FunctionDef) and _is_jit(node):
            node.decorator_list = [d for d in node.decorator_list if _jit_decorator(d)]
            out.append(node)
    return out


def functions(source, virtual_name, module_name):
    """{name: object} of the kept statements of `source` executed as module `module_name`."""
    tree = ast.parse(source, virtual_name)
    kept = ast.Module(body=_keep(tree.body), type_ignores=[])
    lines = source.splitlines(True)
    linecache.cache[virtual_name] = (len(source), None, lines, virtual_name)   # mtime None: kept
    ns = {"__name__": module_name, "__file__": virtual_name}
    exec(compile(kept, virtual_name, "exec"), ns)
    return ns


def load(package, member, folder):
    """The namespace of one module of a package's wheel (see the module docstring)."""
    src = read_member(wheel_path(package, folder), member)
    return functions(src, member, member[:-3].replace("/", "."))


def local(path, virtual_name):
    """The same loading for a kernels file of this repository (its own virtual name)."""
    return functions(Path(path).read_text(), virtual_name, virtual_name[:-3].replace("/", "."))
