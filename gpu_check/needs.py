"""What a measurement on the GPU needs of this machine (an NVIDIA GPU, and ncu or pycuda), checked
before it compiles or writes anything: one line naming what is missing, for the driver to print
and exit 2 (the probes' drivers: bank_probe, coalesce_probe, sfu)."""
import glob
import importlib.util
import shutil
import subprocess
import sys


def gpu_missing():
    """Why no NVIDIA GPU is usable here (one phrase), or None."""
    if glob.glob("/dev/nvidia[0-9]*"):
        return None
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "no NVIDIA GPU here (no /dev/nvidia0, no nvidia-smi)"
    if "GPU" in out:
        return None
    return "no NVIDIA GPU here (no /dev/nvidia0, and nvidia-smi -L lists none)"


def gpu_name():
    """'NAME, DRIVER' of the first GPU as nvidia-smi gives them (what a measurement records), or None."""
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip().splitlines()[0] if r.stdout.strip() else None


def missing(tool, ncu=None, pycuda=False):
    """None when this machine can run `tool`; else the line to print: '<tool> needs an NVIDIA GPU
    with ncu: <what is missing>'. ncu: the ncu program the driver would run (None: not needed)."""
    needs = (["ncu"] if ncu else []) + (["pycuda"] if pycuda else [])
    why = [w for w in (gpu_missing(),) if w]
    if ncu and shutil.which(ncu) is None:
        why.append(f"ncu (Nsight Compute) not found ({ncu}); export PATH=/usr/local/cuda/bin:$PATH or give --ncu")
    if pycuda and importlib.util.find_spec("pycuda") is None:
        why.append("pycuda is not installed (pip install pycuda)")
    if not why:
        return None
    return (f"{tool} needs an NVIDIA GPU with {'/'.join(needs)}: {'; '.join(why)} (--dry-run tests the driver "
            f"without one; it measures nothing)")


def refuse(tool, args, ncu=None, pycuda=False):
    """A driver's first step: 2 after printing missing(...)'s line, or None when it can run (or
    args.dry_run, which measures nothing)."""
    why = None if args.dry_run else missing(tool, ncu=ncu, pycuda=pycuda)
    if why:
        print(why, file=sys.stderr)
        return 2
    return None
