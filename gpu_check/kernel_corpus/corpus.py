"""Reading and writing the corpus directory (tests/data/kernels/): manifest, PTX, inputs, outputs.

manifest.json is a list with one entry per case (the contract in the module docstring of
gpu_check.kernel_corpus). Arrays are stored in .npz files as `arg<i>` in their own dtype, except
bfloat16, which numpy cannot name: it is stored as its raw uint16 bits (the manifest's arg entry
says `"stored_as": "uint16"`) and `load_arrays` gives it back as ml_dtypes.bfloat16.

A case's `ptx` names one file per target it is built for (sm_80 and sm_90, or only sm_90a for
wgmma/TMA); `run_arch` is the one an sm_90 GPU and the replay run. A case whose H200 run is not
yet committed (no <case>.h200.npz) is `pending`: the replay fails for it, naming MEASURE.
"""
import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np

from layoutsim.files import measured_data

from layoutsim.formats import numpy_dtype

from .cases import HOPPER, NVCC_FLAGS

DATA = measured_data("kernels")
MANIFEST = "manifest.json"
# nvcc writes the source file's absolute path into the PTX (.file and a debug-string hash), so the
# corpus is compiled in this fixed directory: the same PTX on every machine with the same nvcc.
BUILD_DIR = "/tmp/layoutsim-kernels"
MAX_CASE_BYTES = 1 << 20          # arrays of one case (inputs + outputs), as the contract asks
MAX_CORPUS_BYTES = 4 << 20        # every file of the corpus
# other corpora in this format, by directory name: tests/data/realworld keeps nvcc's PTX of
# template-heavy CUTLASS code (~0.4 MB a file, mostly mangled names); tests/data/realworld/llmc
# (llm.c's dev/cuda) ~1.5 MB of PTX and inputs before its H200 buffers join them; samples
# (cuda-samples) ~18 MB: 75 launches, inputs at the samples' own sizes (vectorAdd's 50000 floats)
# and every final buffer the GPU left
MAX_DIR_BYTES = {"realworld": 12 << 20, "llmc": 8 << 20, "samples": 20 << 20}
MEASURE = ("python -m gpu_check.kernel_corpus.measure --out OUT on the H200, then copy OUT/h200.json and "
           "OUT/*.h200.npz into tests/data/kernels/")


def ptx_file(stem, arch):
    return f"{stem}.{arch}.ptx"


def nvcc_command(stem, arch):
    return f"cd {BUILD_DIR} && nvcc {' '.join(NVCC_FLAGS)} -arch={arch} -o {ptx_file(stem, arch)} {stem}.cu"


def inputs_file(name):
    return f"{name}.inputs.npz"


def h200_file(name):
    return f"{name}.h200.npz"


def arg_entry(arg):
    if arg.role == "bytes":
        return {"kind": "bytes", "hex": arg.data.hex()}
    if arg.role == "struct":
        return {"kind": "struct", "hex": arg.data.hex(), "pointers": [list(p) for p in arg.pointers]}
    if arg.role == "tensormap":
        return {"kind": "tensormap", "buffer": arg.buffer, "dims": list(arg.dims), "box": list(arg.box),
                "elem_bytes": arg.elem_bytes, "swizzle": arg.swizzle, "form": arg.form}
    if not arg.is_array:
        value = float(arg.value) if arg.dtype.startswith("float") else int(arg.value)
        return {"kind": "scalar", "dtype": arg.dtype, "value": value}
    e = {"kind": "array", "dtype": arg.dtype, "shape": list(arg.shape), "role": arg.role}
    if not arg.param:
        e["param"] = False
    if arg.symbol:
        e["symbol"] = arg.symbol
    if arg.dtype == "bfloat16":
        e["stored_as"] = "uint16"
    return e


def manifest_entry(case, nvcc_version):
    e = {"name": case.name, "source": case.source,
         "ptx": {a: ptx_file(case.stem, a) for a in case.archs},
         "kernel": case.entry, "grid": list(case.grid), "block": list(case.block),
         "shared_bytes": case.shared_bytes, "args": [arg_entry(a) for a in case.args],
         "nvcc": nvcc_command(case.stem, case.run_arch)}
    if "sm_80" in case.archs:
        e["nvcc_sm_80"] = nvcc_command(case.stem, "sm_80")
    e.update(nvcc_version=nvcc_version, inputs=inputs_file(case.name), what=case.what)
    return e


def run_arch(entry):
    """The target of the PTX an sm_90 GPU runs (JIT) and the replay executes: sm_90 or sm_90a."""
    return next(a for a in HOPPER if a in entry["ptx"])


def run_ptx(entry):
    """That PTX file's name."""
    return entry["ptx"][run_arch(entry)]


def pending(directory=DATA):
    """Cases of the manifest whose H200 run is not committed yet (no <case>.h200.npz)."""
    return [e["name"] for e in load_manifest(directory) if not (Path(directory) / h200_file(e["name"])).is_file()]


# ---- files -------------------------------------------------------------------------------------
def write_atomic(path, data, mode=0o644):
    """Write bytes/str to a temporary file beside `path`, then rename it over `path` (a regular
    file; an existing file keeps its mode)."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise ValueError(f"{path} exists and is not a regular file")
    keep = path.stat().st_mode & 0o777 if path.exists() else mode
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())
    os.chmod(tmp, keep)
    os.replace(tmp, path)
    return path


def _storable(a):
    return a.view(np.uint16) if a.dtype.name == "bfloat16" else a


def npz_bytes(arrays):
    """A compressed .npz of {key: array} with fixed zip timestamps (the same bytes every time)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for key in sorted(arrays):
            b = io.BytesIO()
            np.lib.format.write_array(b, np.ascontiguousarray(_storable(arrays[key])), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, b.getvalue())
    return buf.getvalue()


def load_manifest(directory=DATA):
    path = Path(directory) / MANIFEST
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the corpus with python -m gpu_check.kernel_corpus.build")
    return json.loads(path.read_text())


def load_arrays(path, entry):
    """[array or None per argument] from an .npz of arg<i> keys, with the manifest's dtypes."""
    out = []
    with np.load(path, allow_pickle=False) as z:
        for i, a in enumerate(entry["args"]):
            if a["kind"] != "array":
                out.append(None)
                continue
            key = f"arg{i}"
            if key not in z.files and a.get("symbol"):      # a measurement keeps no copy of a symbol's bytes
                out.append(None)
                continue
            if key not in z.files:
                raise ValueError(f"{path}: no {key} (argument {i} of {entry['name']})")
            v = z[key]
            want = numpy_dtype(a["dtype"])
            if a.get("stored_as"):
                v = v.view(want)
            if v.dtype != want or list(v.shape) != a["shape"]:
                raise ValueError(f"{path}: {key} is {v.dtype}{list(v.shape)}, the manifest says {a['dtype']}{a['shape']}")
            out.append(v)
    return out


def load_inputs(entry, directory=DATA):
    return load_arrays(Path(directory) / entry["inputs"], entry)


def is_param(arg):
    """Whether a manifest argument is a kernel parameter (an array a struct points to is not)."""
    return arg.get("param", True)


def symbol_values(entry, arrays):
    """{variable: array} the host copies into module variables before the launch (symbol arguments)."""
    return {a["symbol"]: v for a, v in zip(entry["args"], arg_values(entry, arrays)) if a.get("symbol")}


def run_options(entry, arrays):
    """The keywords of layoutsim.ptx.run for a case beside its parameters (launch_args): the arch the
    GPU runs (an sm_90a PTX runs as sm_90), dynamic shared bytes and the symbols the host copies."""
    symbols = symbol_values(entry, arrays)
    return {"arch": "sm_90", "shared_bytes": entry["shared_bytes"], **({"symbols": symbols} if symbols else {})}


def launch_args(entry, arrays):
    """The parameter list `layoutsim.ptx.run` takes: arg_values without the arrays only a struct
    points to, each struct a layoutsim.ptx.StructArg holding those arrays."""
    from layoutsim.ptx import StructArg
    values = arg_values(entry, arrays)
    out = []
    for a, v in zip(entry["args"], values):
        if a["kind"] == "struct":
            out.append(StructArg(bytes.fromhex(a["hex"]), tuple((off, values[j]) for off, j in a["pointers"])))
        elif is_param(a):
            out.append(v)
    return out


def buffers_by_arg(entry, run_buffers):
    """Run.buffers of `launch_args` back in the manifest's order: [array or None per argument]."""
    out = [None] * len(entry["args"])
    params = iter(run_buffers)
    for i, a in enumerate(entry["args"]):
        if not is_param(a):
            continue
        b = next(params)
        if a["kind"] == "struct":
            for (_, j), arr in zip(a["pointers"], b or ()):
                out[j] = arr
        elif a["kind"] == "array":
            out[i] = b
    return out


def arg_values(entry, arrays):
    """One value per manifest argument: arrays (copies), numpy scalars, bytes for by-value
    structs, layoutsim.ptx.TensorMapArg for tensor maps (the GPU side encodes those itself)."""
    out = []
    for a, v in zip(entry["args"], arrays):
        if a["kind"] == "tensormap":
            from layoutsim.ptx import TensorMapArg
            out.append(TensorMapArg(buffer=a["buffer"], dims=tuple(a["dims"]), box=tuple(a["box"]),
                                    swizzle=a["swizzle"], elem_bytes=a["elem_bytes"]))
        elif a["kind"] in ("bytes", "struct"):
            out.append(bytes.fromhex(a["hex"]))
        else:
            out.append(np.array(v, copy=True) if a["kind"] == "array" else numpy_dtype(a["dtype"]).type(a["value"]))
    return out


def array_bytes(entry):
    return sum(int(np.prod(a["shape"])) * numpy_dtype(a["dtype"]).itemsize
               for a in entry["args"] if a["kind"] == "array")


def validate(directory=DATA):
    """Problems with the corpus directory (an empty list when it is complete and within bounds)."""
    directory = Path(directory)
    problems = []
    try:
        manifest = load_manifest(directory)
    except (FileNotFoundError, ValueError) as e:
        return [str(e)]
    names = [e["name"] for e in manifest]
    if len(set(names)) != len(names):
        problems.append("duplicate case names in manifest.json")
    for e in manifest:
        # a case built from a registry package names its source there (e["package"]), not here
        for f in [*([] if e.get("package") else [e["source"]]), e["inputs"], *e["ptx"].values()]:
            if not (directory / f).is_file():
                problems.append(f"{e['name']}: {f} is missing")
        for arch, f in e["ptx"].items():
            p = directory / f
            if p.is_file() and f".entry {e['kernel']}(" not in p.read_text():
                problems.append(f"{e['name']}: {f} has no .entry {e['kernel']}")
        if (directory / e["inputs"]).is_file():
            try:
                load_inputs(e, directory)
            except ValueError as err:
                problems.append(str(err))
        for i, a in enumerate(e["args"]):
            if a["kind"] == "struct" and not all(0 <= j < len(e["args"]) and e["args"][j]["kind"] == "array"
                                                 and not is_param(e["args"][j]) for _, j in a["pointers"]):
                problems.append(f"{e['name']}: argument {i}: a struct pointing to an argument that is not an "
                                f"array with param false")
            if a["kind"] == "tensormap" and not (0 <= a["buffer"] < len(e["args"])
                                                 and e["args"][a["buffer"]]["kind"] == "array"):
                problems.append(f"{e['name']}: argument {i}: a tensor map over argument {a['buffer']}, not an array")
        if not any(a in e["ptx"] for a in HOPPER):
            problems.append(f"{e['name']}: no PTX for {' or '.join(HOPPER)} (what the H200 runs)")
        if array_bytes(e) > MAX_CASE_BYTES:
            problems.append(f"{e['name']}: {array_bytes(e)} bytes of arrays (at most {MAX_CASE_BYTES})")
    total = sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
    most = MAX_DIR_BYTES.get(directory.name, MAX_CORPUS_BYTES)
    if total > most:
        problems.append(f"the corpus holds {total} bytes (at most {most})")
    return problems
