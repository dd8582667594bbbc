"""Textures and surfaces in the executor, against the documents (the H200 replay is
test_textures_h200.py). Expected values: the CUDA C++ Programming Guide, appendix "Texture
Fetching" (nearest-point sampling T[floor(x)], linear filtering with 9-bit fixed-point weights of 8
fraction bits, the address modes), "Read Mode" (normalized integers) and the PTX ISA 9.0 sections
9.7.10 (tex, tld4, txq) and 9.7.11 (suld, sust, suq), written here independently of the model.
"""
import shutil
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from gpu_check.textures import probes, replay
from layoutsim import ptx
from layoutsim.errors import LayoutsimError


def _tex(kernel, arr, rows, **obj):
    o = dict(channels=1, address="clamp", filter="point", read="element", normalized=False, layered=False,
             cubemap=False)
    o.update(obj)
    rows = np.asarray(rows)
    if rows.dtype.kind == "f":
        rows = np.pad(rows.astype(np.float32), ((0, 0), (0, 4 - rows.shape[1]))).view(np.uint32)
    else:
        rows = np.pad(rows.astype(np.int64), ((0, 0), (0, 4 - rows.shape[1]))).astype(np.uint32)
    case = dict(name="t", kernel=kernel, kind="tex", obj=o, n=len(rows))
    out, _ = replay.run_case(case, arr, rows)
    return out


def _f(words):
    return words.view(np.float32)


IMG = (np.arange(48, dtype=np.float32).reshape(6, 8) * 1.5 - 7)     # T[y][x]


def test_nearest_point_sampling_is_the_texel_under_floor_x():
    pts = [(0.5, 0.5), (3.99, 2.01), (7.5, 5.5), (-4.0, 2.2), (100.0, -3.0)]
    out = _f(_tex("tex_2d_f32_f32", IMG, pts))
    want = [IMG[min(max(int(np.floor(y)), 0), 5), min(max(int(np.floor(x)), 0), 7)] for x, y in pts]
    assert list(out[:, 0]) == want
    # the missing channels are zeros, alpha too (tests/data/textures, measured on an H100)
    assert list(out[:, 1:].ravel()) == [0.0] * 15


def test_border_addressing_reads_zero_outside():
    out = _f(_tex("tex_2d_f32_f32", IMG, [(-0.5, 1.5), (8.0, 1.5), (1.5, 1.5)], address="border"))
    assert list(out[:, 0]) == [0.0, 0.0, IMG[1, 1]]


def _linear_doc(img, x, y):
    """The guide's formula with a, b = frac(x - 0.5), frac(y - 0.5) rounded to 1/256, clamp."""
    xb, yb = Fraction(x) - Fraction(1, 2), Fraction(y) - Fraction(1, 2)
    i, j = int(np.floor(xb)), int(np.floor(yb))
    a, b = Fraction(round((xb - i) * 256), 256), Fraction(round((yb - j) * 256), 256)

    def T(jj, ii):
        return Fraction(float(img[min(max(jj, 0), img.shape[0] - 1), min(max(ii, 0), img.shape[1] - 1)]))
    v = (1 - a) * (1 - b) * T(j, i) + a * (1 - b) * T(j, i + 1) + (1 - a) * b * T(j + 1, i) + a * b * T(j + 1, i + 1)
    return float(np.float32(float(v)))


def test_linear_filtering_uses_weights_of_8_fraction_bits():
    pts = [(2.0, 3.0), (2.5 + 5 / 1024, 1.25), (2.5 + 3 / 1024, 0.1), (6.7, 4.9), (-1.0, 9.0), (3.3, 2.71)]
    out = _f(_tex("tex_2d_f32_f32", IMG, pts, filter="linear"))
    assert list(out[:, 0]) == [_linear_doc(IMG, x, y) for x, y in pts]
    # a fraction below 1/512 gives the texel itself: the weight rounds to 0
    near = _f(_tex("tex_2d_f32_f32", IMG, [(2.5 + 1 / 1024, 0.1), (2.5, 0.1)], filter="linear"))[:, 0]
    assert near[0] == near[1]


def test_wrap_and_mirror_with_normalized_coordinates():
    xs = np.array([0.3, 8.3, -7.7, 16.3], np.float32) / 8
    rows = np.stack([xs, np.full(4, 0.5 / 6, np.float32)], 1)
    wrap = _f(_tex("tex_2d_f32_f32", IMG, rows, address="wrap", normalized=True))[:, 0]
    assert list(wrap) == [IMG[0, 0]] * 4
    mirror = _f(_tex("tex_2d_f32_f32", IMG, np.array([[9.5 / 8, 0.5 / 6], [-0.5 / 8, 0.5 / 6]], np.float32),
                     address="mirror", normalized=True))[:, 0]
    assert list(mirror) == [IMG[0, 6], IMG[0, 0]]       # 9.5 mirrors to texel 6; -0.5 to texel 0


def test_integer_texels_are_extended_by_their_format_and_normalized_reads_are_fractions():
    img = np.array([[-128, -1, 0, 127]], np.int8)
    out = _tex("tex_2d_s32_f32", img, [(k + 0.5, 0.5) for k in range(4)])
    assert list(out[:, 0].view(np.int32)) == [-128, -1, 0, 127]
    out = _f(_tex("tex_2d_f32_f32", img, [(k + 0.5, 0.5) for k in range(4)], read="normalized"))
    assert list(out[:, 0]) == [-1.0, np.float32(-1 / 127), 0.0, 1.0]
    u = np.array([[0, 1, 254, 255]], np.uint8)
    out = _f(_tex("tex_2d_f32_f32", u, [(k + 0.5, 0.5) for k in range(4)], read="normalized"))
    assert list(out[:, 0]) == [0.0, np.float32(1 / 255), np.float32(254 / 255), 1.0]


def test_tld4_returns_the_footprint_in_the_isa_order():
    img = np.arange(48, dtype=np.float32).reshape(6, 8, 1).repeat(4, 2) * np.array([1, 10, 100, 1000], np.float32)
    out = _f(_tex("tld4_g_2d_f32", img, [(3.2, 2.7)], channels=4))[0]
    i, j = 2, 2                                # floor(3.2 - 0.5), floor(2.7 - 0.5)
    assert list(out) == [img[j + 1, i, 1], img[j + 1, i + 1, 1], img[j, i + 1, 1], img[j, i, 1]]


def test_layered_3d_and_cube_fetches():
    stack = np.arange(3 * 6 * 8, dtype=np.float32).reshape(3, 6, 8)
    rows = np.array([[1, 0, 0, 0], [2, 0, 0, 0], [9, 0, 0, 0]], np.int32).view(np.uint32)
    rows[:, 1:3] = np.array([[2.5, 1.5]] * 3, np.float32).view(np.uint32)
    case = dict(name="a", kernel="tex_a2d_f32_f32", kind="tex", n=3,
                obj=dict(channels=1, address="clamp", filter="point", read="element", normalized=False,
                         layered=True, cubemap=False))
    out, _ = replay.run_case(case, stack, rows)
    assert list(_f(out)[:, 0]) == [stack[1, 1, 2], stack[2, 1, 2], stack[2, 1, 2]]   # the layer clamps
    cube = np.arange(6 * 4 * 4, dtype=np.float32).reshape(6, 4, 4)
    out = _f(_tex("tex_cube_f32_f32", cube, [(1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, 1.0)], cubemap=True,
                  normalized=True))[:, 0]
    assert list(out) == [cube[0, 2, 2], cube[3, 2, 2], cube[4, 2, 2]]   # faces +x, -y, +z at their centres


def _surface(kernel, arr, rows, **obj):
    o = dict(channels=1, layered=False, surface=True)
    o.update(obj)
    case = dict(name="s", kernel=kernel, kind="sust" if kernel.startswith("sust") else "suld", obj=o,
                n=len(rows))
    return replay.run_case(case, arr, (np.asarray(rows, np.int64) & 0xFFFFFFFF).astype(np.uint32))


def test_surface_loads_and_stores_move_raw_bits_x_in_bytes():
    s = np.arange(48, dtype=np.uint32).reshape(6, 8) * 3
    out, _ = _surface("suld_2d_4_zero", s, [[12, 2, 0, 0], [-4, 0, 0, 0], [32, 0, 0, 0]])
    assert list(out[:, 0]) == [s[2, 3], 0, 0]                          # .zero: outside reads 0
    out, _ = _surface("suld_2d_4_clamp", s, [[-4, 9, 0, 0], [32, 0, 0, 0]])
    assert list(out[:, 0]) == [s[5, 0], s[0, 7]]                       # .clamp: the nearest element
    _, after = _surface("sust_2d_4_zero", s, [[4, 1, 0, 7], [40, 1, 0, 9]])
    want = s.copy()
    want[1, 1] = 7
    assert (after == want).all()                                        # the outside store is dropped
    with pytest.raises(ptx.PtxFault) as e:
        _surface("suld_2d_4_trap", s, [[32, 0, 0, 0]])
    assert e.value.fault["kind"] == "out_of_bounds"
    with pytest.raises(ptx.PtxFault) as e:
        _surface("suld_2d_4_zero", s, [[6, 0, 0, 0]])
    assert e.value.fault["kind"] == "misaligned"


def test_queries_answer_the_sizes():
    case = dict(name="q", kernel="txq", kind="query", n=1, obj=dict(channels=1, address="clamp", filter="point",
                read="element", normalized=False, layered=True, cubemap=False))
    out, _ = replay.run_case(case, np.zeros((3, 6, 8), np.float32), np.zeros((4, 4), np.uint32))
    assert list(out[0]) == [8, 6, 1, 3]


def test_what_cuda_refuses_is_refused_in_one_line():
    text = probes.module(["tex_2d_s32_f32"])
    for kw, what in ((dict(filter="linear"), "needs a float result"),
                     (dict(address="wrap"), "need normalized=True"),
                     (dict(read="normalized"), "8- and 16-bit"),
                     (dict(border_color=1.0), "only 0")):
        arr = np.zeros((4, 4), np.int32 if "read" not in kw else np.float32)
        with pytest.raises(LayoutsimError, match=what):
            ptx.run(text, "tex_2d_s32_f32", grid=1, block=1, args=[ptx.TextureArg(arr, **kw),
                    np.zeros((1, 4), np.uint32), np.zeros((1, 4), np.uint32), np.uint32(1)])


def test_a_wrong_handle_or_result_type_faults():
    arr = np.zeros((4, 4), np.int32)
    with pytest.raises(ptx.PtxFault) as e:
        _tex("tex_2d_f32_f32", arr, [(0.5, 0.5)])
    assert e.value.fault["kind"] == "invalid_texture"
    text = probes.module(["tex_2d_f32_f32"])
    with pytest.raises(ptx.PtxFault) as e:
        ptx.run(text, "tex_2d_f32_f32", grid=1, block=1, args=[np.uint64(5), np.zeros((1, 4), np.uint32),
                                                               np.zeros((1, 4), np.uint32), np.uint32(1)])
    assert "names no texture object" in str(e.value)
    with pytest.raises(LayoutsimError, match="64-bit"):
        ptx.run(text.replace(".param .u64 p_obj", ".param .u32 p_obj").replace("ld.param.u64 %rd1, [p_obj]",
                "ld.param.u32 %r15, [p_obj]"), "tex_2d_f32_f32", grid=1, block=1,
                args=[ptx.TextureArg(np.zeros((2, 2), np.float32)), np.zeros((1, 4), np.uint32),
                      np.zeros((1, 4), np.uint32), np.uint32(1)])


def test_texture_references_and_unmodelled_forms_are_refused():
    head = probes.HEAD + ".global .texref tr;\n"
    with pytest.raises(LayoutsimError, match="texref"):
        ptx.load(head + ".visible .entry k()\n{\n ret;\n}\n")
    body = probes.module(["tex_2d_f32_f32"]).replace("tex.2d.v4.f32.f32", "tex.2dms.v4.f32.f32")
    with pytest.raises(LayoutsimError, match="2dms"):
        ptx.run(body, "tex_2d_f32_f32", grid=1, block=1, args=[ptx.TextureArg(np.zeros((2, 2), np.float32)),
                np.zeros((1, 4), np.uint32), np.zeros((1, 4), np.uint32), np.uint32(1)])


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not installed here")
def test_the_probe_kernels_build_with_ptxas(tmp_path):
    src = tmp_path / "probes.ptx"
    src.write_text(probes.module())
    subprocess.run(["ptxas", "-arch=sm_90", str(src), "-o", str(tmp_path / "p.cubin")], check=True)


def test_the_cli_takes_texture_and_surface_arguments(tmp_path, capsys):
    from layoutsim.cli import main
    (tmp_path / "k.ptx").write_text(probes.module(["tex_2d_f32_f32", "sust_2d_4_zero"]))
    np.save(tmp_path / "img.npy", IMG)
    np.save(tmp_path / "rows.npy", np.array([[2.0, 3.0, 0, 0]], np.float32).view(np.uint32))
    base = ["ptx", "run", str(tmp_path / "k.ptx"), "--grid", "1", "--block", "1"]
    rc = main(base + ["--kernel", "tex_2d_f32_f32", "--arg", f"tex:{tmp_path}/img.npy:filter=linear,address=border",
                      "--arg", str(tmp_path / "rows.npy"), "--arg", "zeros:u32:1x4", "--arg", "u32:1",
                      "--out", str(tmp_path / "o"), "--json"])
    assert rc == 0
    got = np.load(tmp_path / "o" / "arg2.npy").view(np.float32)[0, 0]
    assert got == _linear_doc(IMG, 2.0, 3.0)
    np.save(tmp_path / "s.npy", np.zeros((6, 8), np.uint32))
    np.save(tmp_path / "w.npy", np.array([[8, 1, 0, 77]], np.uint32))
    capsys.readouterr()
    rc = main(base + ["--kernel", "sust_2d_4_zero", "--arg", f"surf:{tmp_path}/s.npy", "--arg",
                      str(tmp_path / "w.npy"), "--arg", "zeros:u32:1x4", "--arg", "u32:1", "--out", str(tmp_path / "p")])
    assert rc == 0 and np.load(tmp_path / "p" / "arg0.npy")[1, 2] == 77
    capsys.readouterr()
    for bad, what in (("tex:img.npy:filtr=linear", "did you mean: filter"), ("tex:img.npy:normalized=2", "valid 0, 1"),
                      ("tex:img.txt", "FILE.npy"), ("surf:s.npy:filter=point", "KEY one of channels, layered")):
        rc = main(base + ["--kernel", "tex_2d_f32_f32", "--arg", bad, "--arg", "zeros:u32:1x4", "--arg",
                          "zeros:u32:1x4", "--arg", "u32:1"])
        err = capsys.readouterr().err
        assert rc == 2 and what in err and len(err.strip().splitlines()) == 1
