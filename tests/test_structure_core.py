"""One core for warp-collective matrix semantics (issue 23): layoutsim.warpcore is the only place
that moves ldmatrix bytes, maps an MMA's operand words to matrices and reads wgmma descriptor
operands; the simulator's machine and the PTX executor's matrix handlers are adapters over it."""
import ast
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "layoutsim"
ADAPTERS = ["sim/machine.py", "ptx/ops_matrix.py", "ptx/ops_wgmma.py", "ptx/wmma.py", "ptx/ops_tcgen05.py"]

# what only the core may do: pack/unpack words, read FragmentMap tables or the ldmatrix
# addressing lanes, compute descriptor addresses, call the MMA arithmetic
FORBIDDEN = {
    "packing import": re.compile(r"\bpacking\b"),
    "pack/unpack call": re.compile(r"(?<![\w.])(un)?pack\("),
    "FragmentMap table": re.compile(r"\.(table|holders)\b"),
    "ldmatrix addressing lanes": re.compile(r"addressing\.lanes"),
    "descriptor addresses": re.compile(r"\boperand_addresses\("),
    "MMA arithmetic": re.compile(r"from \.\.numerics import mma|numerics\.mma\(|_tiles\("),
}


def _code(path):
    """The module's source without docstrings and comments (they may name what they do not do)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            body[0].value.value = ""
    return "\n".join(line.split("#")[0] for line in ast.unparse(tree).splitlines())


@pytest.mark.parametrize("module", ADAPTERS)
def test_adapters_leave_matrix_semantics_to_the_core(module):
    code = _code(PKG / module)
    found = [f"{what}: {m.group(0)!r}" for what, rx in FORBIDDEN.items() for m in [rx.search(code)] if m]
    assert not found, f"{module} does what only layoutsim/warpcore may: {found}"
    assert "warpcore" in code, f"{module} should run its matrix instructions through layoutsim.warpcore"


def test_the_forbidden_patterns_would_catch_the_old_code():
    old = ("from ..packing import pack, unpack\nw = pack(frag, m)\nx = unpack(frag, w)\n"
           "pos = frag.table[:, reg]\nlanes = np.asarray(cat.addressing.lanes)\n"
           "a = smem.operand_addresses(cat, which, desc, trans)\nfrom ..numerics import mma\n")
    assert all(rx.search(old) for rx in FORBIDDEN.values())
    assert not FORBIDDEN["pack/unpack call"].search("read_words(b, ops, ins); x.unpacked(); np.unpackbits(a)")


def test_the_core_is_vendor_neutral_and_below_sim_and_ptx():
    for path in sorted((PKG / "warpcore").glob("*.py")):
        imports = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]
        for n in imports:
            mod = (n.module or "") if isinstance(n, ast.ImportFrom) else n.names[0].name
            assert not re.match(r"(layoutsim\.)?(sim|ptx|commands|banks)\b", mod.lstrip(".")), \
                f"warpcore/{path.name} imports {mod}: the core sits below the simulator and the executor"
