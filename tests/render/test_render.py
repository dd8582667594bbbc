"""Pictures: SVG/HTML structure, PNG output, the render CLI and its errors."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from layoutsim.cli import main

SVG = "{http://www.w3.org/2000/svg}"
MMA = "mma.m16n8k16.f32.f16.f16.f32"


def cells(path):
    root = ET.parse(path).getroot()
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "cell"]


def texts(g):
    return [t.text for t in g.iter(f"{SVG}text")]


def render(tmp_path, *args, name="out.svg"):
    out = tmp_path / name
    rc = main(["render", *args, "-o", str(out), "--json"])
    return rc, out


def test_svg_mma_c_cells_and_lane13(tmp_path, capsys):
    rc, out = render(tmp_path, MMA, "--operand", "C")
    assert rc == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["file"] == str(out) and rec["format"] == "svg" and rec["cells"] == 128
    cs = cells(out)
    assert len(cs) == 16 * 8
    c = {(int(g.get("data-row")), int(g.get("data-col"))): g for g in cs}
    assert texts(c[(11, 2)]) == ["T13", "c2"]          # c2 of lane 13 is C[11][2]
    assert texts(c[(3, 3)]) == ["T13", "c1"]
    assert c[(11, 2)].get("data-lane") == "13"
    assert "C[11][2]" in c[(11, 2)].find(f"{SVG}title").text


def test_svg_highlight_lane_and_reg(tmp_path):
    rc, out = render(tmp_path, MMA, "--operand", "A", "--lane", "13")
    assert rc == 0
    bold = [g for g in cells(out) if any(t.get("font-weight") == "bold" for t in g.iter(f"{SVG}text"))]
    assert len(bold) == 8 and all(g.get("data-lane") == "13" for g in bold)
    rc, out = render(tmp_path, MMA, "--operand", "C", "--reg", "c2", name="r.svg")
    bold = [g for g in cells(out) if any(t.get("font-weight") == "bold" for t in g.iter(f"{SVG}text"))]
    assert len(bold) == 32 and {g.get("data-reg") for g in bold} == {"c2"}


def test_ldmatrix_x4_four_matrices(tmp_path):
    rc, out = render(tmp_path, "ldmatrix.x4")
    cs = cells(out)
    assert len(cs) == 4 * 64
    assert {g.get("data-matrix") for g in cs} == {"0", "1", "2", "3"}
    g = next(g for g in cs if (g.get("data-matrix"), g.get("data-row"), g.get("data-col")) == ("2", "1", "3"))
    assert texts(g) == ["T5", "r2.hi"]                 # lane 4*1 + 3//2, register 2, high half


def test_replicated_layout_names_every_holder(tmp_path):
    rc, out = render(tmp_path, "v_wmma_f32_16x16x16_f16", "--arch", "gfx1100", "--operand", "A")
    assert rc == 0
    g = next(g for g in cells(out) if (g.get("data-row"), g.get("data-col")) == ("3", "0"))
    assert g.get("data-lane") == "3 19"
    assert texts(g)[0] == "T3 T19"


def test_big_grid_labels_fit(tmp_path):
    """64x256 wgmma D: every label fits its cell, no two cells overlap."""
    from layoutsim import get
    from layoutsim.render import fragment_scene
    from layoutsim.render.scene import BOLD_EM, Rect, Text
    inst = get("wgmma.m64n256k16.f32.bf16.bf16")
    scene = fragment_scene(inst, inst.operand("D"), "sm_90")
    groups = scene.groups("cell")
    assert len(groups) == 64 * 256
    rects = [next(i for i in g.items if isinstance(i, Rect)) for g in groups]
    w = rects[0].w
    for g in groups[:2000]:
        for t in (i for i in g.items if isinstance(i, Text)):
            assert len(t.text) * BOLD_EM * t.size <= w
            assert t.size >= 8
    assert len({(r.x, r.y) for r in rects}) == len(rects)


def test_html_page(tmp_path):
    rc, out = render(tmp_path, MMA, "--operand", "C", name="c.html")
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<svg" in text and "<script>" in text
    assert text.count('class="cell"') == 128
    assert 'data-lane="13"' in text


def test_png_written(tmp_path):
    pytest.importorskip("matplotlib")
    rc, out = render(tmp_path, MMA, "--operand", "C", "--lane", "13", name="c.png")
    assert rc == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000
    from PIL import Image
    im = Image.open(out).convert("RGB")
    assert len(im.resize((200, 200)).getcolors(maxcolors=100000)) > 20     # more than a blank page


def test_png_without_matplotlib(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    rc = main(["render", MMA, "--operand", "C", "-o", str(tmp_path / "c.png")])
    err = capsys.readouterr().err
    assert rc == 2 and "matplotlib" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c.png").exists()


def test_atomic_write_leaves_no_temp(tmp_path):
    render(tmp_path, MMA, "--operand", "C")
    render(tmp_path, MMA, "--operand", "D")           # overwrites in place
    assert sorted(os.listdir(tmp_path)) == ["out.svg"]


def test_bank_access_picture(tmp_path, capsys):
    rc, out = render(tmp_path, "--banks", "--op", "ldmatrix.x4",
                     "--addr", "(lane%8)*128 + (lane//8)*16", "--addr", "(lane%8)*144 + (lane//8)*16")
    assert rc == 0
    rec = json.loads(capsys.readouterr().out)
    assert [a["wavefronts"] for a in rec["accesses"]] == [32, 4]
    conflict = [g for g in cells(out) if g.get("data-conflict") == "1"]
    assert len(conflict) == 4 * 32                      # every word of the 128 B pitch conflicts
    assert {g.get("data-phase") for g in conflict} == {"0", "1", "2", "3"}


def test_bank_tile_layouts_side_by_side(tmp_path, capsys):
    rc, out = render(tmp_path, "--banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--pad", "0",
                     "--layout", "pad=8", "--layout", "swizzle=2,3,3", "--fragment", f"{MMA}:A", "--at", "16,16")
    assert rc == 0
    rec = json.loads(capsys.readouterr().out)
    assert [a["layout"] for a in rec["accesses"]] == ["64x32 f16", "64x32 f16, pitch 40 (8 pad)",
                                                      "64x32 f16, Swizzle<2,3,3>"]
    assert [a["wavefronts"] for a in rec["accesses"]] == [16, 4, 4]
    assert rec["accesses"][1]["padding_bytes"] == 64 * 8 * 2
    pads = [g for g in cells(out) if g.get("data-pad") == "1"]
    assert len(pads) == 16 * 4                          # rows 16-31 shown, 4 padding words each


@pytest.mark.parametrize("args, needle", [
    (["mma.m16n8k99"], "unknown instruction"),
    ([MMA, "--operand", "Q"], "no operand"),
    ([MMA, "--operand", "C", "--lane", "40"], "lane 40 out of range"),
    ([MMA, "--operand", "C", "--reg", "c9"], "no register 'c9'"),
    ([MMA, "--operand", "C", "--format", "jpg"], "unknown format"),
    ([MMA, "--operand", "C", "--rows", "20"], "row 20 out of range"),
    ([MMA, "--operand", "C", "--phase", "3"], "phase 3 out of range"),
    ([], "give an instruction"),
    (["--banks", "--op", "ld.shared.v4.b32", "--addr", "lane*4"], "not 16-byte aligned"),
    (["--banks", "--op", "ld.shared.v4.b32"], "give the addresses"),
    (["--banks", "--op", "ld.shared.b32", "--addr", "lane**2"], "not allowed"),
    (["--banks", "--op", "ldmatrix.x4", "--tile", "64x32", "--layout", "pod=8"], "did you mean: pad"),
    (["--banks", "--op", "ld.shared.b32", "--pad", "8", "--addr", "lane*4"], "give --tile"),
    ([MMA, "--banks", "--op", "ld.shared.b32", "--addr", "lane"], "not both"),
])
def test_errors_one_line_exit_2(tmp_path, capsys, args, needle):
    rc = main(["render", *args, "-o", str(tmp_path / "x.svg")])
    err = capsys.readouterr().err
    assert rc == 2
    assert needle in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.svg").exists()


def test_unknown_extension_and_missing_folder(tmp_path, capsys):
    assert main(["render", MMA, "--operand", "C", "-o", str(tmp_path / "x.gif")]) == 2
    assert main(["render", MMA, "--operand", "C", "-o", str(tmp_path / "no" / "x.svg")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "give --format" in err[0] and "does not exist" in err[1]


def test_import_layoutsim_does_not_import_matplotlib():
    code = "import sys, layoutsim, layoutsim.cli; layoutsim.cli.build_parser(); print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert out.stdout.strip() == "False"


def test_cdna_bank_pictures_are_wave64_with_the_archs_banks(tmp_path, capsys):
    """gfx942: two phases of 32 lanes over 32 banks; gfx950: one phase of 64 lanes over 64 banks
    of 4 bytes (layoutsim/banks/amd.py), so a word at byte 128 sits in bank 32, not 0."""
    rc, out = render(tmp_path, "--banks", "--op", "ds_read_b32", "--arch", "gfx942", "--addr", "lane*4")
    rec = json.loads(capsys.readouterr().out)["accesses"][0]
    got = cells(out)
    assert rc == 0 and rec["wavefronts"] == 2 and len(got) == 64
    assert {g.get("data-phase") for g in got} == {"0", "1"} and max(int(g.get("data-bank")) for g in got) == 31
    rc, out = render(tmp_path, "--banks", "--op", "ds_read_b32", "--arch", "gfx950", "--addr", "lane*128", name="b.svg")
    rec = json.loads(capsys.readouterr().out)["accesses"][0]
    got = cells(out)
    assert rc == 0 and rec["wavefronts"] == 32 and len(got) == 64        # banks 0 and 32, 32 words each
    assert {(int(g.get("data-word")), g.get("data-bank")) for g in got if int(g.get("data-word")) < 512} == \
        {(0, "0"), (128, "32"), (256, "0"), (384, "32")}
    assert all(g.get("data-conflict") == "1" for g in got)
    # a tile: pitch 256 bytes puts lanes 32-63 on the same 32 gfx950 banks as lanes 0-31
    rc, out = render(tmp_path, "--banks", "--op", "ds_read_b32", "--arch", "gfx950", "--tile", "64x32",
                     "--dtype", "f32", "--pitch", "64", "--fill", name="t.svg")
    rec = json.loads(capsys.readouterr().out)["accesses"][0]
    assert rc == 0 and (rec["wavefronts"], rec["ideal"]) == (2, 1)
