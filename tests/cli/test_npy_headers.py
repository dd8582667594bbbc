"""Issue 22: .npy/.npz headers that made numpy's header parser raise tokenize.TokenError (75
inputs of the fuzzing campaign: unbalanced brackets, unterminated triple-quoted strings) and the
other things a crafted header can make it raise. layoutsim.files' readers refuse each with one
line naming the file; the header grammar is also explored with hypothesis.
"""
import struct
import zipfile

import pytest
from hypothesis import given, strategies as st

from layoutsim.errors import LayoutsimError
from layoutsim.files import read_npy, read_npz

GOOD = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"


def npy(header):
    """A .npy file of 16 data bytes with this header (version 2.0 when it needs 32-bit lengths)."""
    v2 = len(header) > 60000
    pre = 12 if v2 else 10
    pad = (-(pre + len(header) + 1)) % 64
    h = header + b" " * pad + b"\n"
    size = struct.pack("<I", len(h)) if v2 else struct.pack("<H", len(h))
    return b"\x93NUMPY" + (b"\x02\x00" if v2 else b"\x01\x00") + size + h + bytes(16)


HEADERS = {
    "unterminated string": b"{'descr': '<f4, 'fortran_order': False, 'shape': (4,), }",
    "unbalanced open": b"{'descr': '<f4', 'fortran_order': False, 'shape': ((4,), }",
    "unbalanced close": b"{'descr': '<f4', 'fortran_order': False, 'shape': (4,))), }",
    "unterminated triple quote": b"{'descr': '''<f4, 'shape': (4,)}",
    "unterminated triple double quote": b"{'descr': \"\"\"abc",
    "trailing backslash": b"{'descr': '<f4', 'shape': (4,)}\\",
    "deep tuple": b"{'descr': '<f4', 'fortran_order': False, 'shape': " + b"(" * 3000 + b")" * 3000 + b", }",
    "deep list": b"[" * 100000 + b"]" * 100000,
    "deep open only": b"{'shape': " + b"[" * 100000,
    "non-ascii key": "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'é': 1}".encode("latin-1"),
    "non-utf8 descr": b"{'descr': '\xff\xfe', 'fortran_order': False, 'shape': (4,), }",
    "NUL": b"{'descr': '<f4'\x00, 'fortran_order': False, 'shape': (4,), }",
    "huge integer": b"{'descr': '<f4', 'fortran_order': False, 'shape': (" + b"9" * 5000 + b",), }",
    "not a dict": b"(1, 2)",
    "unknown dtype": b"{'descr': 'zz', 'fortran_order': False, 'shape': (4,), }",
    "object dtype": b"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
    "wrong size": b"{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }",
}


def _refused(fn):
    with pytest.raises(LayoutsimError) as e:
        fn()
    msg = str(e.value)
    assert "\n" not in msg and len(msg) < 600, msg
    return msg


@pytest.mark.parametrize("name", sorted(HEADERS))
def test_crafted_npy_header_is_one_line(tmp_path, name):
    p = tmp_path / "a.npy"
    p.write_bytes(npy(HEADERS[name]))
    assert str(p) in _refused(lambda: read_npy(p))


@pytest.mark.parametrize("name", sorted(HEADERS))
def test_crafted_npz_member_header_is_one_line(tmp_path, name):
    p = tmp_path / "a.npz"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("a.npy", npy(HEADERS[name]))
    assert "member 'a.npy'" in _refused(lambda: read_npz(p)) or str(p) in _refused(lambda: read_npz(p))


@pytest.mark.parametrize("name", ["unbalanced open", "unbalanced close", "unterminated triple quote"])
def test_token_errors_name_their_cause(tmp_path, name):
    """The campaign's 75 inputs: numpy's header filter raised tokenize.TokenError, not a ValueError."""
    p = tmp_path / "a.npy"
    p.write_bytes(npy(HEADERS[name]))
    assert "not a valid .npy file (TokenError: " in _refused(lambda: read_npy(p))


def test_a_good_header_reads(tmp_path):
    p = tmp_path / "a.npy"
    p.write_bytes(npy(GOOD))
    assert read_npy(p).shape == (4,)


# the pieces numpy's header is written in, plus brackets, quotes and odd bytes
_PIECES = [b"{", b"}", b"(", b")", b"[", b"]", b"'", b'"', b"'''", b'"""', b",", b":", b" ", b"\\", b"#",
           b"'descr'", b"'<f4'", b"'fortran_order'", b"False", b"True", b"'shape'", b"4", b"-1", b"9" * 40,
           b"\x00", b"\xff", b"\xe9", b"\n", b"lambda", b"1e999", b"0x", b"..."]


@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_generated_headers_are_read_or_refused_in_one_line(tmp_path_factory, pieces):
    p = tmp_path_factory.mktemp("h") / "a.npy"
    p.write_bytes(npy(b"".join(pieces)))
    try:
        read_npy(p)
    except LayoutsimError as e:
        assert "\n" not in str(e)
