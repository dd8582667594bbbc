"""The fidelity line of a run: how many executed warp-instructions the model computes exactly as
the GPU does, by proof, and how many it approximates or cannot vouch for.

- exact: integer and memory instructions, IEEE-rounded float arithmetic (fround.py's proofs),
  the approximate-math instructions whose models were proven over every input on the H200
  (numerics/sfu.py, numerics/sfu_div.py), and the multiply-adds ptxas contracted, fused as its
  SASS shows (contract.py);
- approximate: instructions computed by a model not proven exact or by a correctly rounded
  stand-in (their step carries info["approx"]), each with the error the H200 run measured for
  its MUFU and where that was measured (numerics/sfu.info);
- documented (a part of exact): instructions of an architecture no GPU here has (tcgen05 on
  sm_100a: ops_tcgen05.py), computed from the vendor's documents and checked against an
  independent implementation of them (CUTLASS's CuTe), not measured; their step carries
  info["documented"] (the sources);
- unknown: add/sub whose contraction by ptxas is not known (ptxas not consulted, or its decision
  could not be placed: contract.py), computed as written.
Refused instructions never run: a kernel holding one is refused when it is loaded (exit 2), so
a report exists only where none was refused.

Counted per PTX instruction from the executions the scheduler already counts (costs.executions).
"""
from ..numerics import sfu


def _error(name):
    """The measured error of an approximate instruction's MUFU, and its source, or a phrase."""
    try:
        i = sfu.info(name)
    except Exception:          # noqa: BLE001 - not an SFU instruction sfu knows (e.g. .f64 forms)
        return {"error": "not measured", "source": None}
    e = i.get("error_vs_correctly_rounded") or {}
    src = i.get("source") or {}
    out = {"error": (f"at most {e['max_ulps']} ulps (|error| <= {e['max_abs_error']:.3g}) from the correctly "
                     f"rounded value" if "max_ulps" in e and e.get("max_abs_error") is not None else "not measured"),
           "source": f"{src.get('gpu', 'GPU')} {str(src.get('date', ''))[:10]} (layoutsim/numerics/data/sfu_sm90)"}
    if "model_mismatches" in i:
        m = i["model_mismatches"]
        out["model_mismatches"] = f"{m['mismatches']} of {m['inputs']} inputs"
    if "model_evidence" in i:
        out["model_mismatches"] = "none found; not yet compared input by input on the GPU (numerics.sfu.INFERRED)"
    return out


def compute(prog, executions, warp_instructions):
    """The fidelity record of a run (Run.fidelity): counts, the approximate and unknown lines,
    and whether ptxas's contraction decisions were available."""
    approx, unknown, documented = {}, {}, {}
    c = prog.contraction
    for st in prog.marked:            # the others are exact
        if st.info.get("documented") and st.site not in documented:
            documented[st.site] = {"line": st.ins.line, "instruction": st.ins.name, "source": st.info["documented"],
                                   "executions": int(executions[st.site])}
        if st.info.get("approx") and st.site not in approx:
            approx[st.site] = dict(_error(st.ins.name), line=st.ins.line, instruction=st.ins.name,
                                   executions=int(executions[st.site]))
    for site, why in (c.unknown.items() if c is not None else ()):
        s = prog.sites[site]
        unknown[site] = {"line": s.line, "instruction": s.text.split()[0], "why": why,
                         "executions": int(executions[site])}
    n_approx = sum(r["executions"] for r in approx.values())
    n_unknown = sum(r["executions"] for r in unknown.values())
    return {"warp_instructions": int(warp_instructions), "exact": int(warp_instructions) - n_approx - n_unknown,
            "approximate": n_approx, "unknown": n_unknown, "refused": 0,
            "documented": sum(r["executions"] for r in documented.values()),
            "documented_instructions": [r for r in documented.values() if r["executions"]],
            "approximate_instructions": [r for r in approx.values() if r["executions"]],
            "unknown_instructions": [r for r in unknown.values() if r["executions"]],
            "contraction": {"available": bool(c and c.available), "fused": len(c.fused) if c else 0,
                            "note": c.note if c else "not decided"}}


def lines(f, width=100):
    """The report's fidelity lines (text, each cut to `width`): the counts, where ptxas's
    contractions came from, then one line per approximate or unknown instruction (the JSON and
    Run.fidelity hold them in full)."""
    c = f["contraction"]
    out = [f"fidelity: {f['exact']} of {f['warp_instructions']} warp-instructions exact by proof, "
           f"{f['approximate']} approximate, {f['unknown']} unknown",
           "fidelity: ptxas's multiply-adds " + (f"taken from its SASS ({c['fused']} fused)" if c["available"]
                                                  else f"not known, computed unfused ({c['note']})")]
    if f.get("documented"):
        srcs = sorted({r["source"] for r in f["documented_instructions"]})
        out.append(f"fidelity: {f['documented']} from documents, not measured: {'; '.join(srcs)}")
    for r in f["approximate_instructions"]:
        out.append(f"  approximate: line {r['line']} {r['instruction']} ({r['executions']}x): {r['error']}")
    for r in f["unknown_instructions"]:
        out.append(f"  unknown: line {r['line']} {r['instruction']} ({r['executions']}x): {r['why']}")
    return [x if len(x) <= width else x[:width - 3] + "..." for x in out]
