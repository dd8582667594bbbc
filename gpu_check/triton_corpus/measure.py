"""The Triton corpus on the GPU (H200), through Triton's own launcher, and under Nsight Compute.

    python -m gpu_check.triton_corpus.measure --out DIR [--wheels .triton-src] [--runs 5]
                                              [--cases NAME,NAME | --new]

Needs: an NVIDIA GPU, torch with CUDA, Triton (the version of tests/data/triton_corpus/manifest.json),
ncu, and the wheels of registry.WHEELS in --wheels, the Triton tutorial files tutorials.py pins in
--wheels/triton-tutorials/ (no network; only the sources of the cases measured are read). For every
case of cases.py (or those --cases names, or with --new those no batch in tests/data/triton_corpus/h200 measured yet;
`python -m gpu_check.triton_corpus.merge DIR` then adds DIR to tests/data/triton_corpus/h200/):
  1. `kernel[grid](*tensors, **meta)` (Triton compiles it on this machine and launches its cubin)
     on the case's inputs copied to the GPU (host-to-device copies only: no torch kernel runs);
     the PTX Triton compiled here is compared with the committed ptx/<case>.ptx.gz, byte for byte
     (ptx_identical) and without the lines that name install paths (ptx_code_identical, cases.code_of;
     the PTX is kept in the record only where that differs);
     every array argument's final content goes to DIR/outputs.npz as "<case>/argN";
     the launch is repeated --runs times on fresh copies (the outputs must not change);
  2. the same launches under ncu (`--kernel-name` the corpus's kernels only): shared ld/st
     wavefronts and global ld/st requests and sectors of every run (DIR/results.json "runs").
DIR/results.json also records the GPU, driver, CUDA, torch and Triton versions and the date.
Runs in about a minute on an H200; writes well under 16 MiB.
"""
import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from gpu_check.needs import gpu_name
from layoutsim.files import source_tree

from . import cases as C
from .inputs import ml_dtype
from . import replay as R

ROOT = source_tree()
CORPUS = ROOT / "tests" / "data" / "triton_corpus"


def selected(names=None, new=False, h200=CORPUS / "h200"):
    """The cases to measure, in cases.py's order: all, those named (comma-separated), or with
    `new` those no batch in `h200` holds."""
    if names:
        want = [n.strip() for n in names.split(",") if n.strip()]
        unknown = [n for n in want if n not in C.CASES]
        if unknown:
            raise SystemExit(f"--cases: no such case: {', '.join(unknown)} (see gpu_check/triton_corpus/cases.py)")
        return [c for c in C.CASES if c in want]
    if new:
        done = R.measurements(h200)
        return [c for c in C.CASES if c not in done]
    return list(C.CASES)


def torch_args(args, device="cuda"):
    """The case's arrays as torch tensors on `device` (bf16/fp8 arrays of ml_dtypes through their bits)."""
    import torch
    out, owners = [], {}
    for a in args:
        if isinstance(a, C.DescInput):       # a TensorDescriptor over a view of a tensor (one per array)
            from triton.tools.tensor_descriptor import TensorDescriptor
            owner = owners.get(id(a.owner))
            if owner is None:
                owner = owners[id(a.owner)] = _tensor(a.owner, device)
            base = a.desc.view(owner) if a.desc.view else owner
            out.append(TensorDescriptor(base, list(a.shape), list(a.strides), list(a.block_shape), a.padding))
        elif isinstance(a, np.ndarray):
            out.append(_tensor(a, device))
        else:
            out.append(a)
    return out


def _tensor(a, device):
    import torch
    a = np.ascontiguousarray(a).copy()
    kind = getattr(torch, a.dtype.name, None) if ml_dtype(a.dtype) else None
    if kind is not None:                         # ml_dtypes (bfloat16, float8_*): through their bits
        t = torch.from_numpy(a.view(f"u{a.dtype.itemsize}")).view(kind)
    else:
        t = torch.from_numpy(a)
    return t.to(device)


def to_numpy(t, like):
    """A tensor's final content as an array of the case's dtype `like` (bits through bf16/fp8)."""
    import torch
    if isinstance(like, np.ndarray) and ml_dtype(like.dtype):
        bits = {1: torch.uint8, 2: torch.int16}[like.dtype.itemsize]
        return t.cpu().view(bits).numpy().view(like.dtype)
    return t.cpu().numpy()


def _owner(t, given):
    """The tensor whose final content a case argument records: a descriptor's whole array."""
    if isinstance(given, C.DescInput):
        base = t.base
        return base if base._base is None else base._base
    return t


def fill_addresses(targs, tables):
    """Each Addresses argument (cases.py) filled with this GPU's addresses: the data_ptr() of the
    argument it points into plus its offsets (a host-to-device copy; its recorded output is the zeros
    the case gave, as on the model)."""
    import torch
    for i, table in tables.items():
        base = targs[table.arg].data_ptr()
        targs[i].copy_(torch.tensor([base + o for o in table.offsets], dtype=torch.int64))


def child(out, wheels, runs, cases):
    """The launches (this process is what ncu profiles): writes DIR/launch.json and outputs.npz."""
    import torch
    import triton
    record, arrays = {"triton": triton.__version__, "torch": torch.__version__, "cuda": torch.version.cuda,
                      "cases": {}}, {}
    # the global scratch of kernels that build tensor maps (tl.make_tensor_descriptor), as the
    # packages set it (flag_gems' Hopper mm: torch.empty of int8 on the device)
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    entries = {e["case"]: e for e in R.load_manifest(CORPUS)["cases"]}
    for case in cases:
        kernel, source = C.kernel(case, wheels, ROOT)
        want = R.ptx_text(CORPUS, entries[case])
        first, same, rec = None, True, {"source": source}
        for run in range(runs):
            inputs = C.launch_inputs(case, descriptors=False)
            targs = torch_args(inputs)
            tables = C.addresses(case)
            fill_addresses(targs, tables)
            compiled = kernel[C.grid(case)](*targs, **C.meta(case))
            torch.cuda.synchronize()
            finals = {f"{case}/arg{i}": inputs[i] if i in tables else to_numpy(_owner(t, inputs[i]), C.output(inputs[i]))
                      for i, t in enumerate(targs) if hasattr(t, "data_ptr") or isinstance(inputs[i], C.DescInput)}
            if first is None:
                first = finals
                rec["kernel"] = compiled.metadata.name
                rec["ptx_identical"] = compiled.asm["ptx"] == want
                rec["ptx_code_identical"] = C.code_of(compiled.asm["ptx"]) == C.code_of(want)
                if not rec["ptx_code_identical"]:
                    rec["ptx"] = compiled.asm["ptx"]
            else:
                same &= all(np.array_equal(first[k].view(np.uint8), finals[k].view(np.uint8)) for k in first)
        rec["outputs_repeat"] = bool(same)
        # ml_dtypes arrays as their bits: np.load cannot read back some of their dtypes ('<f1')
        arrays.update({k: v.view(f"u{v.dtype.itemsize}") if ml_dtype(v.dtype) else v for k, v in first.items()})
        record["cases"][case] = rec
        print(f"{case}: {rec['kernel']} ptx identical {rec['ptx_identical']}, outputs repeat {same}", flush=True)
    np.savez_compressed(Path(out) / "outputs.npz", **arrays)
    (Path(out) / "launch.json").write_text(json.dumps(record, indent=1))


def assign_runs(record, rows, runs, problems, cases=None):
    """ncu's rows (one per launch, in the child's order: each case `runs` times) -> each case's
    "runs" list of {metric: value}; a row naming another kernel stops the assignment (problems)."""
    from gpu_check.kernel_corpus import ncu as N
    cases = list(C.CASES) if cases is None else cases
    planned = [{"kernel": record["cases"][c]["kernel"]} for c in cases for _ in range(runs)]
    got = N.assign(planned, rows, problems)
    for k, case in enumerate(cases):
        record["cases"][case]["runs"] = got[k * runs:(k + 1) * runs]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.triton_corpus.measure", description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--wheels", default=str(ROOT / ".triton-src"))
    ap.add_argument("--runs", type=int, default=5)
    pick = ap.add_mutually_exclusive_group()
    pick.add_argument("--cases", help="comma-separated case names (default: every case)")
    pick.add_argument("--new", action="store_true", help="only the cases tests/data/triton_corpus/h200 lacks")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    cases = selected(a.cases, a.new)
    if not cases:
        print("nothing to measure: every case has a measurement in tests/data/triton_corpus/h200")
        return 0
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.child:
        child(out, a.wheels, a.runs, cases)
        return 0
    from gpu_check.bank_probe import ncu_csv
    from gpu_check.kernel_corpus import ncu as N
    cmd = [sys.executable, "-m", "gpu_check.triton_corpus.measure", "--child", "--out", str(out),
           "--wheels", a.wheels, "--runs", str(a.runs), "--cases", ",".join(cases)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT, env=N._env())
    print(r.stdout[-4000:], r.stderr[-4000:])
    if r.returncode != 0:
        return 1
    record = json.loads((out / "launch.json").read_text())
    names = sorted({c["kernel"] for c in record["cases"].values()})
    ncu = N.ncu_path()
    problems = []
    if ncu is None:
        problems.append("ncu not found")
    else:
        prof = out / "ncu"
        prof.mkdir(exist_ok=True)
        log = prof / "ncu.csv"
        ncmd = [ncu, "--csv", "--clock-control", "none", "--cache-control", "none", "--metrics", ",".join(N.BASE),
                "--kernel-name", "regex:^(" + "|".join(names) + ")$", "--log-file", str(log),
                sys.executable, "-m", "gpu_check.triton_corpus.measure", "--child", "--out", str(prof),
                "--wheels", a.wheels, "--runs", str(a.runs), "--cases", ",".join(cases)]
        q = N._run(ncmd, 900)
        if q["rc"] != 0:
            problems.append(f"ncu exited {q['rc']}: {(q['stderr'] or q['stdout'])[-600:]}")
        assign_runs(record, ncu_csv.parse(log.read_text() if log.exists() else q["stdout"]), a.runs, problems, cases)
    record.update(problems=problems, metrics=list(N.BASE), runs=a.runs, date=datetime.date.today().isoformat(),
                  gpu=gpu_name(), command="python -m gpu_check.triton_corpus.measure --out DIR"
                  + (f" --cases {','.join(cases)}" if a.cases or a.new else ""))
    (out / "results.json").write_text(json.dumps(record, indent=1))
    print(f"wrote {out / 'results.json'} and {out / 'outputs.npz'}; problems: {problems or 'none'}")
    return 0



if __name__ == "__main__":
    sys.exit(main())
