"""Compile the Triton corpus here (no GPU) and write what CI replays without Triton:

    python -m gpu_check.triton_corpus.build [--wheels .triton-src] [--out tests/data/triton_corpus]

writes ptx/<case>.ptx.gz (Triton's PTX, gzip-compressed for sm_90's arch-specific target), manifest.json (per case: the kernel's name,
where it came from, grid, block, dynamic shared bytes, and what each PTX parameter is: a case
argument by index, or a scratch pointer) and, beside PTX built from a package, its licence files
(licences/<package>/...). Needs Triton (the pinned version) and the wheels of registry.WHEELS.
"""
import argparse
import gzip
import json
import sys
import zipfile
from pathlib import Path

from layoutsim.archs import target_of_device

from . import cases as C
from . import registry

ARCH = target_of_device("sm_90")


def compile_case(case, wheels, root="."):
    """(Compiled, source text, parameter plan) of a case, compiled with Triton here."""
    from layoutsim.triton import compile_for
    from layoutsim.triton.launch import layers
    k, source = C.kernel(case, wheels, root)
    args = C.launch_inputs(case)
    c = compile_for(k, *args, arch=ARCH, **C.meta(case))
    fn = layers(k)[1]
    plan = [i for i, p in enumerate(fn.params) if c.signature[p.name] != "constexpr"]
    plan = [{"arg": i} for i in plan]
    plan += [{"scratch": "global", "bytes_per_cta": c.global_scratch_size},
             {"scratch": "profile", "bytes_per_cta": c.profile_scratch_size}]
    return c, source, plan


def entry(case, c, source, plan):
    return {"case": case, "kernel": c.name, "source": source, "grid": list(C.grid(case)),
            "block": 32 * c.num_warps, "shared_bytes": c.shared, "params": plan, "signature": c.signature,
            "constexprs": c.constexprs, "triton_version": c.triton_version, "arch": ARCH,
            "ptx": f"ptx/{case}.ptx.gz"}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.triton_corpus.build", description=__doc__.splitlines()[0])
    ap.add_argument("--wheels", default=".triton-src")
    ap.add_argument("--out", default="tests/data/triton_corpus")
    a = ap.parse_args(argv)
    from layoutsim.files import write_atomic
    out = Path(a.out)
    (out / "ptx").mkdir(parents=True, exist_ok=True)
    manifest = []
    for case in C.CASES:
        c, source, plan = compile_case(case, a.wheels)
        write_atomic(out / "ptx" / f"{case}.ptx.gz", gzip.compress(c.ptx.encode(), mtime=0))
        manifest.append(entry(case, c, source, plan))
        print(f"{case}: {c.name}, {len(c.ptx)} bytes of PTX ({source})")
    for pkg, members in registry.LICENCES.items():
        d = out / "licences" / pkg
        d.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(registry.wheel_path(pkg, a.wheels)) as z:
            for m in members:
                write_atomic(d / Path(m).name, z.read(m))
    write_atomic(out / "manifest.json", json.dumps({"triton": manifest[0]["triton_version"], "cases": manifest},
                                                     indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
