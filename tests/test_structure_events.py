"""Handlers compute; observers account (issue 23). Read from the source (AST), nothing imported:
  * no handler module of the executor (layoutsim/ptx/ops_*.py, wmma.py) imports the cost model,
    the race checker, the initcheck or the samples, or reaches them through the batch
    (`bt.costs`, `bt.race`, `bt.init`): it emits on `bt.events`;
  * outside the runner, the bus and the observers themselves, no module of layoutsim/ptx imports
    the race checker or the initcheck;
  * the per-lane access names (width -> `b8`, `b16`, `b32`, `v2.b32`, `v4.b32`) are one table,
    layoutsim/access.py's WIDTH_NAME, and no model parses a spelling back for its width."""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PTX = ROOT / "layoutsim" / "ptx"
HANDLERS = sorted(PTX.glob("ops_*.py")) + [PTX / "wmma.py"]
OBSERVERS = {"costs", "costs_wmma", "racecheck", "initcheck", "samples"}
BATCH_OBSERVERS = {"costs", "race", "init"}
ALLOWED = {"runner", "parallel", "events", "report"} | OBSERVERS   # report formats their records


def _imported(path):
    """The ptx module names a module imports (`from .costs import X`, `from . import costs`,
    `import layoutsim.ptx.costs`), anywhere in it (function bodies too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 1 or mod.startswith("layoutsim.ptx"):
                tail = mod.rpartition(".")[2] if mod else ""
                out |= {tail} if tail else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name.rpartition(".")[2] for a in node.names if a.name.startswith("layoutsim.ptx.")}
    return out


def _batch_attributes(source, name="bt"):
    """(line, attribute) of every `bt.<attr>` in a source text."""
    return [(n.lineno, n.attr) for n in ast.walk(ast.parse(source))
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == name]


@pytest.mark.parametrize("path", HANDLERS, ids=[p.name for p in HANDLERS])
def test_handlers_do_not_import_the_observers(path):
    assert not (_imported(path) & OBSERVERS), f"{path.name} imports {sorted(_imported(path) & OBSERVERS)}"


@pytest.mark.parametrize("path", HANDLERS, ids=[p.name for p in HANDLERS])
def test_handlers_do_not_reach_the_observers_through_the_batch(path):
    bad = [(line, a) for line, a in _batch_attributes(path.read_text()) if a in BATCH_OBSERVERS]
    assert not bad, f"{path.name}: bt.{bad[0][1]} at line {bad[0][0]}: emit on bt.events instead"


def test_the_memory_handlers_emit_on_the_bus():
    for name in ("ops_mem.py", "ops_async.py", "ops_matrix.py", "ops_wgmma.py"):
        assert "events" in {a for _, a in _batch_attributes((PTX / name).read_text())}, name


def test_only_the_runner_and_the_observers_import_the_checkers():
    for path in sorted(PTX.glob("*.py")):
        if path.stem in ALLOWED:
            continue
        found = _imported(path) & {"racecheck", "initcheck", "costs", "costs_wmma"}
        assert not found, f"{path.name} imports {sorted(found)}"


def test_the_checks_would_see_a_handler_that_calls_an_observer():
    src = "def fn(bt, g, full):\n    if bt.race is not None:\n        bt.race.access('ld', 0, f, 4, t)\n"
    assert (2, "race") in _batch_attributes(src)


# ---- the one access-name table ------------------------------------------------------------------
WIDTH_NAMES = re.compile(r"^(v[248]\.)?[bsu](8|16|32|64|128)$")


def _width_tables(source):
    """Line numbers of dict literals mapping 3 or more per-lane widths (1, 2, 4, 8, 16) to PTX type
    suffixes ("u8", "b32", "v4.b32"): a copy of access.WIDTH_NAME."""
    out = []
    for n in ast.walk(ast.parse(source)):
        if not isinstance(n, ast.Dict) or len(n.keys) < 3:
            continue
        keys = [k.value for k in n.keys if isinstance(k, ast.Constant)]
        vals = [v.value for v in n.values if isinstance(v, ast.Constant)]
        if (len(keys) == len(n.keys) and set(keys) <= {1, 2, 4, 8, 16} and len(vals) == len(n.values)
                and all(isinstance(v, str) and WIDTH_NAMES.match(v) for v in vals)):
            out.append(n.lineno)
    return out


def test_the_access_names_are_one_table():
    tables = {str(p.relative_to(ROOT)): _width_tables(p.read_text())
              for p in sorted((ROOT / "layoutsim").rglob("*.py"))}
    assert {p for p, t in tables.items() if t} == {"layoutsim/access.py"}


def test_the_table_check_would_see_costs_old_copy():
    assert _width_tables('_WIDTH = {1: "u8", 2: "u16", 4: "b32", 8: "v2.b32", 16: "v4.b32"}') == [1]
    assert _width_tables('_SASS = {1: ".U8", 2: ".U16", 4: "", 8: ".64", 16: ".128"}') == []


def test_no_model_parses_a_width_back_out_of_a_spelling():
    for path in sorted(PTX.glob("*.py")):
        assert 'rsplit(".b"' not in path.read_text(), path.name
