"""Every corpus launch as the arguments of layoutsim.ptx.run, and its final buffers keyed as the
corpus's reader (parts.py) keys the GPU's: what replay_all compares and benchmarks/bench_ptx.py
--launches times. Each corpus's own replay code builds the launch (corpus.py, triton_corpus/
replay.py, realworld/hopper_replay.py, realworld/cub_capture.py, realworld/flashattn_case.py, clusters/cases.py,
constructs/replay.py).

    names(part)         the launches of a corpus that can run: those with a committed measurement
                        (hopper, tk: else the CPU captures of hopper_local; kernels, cute, llmc, samples, triton,
                        flashattn, clusters: every planned case, their inputs are generated here)
    setup(part, name)   Setup(ptx, kernel, grid, block, args, options, outputs): outputs(Run) ->
                        {key: array} as the reader keys them
"""
import gzip
import json
from dataclasses import dataclass, field

import numpy as np

from gpu_check.realworld.hopper_cases import GROUP_NAMES

from . import corpus as C
from . import parts as P

RUNNABLE = ("kernels", "cute", "llmc", "samples", "triton", "hopper", "tk", "cub", "flashattn", "clusters", "constructs")


@dataclass
class Setup:
    ptx: str
    kernel: str
    grid: tuple
    block: tuple
    args: list
    options: dict = field(default_factory=dict)    # arch, shared_bytes, cluster
    outputs: object = None                         # Run -> {key: array}

    def run(self):
        from layoutsim.ptx import run
        r = run(self.ptx, self.kernel, self.grid, self.block, self.args, **self.options)
        return r, self.outputs(r)


def _corpus(folder, name):
    e = {x["name"]: x for x in C.load_manifest(folder)}[name]

    def outputs(r):
        return {f"arg{i}": b for i, b in enumerate(C.buffers_by_arg(e, r.buffers)) if b is not None}
    inputs = C.load_inputs(e, folder)
    return Setup((folder / C.run_ptx(e)).read_text(), e["kernel"], tuple(e["grid"]), tuple(e["block"]),
                 C.launch_args(e, inputs), C.run_options(e, inputs), outputs)


def _triton(name):
    from gpu_check.triton_corpus import cases, replay as R
    from gpu_check.triton_corpus.measure import CORPUS
    entry = {x["case"]: x for x in R.load_manifest(CORPUS)["cases"]}[name]
    params = entry["params"]

    def outputs(r):                # a host tensor descriptor's array is its first PTX parameter's buffer
        return {f"arg{p['arg']}": r.buffers[k] for p, k in zip(params, R.first_slots(entry))
                if "arg" in p and r.buffers[k] is not None}
    return Setup(R.ptx_text(CORPUS, entry), entry["kernel"], entry["grid"], entry["block"],
                 R.arguments(entry, cases.inputs(name)), {"arch": entry["arch"], "shared_bytes": entry["shared_bytes"]},
                 outputs)


def _captured(part, name):
    """A launch of a captured group (hopper_cases.Group: "hopper", "tk"): the GPU's capture, else the CPU's."""
    from gpu_check.realworld import hopper_replay as R
    from gpu_check.realworld.hopper_cases import group
    g = group(part)
    launch = R.load(name, kind="capture" if R.files(name, group=g)[1].is_file() else "cpu", group=g)

    def outputs(r):
        return {f"after{k}": np.asarray(v).reshape(-1).view(np.uint8) for k, v in zip(launch.order, r.buffers[0])}
    return Setup(launch.ptx, launch.kernel, launch.grid, launch.block, launch.args,
                 {"arch": g.arch, "shared_bytes": launch.shared_bytes, "cluster": launch.cluster}, outputs)


def _cub(name):
    from gpu_check.realworld import cub_capture as K
    from gpu_check.realworld.cub_build import ARCH, DATA, PTX
    doc, contents = K.load(DATA)
    rec = next(x for x in doc["launches"] if P.cub_launch_id(x) == name)
    args, arrays = K.launch_args(rec, contents)

    def outputs(r):
        return {f"alloc{aid}": buf for aid, buf in K.finals(args, arrays, r.buffers).items()}
    return Setup(gzip.decompress((DATA / PTX).read_bytes()).decode(), rec["kernel"], tuple(rec["grid"]),
                 tuple(rec["block"]), args, {"arch": ARCH, "shared_bytes": rec["shared_bytes"]}, outputs)


def _flashattn(name):
    from gpu_check.realworld import flashattn_case as F
    e = F.entry()

    def outputs(r):
        bufs = C.buffers_by_arg(e, r.buffers)
        return {n: bufs[i + 1] for i, n in enumerate(F.ARRAYS)}
    return Setup(F.ptx_text(), e["kernel"], tuple(e["grid"]), tuple(e["block"]), C.launch_args(e, F.arrays()),
                 {"arch": F.ARCH, "shared_bytes": e["shared_bytes"]}, outputs)


def _clusters(name):
    from gpu_check.clusters import cases as K
    case = next(c for c in K.cases() if c["name"] == name)
    return Setup((P.ROOT / K.PTX).read_text(), case["kernel"], tuple(case["grid"]), tuple(case["block"]),
                 K.executor_args(case), {"cluster": case["cluster"]},
                 lambda r: {f"buf{i}": b for i, b in enumerate(r.buffers)})


def _constructs(name):
    from gpu_check.constructs import replay as R
    doc = json.loads((P.BY_NAME["constructs"].data / "constructs.json").read_text())
    launch = next(x for x in doc["launches"] if x["name"] == name)
    outs = [i for i, a in enumerate(launch["args"]) if a[0] == "out"]
    return Setup(doc["ptx"], launch["kernel"], tuple(launch["grid"]), tuple(launch["block"]), R.args(launch["args"]),
                 {"shared_bytes": launch["shared_bytes"]},
                 lambda r: {f"out{k}": R.compared(name, r.buffers[i]) for k, i in enumerate(outs)})


def setup(part, name):
    """The Setup of one launch of corpus `part` (a parts.PARTS name)."""
    if part in ("kernels", "cute", "llmc", "samples"):
        return _corpus(P.BY_NAME[part].data, name)
    if part in GROUP_NAMES:
        return _captured(part, name)
    return {"triton": _triton, "cub": _cub, "flashattn": _flashattn, "clusters": _clusters,
            "constructs": _constructs}[part](name)


def names(part):
    """[launch] of a corpus that setup() can build here, in the corpus's order."""
    p = P.BY_NAME[part]
    if part in GROUP_NAMES:
        from gpu_check.realworld import hopper_replay as R
        from gpu_check.realworld.hopper_cases import group
        g = group(part)
        return [n for n in p.planned() if R.files(n, group=g)[1].is_file() or R.files(n, kind="cpu", group=g)[0].is_file()]
    if part in ("cub", "constructs"):
        return list(p.read(p.data))
    return p.planned() if p.planned else []
