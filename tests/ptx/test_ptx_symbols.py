"""What the host copies into module variables before a launch (cudaMemcpyToSymbol):
layoutsim.ptx.run(symbols={name: array}) and `layoutsim ptx run --symbol NAME=ARG`. The kernel
below reads a 5-tap filter from a .const array and a bias from an initialised .global int, as
cuda-samples' convolutionSeparable reads its c_Kernel: out[i] = sum_j k[j] * in[(i + j) % n] + bias."""
import numpy as np
import pytest

import layoutsim.ptx as P
from layoutsim.cli import main
from layoutsim.errors import LayoutsimError

PTX = """.version 8.0
.target sm_90
.address_size 64
.const .align 4 .b8 k[20];
.global .align 4 .u32 bias = 3;
.visible .entry conv(.param .u64 out, .param .u64 in, .param .u32 n)
{
    .reg .pred %p<3>;
    .reg .b32 %r<12>;
    .reg .f32 %f<6>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.param.u64 %rd2, [in];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mad.lo.s32 %r5, %r3, %r4, %r2;
    setp.ge.s32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd3, %rd2;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r6, 0;
LOOP:
    add.s32 %r7, %r5, %r6;
    rem.s32 %r8, %r7, %r1;
    mul.wide.s32 %rd4, %r8, 4;
    add.s64 %rd5, %rd3, %rd4;
    ld.global.f32 %f2, [%rd5];
    mul.wide.u32 %rd6, %r6, 4;
    mov.u64 %rd7, k;
    add.s64 %rd7, %rd7, %rd6;
    ld.const.f32 %f3, [%rd7];
    fma.rn.f32 %f1, %f3, %f2, %f1;
    add.s32 %r6, %r6, 1;
    setp.lt.u32 %p2, %r6, 5;
    @%p2 bra LOOP;
    ld.global.u32 %r9, [bias];
    cvt.rn.f32.s32 %f4, %r9;
    add.rn.f32 %f5, %f1, %f4;
    cvta.to.global.u64 %rd3, %rd1;
    mul.wide.s32 %rd4, %r5, 4;
    add.s64 %rd5, %rd3, %rd4;
    st.global.f32 [%rd5], %f5;
DONE:
    ret;
}
"""
X = np.arange(64, dtype=np.float32)
K = np.array([1, 2, 3, 4, 5], np.float32)


def expected(k, bias):
    out = np.zeros(64, np.float32)
    for i in range(64):
        s = np.float32(0)
        for j in range(5):
            s = np.float32(k[j] * X[(i + j) % 64] + s)          # exact here: small integers
        out[i] = s + np.float32(bias)
    return out


def run(symbols, **kw):
    return P.run(PTX, "conv", 2, 32, [np.zeros(64, np.float32), X, np.int32(64)], symbols=symbols, **kw)


def test_the_kernel_reads_what_the_host_copied():
    assert np.array_equal(run({"k": K}).buffers[0], expected(K, 3))
    assert np.array_equal(run({"k": K, "bias": np.int32(-7)}).buffers[0], expected(K, -7))


def test_without_symbols_a_const_array_is_zeros_and_an_initialiser_stays():
    assert np.array_equal(run(None).buffers[0], expected(np.zeros(5, np.float32), 3))


def test_a_shorter_copy_leaves_the_rest_of_the_variable():
    assert np.array_equal(run({"k": K[:2].tobytes()}).buffers[0], expected(np.array([1, 2, 0, 0, 0], np.float32), 3))


def test_several_processes_see_the_same_symbols():
    assert np.array_equal(run({"k": K, "bias": np.int32(1)}, jobs=2).buffers[0], expected(K, 1))


@pytest.mark.parametrize("bad, says", [
    ({"nope": K}, "'nope' is not a .global or .const variable of the module (it has: bias, k)"),
    ({"k": np.zeros(6, np.float32)}, "k: 24 bytes given, the .const variable holds 20"),
    ({"k": [1.0]}, "k: give a numpy array or bytes, not list"),
    ([K], "give {variable name: numpy array or bytes}, not list"),
])
def test_a_bad_symbol_is_one_line(bad, says):
    with pytest.raises(LayoutsimError, match="symbols: ") as e:
        run(bad)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_the_command_line_takes_symbols(tmp_path, capsys):
    src = tmp_path / "conv.ptx"
    src.write_text(PTX)
    np.save(tmp_path / "x.npy", X)
    np.save(tmp_path / "k.npy", K)
    base = ["ptx", "run", str(src), "--kernel", "conv", "--grid", "2", "--block", "32", "--arg", "zeros:f32:64",
            "--arg", str(tmp_path / "x.npy"), "--arg", "i32:64"]
    assert main(base + ["--symbol", f"k={tmp_path / 'k.npy'}", "--symbol", "bias=i32:0", "--out",
                        str(tmp_path / "o"), "--json"]) == 0
    capsys.readouterr()
    assert np.array_equal(np.load(tmp_path / "o" / "arg0.npy"), expected(K, 0))
    for spec, says in (("k", "give NAME=ARG"), ("k=missing.npy", "--symbol k 'missing.npy': no such .npy file"),
                       ("k=tmap:0:8:8", "not a tensor map"), ("k=zeros:f32:6", "24 bytes given")):
        assert main(base + ["--symbol", spec]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err
    assert main(base + ["--symbol", "k=zeros:f32:5", "--symbol", "k=zeros:f32:5"]) == 2
    assert "given twice" in capsys.readouterr().err
