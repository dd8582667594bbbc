"""Swizzle / padding search. Expected values: bank arithmetic on the tiles (see docs/banks.md)."""
import pytest

from layoutsim import banks
from layoutsim.banks import Swizzle, Tile
from layoutsim.errors import LayoutsimError


def test_128x64_f16_ldmatrix_and_128bit_stores():
    # Its speed (target < 1 s) is measured by benchmarks/bench_search.py, not here.
    r = banks.search(128, 64, "f16", reads=["ldmatrix.x4"], writes=["st.shared.v4.b32"])
    assert r.accesses == {"ldmatrix.x4": 32, "st.shared.v4.b32": 32}
    best = r.best
    assert best.tile.swizzle == Swizzle(3, 3, 3)            # CuTe's 128-byte swizzle for f16
    assert (best.reads, best.writes, best.total, best.ideal, best.wasted_bytes) == (128, 128, 256, 256, 0)
    pad8 = next(c for c in r.candidates if c.tile.swizzle is None and c.tile.row_pitch == 72)
    assert (pad8.total, pad8.wasted_bytes) == (256, 128 * 16)
    assert r.candidates.index(pad8) == 1                    # ties on wavefronts, loses on bytes
    plain = r.baseline()
    assert (plain.reads, plain.writes) == (1024, 128)       # 128-byte rows: 8-way on every matrix


def test_search_ranks_by_wavefronts_then_bytes():
    r = banks.search(64, 32, "f16")
    totals = [c.total for c in r.candidates]
    assert totals == sorted(totals)
    for a, b in zip(r.candidates, r.candidates[1:]):
        if a.total == b.total:
            assert a.wasted_bytes <= b.wasted_bytes


def test_search_weights_and_other_ops():
    r = banks.search(32, 32, "f32", reads=["ld.shared.b32"], writes=["st.shared.v4.b32"], read_weight=4)
    assert r.weights == (4, 1)
    assert r.best.total == 4 * r.best.reads + r.best.writes
    r = banks.search(64, 64, "f16", reads=["ds_read_b128"], writes=["ds_write_b128"], arch="gfx1201")
    assert r.arch == "gfx1201" and r.best.total == r.best.ideal


def test_search_explicit_tiles_and_errors():
    r = banks.search(64, 64, "f16", tiles=[Tile(64, 64, "f16"), Tile(64, 64, "f16", pad=8)])
    assert [c.tile.row_pitch for c in r.candidates] == [72, 64]
    j = r.to_json()
    assert j["candidates"][0]["pitch"] == 72 and j["baseline"]["pitch"] == 64
    top = r.to_json(top=1)
    assert [c["pitch"] for c in top["candidates"]] == [72] and top["considered"] == 2
    with pytest.raises(LayoutsimError, match="not a whole number"):
        banks.search(60, 64, "f16")
    with pytest.raises(LayoutsimError, match="give it as a write"):
        banks.search(64, 64, "f16", reads=["st.shared.v4.b32"], writes=[])
    with pytest.raises(LayoutsimError, match="at least one"):
        banks.search(64, 64, "f16", reads=[], writes=[])


def test_baseline_total_and_matrix_access_counts():
    # the unpadded, unswizzled layout is costed like every other: weights times wavefronts
    r = banks.search(32, 32, "f32", reads=["ld.shared.b32"], writes=["st.shared.v4.b32"], read_weight=4)
    b = r.baseline()
    assert b.total == 4 * b.reads + b.writes and b.reads == 32
    # explicit tiles without the plain one: it is costed and appended as the baseline
    r = banks.search(32, 32, "f32", reads=["ld.shared.b32"], writes=["st.shared.v4.b32"], read_weight=4,
                     write_weight=3, tiles=[Tile(32, 32, "f32", pad=4)])
    b = r.baseline()
    assert b.tile.row_pitch == 32 and b.total == 4 * b.reads + 3 * b.writes and b.reads == 32
    # ldmatrix.x1 moves 8x8 f16 blocks (64 of them in 64x64), .x4 16x16 blocks (16)
    from layoutsim.banks.search import accesses
    assert accesses(Tile(64, 64, "f16"), "ldmatrix.x1").shape == (64, 32)
    assert accesses(Tile(64, 64, "f16"), "ldmatrix.x4").shape == (16, 32)


def test_sass_spellings_as_cuobjdump_prints_them():
    # tests/data/banks/sass.txt (cuobjdump -sass of the H200 probe): LDSM.16.M88 is x1, .2 x2, .4 x4
    assert [banks.parse_op(s).name for s in ("LDSM.16.M88", "LDSM.16.M88.2", "LDSM.16.MT88.4",
                                             "STSM.16.M88")] == [
        "ldmatrix.x1", "ldmatrix.x2", "ldmatrix.x4.trans", "stmatrix.x1"]
    assert [banks.parse_op(n).sass for n in ("ldmatrix.x1", "ldmatrix.x2", "ldmatrix.x4.trans")] == [
        "LDSM.16.M88", "LDSM.16.M88.2", "LDSM.16.MT88.4"]


def test_candidate_paddings_stop_at_the_shared_memory_limit():
    # 8 rows of 64 halfs padded by p: the last element ends at (7 * (64 + p) + 64) * 2 bytes;
    # p = 8 ends at 1136, p = 16 at 1248: a limit of 1136 keeps 0 and 8
    from layoutsim.banks.search import candidate_tiles
    pads = [t.pad for t in candidate_tiles(8, 64, "f16", 16, max_pad_bytes=64, limit=1136)
            if getattr(t, "swizzle", None) is None and t.pad is not None]
    assert sorted(set(pads)) == [0, 8]


def test_search_reports_its_weights_and_time():
    from layoutsim.banks.search import search
    r = search(16, 64, "f16", read_weight=3, write_weight=2)
    doc = r.to_json(top=1)
    assert doc["weights"] == {"read": 3, "write": 2}
    assert 0 <= r.seconds < 600 and f"ranked in {r.seconds:.2f} s" in r.format()


def test_sass_spellings_give_the_access_width():
    from layoutsim.banks.ops import parse
    got = {s: parse(s).width for s in ("LDS.U8", "LDS.S8", "LDS.U16", "LDS.S16", "LDS", "LDS.64", "LDS.128",
                                        "STS.16")}
    assert got == {"LDS.U8": 1, "LDS.S8": 1, "LDS.U16": 2, "LDS.S16": 2, "LDS": 4, "LDS.64": 8,
                   "LDS.128": 16, "STS.16": 2}
