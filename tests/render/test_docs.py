"""The docs generators run: the cookbook (one recipe, into a temp folder) and the validation page."""
import importlib.util
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "docs", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cookbook_recipe_runs(tmp_path):
    cb = load("build_cookbook")
    assert cb.main(["--only", "lane13", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "cookbook.md").read_text()
    assert "$ layoutsim query mma.m16n8k16.f32.f16.f16.f32 --operand C --lane 13" in text
    assert "c2 = C[11][2]" in text                       # real output, not a restatement
    assert (tmp_path / "img" / "mma-C-lane13.svg").stat().st_size > 10000


def test_cookbook_marks_missing_parts_pending(tmp_path, monkeypatch):
    cb = load("build_cookbook")
    monkeypatch.setattr(cb, "RECIPES", [("x", "Pending", [("py", "import layoutsim.not_written_yet\n")])])
    md, problems = cb.build_cookbook(str(tmp_path))
    assert "Not available yet" in md and problems and "pending" in problems[0]


def test_every_recipe_command_is_layoutsim():
    cb = load("build_cookbook")
    for rid, title, items in cb.RECIPES:
        for item in items:
            if item[0] == "sh":
                assert item[1].startswith("layoutsim "), item[1]
            if item[0] == "img":
                assert any(i[0] == "sh" and item[1] in i[1] for i in items), item[1]


def test_validation_page(tmp_path):
    val = load("build_validation")
    reports = tmp_path / "reports"
    reports.mkdir()
    out = tmp_path / "validation.md"
    assert val.main(["--reports", str(reports), "--out", str(out)]) == 0
    assert "No gpu-check report is committed yet" in out.read_text()
    rep = {"format": 1, "tool": "gpu-check", "command": ["gpu-check", "run"],
           "environment": {"gpu": "NVIDIA H200", "compute_capability": "9.0", "arch": "sm_90",
                           "date": "2026-11-30"},
           "build": {}, "groups": {"layouts": {"entries": 2, "checks": 3, "cases": 10, "compared": 10,
                                               "mismatches": 0, "seconds": 1.0}},
           "totals": {"entries": 2, "checks": 3, "cases": 10, "compared": 10, "mismatches": 0,
                      "failed": 0, "errors": 0},
           "exit_code": 0, "results": [], "sass": {}}
    (reports / "h200.json").write_text(json.dumps(rep))
    assert val.main(["--reports", str(reports), "--out", str(out)]) == 0
    text = out.read_text()
    assert "NVIDIA H200" in text and "layouts" in text
    assert "could not render" not in text           # gpu_check's writer, not the fallback
    assert val.main(["--reports", str(reports), "--out", str(out), "--check"]) == 0


def test_committed_validation_page_is_gpu_checks_rendering_of_the_committed_reports():
    # The page in the repository, not one in a temp folder: each committed report rendered by
    # gpu_check.report.markdown itself (an exception there fails here instead of falling back to
    # the plainer page), and the committed page is exactly what the build gives.
    import glob
    from gpu_check.report import markdown
    val = load("build_validation")
    page = open(os.path.join(ROOT, "docs", "validation.md"), encoding="utf-8").read()
    reports = sorted(glob.glob(os.path.join(ROOT, "docs", "validation", "*.json")))
    assert len(reports) >= 4
    for path in reports:
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            rendered = val._demote(markdown(json.load(f), rel))
        assert rendered in page, f"{rel} is not on docs/validation.md as gpu_check renders it"
    assert "could not render" not in page
    assert page == val.build(os.path.join(ROOT, "docs", "validation"))
