"""Which SASS runs for each PTX line of a kernel, so the cost models charge that (issue 10: "what
ptxas emits for a PTX instruction is what the hardware costs").

Sources, in order:
  (a) the committed lowering data (data/lowering_sm90.json and, for the real-world corpora,
      data/lowering_sm90_{realworld,llmc,samples}.json, made by `python -m gpu_check.kernel_corpus.lowering
      [--corpus realworld|llmc|samples]`), when the PTX text is one it describes (its SHA-256 is among the
      data's `ptx_sha256`) and the run is on the data's arch. Which PTX a data file describes is
      read from its summary (arch, `ptx_sha256`), which the first process to load and check the
      whole file caches in $LAYOUTSIM_CACHE/lowering-data under the SHA-256 of the file's bytes:
      parsing and checking the four files is ~50 ms of every `ptx run`, hashing them ~2 ms, and a
      changed or damaged file has other bytes, so it is loaded and checked (and refused) as before;
  (b) otherwise computed now by lowering.py (ptxas + nvdisasm; runner.program starts it in a
      thread before it links the program, `start`, so both go on at once), cached per PTX hash, arch and
      ptxas binary in memory and in $LAYOUTSIM_CACHE (default ~/.cache/layoutsim)/lowering. A
      cache file is trusted only when it is a regular file holding this format (CACHE_FORMAT),
      this key and the rows' shape; anything else (truncated, edited, another PTX's, a folder or
      a link there) is recomputed and replaced atomically, never a crash;
  (c) otherwise none: every PTX memory instruction is costed as written, and the run says so
      (NOT_CONSULTED).

The rules that read the SASS live here: a PTX memory instruction with no memory SASS at its line
(ptxas removed it, e.g. a load common-subexpression-eliminated with another) executes but costs
nothing; an atom whose result ptxas found unused runs as RED and is counted as a reduction
(`global_op`). Other per-op facts stay where they were: the SASS spellings, widths and listing
parsers in layoutsim/sass.py, wmma's accesses in data/wmma_sm_90.json (wmma.py), the counter an op
lands in (memory.GlobalOp.metric_op).
"""
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

from .. import archs
from .. import package_data as P
from .. import sass as SASS
from ..errors import LayoutsimError
from ..files import cache_dir, read_regular, write_atomic
from . import lowering as L

width = SASS.width          # bytes per lane of a SASS access: layoutsim/sass.py
DATA = Path(__file__).with_name("data") / "lowering_sm90.json"
CACHE_FORMAT = 2            # of the cache files: bump when their contents change meaning (2: `@p` guards tagged)
_ROWS = P.MapOf([{"line": int, "sass": [str]}])     # {function: [{line, sass}]}: what _by_line reads
_LOWERED = {"format": int, "key": str, "rows": _ROWS, "source": str}        # a cache file of (b)
_SUMMARY = {"format": int, "key": str, "arch": str, "ptx_sha256": P.MapOf(str)}    # a data file's, (a)
NOT_CONSULTED = "costed per PTX instruction: ptxas not consulted"
_MEMO = {}
_PENDING = {}               # (PTX SHA-256, ptxas arch) -> Future of _compute's result (start)
_POOL = []                  # the lowering thread's executor, made by the first start that runs ptxas


class Lowered:
    """The memory SASS ptxas emits at each PTX line of one kernel (None: not known)."""

    def __init__(self, by_line=None, source=None, note=None):
        self.by_line = by_line          # {ptx line: (memory SASS opcodes, ...)}
        self.source = source            # where it comes from (Run.sass_source), None for (c)
        self.note = note                # (c): the one line the run reports

    def memory_sass(self, line):
        """The memory SASS of a PTX line: () when ptxas emits none there; None when unknown."""
        if self.by_line is None:
            return None
        return self.by_line.get(line, ())


def for_program(ptx, prog, arch):
    """The Lowered of the kernel `prog` (a Program) built from PTX text `ptx` for `arch`."""
    if not isinstance(ptx, str):
        return Lowered(note=f"{NOT_CONSULTED} (the PTX was not given as text)")
    sha = hashlib.sha256(ptx.encode()).hexdigest()
    rows, source = _committed(sha, arch)
    if rows is None:
        rows, source, note = _computed(ptx, sha, archs.ptxas_arch(prog.module.target, arch))
        if rows is None:
            return Lowered(note=note)
    return Lowered(_by_line(rows, prog), source)


def global_op(op, sass):
    """The op the coalescing model costs for a global access spelt `op` (memory.ops) that ptxas
    lowered to `sass`: an atom it emitted as RED (the old value unused) is the reduction."""
    if op.startswith("atom.") and sass and all(s.startswith("RED") for s in sass):
        return "red." + op[len("atom."):]
    return op


def _by_line(rows, prog, keep=SASS.MEMORY.match):
    """{line: memory SASS (all of it with keep=None)} over the SASS functions that hold the
    kernel's code: the entry itself and the .funcs ptxas kept as functions (a .func it inlined
    has its lines in the entry)."""
    mine = {prog.fn.name} | {f.name for f in prog.module.functions.values() if f.kind != "entry"}
    out = {}
    for name, entries in rows.items():
        if name in mine:
            for r in entries:
                out[r["line"]] = out.get(r["line"], ()) + tuple(s for s in r["sass"] if keep is None or keep(s))
    return out


def every_line(ptx, prog, arch):
    """({PTX line: every SASS opcode ptxas emits there}, None), or (None, why not): from ptxas now
    (or its cache), never the committed data, which keeps only memory and SFU lines. What
    contract.py reads ptxas's multiply-add contractions from."""
    if not isinstance(ptx, str):
        return None, "the PTX was not given as text"
    sha = hashlib.sha256(ptx.encode()).hexdigest()
    rows, _, note = _computed(ptx, sha, archs.ptxas_arch(prog.module.target, arch))
    if rows is None:
        return None, note.replace(NOT_CONSULTED, "ptxas not consulted")
    return _by_line(rows, prog, keep=None), None


def _data(path=None):
    return _load(path or DATA)


@lru_cache(maxsize=None)
def _load(path):
    return P.load_json(path, _check_data)


def _check_data(doc):
    P.check(doc, {"arch": str, "source": {"ptxas": str}, "ptx_sha256": P.MapOf(str), "kernels": P.MapOf(_ROWS)})
    lacking = [f for f in doc["ptx_sha256"] if f not in doc["kernels"]]
    if lacking:
        raise ValueError(f"ptx_sha256 names {lacking[0]}, which 'kernels' lacks")


def data_files():
    """The committed lowering files: the kernel corpus's, then the real-world corpora's (skipped
    when missing)."""
    return DATA, *(DATA.with_name(f"lowering_sm90_{c}.json") for c in ("realworld", "llmc", "samples"))


def _committed(sha, arch):
    for path in data_files():
        if path != DATA and not path.is_file():
            continue
        summary = _summary(path)
        if arch != summary["arch"]:
            continue
        f = next((f for f, h in summary["ptx_sha256"].items() if h == sha), None)
        if f is None:
            continue
        doc = _data(path)                   # the whole file, checked: the summary only said where to look
        if doc["ptx_sha256"].get(f) == sha:
            return doc["kernels"][f], f"committed lowering data ({path.name}: {f}, {doc['source']['ptxas']})"
    return None, None


@lru_cache(maxsize=None)
def _summary(path):
    """{"arch", "ptx_sha256"} of a committed lowering file: what an earlier process that loaded and
    checked these very bytes cached, else the whole file loaded and checked now (a damaged one is
    refused in one line, package_data) and its summary cached for the next process."""
    raw = P.load(path)
    key = hashlib.sha256(raw).hexdigest()
    got = _read_cache(key, _SUMMARY, "lowering-data")
    if got is None:
        doc = P.load(path, lambda _: P.json_value(raw), _check_data)
        got = {"format": CACHE_FORMAT, "key": key, "arch": doc["arch"], "ptx_sha256": doc["ptx_sha256"]}
        _write_cache(key, got, "lowering-data")
    return got


def start(ptx, module, arch):
    """Begin the lowering of a PTX (module: its parsed Module) in a thread, so that ptxas and
    nvdisasm, processes of their own, run while the caller links the program (runner.program);
    the first of for_program / every_line to need it joins it. Returns what `drop` takes."""
    if not isinstance(ptx, str):
        return None
    key = (hashlib.sha256(ptx.encode()).hexdigest(), archs.ptxas_arch(module.target, arch))
    if key not in _PENDING and _known(*key)[2] is None:      # cached (or no ptxas): no thread to start
        _PENDING[key] = _pool().submit(_compute, ptx, *key)
    return key


def _pool():
    """One worker thread; concurrent.futures (~5 ms to import) only for a PTX no cache holds."""
    if not _POOL:
        from concurrent.futures import ThreadPoolExecutor
        _POOL.append(ThreadPoolExecutor(1, thread_name_prefix="layoutsim-lowering"))
    return _POOL[0]


def drop(started):
    """Forget a lowering `start` began that no one joined (the program failed to link): it
    finishes on its own, and what it computed stays in the caches."""
    if started is not None:
        _PENDING.pop(started, None)


def _computed(ptx, sha, arch):
    """(rows, source, None) from ptxas + nvdisasm now (or their cache, or the lowering `start`
    began), or (None, None, note)."""
    pending = _PENDING.pop((sha, arch), None)
    if pending is not None:
        return pending.result()
    return _compute(ptx, sha, arch)


def _compute(ptx, sha, arch):
    tools, key, known = _known(sha, arch)
    if known is not None:
        return known
    ptxas, nvdisasm = tools           # none cached, or one not to trust: recomputed and replaced
    try:
        rows, _ = L.lower(ptx, arch, ptxas, nvdisasm, keep=None)
    except (L.LoweringError, OSError) as e:
        return None, None, f"{NOT_CONSULTED}: {e}"
    got = {"format": CACHE_FORMAT, "key": key, "rows": rows,
           "source": f"ptxas -arch={arch} now ({L.tool_version(ptxas)}) with nvdisasm -g"}
    _write_cache(key, got)
    _MEMO[key] = (got["rows"], got["source"], None)
    return _MEMO[key]


def _known(sha, arch):
    """((ptxas, nvdisasm), cache key, what _compute returns without running them, or None): the
    note when one is missing, else the lowering in memory or in a cache file to trust."""
    ptxas, nvdisasm = L.find_ptxas(), L.find_nvdisasm()
    missing = [n for n, p in (("ptxas", ptxas), ("nvdisasm", nvdisasm)) if not p]
    if missing:
        return None, None, (None, None, f"{NOT_CONSULTED} ({L.install_hint(*missing)})")
    st = os.stat(ptxas)
    key = hashlib.sha256(f"{sha} {arch} {os.path.realpath(ptxas)} {st.st_size} {st.st_mtime_ns}".encode()).hexdigest()
    if key not in _MEMO:
        got = _read_cache(key, _LOWERED)
        if got is not None:
            _MEMO[key] = (got["rows"], got["source"], None)
    return (ptxas, nvdisasm), key, _MEMO.get(key)


def _cache_file(key, folder):
    return cache_dir(folder) / f"{key}.json"


def _read_cache(key, shape, folder="lowering"):
    """The cached lowering (or data file summary) of `key`, or None when there is none or it is not
    one to trust: read only from a regular file (files.read_regular: no FIFO, bounded), and only
    when it holds this CACHE_FORMAT, this very key (a file copied or renamed from another PTX's
    says another) and a document of `shape` (for a lowering, rows of the shape _by_line reads)."""
    f = _cache_file(key, folder)
    try:
        if f.is_symlink():
            return None
        got = P.json_value(read_regular(f, "lowering cache", 1 << 26))
        P.check(got, shape)
    except (OSError, ValueError, UnicodeDecodeError, LayoutsimError):
        return None
    return got if got["format"] == CACHE_FORMAT and got["key"] == key else None


def _write_cache(key, got, folder="lowering"):
    """Best effort: the cache only saves the next run the ptxas call (or a data file's check). A
    folder or a link where the file goes is left alone (write_atomic refuses both), and the run
    goes on."""
    try:
        f = _cache_file(key, folder)
        f.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(f, json.dumps(got), "lowering cache")
    except (OSError, LayoutsimError):       # an unwritable cache must not fail the run
        pass
