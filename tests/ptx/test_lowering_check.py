"""The lowering's check that tagging every instruction with its PTX line changed nothing but the
line table (layoutsim/ptx/lowering.py): equal code bytes in the two cubins settle it without a
second nvdisasm run; differing bytes fall back to comparing the two disassemblies, and a tagging
that changed the SASS is refused. The ELF64 section-header layout read here is the System V gABI's
("Sections": e_shoff at 0x28, e_shentsize/e_shnum/e_shstrndx at 0x3A; 64-byte headers whose
sh_offset/sh_size are the 5th/6th fields)."""
import gzip
import struct
import subprocess
from pathlib import Path

import pytest

from layoutsim.ptx import lowering as L

ROOT = Path(__file__).resolve().parents[2]
PTX = gzip.decompress((ROOT / "tests/data/triton_corpus/ptx/vector_add.ptx.gz").read_bytes()).decode()
TOOLS = L.find_ptxas() is not None and L.find_nvdisasm() is not None
needs_tools = pytest.mark.skipif(not TOOLS, reason=f"needs ptxas and nvdisasm ({L.install_hint('ptxas', 'nvdisasm')})")


@pytest.fixture
def calls(monkeypatch):
    """The tools lower() runs, by name, in order."""
    seen, real = [], L._result
    monkeypatch.setattr(L, "_result", lambda cmd: seen.append(Path(cmd[0]).name) or real(cmd))
    return seen


def cubin(tmp_path, ptx, lineinfo=False):
    (tmp_path / "k.ptx").write_text(ptx)
    subprocess.run([L.find_ptxas(), "-arch=sm_90a", *(["-lineinfo"] if lineinfo else []), "-o",
                    str(tmp_path / "k.cubin"), str(tmp_path / "k.ptx")], check=True)
    return (tmp_path / "k.cubin").read_bytes()


@needs_tools
def test_equal_code_bytes_need_one_nvdisasm_run(calls):
    rows, _ = L.lower(PTX, "sm_90a", keep=None)
    assert calls.count("nvdisasm") == 1 and calls.count("ptxas") == 2
    assert any(r["op"] == "ld.global.b32" and r["line"] == 55 for r in rows["vector_add"])


@needs_tools
def test_differing_bytes_compare_the_disassemblies(calls, monkeypatch):
    quick, _ = L.lower(PTX, "sm_90a", keep=None)
    calls.clear()
    monkeypatch.setattr(L, "same_code", lambda a, b: False)
    full, _ = L.lower(PTX, "sm_90a", keep=None)
    assert calls.count("nvdisasm") == 2 and full == quick


@needs_tools
def test_a_tagging_that_changes_the_sass_is_refused(monkeypatch):
    """The tagged file adds where the given one multiplies: its code bytes differ, and so do the
    instruction streams: the lowering is refused, never attributed to the tagged file's lines."""
    real = L.with_ptx_lines
    monkeypatch.setattr(L, "with_ptx_lines", lambda p: real(p).replace("add.f32", "mul.f32"))
    with pytest.raises(L.LoweringError, match="vector_add: the line-tagged PTX assembles to different SASS"):
        L.lower(PTX, "sm_90a")


@needs_tools
def test_code_sections_are_the_code_alone(tmp_path):
    plain = cubin(tmp_path, PTX)
    tagged = cubin(tmp_path, L.with_ptx_lines(PTX), lineinfo=True)
    assert plain != tagged and L.same_code(plain, tagged)          # the line tables differ, the code not
    text = L.code_sections(plain)[".text.vector_add"]
    at = plain.index(text)
    flipped = plain[:at + 16] + bytes([plain[at + 16] ^ 1]) + plain[at + 17:]
    assert not L.same_code(plain, flipped)


@needs_tools
def test_unreadable_cubins_are_never_the_same(tmp_path):
    good = cubin(tmp_path, PTX)
    shnum_past_end = good[:0x3C] + struct.pack("<H", 0xFFFF) + good[0x3E:]
    for bad in (b"", b"\x7fELF", good[:100], b"\x7fELF\x01" + good[5:], shnum_past_end):
        assert L.code_sections(bad) is None and not L.same_code(bad, bad)
    assert not L.same_code(b"", b"")


@needs_tools
@pytest.mark.parametrize("path", ["tests/data/kernels/cp_async_pipeline.sm_90.ptx", "tests/data/kernels/histogram_atomics.sm_90.ptx"])
def test_nvdisasm_without_its_dataflow_analysis_gives_the_same_rows(monkeypatch, path):
    """NO_DATAFLOW: the analysis only labels indirect jumps' targets; the rows (each PTX line's
    SASS opcodes) of kernels with loops and branches are the same with it and without."""
    ptx = (ROOT / path).read_text()
    quick, _ = L.lower(ptx, "sm_90", keep=None)
    monkeypatch.setattr(L, "NO_DATAFLOW", ())
    assert L.lower(ptx, "sm_90", keep=None)[0] == quick and quick
