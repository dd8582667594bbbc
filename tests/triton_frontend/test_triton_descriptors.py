"""Host tensor descriptors (triton.tools.tensor_descriptor.TensorDescriptor) in layoutsim.triton.launch.

Expected values are exact: the kernels only copy and double f16 values (doubling is exact below the
f16 overflow: IEEE 754), so every output element is known. Which PTX parameters a descriptor
becomes is Triton 3.6's launcher's rule (triton/backends/nvidia/driver.py make_tensordesc_arg); the
H200's bits for real kernels that take descriptors are checked by the corpus replay
(flaggems_mm_host_tma*, flaggems_w8a8_block_fp8_host_tma, liger_swiglu_mlp_fwd)."""
import numpy as np
import pytest

from triton_needs import needs_triton

pytestmark = needs_triton


@pytest.fixture(scope="module")
def K():
    import triton
    import triton.language as tl

    @triton.jit
    def double_rows(x_desc, y_desc, BM: tl.constexpr):
        pid = tl.program_id(0)
        y_desc.store([pid * BM, 0], x_desc.load([pid * BM, 0]) * 2)

    return double_rows


@pytest.fixture(scope="module")
def lt():
    import layoutsim.triton as lt
    return lt


def _x(rows=128, cols=64, seed=3):
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float16)


def test_numpy_descriptors_run_through_tensor_maps(K, lt):
    from layoutsim.triton.descriptors import descriptor
    x, y = _x(200), np.zeros((200, 64), np.float16)
    r = lt.launch(K, (4,), descriptor(x, [64, 64]), descriptor(y, [64, 64]), BM=64)
    assert np.array_equal(y, x * 2)                 # the last box is clipped at row 200 on load and store
    sig = r.extra["triton"]["signature"]
    assert sig["x_desc"] == "tensordesc<fp16[64, 64]>"
    assert r.triton.tensordesc_meta[0]["swizzle"] == 3     # Triton's choice for a 128-byte row: 128B


def test_torch_tensor_descriptors(K, lt):
    torch = pytest.importorskip("torch")
    from triton.tools.tensor_descriptor import TensorDescriptor
    x = torch.from_numpy(_x())
    y = torch.zeros(128, 64, dtype=torch.float16)
    lt.launch(K, (2,), TensorDescriptor.from_tensor(x, [64, 64]), TensorDescriptor.from_tensor(y, [64, 64]), BM=64)
    assert torch.equal(y, x * 2)


def test_a_descriptor_over_a_view_writes_only_its_window(K, lt):
    from layoutsim.triton.descriptors import descriptor
    x, big = _x(), np.full((256, 64), 7, np.float16)
    lt.launch(K, (2,), descriptor(x, [64, 64]), descriptor(big[64:192], [64, 64]), BM=64)
    assert np.array_equal(big[64:192], x * 2)
    assert (big[:64] == 7).all() and (big[192:] == 7).all()


def test_descriptors_over_one_array_share_its_memory(K, lt):
    """Read columns 0..63 and write columns 64..127 of the same array: on a GPU the two maps address
    one tensor, so the write lands and the read half stays; copies per map would lose one of them."""
    from layoutsim.triton.descriptors import descriptor
    a = np.zeros((128, 128), np.float16)
    a[:, :64] = _x()
    before = a[:, :64].copy()
    lt.launch(K, (2,), descriptor(a[:, :64], [64, 64]), descriptor(a[:, 64:], [64, 64]), BM=64)
    assert np.array_equal(a[:, :64], before)
    assert np.array_equal(a[:, 64:], before * 2)


def test_sm80_reads_descriptors_through_their_pointer(K, lt):
    """Without TMA (sm_80) Triton's launcher passes base, shape and strides instead of a map."""
    from layoutsim.triton.descriptors import descriptor
    x, y = _x(), np.zeros((128, 64), np.float16)
    r = lt.launch(K, (2,), descriptor(x, [64, 64]), descriptor(y, [64, 64]), BM=64, arch="sm_80")
    assert r.triton.tensordesc_meta in ([], [None, None])
    assert np.array_equal(y, x * 2)


@pytest.mark.parametrize("make, message", [
    (lambda d, x: d(x[:, 1:], [64, 32]), "16-byte aligned"),
    (lambda d, x: d(x, [64, 48]), "power of two"),
    (lambda d, x: d(x, [64, 64], shape=[129, 64]), "reaches byte"),
    (lambda d, x: d(x, [64, 64], padding="inf"), "padding"),
    (lambda d, x: d(x, [64, 64], strides=[1, 128]), "stride 1"),
    (lambda d, x: d(np.asfortranarray(x).T, [64, 64], strides=[128, 1]), "not C-contiguous"),
])
def test_bad_descriptors_are_one_line_errors(K, make, message):
    from layoutsim.errors import LayoutsimError
    from layoutsim.triton.descriptors import descriptor
    with pytest.raises(LayoutsimError) as e:
        make(descriptor, _x())
    assert message in str(e.value) and "\n" not in str(e.value)


def test_the_nan_fill_is_refused_not_guessed(K, lt):
    from layoutsim.errors import LayoutsimError
    from layoutsim.triton.descriptors import descriptor
    with pytest.raises(LayoutsimError) as e:
        lt.launch(K, (2,), descriptor(_x(), [64, 64], padding="nan"), descriptor(np.zeros((128, 64), np.float16),
                                                                                 [64, 64]), BM=64)
    assert "oob_fill" in str(e.value) and "\n" not in str(e.value)


KERNEL_FILE = '''import triton
import triton.language as tl


@triton.jit
def double_rows(x_desc, y_desc, BM: tl.constexpr):
    pid = tl.program_id(0)
    y_desc.store([pid * BM, 0], x_desc.load([pid * BM, 0]) * 2)
'''


def test_cli_desc_arguments(tmp_path, capsys):
    from layoutsim.cli import main
    f = tmp_path / "dk.py"
    f.write_text(KERNEL_FILE)
    argv = ["triton", "run", f"{f}:double_rows", "--grid", "2", "--arg", "desc:64x64:arange:f16:128x64",
            "--arg", "desc:64x64:zeros:f16:128x64", "--meta", "BM=64"]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 0
    assert "dk.py:8" in capsys.readouterr().out          # the costs name the kernel's Python line
    got = np.load(tmp_path / "out" / "arg1.npy")
    assert np.array_equal(got, np.arange(128 * 64, dtype=np.float16).reshape(128, 64) * 2)
    for bad, needle in (("desc:6x:zeros:f16:128x64", "give desc:BLOCK:ARRAY"),
                        ("desc:64x48:zeros:f16:128x64", "each size must be a power of two"),
                        ("desc:64x64:f32:1.5", "a descriptor is over an array")):
        assert main([*argv[:6], bad, *argv[7:]]) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err


def test_width_is_how_many_arguments_expand_gives():
    """descriptors.width (which the corpus replay uses to place outputs) agrees with expand."""
    from layoutsim.triton.descriptors import descriptor, expand, width
    meta = {"swizzle": 3, "elem_size": 2, "elem_type": 6, "block_size": [64, 64], "fp4_padded": False}
    d = descriptor(_x(), [64, 64])
    for m in (meta, None):
        values, names, _ = expand(d, m, "x")
        assert len(values) == len(names) == width(m, 2)
