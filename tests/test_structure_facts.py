"""A floor for machine facts (issue 23): compile targets and their suffixes are spelt only in
layoutsim/archs.py, and SASS (opcode tables, the patterns that find SASS in a listing, the listing
parsers) is defined only in layoutsim/sass.py. The checks read the Python sources of layoutsim/ and
gpu_check/ as syntax trees: string constants and f-strings in code, not docstrings, comments or
data files, so prose may still name sm_90a or LDSM.16.M88.4."""
import ast
import re
from pathlib import Path

import pytest

from layoutsim import sass as SASS

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for d in ("layoutsim", "gpu_check") for p in (ROOT / d).rglob("*.py"))
SUFFIXED = re.compile(r"\bsm_?\d+[af]\b")
OPCODE_NAMES = tuple(SASS.OPCODES) + ("HMMA", "IMMA", "DMMA", "HGMMA", "MUFU", SASS.TRANSPOSE)
SPELLING = re.compile(r"^(" + "|".join(sorted(OPCODE_NAMES, key=len, reverse=True)) + r")(\.[A-Z0-9_]+)*$")
OPCODE_WORD = re.compile(r"\b(" + "|".join(OPCODE_NAMES) + r")\b")
REGEX_SYNTAX = re.compile(r"\\[.bswdS]|\||\(\?")
# an f-string that appends modifiers to a memory or matrix opcode: f"LDGSTS.{bits}", f"LDSM.16.{kind}"
BUILT = re.compile(r"\b(" + "|".join(SASS.OPCODES) + r")(\.\w+)*\.\{\}")
LISTING_MARKS = re.compile(r"Function\s*(\\s\*)?:|\\\.text\\\.|//## File")


def _docstrings(tree):
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body \
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant):
            out.add(id(n.body[0].value))
    return out


def _code_strings(path):
    """(line, text, node) of every string constant in code and of every f-string (its formatted
    values as {}), docstrings left out."""
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            yield n.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in n.values), n
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs and id(n) not in inner:
            yield n.lineno, n.value, n


def _where(path, line):
    return f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line}"


def suffixed_targets(path):
    """Code strings that spell an arch- or family-specific target: "sm_90a", f"sm_{n}a", or a
    pattern for them (r"sm_(\\d+)([af]?)")."""
    return [_where(path, line) for line, text, node in _code_strings(path)
            if SUFFIXED.search(text) or (isinstance(node, ast.JoinedStr) and re.search(r"sm_\{\}[af]\b", text))
            or ("sm_" in text and re.search(r"\[af\]|\[fa\]|\{[A-Z_]*SUFFIX\}", text))]


def sass_definitions(path):
    """What defines SASS outside layoutsim/sass.py: a regex over opcodes or over a listing's
    layout, a table (dict, tuple, list, set) of two or more SASS spellings, an f-string that builds
    one (f"LDSM.16.{...}")."""
    found = []
    tree = ast.parse(path.read_text())
    for line, text, node in _code_strings(path):
        if OPCODE_WORD.search(text) and REGEX_SYNTAX.search(text) or LISTING_MARKS.search(text):
            found.append(f"{_where(path, line)}: pattern {text[:60]!r}")
        elif isinstance(node, ast.JoinedStr) and (BUILT.search(text) or any(
                isinstance(c, ast.Constant) and isinstance(c.value, str) and (SPELLING.match(c.value) or c.value in
                                                                              ("M88", "MT88"))
                for v in node.values if isinstance(v, ast.FormattedValue) for c in ast.walk(v))):
            found.append(f"{_where(path, line)}: spelling built {text[:60]!r}")
    for n in ast.walk(tree):
        items = (n.keys + n.values) if isinstance(n, ast.Dict) else \
            n.elts if isinstance(n, (ast.Tuple, ast.List, ast.Set)) else []
        spelt = [x.value for x in items if isinstance(x, ast.Constant) and isinstance(x.value, str)
                 and SPELLING.match(x.value)]
        if len(spelt) >= 2:
            found.append(f"{_where(path, n.lineno)}: table {spelt[:4]}")
    return found


def test_the_scan_reads_every_source():
    names = {p.relative_to(ROOT).as_posix() for p in SOURCES}
    assert {"layoutsim/archs.py", "layoutsim/sass.py", "layoutsim/banks/ops.py", "gpu_check/build.py"} <= names


def test_suffixed_targets_are_spelt_only_in_archs():
    found = [w for p in SOURCES if p.relative_to(ROOT).as_posix() != "layoutsim/archs.py" for w in suffixed_targets(p)]
    assert found == [], "ask layoutsim/archs.py (ARCH_SPECIFIC, target_of_device, compile_target) instead"


def test_archs_spells_the_arch_specific_target():
    # the scan finds what it looks for: archs.py itself spells sm_90a
    assert suffixed_targets(ROOT / "layoutsim" / "archs.py")


def test_sass_is_defined_only_in_the_sass_module():
    found = [w for p in SOURCES if p.relative_to(ROOT).as_posix() != "layoutsim/sass.py" for w in sass_definitions(p)]
    assert found == [], "use layoutsim/sass.py (OPCODES, shared, matrix, width, the patterns, the parsers)"


def test_the_sass_scan_finds_the_sass_module_definitions():
    found = "\n".join(sass_definitions(ROOT / "layoutsim" / "sass.py"))
    for what in ("pattern '^(LDS|STS)", "pattern '\\\\b((?:LDS|STS|LDSM|STSM)", "spelling built", "pattern 'Function"):
        assert what in found, what


@pytest.mark.parametrize("source, found", [
    ('X = {"ld": "LDS.64", "st": "STS.64"}\n', "table"),
    ('P = re.compile(r"^(LDSM|STSM)\\.16")\n', "pattern"),
    ('def f(n):\n    return f"LDSM.16.M88.{n}"\n', "spelling built"),
    ('def f(t, n):\n    return f"{\'LDSM\' if t else \'STSM\'}.16.{n}"\n', "spelling built"),
    ('def f(n):\n    return f"{n} of MUFU.{n}"\n', None),
    ('F = re.compile(r"Function : (\\w+)")\n', "pattern"),
    ('MSG = "also SASS LDS.128, LDSM.16.M88.4, ..."\n', None),
    ('"""LDSM.16.M88.4 | STS.128 in prose"""\n', None),
])
def test_what_counts_as_a_definition(tmp_path, source, found):
    p = tmp_path / "m.py"
    p.write_text(source)
    got = " ".join(w.split(": ", 1)[1] for w in sass_definitions(p))
    assert (found in got) if found else got == ""
