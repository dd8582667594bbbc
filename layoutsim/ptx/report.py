"""The result of a launch: final buffers, shared-memory wavefront totals, per-instruction costs,
hazards, and what is not proven exact.

Run.instructions lists every PTX instruction of the kernel (and of the functions it calls) in
program order: its PTX line, CUDA source line (with -lineinfo), text, executions (warp level:
warps with at least one thread executing it), and for shared-memory instructions wavefronts
and ideal wavefronts (the bank model), for global ones requests and sectors (the coalescing
model) and the Nsight Compute op they are counted under. Every access is costed as the SASS
ptxas emits for its line (sass.py); `Run.sass_source` says where that lowering came from, and a
note says when there was none. With a CTA sample (`ctas=`) the counts are extrapolated to the
whole grid and labelled so.
"""
from dataclasses import dataclass, field
from typing import Any, Optional

from . import samples
from .initcheck import lines as initcheck_lines
from .fidelity import lines as fidelity_lines

SCHEMA = 1


@dataclass
class InstructionStats:
    line: int
    cuda: Optional[tuple]           # (file, line) or None
    text: str
    executions: int
    wavefronts: Optional[int] = None
    ideal: Optional[int] = None
    kind: Optional[str] = None      # shared access: "ld", "st", "atom", "ldgsts"
    sass: Optional[str] = None      # the SASS instruction the cost models charge
    requests: Optional[int] = None  # global accesses (coalescing model)
    sectors: Optional[int] = None
    ideal_sectors: Optional[int] = None     # the sectors its bytes need (memory/nvidia.py's ideal)
    global_kind: Optional[str] = None   # the ncu op its global accesses count under: ld, st, atom, red
    note: str = ""

    @property
    def excess(self):
        return (self.wavefronts or 0) - (self.ideal or 0)

    @property
    def excess_sectors(self):
        return (self.sectors or 0) - (self.ideal_sectors or 0)

    def to_json(self):
        return {"line": self.line,
                "cuda": {"file": self.cuda[0], "line": self.cuda[1]} if self.cuda else None,
                "text": self.text, "executions": self.executions, "wavefronts": self.wavefronts,
                "ideal": self.ideal, "excess": self.excess if self.wavefronts is not None else None,
                "kind": self.kind, "sass": self.sass, "requests": self.requests,
                "sectors": self.sectors, "ideal_sectors": self.ideal_sectors,
                "excess_sectors": self.excess_sectors if self.sectors is not None else None,
                "global_kind": self.global_kind, "note": self.note}


@dataclass
class Run:
    kernel: str
    arch: str
    grid: tuple
    block: tuple
    buffers: list
    shared_wavefronts: dict
    instructions: list
    warp_instructions: int = 0
    notes: list = field(default_factory=list)
    hazards: Optional[list] = None          # racecheck=True: list of dicts
    sampled: Optional[dict] = None          # ctas=: {"ctas": [...], "of": n, "factor": f}
    global_totals: Optional[dict] = None    # {"requests", "sectors", "ld"|"st"|"atom"|"red": {...}}
    sass_source: Optional[str] = None       # where the SASS costed came from; None: per PTX instruction
    gmma_wavefronts: int = 0                # wgmma operand reads (ncu op_gmma), outside shared_wavefronts
    tensor_maps: Optional[list] = None      # the launch's CUtensorMap arguments: {"arg", "dims", "box", ...}
    seconds: float = 0.0
    initcheck: Optional[list] = None        # initcheck=True: reads of never-written shared memory, per line
    samples: Optional[list] = None          # per instruction: its first warp executions (samples.py)
    fault: Optional[dict] = None            # the fault that stopped the launch (faults.py), on PtxFault.run
    fidelity: Optional[dict] = None         # exact / approximate / unknown warp-instructions (fidelity.py)
    printf: str = ""                        # what the kernel's printf printed (ops_sys.py: the order)
    assertions: list = field(default_factory=list)   # the runtime's lines of failed asserts
    graph_conditionals: list = field(default_factory=list)   # cudaGraphSetConditional: [{"handle", "value"}]
    extra: Any = None
    cluster: Optional[tuple] = None         # the thread-block cluster shape of a cluster launch (cluster.py)
    mmas: Optional[list] = None             # record_mmas=True: every tensor-core MMA executed (events.Mma)

    @property
    def shared_ideal(self):
        out = {"ld": 0, "st": 0}
        for s in self.instructions:
            if s.kind in out:
                out[s.kind] += s.ideal or 0
        return out

    def hotspots(self):
        """Shared-memory instructions, most excess wavefronts first."""
        rows = [s for s in self.instructions if s.wavefronts is not None]
        return sorted(rows, key=lambda s: (-s.excess, -(s.wavefronts or 0), s.line))

    def global_hotspots(self):
        """Global-memory instructions, most sectors beyond the ideal first."""
        rows = [s for s in self.instructions if s.sectors is not None]
        return sorted(rows, key=lambda s: (-s.excess_sectors, -(s.sectors or 0), s.line))

    def accesses(self, line):
        """The lanes and addresses of a line's first warp executions (samples.py): line is a PTX
        line number or a CUDA line "file.cu:42"."""
        return samples.accesses(self, line)

    def render_access(self, line, path, execution=0, fmt=None):
        """Draw one sampled execution of a line (shared: over banks; global: over sectors)."""
        return samples.render(self, line, path, execution, fmt)

    def to_json(self):
        return {"schema": SCHEMA, "kernel": self.kernel, "arch": self.arch, "grid": list(self.grid),
                "block": list(self.block), "cluster": list(self.cluster) if self.cluster else None,
                "shared_wavefronts": self.shared_wavefronts,
                "shared_ideal": self.shared_ideal, "global": self.global_totals,
                "warp_instructions": self.warp_instructions, "sampled": self.sampled,
                "notes": self.notes, "hazards": self.hazards, "initcheck": self.initcheck, "fault": self.fault,
                "seconds": round(self.seconds, 3), "sass_source": self.sass_source,
                "gmma_wavefronts": self.gmma_wavefronts, "tensor_maps": self.tensor_maps,
                "fidelity": self.fidelity, "printf": self.printf, "assertions": self.assertions,
                "graph_conditionals": self.graph_conditionals,
                "instructions": [s.to_json() for s in self.instructions]}

    def format(self, top=20, all_lines=False):
        """The default report: the shared-memory instructions sorted by excess wavefronts."""
        lines = [f"kernel {self.kernel} on {self.arch}: grid {self.grid}, block {self.block}, "
                 + (f"cluster {self.cluster}, " if self.cluster else "")
                 + f"{self.warp_instructions} warp-instructions"
                 + (f" (extrapolated from {len(self.sampled['ctas'])} of {self.sampled['of']} CTAs)"
                    if self.sampled else "")]
        sw, si = self.shared_wavefronts, self.shared_ideal
        lines.append(f"shared memory: {sw['ld']} load wavefronts (ideal {si['ld']}), {sw['st']} store "
                     f"wavefronts (ideal {si['st']})")
        if self.gmma_wavefronts:
            lines.append(f"wgmma: {self.gmma_wavefronts} GMMA wavefronts reading shared operands (ncu op_gmma, "
                         f"outside the load/store totals)")
        if self.global_totals:
            g = self.global_totals
            lines.append(f"global memory: {g['requests']} requests, {g['sectors']} sectors (ideal "
                         f"{g['ideal_sectors']})")
        rows = self.hotspots() if not all_lines else list(self.instructions)
        if top and not all_lines:
            rows = rows[:top]
        if rows:
            lines += _table(("wavefronts", "ideal", "excess"), [
                (s, (_n(s.wavefronts), _n(s.ideal), _n(s.excess if s.wavefronts is not None else None)))
                for s in rows])
        else:
            lines.append("no shared-memory instructions executed")
        # the global-memory lines beside them: a kernel whose only fault is an uncoalesced access
        # shows it here (sectors beyond what its bytes need first; --all: in program order)
        grows = self.global_hotspots() if not all_lines else [s for s in self.instructions if s.sectors is not None]
        if grows:
            lines += _table(("requests", "sectors", "ideal", "excess"), [
                (s, (_n(s.requests), _n(s.sectors), _n(s.ideal_sectors), _n(s.excess_sectors)))
                for s in (grows if all_lines else grows[:top])])
        if self.hazards is not None:
            if not self.hazards:
                lines.append("racecheck: no shared-memory hazards")
            lines.extend(_hazard_lines(self.hazards))
        if self.initcheck is not None:
            lines.extend(initcheck_lines(self.initcheck))
        if self.fidelity is not None:
            lines.extend(fidelity_lines(self.fidelity, WIDTH))
        lines.extend(f"cudaGraphSetConditional: handle {c['handle']:#x} set to {c['value']}"
                     for c in self.graph_conditionals)
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


WIDTH = 100          # the text report's lines: the instruction text is cut to fit


def _table(counts, rows):
    """Lines of a table: line, cuda, executions, the count columns, the instruction (cut to WIDTH).
    rows: [(InstructionStats, (count texts))]."""
    head = ("line", "cuda", "executions") + counts
    table = [head] + [(str(s.line), f"{_short(s.cuda[0])}:{s.cuda[1]}" if s.cuda else "-", str(s.executions))
                      + c for s, c in rows]
    w = [max(len(r[i]) for r in table) for i in range(len(head))]
    texts = ["instruction"] + [s.text for s, _ in rows]
    room = max(24, WIDTH - sum(w) - 2 * len(w))
    return ["  ".join(c.rjust(w[i]) if i != 1 else c.ljust(w[i]) for i, c in enumerate(r)) + "  "
            + (t if len(t) <= room else t[:room - 3] + "...") for r, t in zip(table, texts)]


def _hazard_lines(hazards):
    """One line per (kind, earlier source line, later source line): the copies of an unrolled
    loop are one hazard in the CUDA source."""
    groups = {}
    for h in hazards:
        a = f"{_short(h['first_cuda'][0])}:{h['first_cuda'][1]}" if h["first_cuda"] else f"PTX line {h['first_line']}"
        b = f"{_short(h['second_cuda'][0])}:{h['second_cuda'][1]}" if h["second_cuda"] else f"PTX line {h['second_line']}"
        g = groups.setdefault((h["kind"], a, b), {"count": 0, "pairs": 0, "first": h})
        g["count"] += h["count"]
        g["pairs"] += 1
    out = []
    for (kind, a, b), g in groups.items():
        h = g["first"]
        what = {"RAW": "written at", "WAR": "read at", "WAW": "written at"}[kind]
        then = {"RAW": "read at", "WAR": "written at", "WAW": "written again at"}[kind]
        out.append(f"racecheck: {kind} hazard: shared memory {what} {a} ({_opcode(h['first_text'])}) is "
                   f"{then} {b} ({_opcode(h['second_text'])}) by another warp with no barrier between: "
                   f"{g['count']} bytes, {g['pairs']} PTX instruction pair(s); e.g. CTA {h['cta']}, "
                   f"address {h['address']:#x}, warps {h['warps'][0]} and {h['warps'][1]}")
    return out


def _opcode(text):
    """The instruction's name, without its guard (@%p1)."""
    words = text.split()
    return words[1] if words[0].startswith("@") and len(words) > 1 else words[0]


def _n(v):
    return "-" if v is None else str(v)


def _short(path):
    return str(path).rsplit("/", 1)[-1]


def _samples(run):
    got = run.__dict__.get("_samples")
    if isinstance(got, samples.Samples):        # made into rows when first asked for
        got = run.__dict__["_samples"] = got.rows
    return got


def _set_samples(run, value):
    run.__dict__["_samples"] = value


# Run.samples: per instruction, its first warp executions (samples.py). The run is given the
# Samples observer itself, whose rows are built on the first read: a launch whose samples nobody
# reads does not pay for them (the dataclass's __init__, __eq__ and __repr__ go through this).
Run.samples = property(_samples, _set_samples)
