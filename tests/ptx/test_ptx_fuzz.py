"""Issue 22: a grammar-aware fuzz of the PTX executor, so that the class of tracebacks on
malformed PTX stays closed. Modules come from a small PTX grammar (directives, an entry with
parameters, .reg/.shared/.global/.const declarations with alignments and initializers,
instructions named as the executor's dispatch tables name them with modifiers its handlers test
for and operands of every kind, labels and branches), then some are mutated as text (tokens
dropped or doubled, huge numbers, odd characters). Each runs through parse, compile and a tiny
launch (1 CTA of 32 threads, 200 steps): it succeeds or raises a LayoutsimError of one line,
never another exception and never the safety net's PtxInternalError (a bug to fix at its cause).

Examples: 5x the suite's hypothesis profile (tests/conftest.py); PTX_FUZZ_EXAMPLES=N runs N.
"""
import json
import os
import re
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import layoutsim.ptx as ptx
from layoutsim.errors import LayoutsimError
from layoutsim.ptx import lowering, types as T
from layoutsim.ptx.table import BY_OPCODE, opcodes
from layoutsim.ptx.internal import PtxInternalError
from layoutsim.ptx.operands import SPECIAL

PTX_DIR = Path(ptx.__file__).parent
KERNELS = Path(__file__).parent / "kernels"

# the opcodes of the instruction table (less the two steps the linker makes for calls)
OPCODES = opcodes()
# every modifier a handler tests for: the short quoted words of the op modules, and the types
_WORDS = set()
for _p in sorted(PTX_DIR.glob("ops_*.py")) + [PTX_DIR / "wmma.py", PTX_DIR / "access.py", PTX_DIR / "table.py"]:
    _WORDS.update(re.findall(r'"([a-z][a-z0-9_:]{0,23})"', _p.read_text()))
MODIFIERS = sorted(_WORDS | set(T.TYPES) | {"sync", "aligned", "m16n8k16", "m16n8k8", "m8n8k4", "row",
                                             "col", "x1", "x2", "x4", "trans", "v2", "v4", "v8"})
REGS = {"%r": "b32", "%rd": "b64", "%f": "f32", "%fd": "f64", "%p": "pred", "%h": "b16"}
N_REGS = 12


def _ours(line):
    """An instruction of a test kernel in this grammar's names: its registers mapped onto REGS
    (%rs -> %h), its labels onto L0..L2, its other symbols onto NAMES."""
    def register(m):
        prefix = {"%rs": "%h"}.get(m.group(1), m.group(1))
        return f"{prefix if prefix in REGS else '%r'}{int(m.group(2)) % N_REGS}"
    line = re.sub(r"(%[a-z]+)(\d+)", register, line)
    line = re.sub(r"\$L__\w+", lambda m: f"L{hash(m.group()) % 3}", line)
    return re.sub(r"\b(?<![%.])([A-Za-z_]\w*_param_\d+|_Z\w+|__\w+)", lambda m: "k_p0", line)


# instructions as nvcc writes them, from the test kernels (full mma/ldmatrix/wgmma spellings and
# operands of the shapes they take), in this grammar's names
_LINES = [m.group(1).strip() for p in sorted(KERNELS.glob("*.ptx"))
          for m in re.finditer(r"^\s*((?:@!?%\w+\s+)?[a-z][\w.:]*\s[^;\n]*;)", p.read_text(), re.M)]
WRITTEN = sorted({_ours(x) for x in _LINES if re.sub(r"^@!?%\w+\s+", "", x).split(".")[0].split()[0] in BY_OPCODE})
SEEN = sorted({re.sub(r"^@!?%\w+\s+", "", x).split()[0] for x in WRITTEN})
NAMES = ["g", "c", "s", "k_p0", "k_p1", "L0", "L1", "L2", "nowhere"]
ODD = ["\x00", "\x7f", "\u00e9", "\u2028", "\ud800", "{", "}", "(", ")", "[", "]", ";", ",", '"', "\\",
       "//", "/*", "@", "!", "|", "%", ".", ":", "<", ">", "=", "-", "+"]
HUGE = ["100000000000000000000000", "18446744073709551616", "-9223372036854775809", "0x1" + "0" * 20,
        "99999999999999999999999999999999", "1e400", "0fFFFFFFFFFF", "0d" + "F" * 17, "08", "0b102"]

ints = st.one_of(st.integers(-4, 64), st.sampled_from([255, 1 << 31, (1 << 32) - 1, 1 << 62, -(1 << 63)]),
                 st.sampled_from(HUGE))


def _text(x):
    return x if isinstance(x, str) else str(x)


reg = st.builds(lambda p, i: f"{p}{i}", st.sampled_from(sorted(REGS)), st.integers(0, N_REGS + 2))
scalar = st.one_of(
    reg, reg, reg,
    st.sampled_from(sorted(SPECIAL)[:12] + ["%tid.w", "%laneid", "%clock64"]),
    ints.map(_text),
    st.sampled_from(["0f3F800000", "0f7FC00000", "0d3FF0000000000000", "1.5", "-0.0", "0x10", "0b101", "017"]),
    st.sampled_from(NAMES), st.just("_"), st.just("!%p1"),
    st.sampled_from(["#", "%", "$x", "@", "%r1.x", "a.b.c", "1..2", "--1", "%r<4>"]),
)
address = st.one_of(
    st.builds(lambda b, o: f"[{b}{o}]", st.sampled_from(["%rd1", "%rd2", "%r1", "g", "s", "c", "k_p0", "%f1"]),
              st.one_of(st.just(""), ints.map(lambda v: f"+{v}"), ints.map(lambda v: f"-{v}"))),
    ints.map(lambda v: f"[{v}]"),
    st.sampled_from(["[]", "[%rd1+]", "[+4]", "[%rd1+%rd2]", "[%rd1, {%r1, %r2}]", "[[%rd1]]"]),
)
vector = st.lists(scalar, max_size=9).map(lambda xs: "{" + ", ".join(xs) + "}")
operand = st.one_of(scalar, scalar, scalar, address, vector,
                    st.builds(lambda a, b: f"{a}|{b}", reg, reg),
                    st.lists(scalar, max_size=3).map(lambda xs: "(" + ", ".join(xs) + ")"))

name_of_table = st.builds(lambda op, mods: ".".join([op] + mods), st.sampled_from(OPCODES),
                          st.lists(st.sampled_from(MODIFIERS), max_size=6))
instruction_name = st.one_of(name_of_table, st.sampled_from(SEEN), st.sampled_from(SEEN))


def _split_top(text):
    """Operands split at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()] if cur.strip() else parts


@st.composite
def altered(draw):
    """A line of a test kernel with one thing changed: a modifier dropped, replaced or added, an
    operand dropped, doubled or replaced by one of another kind (what reaches a handler with
    everything right but one)."""
    line = draw(st.sampled_from(WRITTEN)).rstrip(";")
    guard = re.match(r"^(@!?%\w+\s+)?", line).group()
    name, _, rest = line[len(guard):].partition(" ")
    mods, ops_ = name.split("."), _split_top(rest)
    how = draw(st.integers(0, 5))
    if how == 0 and len(mods) > 1:
        del mods[draw(st.integers(1, len(mods) - 1))]
    elif how == 1 and len(mods) > 1:
        mods[draw(st.integers(1, len(mods) - 1))] = draw(st.sampled_from(MODIFIERS))
    elif how == 2:
        mods.insert(draw(st.integers(1, len(mods))), draw(st.sampled_from(MODIFIERS)))
    elif how == 3 and ops_:
        del ops_[draw(st.integers(0, len(ops_) - 1))]
    elif how == 4 and ops_:
        i = draw(st.integers(0, len(ops_) - 1))
        ops_.insert(i, ops_[i])
    elif ops_:
        ops_[draw(st.integers(0, len(ops_) - 1))] = draw(operand)
    return f"{guard}{'.'.join(mods)} {', '.join(ops_)};"


@st.composite
def instruction(draw, clean=False):
    kind = draw(st.integers(0, 9))
    if kind < (6 if clean else 2):                          # a line of a test kernel
        return draw(st.sampled_from(WRITTEN))
    if kind < (9 if clean else 5):                          # one with one thing changed
        return draw(altered())
    name = draw(instruction_name)
    ops_ = draw(st.lists(operand, max_size=6))
    guard = draw(st.sampled_from(["", "", "", "@%p1 ", "@!%p2 ", "@%r1 ", "@%p99 "]))
    if name.startswith("bra") and draw(st.booleans()):
        ops_ = [draw(st.sampled_from(["L0", "L1", "L2", "nowhere"]))]
    return f"{guard}{name} {', '.join(ops_)};"


GOOD_ALIGN = [1, 2, 4, 8, 16, 128]
GOOD_TYPES = ["b8", "b16", "b32", "u32", "s32", "f32", "f64", "b64", "f16"]
align = {True: st.one_of(st.just(""), st.sampled_from(GOOD_ALIGN).map(lambda a: f".align {a} ")),
         False: st.one_of(st.just(""), st.sampled_from(GOOD_ALIGN + [0, 3, -16, "zz", 1 << 40, 1 << 29])
                          .map(lambda a: f".align {a} "))}
vtype = {True: st.sampled_from(GOOD_TYPES), False: st.sampled_from(GOOD_TYPES + ["b128", "pred", "zz"])}
count = {True: st.one_of(st.just(""), st.integers(1, 64).map(lambda n: f"[{n}]")),
         False: st.one_of(st.just(""), st.integers(0, 64).map(lambda n: f"[{n}]"), st.just("[]"),
                          st.sampled_from(["[2][3]", "[4294967297]", "[abc]"]))}
init = st.one_of(st.just(""), st.recursive(ints.map(_text) | st.sampled_from(["0f3F800000", "1.5", "g"]),
                                           lambda kids: st.lists(kids, max_size=4).map(
                                               lambda xs: "{" + ", ".join(xs) + "}"), max_leaves=8)
                 .map(lambda v: f" = {v}"))


@st.composite
def declaration(draw, space, clean):
    name = draw(st.sampled_from(["g", "c", "s", "g2"] if space != "shared" else ["s", "s2", "g"]))
    extern = "" if clean else draw(st.sampled_from(["", "", ".extern ", ".visible "]))
    value = "" if clean and space == "shared" else draw(init)
    return f"{extern}.{space} {draw(align[clean])}.{draw(vtype[clean])} {name}{draw(count[clean])}{value};"


@st.composite
def module(draw):
    """(PTX text, number of pointer parameters of entry k). Half the modules are `clean`: their
    directives and declarations are valid and the text is not mutated, so that their instructions
    reach the handlers (and, when they compile, the launch)."""
    clean = draw(st.booleans())
    head = [".version 8.0", ".target sm_90", ".address_size 64"]
    if not clean and draw(st.integers(0, 2)) == 0:
        head = [draw(st.sampled_from([".version 8.0", ".version", ".version 8", ".version x.y"])),
                draw(st.sampled_from([".target sm_90", ".target sm_80", ".target sm_90a", ".target",
                                      ".target sm_100"])),
                draw(st.sampled_from([".address_size 64", ".address_size 32", ".address_size", ".address_size abc"]))]
    head += draw(st.lists(st.one_of(declaration("global", clean), declaration("const", clean),
                                    declaration("shared", clean)), max_size=3, unique_by=lambda d: d.split("[")[0]))
    n_params = draw(st.integers(0, 2))
    params = [f".param .u64 k_p{i}" for i in range(n_params)]
    params += draw(st.lists(st.sampled_from([".param .b32 k_x"] if clean else [
        ".param .b32 k_x", ".reg .b32 k_r", ".param .align 8 .b8 k_s[16]", ".param .align 3 .b8 k_t[8]",
        ".param .u64 .ptr .global .align 16 k_q", "k_bad"]), max_size=1))
    directive = "" if clean else draw(st.sampled_from(["", "", ".maxntid 128", ".maxntid abc", ".reqntid 32",
                                                       ".reqntid 33", ".maxntid 1, 1, 1", ".maxnreg 32"]))
    regs = [f".reg .{t} {p}<{N_REGS}>;" for p, t in REGS.items()]
    body = regs[:draw(st.integers(0, len(regs)))] if not clean and draw(st.booleans()) else regs
    if n_params:
        body += ["ld.param.u64 %rd1, [k_p0];", "cvta.to.global.u64 %rd2, %rd1;", "mov.u32 %r1, %tid.x;"]
    body += draw(st.lists(declaration("shared", clean).map(lambda d: d.replace(" s", " sb")), max_size=1))
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 9))
        if kind == 0:
            label = f"{draw(st.sampled_from(['L0', 'L1', 'L2']))}:"
            if label not in body or not clean:      # a clean module defines each label once
                body.append(label)
        elif kind == 1:
            body.append(draw(st.sampled_from(["{", "}", "ret;", "exit;", "bar.sync 0;", ".reg .b32 %q<2>;",
                                              ".local .align 8 .b8 l[16];", ".pragma \"nounroll\";",
                                              ".loc 1 2 3", ".maxntid 64"])))
        else:
            body.append(draw(instruction(clean)))
    body.append("ret;")
    text = "\n".join(head) + f"\n.visible .entry k({', '.join(params)}){directive}\n{{\n" + \
        "\n".join("    " + s for s in body) + "\n}\n"
    return (text if clean else draw(mutated(text))), n_params


@st.composite
def mutated(draw, text):
    """text, or text with up to 3 token-level or character-level mutations."""
    for _ in range(draw(st.sampled_from([0, 1, 1, 2, 3]))):
        tokens = re.split(r"(\s+)", text)
        i = draw(st.integers(0, len(tokens) - 1))
        how = draw(st.integers(0, 3))
        if how == 0:
            tokens[i] = ""
        elif how == 1:
            tokens[i] = tokens[i] + " " + tokens[i]
        elif how == 2:
            tokens.insert(i, draw(st.sampled_from(HUGE)))
        else:
            t = tokens[i]
            k = draw(st.integers(0, len(t)))
            tokens[i] = t[:k] + draw(st.sampled_from(ODD)) + t[k:]
        text = "".join(tokens)
    return text


def outcome(text, n_params):
    """'ok', or the one line of the LayoutsimError it ends in (any other exception propagates).
    Without ptxas: the SASS lowering of each text would be a ptxas run (seconds) and a cache entry."""
    args = [np.zeros(64, np.uint32) for _ in range(n_params)]
    if "k_x" in text and ".param .b32 k_x" in text:
        args.append(np.int32(3))
    try:
        with mock.patch.object(lowering, "find_ptxas", lambda: None):
            ptx.run(text, "k", grid=1, block=32, args=args, max_steps=200)
        return "ok"
    except PtxInternalError as e:
        raise AssertionError(f"the safety net caught a bug: {e}\n--- PTX ---\n{text}") from e
    except LayoutsimError as e:
        msg = str(e)
        assert msg.strip() and "\n" not in msg and "\r" not in msg, (msg, text)
        return msg


# 5x the profile's count: a generated module runs in ~30 ms, so the suite's 300 take ~10 s
EXAMPLES = int(os.environ.get("PTX_FUZZ_EXAMPLES", 0)) or 5 * settings().max_examples


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(module())
def test_generated_ptx_runs_or_is_refused_in_one_line(case):
    outcome(*case)


def test_the_grammar_reaches_the_executor():
    """The grammar names what the executor knows: every opcode of its dispatch tables, the
    modifiers its handlers test for, and the full spellings of the test kernels."""
    assert {"add", "mma", "ld", "wgmma", "cp", "shfl", "bra"} <= set(OPCODES)
    assert {"global", "shared", "sync", "aligned", "wide", "rn"} <= set(MODIFIERS)
    assert any(n.startswith("mma.sync.aligned.m16n8k16") for n in SEEN)


def test_a_valid_generated_kernel_runs():
    """The prologue the grammar gives kernels with parameters runs (so the fuzz reaches execution)."""
    regs = "\n".join(f".reg .{t} {p}<{N_REGS}>;" for p, t in REGS.items())
    text = (f".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u64 k_p0)\n{{\n{regs}\n"
            "ld.param.u64 %rd1, [k_p0];\ncvta.to.global.u64 %rd2, %rd1;\nmov.u32 %r1, %tid.x;\n"
            "mul.wide.u32 %rd3, %r1, 4;\nadd.s64 %rd4, %rd2, %rd3;\nst.global.u32 [%rd4], %r1;\nret;\n}\n")
    assert outcome(text, 1) == "ok"


# ---- what the fuzz found (issue 22's campaign, then this test at 2,000-6,000 examples a run) -------
def _module(body, head=""):
    regs = "\n".join(f"    .reg .{t} {p}<{N_REGS}>;" for p, t in REGS.items())
    return (f".version 8.0\n.target sm_90\n.address_size 64\n{head}\n.visible .entry k(.param .u64 k_p0)\n{{\n"
            f"{regs}\n    ld.param.u64 %rd1, [k_p0];\n    cvta.to.global.u64 %rd2, %rd1;\n    {body}\n    ret;\n}}\n")


# (what it raised before, the PTX, what it is now: "ok" or words of the one line), kept as data
FOUND = json.loads((Path(__file__).with_name("fuzz_found.json")).read_text())["cases"]


@pytest.mark.parametrize("body,head,now", [(f["body"], f["head"], f["now"]) for f in FOUND],
                         ids=[f"{f['raised']}: {f['body'][:40]}" for f in FOUND])
def test_what_the_fuzz_found(body, head, now):
    got = outcome(_module(body, head), 1)
    assert (got == "ok") if now == "ok" else (now in got), got


def test_a_global_access_without_any_buffer_faults():
    """A launch with no global buffer at all: the access used to be an IndexError in Heap.check."""
    text = _module("mov.u64 %rd3, 0;\n    st.global.u32 [%rd3], %r1;").replace(
        "(.param .u64 k_p0)", "()").replace("ld.param.u64 %rd1, [k_p0];", "")
    assert "is not in any global buffer (none allocated)" in outcome(text, 0)


def test_a_multi_line_message_comes_out_on_one_line():
    """`.maxntid abc` with the value's next line joined to it quoted a newline."""
    text = _module("").replace("(.param .u64 k_p0)", "(.param .u64 k_p0).maxntid abc\n08")
    assert r"'abc\n08' is not an integer" in outcome(text, 1)


@pytest.mark.parametrize("ins,expect", [("cvt.rm.f64.u64 %fd1, 9007199254740993;", 9007199254740992.0),
                                        ("cvt.rp.f64.s64 %fd1, -9007199254740993;", -9007199254740992.0),
                                        ("add.rp.f64 %fd1, 0d3FF0000000000000, 0d3CA0000000000000;", 1 + 2.0 ** -52),
                                        ("add.rz.f64 %fd1, 0d3FF0000000000000, 0d3CA0000000000000;", 1.0),
                                        ("div.rp.f64 %fd1, 0d3FF0000000000000, 0d4008000000000000;",
                                         0.33333333333333337)])
def test_directed_rounding_of_immediates_is_exact(ins, expect):
    text = _module(f"{ins}\n    st.global.f64 [%rd2], %fd1;")
    with mock.patch.object(lowering, "find_ptxas", lambda: None):
        r = ptx.run(text, "k", grid=1, block=1, args=[np.zeros(1)])
    assert r.buffers[0][0] == expect
