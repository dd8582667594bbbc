"""sfu.table's cache of decoded MUFU tables (files.cache_dir("sfu"), under the table's SHA-256):
a later process reads the file instead of decoding again, and gets the very bits the decoding
gives (checked against the SHA-256 recorded at the H200 measurement, data/sfu_sm90/measured.json);
a file that is not this table (wrong length or dtype, a symbolic link) is ignored and rewritten."""
import os

import numpy as np

from layoutsim.numerics import sfu, sfu_tables

KEY = ("ex2", "T0_F23")


def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("LAYOUTSIM_CACHE", str(tmp_path))
    sfu.table.cache_clear()
    meta = sfu.measured()["tables"][".".join(KEY)]
    return meta, tmp_path / "sfu" / f"{meta['sha256']}.npy"


def test_decoded_table_is_kept_and_read_back(monkeypatch, tmp_path):
    meta, f = _fresh(monkeypatch, tmp_path)
    first = sfu.table(*KEY)
    assert f.is_file()
    sfu.table.cache_clear()
    again = sfu.table(*KEY)                         # from the file now
    assert again.dtype == np.uint32 and sfu_tables.sha256(again) == meta["sha256"]
    assert np.array_equal(first, again)
    sfu.table.cache_clear()


def test_a_file_that_is_not_the_table_is_ignored(monkeypatch, tmp_path):
    meta, f = _fresh(monkeypatch, tmp_path)
    f.parent.mkdir(parents=True)
    np.save(f, np.zeros(16, np.uint32))              # wrong length
    t = sfu.table(*KEY)
    assert sfu_tables.sha256(t) == meta["sha256"]
    assert np.load(f).shape == (meta["n"],)          # rewritten
    sfu.table.cache_clear()
    f.unlink()
    os.symlink(tmp_path / "elsewhere.npy", f)        # a link is never read
    assert sfu_tables.sha256(sfu.table(*KEY)) == meta["sha256"]
    sfu.table.cache_clear()
