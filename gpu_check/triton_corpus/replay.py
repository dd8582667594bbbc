"""The corpus's committed PTX through layoutsim.ptx, with the case's inputs (no Triton needed),
and the GPU measurements it is compared with.

The measurements are in tests/data/triton_corpus/h200/: results.json and outputs.npz of the
first batch, and one folder per later batch (h200/<name>/results.json[.gz], outputs.npz, written by
`python -m gpu_check.triton_corpus.merge`); a case is taken from the batch that holds it."""
import gzip
import json
from pathlib import Path

import numpy as np

from . import cases as C


# Launches whose ncu total the model does not reproduce, each explained in docs/triton.md ("Costs the
# model does not reproduce"): (case, metric) -> (model, GPU min, GPU max, why). The replay test and
# gpu_check.kernel_corpus.replay_all hold a launch to exactly these numbers.
EXPLAINED = {
    ("fat_attn_bwd", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"): (
        1792, 4980, 5086, "not explained: ncu counts 4980 to 5086 over 5 runs of the same launch (the "
                                "count varies, so something timing-dependent adds it); the SASS holds no LDS "
                                "or LDSM beyond the PTX's ld.shared and ldmatrix, which the model costs at 1792"),
}


def load_manifest(folder):
    return json.loads((Path(folder) / "manifest.json").read_text())


def read_text(path):
    """A committed text file, gzip-compressed where its name ends in .gz."""
    path = Path(path)
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def ptx_text(folder, entry):
    return read_text(Path(folder) / entry["ptx"])


def _batch(folder):
    """(results, outputs path) of one measurement folder, or None where it has none."""
    folder = Path(folder)
    for name in ("results.json", "results.json.gz"):
        if (folder / name).is_file() and (folder / "outputs.npz").is_file():
            return json.loads(read_text(folder / name)), folder / "outputs.npz"
    return None


def measurements(h200):
    """{case: (its results.json record, the npz holding its outputs "<case>/argN", the batch's
    results without "cases")} over every batch in `h200`, later batches after the first."""
    h200 = Path(h200)
    folders = [h200] + sorted(p for p in h200.iterdir() if p.is_dir()) if h200.is_dir() else []
    out = {}
    for f in folders:
        got = _batch(f)
        if got is None:
            continue
        results, npz = got
        meta = {k: v for k, v in results.items() if k != "cases"}
        for case, rec in results["cases"].items():
            out.setdefault(case, (rec, npz, meta))
    return out


def arguments(entry, args):
    """The PTX launch's arguments: the case's (by the manifest's plan) then the scratch pointers."""
    n_ctas = int(np.prod(entry["grid"]))
    out = []
    for p in entry["params"]:
        if "arg" in p:
            v = args[p["arg"]]
            if isinstance(v, np.ndarray):
                out.append(v)
            else:
                from layoutsim.triton.args import scalar_value
                name = list(entry["signature"])[p["arg"]]
                out.append(scalar_value(v, entry["signature"][name], name))
        else:
            out.append(np.zeros(n_ctas * p["bytes_per_cta"], np.uint8) if p["bytes_per_cta"] else np.uint64(0))
    return out


def run_case(folder, entry, **options):
    """(Run, {argN: final array}) of one case on the model."""
    return launch(entry, *prepared(folder, entry), **options)


def prepared(folder, entry):
    """(PTX text, launch arguments) of one case: what `launch` takes (made before a timed launch)."""
    return ptx_text(folder, entry), arguments(entry, C.inputs(entry["case"]))


def launch(entry, text, values, **options):
    """(Run, {argN: final array}) of the case's PTX launched on the model with `values`."""
    import layoutsim.ptx as ptx
    r = ptx.run(text, entry["kernel"], entry["grid"], entry["block"], values, arch=entry["arch"],
                shared_bytes=entry["shared_bytes"], **options)
    finals = {}
    for p, b in zip(entry["params"], r.buffers):
        if "arg" in p and b is not None:
            finals[f"arg{p['arg']}"] = b
    return r, finals
