"""Reading `ncu --csv` output (one row per kernel launch and metric), and writing the same form
from the model for dry runs, so the parser is exercised without a GPU.

ncu --csv (details page) prints a header row
    "ID","Process ID","Process Name","Host Name","Kernel Name",...,"Metric Name","Metric Unit","Metric Value"
and one row per (launch, metric). "ID" counts the profiled launches of the process from 0.
Lines before the header (==PROF== messages, the program's own output) are skipped.
"""
import csv
import io

LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
ALL = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
METRICS = (LD, ST)
OPTIONAL = (ALL,)

HEADER = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
          "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit",
          "Metric Value"]


def _number(text):
    t = str(text).strip().replace(",", "").replace("\u202f", "").replace(" ", "")
    if t in ("", "n/a", "N/A"):
        return None
    v = float(t)
    return int(v) if v.is_integer() else v


def parse(text):
    """[{"id": int, "kernel": str, "metrics": {name: number}}] in launch order."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows = csv.DictReader(io.StringIO("\n".join(lines[start:])))
    launches = {}
    for row in rows:
        if not row.get("ID") or not row["ID"].strip().isdigit():
            continue
        lid = int(row["ID"])
        entry = launches.setdefault(lid, {"id": lid, "kernel": row.get("Kernel Name", ""), "metrics": {}})
        name = row.get("Metric Name", "")
        if name:
            entry["metrics"][name] = _number(row.get("Metric Value", ""))
    return [launches[k] for k in sorted(launches)]


def synthesize(launches, metrics=METRICS + OPTIONAL):
    """ncu-style CSV for [(kernel_name, {metric: value})]: what a dry run parses."""
    buf = io.StringIO()
    buf.write("==PROF== Connected to process 4242 (bank_probe)\n")
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(HEADER)
    for i, (kernel, values) in enumerate(launches):
        for m in metrics:
            v = values.get(m, 0)
            w.writerow([i, 4242, "bank_probe", "127.0.0.1", kernel, 1, 7, "(32, 1, 1)", "(1, 1, 1)", 0,
                        "9.0", "Command line profiler metrics", m, "", f"{v:,}"])
    buf.write("==PROF== Disconnected from process 4242\n")
    return buf.getvalue()
