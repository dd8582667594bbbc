"""The executor over the constructs' H200 measurement (measure.py's constructs.json): the same PTX
and launches, compared with what the GPU gave (buffers, printf output, assert lines).
tests/ptx/test_constructs_replay.py and `python -m gpu_check.kernel_corpus.replay_all` use it."""
import numpy as np

import layoutsim.ptx as P

# launch -> (words a thread writes, the word indices not compared): sregs writes nine words a
# thread; [8] reads st[t % 25], which three threads race to write (the GPU's value is any of theirs);
# smem_addresses' [7] reads st[3], which lanes 3, 13 and 23 of one store race to write (an H100 kept
# lane 3's, the executor keeps the last lane's; the PTX ISA says only that one write succeeds)
NOT_COMPARED = {"sregs": (9, (8,)), "smem_addresses": (8, (7,))}


def args(spec):
    """A launch's arguments ("out": zeros, "in": values, "scalar") as layoutsim.ptx.run takes them."""
    out = []
    for kind, dt, v in spec:
        if kind == "scalar":
            out.append(np.dtype(dt).type(v))
        else:
            out.append(np.zeros(v, dt) if kind == "out" else np.asarray(v, dt))
    return out


def compared(name, words):
    """The words of one output buffer that are compared (NOT_COMPARED's dropped)."""
    if name not in NOT_COMPARED:
        return words
    n, drop = NOT_COMPARED[name]
    keep = np.ones(n, bool)
    keep[list(drop)] = False
    return words.reshape(-1, n)[:, keep]


def run(doc, launch):
    """(Run, fault record or None) of one recorded launch on the executor."""
    try:
        return P.run(doc["ptx"], launch["kernel"], tuple(launch["grid"]), tuple(launch["block"]), args(launch["args"]),
                     shared_bytes=launch["shared_bytes"]), None
    except P.PtxFault as e:
        return e.run, e.fault


def differences(doc, launch):
    """One line per way the executor's launch differs from the GPU's (empty: the same)."""
    r, fault = run(doc, launch)
    name = launch["name"]
    if launch["error"]:                                  # the GPU's launch failed: an assert
        if fault is None or fault["kind"] != "assert":
            return [f"{name}: the GPU's launch stopped ({launch['error']}), the executor's "
                    f"{'did not' if fault is None else 'stopped on ' + fault['kind']}"]
        gpu = [ln for ln in launch["stderr"].splitlines() + launch["stdout"].splitlines() if "Assertion" in ln]
        same = sorted(gpu) == sorted(r.assertions) or set(r.assertions) <= set(gpu)
        return [] if same else [f"{name}: assert lines {r.assertions[:1]} vs the GPU's {gpu[:1]}"]
    if fault is not None:
        return [f"{name}: the executor stopped on {fault['kind']}, the GPU's launch did not"]
    out = []
    outs = [i for i, a in enumerate(launch["args"]) if a[0] == "out"]
    for k, i in enumerate(outs):
        want = np.asarray(launch["outputs"][k], launch["args"][i][1])
        got = r.buffers[i].view(want.dtype)
        bad = int((compared(name, got) != compared(name, want)).sum())
        if bad:
            out.append(f"{name}: output {k}: {bad} words differ")
    # the GPU orders printf lines across warps as it likes: the same lines, in any order
    if name == "printf" and sorted(r.printf.splitlines()) != sorted(launch["stdout"].splitlines()):
        out.append(f"{name}: the printf lines differ")
    return out
