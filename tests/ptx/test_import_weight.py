"""What `import layoutsim.ptx` leaves out until it is needed (issue 26: a first answer in 0.3 s,
CLI start-up included): the pictures (layoutsim.render, for Run.render_access) and the warp
machine (layoutsim.sim, whose wgmma costing a wgmma imports), as numba."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_import_leaves_out_the_pictures_and_the_machine():
    code = ("import sys, layoutsim.ptx; "
            "print(sorted(m for m in ('layoutsim.render', 'layoutsim.sim', 'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
