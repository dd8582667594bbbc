"""Issue 22: the public Python entry points given a value of the wrong type answer with one
LayoutsimError line naming the argument and the type it takes (never a TypeError, IndexError or
ValueError from inside numpy). Bools are not ints for lanes, rows, columns or sizes.
"""
import numpy as np
import pytest

import layoutsim
import layoutsim.ptx as ptx
from layoutsim.errors import LayoutsimError
from layoutsim.ptx.internal import PtxInternalError

MMA = "mma.m16n8k16.f32.f16.f16.f32"
KERNEL = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n"


@pytest.fixture(scope="module")
def c():
    return layoutsim.get(MMA).operand("C")


def _one_line(fn):
    with pytest.raises(LayoutsimError) as e:
        fn()
    msg = str(e.value)
    assert "\n" not in msg and not isinstance(e.value, PtxInternalError), msg
    return msg


@pytest.mark.parametrize("lane", [1.5, "1", True, False, None, np.array([1, 2]), 3.0])
def test_lane_takes_an_integer(c, lane):
    assert _one_line(lambda: c.lane(lane)) == f"lane must be an integer, not {lane!r}"


@pytest.mark.parametrize("lane", [3, np.int64(3), np.uint8(3)])
def test_lane_takes_python_and_numpy_integers(c, lane):
    assert c.lane(lane) == c.lane(3) and len(c.lane(lane)) == 4


def test_lane_out_of_range_stays_an_out_of_range_error(c):
    assert _one_line(lambda: c.lane(32)) == "lane 32 out of range: this operand spans lanes 0-31"


@pytest.mark.parametrize("args,what", [(("1", "0"), "row"), ((1.0, 0), "row"), ((True, 0), "row"),
                                       ((0, "0"), "col"), ((0, None), "col"), ((0, 0, "a"), "matrix"),
                                       ((0, 0, 0.0), "matrix")])
def test_who_holds_takes_integers(c, args, what):
    bad = dict(zip(("row", "col", "matrix"), args))[what]
    assert _one_line(lambda: c.who_holds(*args)) == f"{what} must be an integer, not {bad!r}"


def test_who_holds_takes_numpy_integers(c):
    assert c.who_holds(np.int32(11), np.int64(2)) == c.who_holds(11, 2)


@pytest.mark.parametrize("name", [123, None, b"mma.m16n8k16.f32.f16.f16.f32", ["mma"]])
def test_get_takes_a_name(name):
    msg = _one_line(lambda: layoutsim.get(name))
    assert msg.startswith("instruction name: give a string (as 'mma.m16n8k16.f32.f16.f16.f32'), not "
                          f"{type(name).__name__}")
    assert msg == _one_line(lambda: layoutsim.lookup(name))


@pytest.mark.parametrize("wave", ["x", 32.5, True])
def test_wave_takes_an_integer(wave):
    assert _one_line(lambda: layoutsim.get(MMA, wave=wave)) == f"wave size must be an integer, not {wave!r}"


@pytest.mark.parametrize("arch", [90, 1.5, ("sm_90",)])
def test_get_with_an_arch_of_another_type(arch):
    assert _one_line(lambda: layoutsim.get(MMA, arch=arch)).startswith(f"unknown arch {arch!r}")


@pytest.mark.parametrize("operand", [3, None, 1.5])
def test_operand_takes_a_name(operand):
    assert "has no operand" in _one_line(lambda: layoutsim.get(MMA).operand(operand))


@pytest.mark.parametrize("abc", [(1, 2, 3), ([[1]], [[2]], [[3]]), (None, None, None), ("a", "b", "c")])
def test_mma_with_operands_of_the_wrong_type(abc):
    assert "A of mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in _one_line(lambda: layoutsim.mma(MMA, *abc))


def test_mma_with_an_instruction_of_the_wrong_type():
    assert _one_line(lambda: layoutsim.mma(123, None, None, None)).startswith("instruction name: give a string")


# ---- ptx.run ----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", [KERNEL.encode(), 123, None, [KERNEL]])
def test_run_takes_ptx_text(text):
    assert _one_line(lambda: ptx.run(text, "k", 1, 32, [])) == \
        f"ptx: give the PTX text as a string, not {type(text).__name__}"


def test_load_takes_ptx_text():
    assert _one_line(lambda: ptx.load(KERNEL.encode())) == "ptx: give the PTX text as a string, not bytes"


@pytest.mark.parametrize("kernel", [1, ["k"], None, b"k"])
def test_run_takes_a_kernel_name(kernel):
    assert _one_line(lambda: ptx.run(KERNEL, kernel, 1, 32, [])) == \
        f"kernel: give the entry's name as a string, not {type(kernel).__name__}"


@pytest.mark.parametrize("what,value,expect", [
    ("grid", 1.5, "grid 1.5: give 1 to 3 positive integers (x, y, z)"),
    ("grid", True, "grid True: give 1 to 3 positive integers (x, y, z)"),
    ("grid", (1, 1.0), "grid (1, 1.0): give 1 to 3 positive integers (x, y, z)"),
    ("grid", -1, "grid -1: every dimension must be at least 1"),
    ("grid", "1,x", "grid '1,x': give X[,Y[,Z]] positive integers"),
    ("grid", None, "grid None: give 1 to 3 positive integers (x, y, z)"),
    ("block", 32.0, "block 32.0: give 1 to 3 positive integers (x, y, z)"),
    ("block", -32, "block -32: every dimension must be at least 1"),
    ("block", (32, False), "block (32, False): give 1 to 3 positive integers (x, y, z)"),
])
def test_run_grid_and_block(what, value, expect):
    kw = {"grid": 1, "block": 32, what: value}
    assert _one_line(lambda: ptx.run(KERNEL, "k", kw["grid"], kw["block"], [])) == expect


@pytest.mark.parametrize("kw,start", [
    (dict(shared_bytes=1.5), "shared_bytes=1.5: give a number of bytes >= 0"),
    (dict(shared_bytes=True), "shared_bytes=True: give a number of bytes >= 0"),
    (dict(batch_threads="x"), "batch_threads must be an integer, not 'x'"),
    (dict(batch_threads=0), "batch_threads 0 is out of range; valid: 1.."),
    (dict(ctas=1.5), "ctas=1.5: give None, a number of CTAs or a list of CTA ids"),
    (dict(jobs="2"), "jobs='2': give a number of processes"),
    (dict(arch=90), "unknown arch 90"),
    (dict(arch=None), "arch None is not given: layoutsim.ptx.run is NVIDIA-only"),
])
def test_run_options(kw, start):
    assert _one_line(lambda: ptx.run(KERNEL, "k", 1, 32, [], **kw)).startswith(start)


def test_run_args_take_a_list():
    assert _one_line(lambda: ptx.run(KERNEL, "k", 1, 32, None)) == \
        "args: give a list of the kernel's 0 arguments, not NoneType"
