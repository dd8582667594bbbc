"""FILE.py:KERNEL -> the kernel object, importing FILE.py as a module (not as __main__, so its
`if __name__ == "__main__":` block does not run). Loading a file runs its top-level code: it is
the user's own file, as `python FILE.py` would run it."""
import importlib.util
import sys
from pathlib import Path

from ..errors import LayoutsimError, suggest
from .compile import triton_modules


def split(spec):
    """'path/k.py:add_kernel' -> (path, name)."""
    path, sep, name = str(spec).rpartition(":")
    if not sep or not path.endswith(".py") or not name.isidentifier():
        raise LayoutsimError(f"{spec!r}: give FILE.py:KERNEL, e.g. kernels.py:add_kernel")
    return path, name


def kernels_of(module):
    """Names of the Triton kernels (jit, autotune, heuristics) a module defines."""
    triton, _ = triton_modules()
    from triton.runtime.jit import KernelInterface
    return sorted(k for k, v in vars(module).items() if isinstance(v, KernelInterface))


def load(spec):
    """The kernel FILE.py:KERNEL names."""
    triton_modules()
    path, name = split(spec)
    p = Path(path)
    if not p.is_file():
        raise LayoutsimError(f"{path}: no such file")
    mod_name = "layoutsim_user_" + "".join(c if c.isalnum() else "_" for c in p.stem)
    loader = importlib.util.spec_from_file_location(mod_name, p.resolve())
    module = importlib.util.module_from_spec(loader)
    sys.modules[mod_name] = module
    folder = str(p.resolve().parent)
    sys.path.insert(0, folder)                 # its own imports of modules beside it, as python FILE.py
    try:
        loader.loader.exec_module(module)
    except Exception as e:                     # noqa: BLE001 - the user's file: its error in one line
        sys.modules.pop(mod_name, None)
        raise LayoutsimError(f"{path}: importing it failed: {type(e).__name__}: {e}".splitlines()[0]) from None
    finally:
        if sys.path and sys.path[0] == folder:
            sys.path.pop(0)
    found = kernels_of(module)
    if name not in found:
        raise LayoutsimError(f"{path}: no Triton kernel {name!r}{suggest(name, found)}; its kernels: "
                             f"{', '.join(found) or 'none'}")
    return getattr(module, name)
