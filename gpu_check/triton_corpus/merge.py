"""Add a GPU measurement of some Triton corpus cases to the committed ones:

    python -m gpu_check.triton_corpus.merge DIR [--name NAME] [--h200 tests/data/triton_corpus/h200]

DIR is what `python -m gpu_check.triton_corpus.measure --out DIR --new` (or --cases ...) wrote:
results.json and outputs.npz. They become the batch h200/NAME/ (default: batch-<the measurement's
date>): results.json (results.json.gz where it is over 100 KB) and outputs.npz holding the
measured cases' arrays, compressed, but for an argument the GPU left as the case's input made it
(cases.inputs): that one is listed in its case's "unchanged" instead, and the replay compares
with the input. The batches already there are left as they are; a case one of
them holds is refused (each case is measured in one place). replay.measurements reads every batch.
"""
import argparse
import io
import json
import sys
from pathlib import Path

import numpy as np
from layoutsim.files import measured_data

from . import cases as C
from . import replay as R

H200 = measured_data("triton_corpus") / "h200"
COMPRESS_OVER = 100_000


def merge(src, h200=H200, name=None):
    """Write src's measurement as the batch h200/<name>; returns that folder. Raises ValueError
    naming what is wrong (an unknown or already measured case, an output missing)."""
    from layoutsim.files import write_all
    src, h200 = Path(src), Path(h200)
    got = R._batch(src)
    if got is None:
        raise ValueError(f"{src}: no results.json and outputs.npz (run gpu_check.triton_corpus.measure --out {src})")
    results, npz = got
    results = dict(results, cases={c: dict(r) for c, r in results["cases"].items()})
    cases = list(results["cases"])
    unknown = [c for c in cases if c not in C.CASES]
    if unknown:
        raise ValueError(f"{src}: cases not in gpu_check/triton_corpus/cases.py: {', '.join(unknown)}")
    name = name or f"batch-{results.get('date', 'undated')}"
    dest = h200 / name
    have = R.measurements(h200)
    again = [c for c in cases if c in have and Path(have[c][1]).parent != dest]
    if again:
        raise ValueError(f"already measured in {h200}: {', '.join(again)}")
    old = R._batch(dest)
    arrays = {}
    if old is not None:                      # the same batch, more cases: keep what it held
        with np.load(old[1]) as z:
            arrays.update({k: z[k] for k in z.files})
        results = dict(old[0], **{k: v for k, v in results.items() if k != "cases"},
                       cases=dict(old[0]["cases"], **results["cases"]))
    with np.load(npz) as z:
        for c in cases:
            keys = [k for k in z.files if k.startswith(c + "/")]
            if not keys:
                raise ValueError(f"{npz}: no outputs of {c}")
            inputs = C.inputs(c)
            unchanged = []
            for k in keys:
                i, got = int(k.rsplit("/arg", 1)[1]), z[k]
                given = C.output(inputs[i])
                if isinstance(given, np.ndarray) and given.dtype == got.dtype and given.shape == got.shape \
                        and given.tobytes() == got.tobytes():
                    unchanged.append(i)
                else:
                    arrays[k] = got
            results["cases"][c]["unchanged"] = unchanged
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    text = (json.dumps(results, indent=1) + "\n").encode()
    items = [(dest / "outputs.npz", buf.getvalue(), "measurement")]
    if len(text) > COMPRESS_OVER:
        import gzip
        items.append((dest / "results.json.gz", gzip.compress(text, mtime=0), "measurement"))
    else:
        items.append((dest / "results.json", text, "measurement"))
    dest.mkdir(parents=True, exist_ok=True)
    write_all(items)
    for stale in ("results.json.gz", "results.json"):     # one results file per batch
        if (dest / stale).exists() and dest / stale != items[1][0]:
            (dest / stale).unlink()
    return dest


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m gpu_check.triton_corpus.merge", description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--name")
    ap.add_argument("--h200", default=str(H200))
    a = ap.parse_args(argv)
    try:
        dest = merge(a.dir, a.h200, a.name)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
