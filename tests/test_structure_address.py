"""The address layer is a floor (issue 23): expressions, swizzles and tiles live in
layoutsim/address, which builds on nothing above it, and the bank model is no longer everyone's
floor. Read from the source (every import statement, also those inside functions), not from
what happens to be imported at run time.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "layoutsim"

# What sim/ and ptx/ may take from banks: the bank costs of the accesses they execute, and the
# spelling of a per-lane access (banks/ops.py access_name, the access-name table of issue 23).
BANK_COSTS = {"analyze", "wavefronts", "wavefronts_batch", "ideal_batch", "BANKS", "access_name"}


def _package_of(path, root):
    """'layoutsim.smem' for layoutsim/smem/x.py and for layoutsim/smem/__init__.py."""
    return ".".join(path.relative_to(root).parent.parts)


def imports(path, root=None):
    """[(module, name or None, line)] of every import in the file: `import a.b` gives ('a.b',
    None); `from a import b` gives ('a', None), ('a', 'b') and, since b may be a submodule,
    ('a.b', None)."""
    root = root or ROOT
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(path, root).split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            out.append((module, None, node.lineno))
            out += [(module, a.name, node.lineno) for a in node.names]
            out += [(f"{module}.{a.name}", None, node.lineno) for a in node.names]
    return out


def _files(package):
    files = sorted((PKG / package).rglob("*.py"))
    assert files, f"layoutsim/{package} has no modules"
    return files


def _hits(package, forbidden):
    hits = []
    for f in _files(package):
        for module, name, line in imports(f):
            if name is None and any(module == p or module.startswith(p + ".") for p in forbidden):
                hits.append(f"{f.relative_to(ROOT)}:{line} imports {module}")
    return sorted(set(hits))


def test_the_import_walk_sees_relative_and_nested_imports(tmp_path):
    # the checker itself: imports inside functions are found, relative ones resolved
    pkg = tmp_path / "layoutsim" / "smem"
    pkg.mkdir(parents=True)
    f = pkg / "x.py"
    f.write_text("import numpy\ndef f():\n    from ..banks.model import BANKS\n    from .. import banks\n"
                 "    from .descriptor import Descriptor\n")
    found = {(m, n) for m, n, _ in imports(f, tmp_path)}
    assert ("layoutsim.banks.model", None) in found and ("layoutsim.banks", None) in found
    assert ("layoutsim.banks.model", "BANKS") in found and ("layoutsim.smem.descriptor", None) in found
    assert ("numpy", None) in found and not any(m.startswith("layoutsim.smem.banks") for m, _ in found)


@pytest.mark.parametrize("package", ["smem", "memory", "address"])
def test_smem_memory_and_address_import_nothing_from_banks(package):
    assert _hits(package, ["layoutsim.banks"]) == []


def test_address_builds_on_no_model_above_it():
    above = [f"layoutsim.{p}" for p in ("banks", "memory", "smem", "sim", "ptx", "render", "commands")]
    assert _hits("address", above) == []


def test_the_address_names_live_in_address_only():
    # no second home: banks/address.py is gone, and banks re-exports the address names
    # (its documented public API) rather than defining them
    assert not (PKG / "banks" / "address.py").exists()
    from layoutsim import address, banks
    for name in ("Tile", "Swizzle", "XorSwizzle", "Expr", "lane_offsets", "parse_swizzle", "fill_offsets"):
        assert getattr(banks, name) is getattr(address, name), name
    from layoutsim.smem import swizzle
    assert swizzle.Swizzle is address.Swizzle


@pytest.mark.parametrize("package", ["sim", "ptx"])
def test_sim_and_ptx_take_only_bank_costs_from_banks(package):
    taken = []
    for f in _files(package):
        tree = ast.parse(f.read_text(), str(f))
        bound = set()                      # names bound to the banks package itself
        for module, name, line in imports(f):
            if name is not None and (module == "layoutsim.banks" or module.startswith("layoutsim.banks.")):
                taken.append((f.relative_to(ROOT), name, line))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level and any(a.name == "banks" for a in node.names):
                bound |= {a.asname or a.name for a in node.names if a.name == "banks"}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
                taken.append((f.relative_to(ROOT), node.attr, node.lineno))
    assert [t for t in taken if t[1] not in BANK_COSTS] == []
