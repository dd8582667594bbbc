"""Bad input, as a new user or an attacker would give it: every case ends quickly, within a 3 GB
address space, with exit code 2 and one line naming the bad value, never a traceback.

The listed cases (issue 14) run in ONE child process under RLIMIT_AS = 3 GB, each through
`layoutsim.cli.main` with its own timer; open-ended classes (ranges, shapes, pairs, swizzles,
expressions, offsets) are explored with hypothesis in this process.
"""
import contextlib
import io
import json
import resource
import subprocess
import sys
import textwrap

from hypothesis import given, strategies as st

from layoutsim.cli import main

MMA = "mma.m16n8k16.f32.f16.f16.f32"
LIMIT_AS = 3 << 30
SECONDS = 20

# (argv, a word the one-line message must contain)
CASES = [
    # ranges are checked before they are expanded
    (["banks", "--op", "ld.shared.b32", "--addr", "lane*4", "--active", "0-100000000"], "100000000"),
    (["render", "--banks", "--op", "ld.shared.b32", "--addr", "lane*4", "--active", "0-100000000"], "100000000"),
    (["render", MMA, "--operand", "A", "--lanes", "0-100000000"], "100000000"),
    (["render", MMA, "--operand", "A", "--rows", "0-100000000"], "100000000"),
    (["render", MMA, "--operand", "A", "--cols", "0-99999999999999999999999"], "out of range"),
    # tiles, padding and the search space are bounded by shared memory, up front
    (["banks", "--op", "ld.shared.b32", "--tile", "4096x4096", "--fill"], "shared memory"),
    (["banks", "--op", "st.shared.v4.b32", "--tile", "100000x100000", "--fill"], "shared memory"),
    (["render", "--banks", "--op", "st.shared.v4.b32", "--tile", "100000x100000", "--fill"], "shared memory"),
    (["banks", "--op", "ds_read_b32", "--arch", "gfx1201", "--tile", "256x160", "--fill"], "LDS"),
    (["swizzle-search", "--tile", "64x64", "--max-pad-bytes", "99999999999999999999"], "--max-pad-bytes"),
    (["swizzle-search", "--tile", "1000x1000"], "shared memory"),
    (["swizzle-search", "--tile", "128x800", "--dtype", "u8", "--read", "ld.shared.u8",
      "--write", "st.shared.u8"], "limit"),
    # the address language: nesting, overflow (int64 would wrap to a wrong answer), huge numbers
    (["banks", "--op", "ld.shared.b32", "--addr=" + "-(" * 300 + "lane" + ")" * 300], "nest"),
    (["banks", "--op", "ld.shared.b32", "--addr=" + "~" * 1500 + "lane"], "nest"),
    (["banks", "--op", "ld.shared.b32", "--addr", "((1<<47)<<17) + lane*4"], "out of range"),
    (["banks", "--op", "ld.shared.b32", "--addr", "lane*4", "--var", "x=" + "9" * 40], "too large"),
    (["banks", "--op", "ld.shared.b32", "--offsets", ",".join(["0"] * 31 + ["9" * 30])], "9999"),
    (["banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--fragment", f"{MMA}:A", "--at", "9" * 25 + ",0"], "--at"),
    (["banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--block", "0," + "9" * 20], "--block"),
    (["banks", "--op", "ld.shared.b32", "--tile", "64x32", "--fill", "--base", "9" * 25], "base"),
    (["banks", "--op", "ld.shared.b32", "--tile", "64x32", "--fill", "--swizzle", "9" * 25 + ",3,3"], "swizzle"),
    (["render", "--banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--layout", "pad=" + "9" * 25,
      "--fragment", f"{MMA}:A"], "pad"),
    (["banks", "--op", "ld.shared.b32", "--tile", "64x32", "--fill", "--swizzle", "xor:1->2->3"], "xor:"),
    (["banks", "--op", "ld.shared.b32", "--tile", "64x32", "--fill", "--swizzle", "xor:" + "9" * 40 + "->1"], "XOR"),
    (["banks", "--op", "ld.shared.b32", "--tile", "64x32", "--fill", "--swizzle", "xor:1->x"], "XOR"),
    # banks --addr/--offsets refuses the tile options it would otherwise ignore
    *[(["banks", "--op", "ld.shared.b32", "--addr", "lane*4", *opt], opt[0])
      for opt in (["--pad", "8"], ["--pitch", "40"], ["--swizzle", "3,3,3"], ["--swizzle-unit", "byte"],
                  ["--base", "16"], ["--fill"], ["--fragment", f"{MMA}:A"], ["--dtype", "nope"],
                  ["--at", "1,2"], ["--stored", "col"], ["--block", "0,0"], ["--index", "1"])],
    (["banks", "--op", "ld.shared.b32", "--tile", "64x32", "--fill", "--at", "1,2"], "--at goes with --fragment"),
    # newlines in the offending text stay escaped on one line
    (["query", "mma\nfoo\rbar"], "\\n"),
    (["banks", "--op", "ld.shared\nb32", "--addr", "lane*4"], "\\n"),
    (["list", "--family", "x\ny"], "\\n"),
    (["query", MMA, "--lane", "1\n2"], "\\n"),
    (["no\nsuch"], "\\n"),
]

_CHILD = textwrap.dedent("""
    import contextlib, io, json, sys, time, traceback
    from layoutsim.cli import main as layoutsim
    from gpu_check.cli import main as gpu_check
    out = []
    for prog, argv in json.loads(sys.stdin.read()):
        o, e = io.StringIO(), io.StringIO()
        t = time.perf_counter()
        with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e):
            try:
                rc = (layoutsim if prog == "layoutsim" else gpu_check)(argv)
            except SystemExit as x:
                rc = x.code
            except BaseException:
                rc, e = "raised", io.StringIO(traceback.format_exc())
        out.append({"rc": rc, "out": o.getvalue(), "err": e.getvalue(), "s": time.perf_counter() - t})
    print(json.dumps(out))
""")


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def run_limited(cases, timeout):
    """Run [(prog, argv, needle)] ("layoutsim" or "gpu-check") in one child process under
    RLIMIT_AS = 3 GB, and check each ended with exit code 2, one line holding `needle`, within
    SECONDS, no traceback."""
    p = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps([(prog, argv) for prog, argv, _ in cases]),
                       capture_output=True, text=True, timeout=timeout, preexec_fn=_limit_memory)
    assert p.returncode == 0, p.stderr[-2000:]
    for (prog, argv, needle), r in zip(cases, json.loads(p.stdout)):
        lines = (r["out"] + r["err"]).splitlines()
        shown = f"{prog} {' '.join(argv)}"[:160]
        assert r["rc"] == 2, (shown, r)
        assert len(lines) == 1 and r["out"] == "" and "Traceback" not in r["err"], (shown, r)
        assert needle in lines[0], (shown, needle, lines[0])
        assert r["s"] < SECONDS, (shown, r["s"])


def test_listed_cases_end_quickly_in_3gb_with_one_line_and_exit_2():
    run_limited([("layoutsim", argv, needle) for argv, needle in CASES], SECONDS * 3)


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:              # argparse's own errors (one line too)
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def _ok_or_one_line(argv):
    rc, out, err = run(argv)
    assert rc in (0, 2), (argv, rc)
    if rc == 2:
        assert out == "" and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
    return rc, out


TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
NUMBER = st.one_of(st.integers(min_value=-(1 << 70), max_value=1 << 70).map(str), TEXT)
RANGE = st.lists(st.one_of(NUMBER, st.tuples(NUMBER, NUMBER).map("-".join)), min_size=1, max_size=4).map(",".join)


@given(text=RANGE)
def test_any_lane_or_row_list(text):
    rc, out = _ok_or_one_line(["banks", "--op", "ld.shared.b32", "--addr", "lane*4", f"--active={text}",
                               "--json"])
    from layoutsim.errors import LayoutsimError
    from layoutsim.inputs import ranges
    try:
        rows = ranges(text, 16, "row")             # render --rows/--cols/--lanes use the same parser
    except LayoutsimError:
        rows = None
    else:
        assert rows and all(0 <= v < 16 for v in rows)
    if rc == 0:
        lanes = [lane for p in json.loads(out)["phases"] for lane in p["lanes"]]
        assert lanes == ranges(text, 32)           # the lanes the model used are the lanes given


@given(shape=st.tuples(NUMBER, NUMBER).map("x".join), mode=st.sampled_from(["--fill", "--block"]),
       pad=st.one_of(st.none(), NUMBER))
def test_any_tile_shape_and_padding(shape, mode, pad):
    op = "st.shared.v4.b32" if mode == "--fill" else "ldmatrix.x4"
    argv = ["banks", "--op", op, f"--tile={shape}", mode] + (["0,0"] if mode == "--block" else ["--index", "0"])
    if pad is not None:
        argv += [f"--pitch={pad}"] if pad.lstrip("-").isdigit() else [f"--swizzle={pad}"]
    _ok_or_one_line(argv)


@given(expr=st.one_of(TEXT, st.lists(st.sampled_from(["lane", "1", "(", ")", "<<", "*", "-", "~", "//", "%",
                                                   str(1 << 47), "17", "x", "**", "."]), max_size=40).map("".join)))
def test_any_address_expression(expr):
    rc, out = _ok_or_one_line(["banks", "--op", "ld.shared.b32", f"--addr={expr}", "--json"])
    if rc == 0:
        from layoutsim.address import MAX_ABS, lane_offsets
        offs = lane_offsets(expr)                  # an answer only when no step left +-2**48
        assert all(abs(int(o)) <= MAX_ABS for o in offs)
        assert json.loads(out)["wavefronts"] >= 1


@given(text=st.lists(st.one_of(NUMBER, st.just("_")), min_size=1, max_size=40).map(",".join))
def test_any_offset_list(text):
    _ok_or_one_line(["banks", "--op", "ld.shared.b32", f"--offsets={text}"])


@given(text=st.one_of(TEXT, st.tuples(NUMBER, NUMBER, NUMBER).map(",".join),
                 st.lists(st.tuples(NUMBER, NUMBER).map("->".join), max_size=3).map(lambda p: "xor:" + ",".join(p))))
def test_any_swizzle_and_position(text):
    _ok_or_one_line(["banks", "--op", "ld.shared.v4.b32", "--tile", "64x64", "--fill", "--index", "3",
                     f"--swizzle={text}"])
    _ok_or_one_line(["banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--fragment", f"{MMA}:A",
                     f"--at={text}"])


def test_pipe_closed_early_ends_quietly():
    """`layoutsim list | head -1` and `gpu-check source | head -1`: no BrokenPipeError traceback."""
    for cmd in ([sys.executable, "-m", "layoutsim.cli", "list"],
                [sys.executable, "-m", "layoutsim.cli", "list", "--json"],
                [sys.executable, "-m", "gpu_check.cli", "source"]):
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = p.stdout.readline()
        p.stdout.close()                           # the reader goes away, as head does
        err = p.stderr.read().decode()
        rc = p.wait(timeout=60)
        assert first and err == "" and rc == 0, (cmd, rc, err[-500:])
