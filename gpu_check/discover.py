"""gpu-check discover: measure the layouts nobody documents (nvcuda::wmma fragments).

One warp loads a matrix of unique ids with wmma::load_matrix_sync and writes every x[i] of every
lane; the host turns the ids back into (row, col). The result is printed as a map and as JSON the
catalog can take: one entry per fragment kind, marked "measured on <GPU>", with the table
[lane][i] -> (row, col) in the catalog's terms (element i of a lane sits in register i // p,
slot i % p, p = 32 / element bits; a 64-bit element is a register of its own, reg_bits 64).
Integer fragments are loaded once per base-255 digit of the ids (wmma_load.py) and the digits
combined here.
"""
import json
from pathlib import Path

import numpy as np

from layoutsim.errors import one_line

from .families import wmma_load


def decode_all(specs, outs, env):
    """Discovered entries (JSON-able dicts) from each spec's raw outputs (one per image)."""
    entries = []
    for spec, out in zip(specs, outs):
        n, rc, invalid = spec.decode(out)
        counts = np.zeros((spec.rows, spec.cols), np.int64)
        valid = rc[..., 0] >= 0
        np.add.at(counts, (rc[..., 0][valid], rc[..., 1][valid]), 1)
        rep = int(counts.flat[0])
        uniform = bool(invalid == 0 and rep > 0 and (counts == rep).all())
        m, nn, k = spec.shape
        entries.append({
            "name": spec.entry,
            "family": "wmma",
            "use": {"a": "matrix_a", "b": "matrix_b", "c": "accumulator"}[spec.use],
            "operand": {"a": "A", "b": "B", "c": "C"}[spec.use],
            "shape": [m, nn, k],
            "fmt": spec.fmt,
            "layout": f"{spec.layout}_major",
            "rows": spec.rows, "cols": spec.cols,
            "elem_bits": spec.elem_bits,
            "slots": max(1, 32 // spec.elem_bits),
            "reg_bits": max(32, spec.elem_bits),
            "loads": spec.passes,
            "elements_per_lane": n,
            "replication": rep if uniform else None,
            "valid": uniform,
            "invalid_ids": invalid,
            "table": rc.tolist(),
            "confirmed": f"measured on {env.get('gpu')} (gpu-check discover, {env.get('date', '')[:10]})",
            "source": "nvcuda::wmma::load_matrix_sync of unique ids, x[i] dumped per lane (gpu-check discover"
                      + (f"; {spec.passes} loads of base-255 id digits" if spec.passes > 1 else "") + ")",
        })
    return entries


def same_as_catalog(entry):
    """Catalog mma.sync operands whose (row, col) table equals this fragment's (a cross-check).

    A replicated fragment (f16 wmma fragments hold every element twice on sm_90) is compared
    by its first rows*cols/32 elements per lane, when the rest repeats them.
    """
    import layoutsim
    tab = np.asarray(entry["table"])
    if tab.size == 0:
        return []
    per = entry["rows"] * entry["cols"] // 32
    if tab.shape[1] > per and tab.shape[1] % per == 0:
        parts = tab.reshape(32, -1, per, 2)
        if not (parts == parts[:, :1]).all():
            return []
        tab = parts[:, 0]
    hits = []
    for e in layoutsim.listing(family="mma"):
        if e.vendor != "nvidia":
            continue
        inst = e.instruction()
        for opname, op in inst.operands.items():
            f = op.fragment
            if f.shape[1:] != (entry["rows"], entry["cols"]) or f.lanes != 32 or f.shape[0] != 1:
                continue
            t = f.table.reshape(32, -1, 3)[..., 1:]
            if t.shape == tab.shape and np.array_equal(t, tab):
                hits.append((inst.aliases[0] if inst.aliases else inst.name, opname))
    # one line per distinct operand layout: the shortest instruction name that has it
    out = {}
    for name, op in sorted(hits, key=lambda h: (len(h[0]), h[0])):
        out.setdefault(op, name)
    return [f"{name} operand {op}" for op, name in sorted(out.items())]


def format_map(entry, lanes=None):
    lines = [f"{entry['name']}  ({entry['elements_per_lane']} elements per lane"
             + (f", replication {entry['replication']}" if entry["replication"] and entry["replication"] > 1 else "")
             + ("" if entry["valid"] else ", NOT a uniform cover: see invalid_ids") + ")"]
    letter = entry["operand"]
    for lane in (range(32) if lanes is None else lanes):
        cells = [f"x{i}={letter}[{r}][{c}]" for i, (r, c) in enumerate(entry["table"][lane])]
        lines.append(f"  lane {lane:2d}: " + " ".join(cells))
    return "\n".join(lines)


def run(backend, build_fn, log=print, target=None):
    """Compile and run every wmma load kernel; returns (entries, env)."""
    specs = wmma_load.specs()
    target = target or backend.target
    cubin, kept, rejected, stats = build_fn(specs, target)
    module = backend.load(cubin)
    outs = []
    for spec in kept:
        outs.append([backend.launch(module, spec, image, 1) for image in spec.images()])
    env = backend.environment()
    entries = decode_all(kept, outs, env)
    for e in entries:
        e["same_as"] = same_as_catalog(e)
    for name, msg in rejected.items():
        log(f"discover: {name} rejected by ptxas: {msg}")
    return entries, env


def save(entries, env, path):
    """Write the discovered maps to `path`, creating its folder (the --record tree)."""
    from layoutsim.files import make_dir, write_atomic
    path = Path(path)
    make_dir(path.parent, "--record folder", parents=True)    # inside the --record tree
    doc = {"format": 1, "environment": env,
           "note": "nvcuda::wmma fragments measured with gpu-check discover; catalog-ready: table[lane][i] = "
                   "[row, col], element i of a lane in register i // slots, slot i % slots",
           "entries": entries}
    write_atomic(path, dumps(doc), "discovered maps")
    return path


def dumps(doc):
    """JSON with one line per entry (the tables make an indented file ten times longer)."""
    head = {k: v for k, v in doc.items() if k != "entries"}
    text = json.dumps(head, indent=1)[:-2]
    body = ",\n  ".join(json.dumps(e, separators=(",", ":")) for e in doc.get("entries", []))
    return text + ',\n "entries": [\n  ' + body + "\n ]\n}\n"


def apply(path, catalog=None):
    """Make the discovered maps in `path` (a --record file) the catalog's (isa/data/nvcuda_wmma_sm_90.json).

    Nothing is written unless every entry is one the catalog's loader reads as it is
    (`check_recorded`), the file keeps every map the catalog has, as the catalog has it (a new GPU
    or driver is a new catalog file, not a silent change), and the catalog is a source checkout's
    (`writable_catalog`): each refusal one line. The catalog is replaced atomically. Returns
    (catalog path, names of the entries that are new).
    """
    from layoutsim import package_data
    from layoutsim.errors import LayoutsimError
    from layoutsim.files import write_atomic
    from layoutsim.isa import ptx_wmma
    catalog = writable_catalog(catalog)
    try:
        doc = package_data.json_value(read_recorded(path))
    except ValueError as e:
        raise LayoutsimError(f"{path}: not JSON of gpu-check discover --record ({one_line(str(e), 200)})") from None
    entries = check_recorded(doc, path)
    new = {e["name"]: e for e in entries}
    old = package_data.load_json(catalog, ptx_wmma.check_document)["entries"] if catalog.exists() else []
    for e in old:
        got = new.get(e["name"])
        if got is None:
            raise LayoutsimError(f"{path} lacks {e['name']}, which the catalog has; not applied")
        if got["table"] != e["table"]:
            raise LayoutsimError(f"{path}: {e['name']} differs from the catalog's map; not applied")
    write_atomic(catalog, dumps(doc), "wmma catalog")
    have = {e["name"] for e in old}
    return catalog, [n for n in new if n not in have]


MAX_RECORDED = 1 << 25      # bytes: the 78 maps of sm_90 are 0.4 MB


def read_recorded(path):
    from layoutsim.files import read_regular
    return read_regular(path, "discovered maps", MAX_RECORDED)


def check_recorded(doc, path):
    """The entries of a --record file, each checked as the catalog's loader will read it
    (ptx_wmma.check_fragment: keys, types, the name its fields spell, the FragmentMap checks)
    and named nowhere else in the catalog; otherwise one line naming the entry and the problem."""
    from layoutsim import package_data
    from layoutsim.errors import LayoutsimError
    from layoutsim.isa import ptx_wmma
    try:
        package_data.check(doc, {"environment": ptx_wmma._ENV, "entries": [dict]}, "the file")
        if not doc["entries"]:
            raise ValueError("the file has no entries")
    except ValueError as e:
        raise LayoutsimError(f"{path}: not a gpu-check discover --record file: {one_line(str(e), 200)}; "
                             f"not applied") from None
    bad = [e.get("name", "?") for e in doc["entries"] if e.get("valid") is not True]
    if bad:
        raise LayoutsimError(f"{path}: {len(bad)} maps are not a uniform cover ({', '.join(map(str, bad[:3]))}); "
                             f"not applied")
    others = _other_names()
    seen = set()
    for e in doc["entries"]:
        try:
            ptx_wmma.check_fragment(e, doc["environment"])
        except ValueError as err:
            raise LayoutsimError(f"{path}: {one_line(str(err), 300)}; not applied") from None
        for n in (e["name"], ptx_wmma._short(e["name"])):
            key = _key(n)
            if key in others:
                raise LayoutsimError(f"{path}: entry {e['name']}: the name {n} is the catalog's "
                                     f"{others[key]}; not applied")
        if e["name"] in seen:
            raise LayoutsimError(f"{path}: entry {e['name']} appears twice; not applied")
        seen.add(e["name"])
    return doc["entries"]


def _key(name):
    from layoutsim.isa.registry import name_key
    return name_key(name)


def _other_names():
    """{lookup key: entry name} of every catalog name and alias outside the measured wmma maps."""
    from layoutsim.isa.registry import all_entries
    return {_key(n): e.name for e in all_entries() if e.family != "wmma.load" for n in (e.name, *e.aliases)}


def writable_catalog(catalog=None):
    """The catalog file --apply may replace: one a caller names, or the package's own only where
    the package is imported from a source checkout. An installed copy (site-packages) is never
    changed by an input: its files are what pip installed, and a command that rewrote them would
    change every later run of every user of that environment."""
    from layoutsim import package_data
    from layoutsim.errors import LayoutsimError
    from layoutsim.isa import ptx_wmma
    if catalog is not None:
        return Path(catalog)
    if package_data.source_checkout() is None:
        raise LayoutsimError(f"--apply writes the catalog of a source checkout only; this layoutsim is installed "
                             f"at {Path(ptx_wmma.DATA).parents[2]} (not a git work tree): run it from a clone "
                             f"(git clone, then pip install -e .) and commit the new catalog there")
    return Path(ptx_wmma.DATA)
