"""The corpus's committed PTX through layoutsim.ptx, with the case's inputs (no Triton needed)."""
import json
from pathlib import Path

import numpy as np

from . import cases as C


def load_manifest(folder):
    return json.loads((Path(folder) / "manifest.json").read_text())


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
    import layoutsim.ptx as ptx
    args = C.inputs(entry["case"])
    values = arguments(entry, args)
    text = (Path(folder) / entry["ptx"]).read_text()
    r = ptx.run(text, entry["kernel"], entry["grid"], entry["block"], values, arch=entry["arch"],
                shared_bytes=entry["shared_bytes"], **options)
    finals = {}
    for p, b in zip(entry["params"], r.buffers):
        if "arg" in p and b is not None:
            finals[f"arg{p['arg']}"] = b
    return r, finals
