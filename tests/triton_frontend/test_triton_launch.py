"""layoutsim.triton.launch on kernels written here (gpu_check/triton_corpus/kernels.py).

Expected values: exact ones where the arithmetic is exact (an f32 add is correctly rounded: IEEE
754 and PTX ISA 9.7.3.1 add.f32 with the default .rn), a float reference with a bound where it is
not (tl.exp and a division are approximations; tl.dot in tf32 rounds its inputs); the bits the
H200 gives are checked by the corpus replay (test_triton_corpus_replay.py)."""
import numpy as np
import pytest

from triton_needs import needs_triton

pytestmark = needs_triton


@pytest.fixture(scope="module")
def K():
    from gpu_check.triton_corpus import kernels
    return kernels


@pytest.fixture(scope="module")
def lt():
    import layoutsim.triton as lt
    return lt


def test_vector_add_is_exact_and_costs_name_python_lines(K, lt):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    out = np.zeros_like(x)
    r = lt.launch(K.vector_add, lambda m: (-(-1000 // m["BLOCK"]),), x, y, out, 1000, BLOCK=256)
    assert np.array_equal(out, x + y)
    lines = {s.cuda for s in r.instructions if s.sectors}
    assert lines and all(c[0].endswith("kernels.py") for c in lines)
    src = open(K.__file__).read().splitlines()
    assert any("tl.load(x_ptr" in src[c[1] - 1] for c in lines)


def test_softmax_rows(K, lt):
    a = np.random.default_rng(2).standard_normal((8, 100)).astype(np.float32)
    out = np.zeros_like(a)
    lt.launch(K.softmax_rows, (8,), a, out, 100, 100, BLOCK=128)
    e = np.exp(a - a.max(1, keepdims=True))
    assert np.abs(out - e / e.sum(1, keepdims=True)).max() < 1e-6


# bounds relative to |A|@|B|: f16 products are exact in f32 and only the f32 sums round (k=64
# roundings of 2**-24); tf32 rounds each input to 10 fraction bits (2**-11 each, PTX ISA 9.7.14.5.14
# "The .tf32 ... inputs")
@pytest.mark.parametrize("dtype,bound", [(np.float16, 2.0 ** -17), (np.float32, 2.0 ** -9)])
def test_dot_f16_and_tf32(K, lt, dtype, bound):
    rng = np.random.default_rng(3)
    A, B = rng.standard_normal((64, 64)).astype(dtype), rng.standard_normal((64, 64)).astype(dtype)
    C = np.zeros((64, 64), np.float32)
    r = lt.launch(K.matmul, (1, 1), A, B, C, 64, 64, 64, 64, 64, 64, BM=64, BN=64, BK=32)
    ref = A.astype(np.float64) @ B.astype(np.float64)
    scale = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64))
    assert (np.abs(C - ref) <= bound * scale).all()
    assert r.extra["triton"]["signature"]["a_ptr"] == ("*fp16" if dtype == np.float16 else "*fp32")


def test_exp_div_and_an_int_equal_to_one_is_a_constexpr(K, lt):
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    y = np.full(64, 2.0, np.float32)
    out = np.zeros_like(x)
    r = lt.launch(K.exp_div, (1,), x, y, out, 64, BLOCK=64)
    assert np.abs(out - np.exp(x.astype(np.float64)) / 2).max() < 1e-5 * np.exp(3)
    # Triton's rule (JITFunction's binder): 64 is divisible by 16 -> i32 with tt.divisibility
    assert r.extra["triton"]["signature"]["n"] == "i32"
    one = np.zeros(1, np.float32)
    r = lt.launch(K.exp_div, (1,), np.zeros(1, np.float32), np.ones(1, np.float32), one, 1, BLOCK=16)
    assert r.extra["triton"]["signature"]["n"] == "constexpr" and one[0] == 1.0


def test_bad_arguments_name_the_parameter(K, lt):
    from layoutsim.errors import LayoutsimError
    x = np.zeros(16, np.float32)
    with pytest.raises(LayoutsimError, match="missing argument.*n"):
        lt.launch(K.vector_add, (1,), x, x, x, BLOCK=16)
    with pytest.raises(LayoutsimError, match="takes 5 arguments"):
        lt.launch(K.vector_add, (1,), x, x, x, 16, 16, 3, BLOCK=16)
    with pytest.raises(LayoutsimError, match="parameter y_ptr.*complex"):
        lt.launch(K.vector_add, (1,), x, np.zeros(16, np.complex64), x, 16, BLOCK=16)
    with pytest.raises(LayoutsimError, match="parameter x_ptr.*C-contiguous"):
        lt.launch(K.vector_add, (1,), np.zeros((4, 8), np.float32)[:, ::2], x, x, 16, BLOCK=16)
    with pytest.raises(LayoutsimError, match="unknown keyword 'BLOK'"):
        lt.launch(K.vector_add, (1,), x, x, x, 16, BLOCK=16, BLOK=3)
    # an array shorter than the kernel reads: the model's fault names the parameter, not the PTX argument
    with pytest.raises(LayoutsimError, match=r"outside global memory: .* parameter y_ptr \(argument 1\)") as e:
        lt.launch(K.vector_add, (1,), x, np.zeros(8, np.float32), x, 16, BLOCK=16)
    assert "\n" not in str(e.value)


def test_num_ctas_runs_each_program_as_a_cluster(K, lt):
    # Triton 3.6 on sm_90 compiles num_ctas=2 with .reqnctapercluster 2 and its CUDA launcher runs
    # grid x * num_ctas CTAs in clusters of (num_ctas, 1, 1) (triton/backends/nvidia/driver.py)
    x, y = np.arange(1000, dtype=np.float32), np.ones(1000, np.float32)
    out = np.zeros(1000, np.float32)
    r = lt.launch(K.vector_add, (4,), x, y, out, 1000, BLOCK=256, num_ctas=2)
    assert r.grid == (8, 1, 1) and r.cluster == (2, 1, 1) and r.extra["triton"]["num_ctas"] == 2
    assert ".reqnctapercluster 2" in r.triton.ptx
    assert np.array_equal(out, x + y)                     # f32 add: exact (IEEE 754, add.f32.rn)
    from layoutsim.errors import LayoutsimError
    with pytest.raises(LayoutsimError, match="num_ctas=3: give a power of two"):
        lt.launch(K.vector_add, (4,), x, y, out, 1000, BLOCK=256, num_ctas=3)
    with pytest.raises(LayoutsimError, match="num_ctas > 1 requires NVIDIA SM90"):     # Triton's own refusal
        lt.launch(K.vector_add, (4,), x, y, out, 1000, BLOCK=256, num_ctas=2, arch="sm_80")


def test_num_ctas_2_matmul_splits_the_tile_over_the_cluster(K, lt):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((128, 64)).astype(np.float16)
    b = rng.standard_normal((64, 128)).astype(np.float16)
    c = np.zeros((128, 128), np.float32)
    r = lt.launch(K.matmul, (1, 1), a, b, c, 128, 128, 64, 64, 128, 128, BM=128, BN=128, BK=32, num_ctas=2)
    assert r.cluster == (2, 1, 1) and r.grid == (2, 1, 1)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # f16 products are exact in f32; 64 of them summed in f32 by wgmma: a bound, not bits (the bits
    # of wgmma are checked by the corpus replay)
    assert np.abs(c - ref).max() < 1e-4


def test_a_kernel_triton_refuses_is_one_line_with_its_python_line(tmp_path, lt):
    from layoutsim.errors import LayoutsimError
    from layoutsim.triton.loader import load
    f = tmp_path / "bad.py"
    f.write_text("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x, B: tl.constexpr):\n"
                 "    o = tl.arange(0, B)\n    tl.store(x + o, undefined_name)\n")
    with pytest.raises(LayoutsimError) as e:
        lt.launch(load(f"{f}:k"), (1,), np.zeros(16, np.float32), B=16)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("bad.py:8:") and "undefined_name" in msg


def test_autotune_configs_and_patch(tmp_path, lt):
    from layoutsim.errors import LayoutsimError
    from layoutsim.triton.loader import load
    f = tmp_path / "tuned.py"
    f.write_text("import triton\nimport triton.language as tl\n\n"
                 "@triton.autotune(configs=[triton.Config({'B': 16}), triton.Config({'B': 32}, num_warps=2)], key=['n'])\n"
                 "@triton.jit\ndef twice(x, n, B: tl.constexpr):\n"
                 "    o = tl.program_id(0) * B + tl.arange(0, B)\n"
                 "    tl.store(x + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)\n\n"
                 "def op(x):\n    twice[lambda m: (triton.cdiv(x.size, m['B']),)](x, x.size)\n    return x\n\n"
                 "if __name__ == '__main__':\n    raise SystemExit('the CLI must not run this')\n")
    k = load(f"{f}:twice")
    x = np.arange(40, dtype=np.float32)
    with pytest.raises(LayoutsimError, match="autotuned over 2 configs"):
        lt.launch(k, (3,), x, 40)
    r = lt.launch(k, lambda m: (-(-40 // m["B"]),), x, 40, config=1)
    assert r.block == (64, 1, 1) and np.array_equal(x, 2 * np.arange(40, dtype=np.float32))
    runs = lt.launch(k, lambda m: (-(-40 // m["B"]),), x, 40, config="all")
    assert len(runs) == 2 and np.array_equal(x, 8 * np.arange(40, dtype=np.float32))
    import sys
    module = sys.modules["layoutsim_user_tuned"]
    y = np.ones(20, np.float32)
    with lt.patch() as p:
        module.op(y)
    assert np.array_equal(y, np.full(20, 2, np.float32)) and len(p.runs) == 1


def test_raw_bits_and_compile_cache(K, lt, tmp_path, monkeypatch):
    monkeypatch.setenv("LAYOUTSIM_CACHE", str(tmp_path))
    import ml_dtypes
    raw = np.array([0x3F80] * 16, np.uint16)            # bf16 1.0
    out = np.zeros(16, ml_dtypes.bfloat16)
    r1 = lt.launch(K.vector_add, (1,), lt.bits(raw, "bf16"), lt.bits(raw, "bf16"), out, 16, BLOCK=16)
    assert out.view(np.uint16).tolist() == [0x4000] * 16 and not r1.extra["triton"]["cached"]
    r2 = lt.launch(K.vector_add, (1,), lt.bits(raw, "bf16"), lt.bits(raw, "bf16"), out, 16, BLOCK=16)
    assert r2.extra["triton"]["cached"] and list(tmp_path.glob("triton/*.json"))


def test_cpu_torch_tensors_bf16_written_back(K, lt):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x, y = torch.arange(64, dtype=torch.bfloat16), torch.ones(64, dtype=torch.bfloat16)
    out = torch.zeros(64, dtype=torch.bfloat16)
    r = lt.launch(K.vector_add, (1,), x, y, out, 64, BLOCK=64)
    assert r.extra["triton"]["signature"]["x_ptr"] == "*bf16"
    # every sum k + 1 for k < 64 is exact in bf16 (8 significant bits)
    assert torch.equal(out, (torch.arange(64) + 1).to(torch.bfloat16))


def test_pytest_plugin_runs_a_projects_test_on_the_model(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "test_project.py").write_text(
        "import numpy as np\nfrom gpu_check.triton_corpus.kernels import vector_add\n\n"
        "def test_add(triton_model):\n    x = np.ones(32, np.float32)\n    out = np.zeros(32, np.float32)\n"
        "    vector_add[(1,)](x, x, out, 32, BLOCK=32)\n"
        "    assert (out == 2).all() and len(triton_model.runs) == 1\n")
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "layoutsim.triton.pytest_plugin",
                        str(tmp_path / "test_project.py")], capture_output=True, text=True, cwd=tmp_path,
                       env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert p.returncode == 0 and "1 passed" in p.stdout, p.stdout[-2000:]


def test_arguments_sharing_memory_are_one_buffer(K, lt):
    """In place, as a GPU runs it: out is x (the same array twice) and y a view overlapping x. The
    kernel's out = x + y then reads and writes one memory; the array ends as x + y, whichever of
    the two copies of it would have been written back last."""
    x = np.arange(1000, dtype=np.float32)
    lt.launch(K.vector_add, lambda m: (-(-1000 // m["BLOCK"]),), x, x, x, 1000, BLOCK=256)
    assert np.array_equal(x, 2 * np.arange(1000, dtype=np.float32))
    base = np.arange(1100, dtype=np.float32)
    out = base[:1000]
    lt.launch(K.vector_add, lambda m: (-(-1000 // m["BLOCK"]),), out, base[100:1100], out, 1000, BLOCK=256)
    assert np.array_equal(base[:1000], np.arange(1000) + np.arange(100, 1100, dtype=np.float32))
