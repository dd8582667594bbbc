"""tests/blackwell_crosscheck.py, the counts of issue 27's closing note: its layout section counts what
tests/isa/test_tcgen05.py and tests/ptx/test_tcgen05_cute.py compare (CuTe's data in tests/data/cute_sm100
and tests/data/tcgen05_cute, Triton's in tests/data/triton_sm100), every row agreeing; the MMA-Sim
section (where mmasim is installed) counts the cases it compared; bad arguments are one line, exit 2.
The kernels (minutes) are run by their own tests (ORACLE_KERNELS)."""
import json

import pytest

import blackwell_crosscheck as X
from blackwell_oracle import HAVE_MMASIM


def test_the_layout_counts_and_a_few_mmasim_cases(capsys):
    assert X.main(["--no-kernels", "--cases", "256", "--only", "mxf4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    counts = [(s["compared"], s["agree"]) for s in doc["layouts"]]
    # 74 CuTe TMEM load atoms, 8 UMMA::tmem_frg, 7 tmem_sf_frg (4 one-SM, 3 ScaleFactorDuplicated2by2) and
    # 12 tmem_e_frg(_ws) layouts, CuTe's
    # instruction descriptors (tests/data/tcgen05_cute/manifest.json), Triton's 6 accumulator-load configurations,
    # CuTe's 6 SM100 UTCCP atoms (tcgen05.cp) and 48 SM120 scale-register maps (4 MMAs x Table 37's selectors)
    assert counts == [(74, 74), (8, 8), (7, 7), (12, 12), (7, 7), (6, 6), (6, 6), (48, 48)]
    assert all(s["values"] > 0 and not s["differ"] for s in doc["layouts"])
    if HAVE_MMASIM:
        kinds = {r["kind"]: r for r in doc["numerics"]}
        assert set(kinds) == {"mxf4", "mxf4nvf4 ue4m3", "mxf4nvf4 ue8m0 x2", "sm_120 mxf4", "sm_120 mxf4nvf4 ue4m3"}
        assert all(r["cases"] >= 256 and r["differ"] == 0 for r in kinds.values())
    else:
        assert "mmasim" in doc["numerics_skipped"] and doc["numerics"] is None


def test_the_text_output_says_what_was_compared(capsys):
    assert X.main(["--no-kernels", "--cases", "1", "--only", "no such kind"]) == 0
    out = capsys.readouterr().out
    assert "74 / 74   agree" in out and "no Blackwell GPU here" in out


def test_bad_arguments_are_one_line(capsys):
    assert X.run_script(X.main, X.PROG, ["--cases", "0"]) == 2
    assert capsys.readouterr().err.strip().endswith("--cases 0: give 1 to 100000000 dot products per kind")
    with pytest.raises(SystemExit) as e:
        X.main(["--nonsense"])
    assert e.value.code == 2 and "unrecognized arguments: --nonsense" in capsys.readouterr().err
