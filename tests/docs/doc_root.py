"""The folder the doc tests run documented commands in: docs/build_cookbook.py's `scratch_root`
(a scratch folder laid out like the repository root), loaded from the script so the tests and the
page generator share one layout. Imported by name (this folder is on sys.path for its tests and
when tests/docs/test_doc_outputs.py runs as a script)."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "build_cookbook", Path(__file__).resolve().parents[2] / "docs" / "build_cookbook.py")
build_cookbook = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_cookbook)

scratch_root = build_cookbook.scratch_root
