"""Compile the Triton corpus here (no GPU) and write what CI replays without Triton:

    python -m gpu_check.triton_corpus.build [--wheels .triton-src] [--out tests/data/triton_corpus]
                                            [--cases NAME,NAME]

writes ptx/<case>.ptx.gz (Triton's PTX, gzip-compressed for sm_90's arch-specific target), manifest.json (per case: the kernel's name,
where it came from, grid, block, dynamic shared bytes, and what each PTX parameter is: a case
argument by index (a host tensor descriptor with the TMA encoding Triton chose for it, which
expands to several parameters: layoutsim.triton.descriptors), or a scratch pointer) and, beside PTX built from a package, its licence files
(licences/<package>/...; Triton's LICENSE as licences/triton-tutorials/LICENSE). Needs Triton (the
pinned version), the wheels of registry.WHEELS and the tutorial files tutorials.py pins (in
--wheels DIR/triton-tutorials/; `python -m gpu_check.triton_corpus.tutorials` prints how to fetch
them). --cases compiles only those cases and keeps every other case's entry and PTX as the manifest
has them.
"""
import argparse
import gzip
import json
import sys
import zipfile
from pathlib import Path

from layoutsim.archs import target_of_device

from . import cases as C
from . import registry, tutorials

ARCH = target_of_device("sm_90")


def compile_case(case, wheels, root="."):
    """(Compiled, source text, parameter plan) of a case, compiled with Triton here."""
    from layoutsim.triton import compile_for
    from layoutsim.triton.launch import layers
    k, source = C.kernel(case, wheels, root)
    args = C.launch_inputs(case)
    c = compile_for(k, *args, arch=ARCH, **C.meta(case))
    fn = layers(k)[1]
    plan, metas = [], iter(c.tensordesc_meta or [])
    for i, p in enumerate(fn.params):
        t = c.signature[p.name]
        if t.startswith("tensordesc"):          # a host tensor descriptor: how Triton's launcher expands it
            plan.append({"arg": i, "desc": next(metas, None)})
        elif t != "constexpr":
            # a parameter after the case's arguments takes its meta value or default (flag_gems'
            # enable_warp_specialization=True): recorded, as the replay has only the case's arguments
            plan.append({"arg": i} if i < len(args) else {"arg": i, "value": C.meta(case).get(p.name, p.default)})
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
    ap.add_argument("--cases", help="comma-separated case names: compile only these, keep the others' entries")
    a = ap.parse_args(argv)
    from layoutsim.files import write_atomic
    out = Path(a.out)
    (out / "ptx").mkdir(parents=True, exist_ok=True)
    chosen = list(C.CASES)
    kept = {}
    if a.cases:
        chosen = [n.strip() for n in a.cases.split(",") if n.strip()]
        unknown = [n for n in chosen if n not in C.CASES]
        if unknown:
            raise SystemExit(f"--cases: no such case: {', '.join(unknown)} (see gpu_check/triton_corpus/cases.py)")
        old = json.loads((out / "manifest.json").read_text()) if (out / "manifest.json").is_file() else {"cases": []}
        kept = {e["case"]: e for e in old["cases"] if e["case"] in C.CASES and e["case"] not in chosen}
        absent = [n for n in C.CASES if n not in chosen and n not in kept]
        if absent:
            raise SystemExit(f"--cases: {out / 'manifest.json'} lacks {', '.join(absent)}: compile those too")
    built = {}
    for case in chosen:
        c, source, plan = compile_case(case, a.wheels)
        write_atomic(out / "ptx" / f"{case}.ptx.gz", gzip.compress(c.ptx.encode(), mtime=0))
        built[case] = entry(case, c, source, plan)
        print(f"{case}: {c.name}, {len(c.ptx)} bytes of PTX ({source})")
    manifest = [built.get(case) or kept[case] for case in C.CASES]
    for pkg, members in registry.LICENCES.items():
        d = out / "licences" / pkg
        d.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(registry.wheel_path(pkg, a.wheels)) as z:
            for m in members:
                write_atomic(d / Path(m).name, z.read(m))
    d = out / "licences" / tutorials.FOLDER
    d.mkdir(parents=True, exist_ok=True)
    write_atomic(d / tutorials.LICENCE, tutorials.read(tutorials.LICENCE, a.wheels))
    versions = {e["triton_version"] for e in built.values()}
    triton = versions.pop() if len(versions) == 1 else manifest[0]["triton_version"]
    write_atomic(out / "manifest.json", json.dumps({"triton": triton, "cases": manifest}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
