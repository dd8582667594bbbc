"""The shape of the code (issue 23): the library never imports the command line, its modules
import each other without cycles, the NaN patterns and element widths are written only in
formats.py, and modules stay short. Read from the source (AST and tokens), nothing imported."""
import ast
import functools
import io
import re
import tokenize
from pathlib import Path

import pytest

from layoutsim.formats import FORMATS, canonical_nan, quiet_nan

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("layoutsim", "gpu_check")


def _modules(package):
    """{dotted module name: path} of every .py under a package."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


LAYOUTSIM = _modules("layoutsim")
EVERY = {**LAYOUTSIM, **_modules("gpu_check")}


def _imports(name, path, module_level_only):
    """(line, dotted name) of every import in a module: `import a.b`, `from a import b` (a.b when
    that is a module, else a), relative ones resolved; importlib.import_module("...") too.
    module_level_only: skip the bodies of functions (and of the classes' methods)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if module_level_only and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                found.extend((child.lineno, a.name) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[:len(package.split(".")) - (child.level - 1)]
                    base = ".".join(up + ([child.module] if child.module else []))
                for a in child.names:
                    sub = f"{base}.{a.name}"
                    found.append((child.lineno, sub if sub in EVERY else base))
            elif (isinstance(child, ast.Call) and getattr(child.func, "attr", getattr(child.func, "id", ""))
                  == "import_module" and child.args and isinstance(child.args[0], ast.Constant)
                  and isinstance(child.args[0].value, str) and not child.args[0].value.startswith(".")):
                found.append((child.lineno, child.args[0].value))
            visit(child)

    visit(tree)
    return found


# ---------------------------------------------------------------- the library never imports the CLI
CLI = ("layoutsim.cli", "layoutsim.commands")


def _is_cli(name):
    return any(name == c or name.startswith(c + ".") for c in CLI)


def test_the_import_reader_sees_every_kind_of_import(tmp_path):
    # the checks below are only as good as this reader: relative, absolute, function-level
    text = ("from ..commands._common import header\nimport layoutsim.cli\n"
            "def f():\n    from .. import commands\n    from ..labels import bits_label\n"
            "    importlib.import_module('layoutsim.commands.query')\n")
    path = tmp_path / "fragment.py"
    path.write_text(text)
    every = [n for _, n in _imports("layoutsim.render.fragment", path, module_level_only=False)]
    assert every == ["layoutsim.commands._common", "layoutsim.cli", "layoutsim.commands",
                     "layoutsim.labels", "layoutsim.commands.query"]
    top = [n for _, n in _imports("layoutsim.render.fragment", path, module_level_only=True)]
    assert top == ["layoutsim.commands._common", "layoutsim.cli"]


def test_no_library_module_imports_the_command_line():
    """layoutsim/cli.py and layoutsim/commands/ may import the library, never the reverse: not at
    module level, not inside a function (render/ used to take its labels from commands/_common,
    the numerics scripts their Parser from cli.py)."""
    bad = [f"{path.relative_to(ROOT)}:{line} imports {target}"
           for name, path in LAYOUTSIM.items() if not _is_cli(name)
           for line, target in _imports(name, path, module_level_only=False) if _is_cli(target)]
    assert not bad, "\n".join(bad)
    assert "layoutsim.labels" in LAYOUTSIM and "layoutsim.script" in LAYOUTSIM


# ---------------------------------------------------------------- no import cycle
@functools.lru_cache(maxsize=None)
def _graph(module_level_only=True):
    """Imports among layoutsim's modules: {module: {module it imports: line}}."""
    graph = {}
    for name, path in LAYOUTSIM.items():
        edges = {}
        for line, target in _imports(name, path, module_level_only):
            if target in LAYOUTSIM and target != name:
                edges.setdefault(target, line)
        graph[name] = edges
    return graph


def _cycles(graph, keep=lambda name: True):
    """{one cycle (a tuple of modules, the first repeated last): the modules of its strongly
    connected component} for every component of the modules `keep` accepts (Tarjan's
    algorithm, iterative)."""
    nodes = [n for n in graph if keep(n)]
    index, low, stack, on_stack, comps, counter = {}, {}, [], set(), [], [0]

    def strongconnect(root):
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if not keep(w):
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(set(comp))

    for n in nodes:
        if n not in index:
            strongconnect(n)
    return {_cycle_in(graph, comp): comp for comp in comps}


def _cycle_in(graph, comp):
    """A shortest cycle through the alphabetically first module of a strongly connected set."""
    start = min(comp)
    paths, seen = [[start]], {start}
    while paths:
        nxt = []
        for path in paths:
            for w in sorted(graph[path[-1]]):
                if w == start:
                    return tuple(path + [start])
                if w in comp and w not in seen:
                    seen.add(w)
                    nxt.append(path + [w])
        paths = nxt
    raise AssertionError(f"no cycle through {start}")


def _shown(graph, cycles):
    return "\n".join(f"{len(comp)} modules ({', '.join(sorted(comp))}), for one: " + " -> ".join(
        f"{a} (line {graph[a][b]})" for a, b in zip(c, c[1:])) + f" -> {c[-1]}" for c, comp in cycles.items())


def test_the_cycle_finder_finds_a_cycle_and_only_one():
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {}, "e": {"d": 5}}
    assert _cycles(graph) == {("a", "b", "c", "a"): {"a", "b", "c"}}
    assert _cycles(graph, keep=lambda n: n != "b") == {}
    assert _cycles({"a": {"b": 1}, "b": {}}) == {}
    assert "3 modules (a, b, c), for one: a (line 1) -> b (line 2) -> c (line 3) -> a" == \
        _shown(graph, _cycles(graph))


def _in_ptx(name):
    return name == "layoutsim.ptx" or name.startswith("layoutsim.ptx.")


def test_no_import_cycle_in_layoutsim():
    """layoutsim's modules import each other at module level without a cycle (a module of a
    cycle would run half-initialised, in an order that depends on who imported first)."""
    graph = _graph()
    assert sum(map(len, graph.values())) > 300         # the reader really sees the imports
    assert graph["layoutsim.render.fragment"]["layoutsim.labels"] > 0
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + _shown(graph, cycles)


def test_no_import_cycle_in_ptx_counting_imports_inside_functions():
    """The executor used to hide cycles in imports inside functions (compile <-> ops_* <->
    program, parallel <-> runner); since the instruction table binds the handlers (table.py)
    and the handlers share builders.py, ptx has none, counting those imports."""
    graph = _graph(module_level_only=False)
    cycles = _cycles(graph, keep=_in_ptx)
    assert not cycles, "import cycles:\n" + _shown(graph, cycles)


def test_no_import_cycle_in_layoutsim_counting_imports_inside_functions():
    """Nor anywhere in layoutsim: an import inside a function (a lazy import of numba's code,
    say) may not close a cycle either (isa.amd_mfma <-> isa.registry, numerics.kernel <->
    numerics.vector did: the registry now asks an entry for its modified form, and
    numerics/block.py picks the kernel's path above both)."""
    graph = _graph(module_level_only=False)
    assert graph["layoutsim.numerics.api"]["layoutsim.numerics.block"] > 0      # a function-level import
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + _shown(graph, cycles)


# ---------------------------------------------------------------- NaN patterns and widths
def test_formats_gives_the_nan_patterns():
    assert [canonical_nan(f) for f in ("f32", "f16", "bf16", "e4m3", "e4m3fnuz")] == \
        [0x7FFFFFFF, 0x7FFF, 0x7FFF, 0x7F, 0x80]
    assert [quiet_nan(f) for f in ("f32", "f16", "bf16", "f64")] == \
        [0x7FC00000, 0x7E00, 0x7FC0, 0x7FF8000000000000]
    assert quiet_nan("f64", sign=1) == 0xFFF8000000000000 and quiet_nan("f32", 1) == 0xFFC00000
    assert canonical_nan("tf32") == 0x7FFFE000                    # tf32's fields sit in the top 19 bits
    from layoutsim.errors import LayoutsimError
    for bad in ("e2m1", "s8"):
        with pytest.raises(LayoutsimError, match="has no NaN"):
            canonical_nan(bad)
    with pytest.raises(LayoutsimError, match="e4m3 has no quiet NaN"):
        quiet_nan("e4m3")
    # what formats.encode writes for a NaN is the quiet NaN
    import numpy as np
    from layoutsim.formats import encode
    assert [int(encode(f, np.array([np.nan]))[0]) for f in ("f32", "f16", "bf16")] == \
        [quiet_nan(f) for f in ("f32", "f16", "bf16")]


# the patterns formats.py gives: the negative quiet NaNs of f32/f16/bf16 are left out, as the
# NaN payloads AMD's hardware returned (profiles' nan_payloads: 0xFFC00000 beside 0xFFC00A3D)
# are measurements, written as read
NAN_PATTERNS = {canonical_nan(f) for f in ("f32", "f16", "bf16")} | \
    {quiet_nan(f) for f in ("f32", "f16", "bf16", "f64")} | {quiet_nan("f64", sign=1)}


def _sources():
    return [path for name, path in EVERY.items() if name != "layoutsim.formats"]


def _nan_literals(text):
    """(line, literal) of each NaN pattern written as a number on a line that speaks of NaN
    (a name or string containing 'nan' or 'canon'): 0x7FFF as the magnitude mask of f16 is
    not a NaN, `nan_f16 = 0x7FFF` is."""
    out, line = [], []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.NEWLINE:
            nan = any(re.search("nan|canon", t.string, re.I) for t in line
                      if t.type in (tokenize.NAME, tokenize.STRING))
            out += [(t.start[0], t.string) for t in line if nan and t.type == tokenize.NUMBER
                    and _int(t.string) in NAN_PATTERNS]
            line = []
        elif tok.type not in (tokenize.COMMENT, tokenize.NL):
            line.append(tok)
    return out


def _int(text):
    try:
        return int(text, 0)
    except ValueError:
        return None


def test_the_nan_finder_tells_a_nan_from_a_mask():
    text = ("NAN = np.int64(0x7FFFFFFF)\nmag = b & 0x7FFFFFFF  # not a NaN\n"
            'alt = {"nan_f16": [0x7FFF, 0x7E00]}\n"""docs: the NaN 0x7fffffff"""\nq = 0x7fc00000 + nan\n')
    assert _nan_literals(text) == [(1, "0x7FFFFFFF"), (3, "0x7FFF"), (3, "0x7E00"), (5, "0x7fc00000")]


def test_nan_patterns_are_written_only_in_formats():
    """The canonical NaN (0x7FFFFFFF, 0x7FFF) and the quiet NaN (0x7FC00000, 0x7E00,
    0x7FF8000000000000 and their negatives) as numbers only in layoutsim/formats.py; profiles,
    the CDNA and SFU models, the case candidates and the executor ask formats for them."""
    bad = [f"{p.relative_to(ROOT)}:{line}: {lit}" for p in _sources()
           for line, lit in _nan_literals(p.read_text())]
    assert not bad, "\n".join(bad)


def _width_tables(text, where):
    """Dict literals mapping two or more format names to their widths (in bits or bytes)."""
    out = []
    for node in ast.walk(ast.parse(text, where)):
        if not isinstance(node, ast.Dict):
            continue
        pairs = [(k.value, v.value) for k, v in zip(node.keys, node.values)
                 if isinstance(k, ast.Constant) and k.value in FORMATS
                 and isinstance(v, ast.Constant) and type(v.value) is int]
        if len(pairs) >= 2 and (all(v == FORMATS[k].bits for k, v in pairs)
                                or all(8 * v == FORMATS[k].bits for k, v in pairs)):
            out.append((node.lineno, dict(pairs)))
    return out


def test_the_width_finder_tells_a_width_table_from_another_table():
    assert _width_tables('BITS = {"f16": 16, "bf16": 16, "tf32": 32}', "x") == \
        [(1, {"f16": 16, "bf16": 16, "tf32": 32})]
    assert _width_tables('B = {"b8": 1, "u16": 2, "f32": 4}', "x") == [(1, {"b8": 1, "f32": 4})]
    # wgmma's K per type is not a width (tf32: K 8)
    assert _width_tables('K_OF = {"f16": 16, "bf16": 16, "tf32": 8}', "x") == []


def test_element_widths_are_written_only_in_formats():
    """No table restates the formats' widths (wmma's ELEM_BITS, access.TYPE_BYTES, the AMD width
    suffixes of memory/ops read them from formats.py or from access)."""
    bad = [f"{p.relative_to(ROOT)}:{line}: {table}" for p in _sources()
           for line, table in _width_tables(p.read_text(), str(p))]
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------- short modules
def _lengths():
    return {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in EVERY.values()}


def test_no_module_over_600_lines():
    """Issue 23's rule (CONTRIBUTING): no module of layoutsim/ or gpu_check/ over 600 lines."""
    lengths = _lengths()
    assert len(lengths) > 200
    assert {p: n for p, n in lengths.items() if n > 600} == {}
