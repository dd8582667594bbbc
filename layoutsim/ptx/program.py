"""Linking one kernel into an executable program: calls inlined, registers numbered, variables
placed, every instruction compiled into a Step.

Calls: every `call` of a defined .func is expanded in place (a copy of the callee per call site,
its registers and .param variables renamed), so the program is one flat list of steps in
program order: what the min-PC scheduler (scheduler.py) needs to reconverge. The call step
copies the arguments into the callee's parameters; the callee's `ret` branches to a step after
its body that copies the results into the caller's variables. Recursion and indirect calls are
refused with their line.

A Step carries the compiled function and what the scheduler and the reports need: the PTX
site (one per PTX instruction, shared by the copies of an inlined callee), control flow, and
whether the instruction synchronizes the warp (.sync/.aligned) or the CTA (barriers).
"""
from dataclasses import dataclass

from .. import archs
from ..errors import LayoutsimError
from . import lines
from .compile import compile_step
from .launch import MAX_GLOBAL_BYTES, init_bytes
from .module import Label, UnsupportedPtx
from .operands import Builder
from .state import Heap
from .step import Step
from .syntax import Instr, Operand

# the CUDA runtime's device functions the executor models (ops_sys.py): the step each call becomes
SYSTEM_CALLS = {"vprintf": "vprintf", "__assertfail": "assertfail", "malloc": "malloc", "free": "free",
                "cudaGraphSetConditional": "graph_set_conditional"}
# the device runtime's launch and graph calls (CUDA dynamic parallelism, device graph launch): refused
DEVICE_RUNTIME = {"cudaGetParameterBufferV2": "a device-side kernel launch (dynamic parallelism)",
                  "cudaLaunchDeviceV2": "a device-side kernel launch (dynamic parallelism)",
                  "cudaGetParameterBuffer": "a device-side kernel launch (dynamic parallelism)",
                  "cudaLaunchDevice": "a device-side kernel launch (dynamic parallelism)",
                  "cudaCGGetIntrinsicHandle": "a grid-wide cooperative-groups handle (cooperative launch)",
                  "cudaCGSynchronize": "a grid-wide cooperative-groups sync (cooperative launch)",
                  "cudaCGSynchronizeGrid": "a grid-wide cooperative-groups sync (cooperative launch)"}
DEVICE_GRAPH_PREFIX = "cudaGraph"    # cudaGraphLaunch_*, ...: device graph calls (SetConditional is modelled)


@dataclass
class Site:
    """One PTX instruction as written (what Run.instructions reports)."""
    line: int
    text: str
    cuda: object            # (path, line) or None
    function: str


class Program:
    """The executable form of one entry: steps, register types, memory layout."""

    def __init__(self, module, entry, arch):
        self.module, self.arch = module, arch
        self.fn = module.entry(entry)
        self.reg_types, self._slots = [], {}
        self.sites, self._site_of = [], {}
        self.steps = []
        self.shared_vars, self.local_vars, self.param_vars = {}, {}, {}
        self.shared_init = []
        self.kernel_params = []            # (name, PtxType or None, offset, size, align)
        self.global_vars = {}              # .global/.const variable name -> address
        # shared addresses start after the system's reserved bytes where ptxas puts them first
        # (archs.user_smem_base): static_shared and dynamic_shared_offset are window offsets
        self.smem_base = archs.user_smem_base(arch)
        self.static_shared = self.smem_base
        self.dynamic_shared_offset = None
        self.local_size = 0
        self.local_sizes = {}              # .local variable key -> bytes
        self.recursion = {}                # copy prefix -> the rcall instructions that re-enter it
        self.param_size = 0
        self.notes = set()                 # what the compiled program cannot prove (approximations, ...)
        self.lowered = None                # sass.Lowered: the SASS of each line (set by runner.program)
        self.contraction = None            # contract.Contraction: ptxas's fused mul+adds (runner.program)
        self.sunk = {}                     # ld.shared site -> its one reader's site (sinking.py; runner.program)
        self.reads_clock = False           # an instruction reads %clock/%clock64/%globaltimer (operands.py)
        self.identity = object()           # this program in keys that must not keep it alive (costs.py)
        self._layout_kernel_params()
        self._place_globals()
        self._place(self.fn, prefix="", stack=(self.fn.name,))
        self.builder = Builder(self)
        self._compile()

    # ---- layout ------------------------------------------------------------------------------
    def _layout_kernel_params(self):
        off = 0
        for p in self.fn.params:
            align = max(p.alignment, 1)
            off = -(-off // align) * align
            self.kernel_params.append((p.name, p, off, p.size, align))
            off += p.size
        self.kernel_param_bytes = off

    def _place_globals(self):
        """Module .global/.const variables go first into global memory (their addresses are
        constants of the compiled program); each launch adds its buffers after them."""
        self.static_heap = Heap()
        for v in self.module.variables:
            if v.space in ("global", "const"):
                if v.count == 0:
                    raise LayoutsimError(f"line {v.line}: .{v.space} array {v.name}[] has no size")
                self.global_vars[v.name] = self.static_heap.alloc(max(v.size, 1), f".{v.space} {v.name}",
                                                                  align=max(v.alignment, 16))
                # the aligned extent, bounded before anything is allocated (Heap.finish allocates it)
                end = self.static_heap.extent
                if end > MAX_GLOBAL_BYTES:
                    raise LayoutsimError(
                        f"line {v.line}: .{v.space} {v.name} (.align {v.alignment}, {v.size} bytes) ends at "
                        f"byte {end} of global memory: the module's variables, aligned, may take at most "
                        f"{MAX_GLOBAL_BYTES} bytes (512 MiB)")

    def smem_size(self, dynamic):
        """The CTA's shared window in bytes: the reserved bytes ahead of its own (smem_base), its
        static variables and `dynamic` bytes."""
        base = self.static_shared if self.dynamic_shared_offset is None else self.dynamic_shared_offset
        return base + int(dynamic)

    def user_smem(self, dynamic):
        """The shared memory the kernel itself asks for (static + dynamic, with the alignment
        between them): what %aggr_smem_size reads and the arch's limit bounds."""
        return self.smem_size(dynamic) - self.smem_base

    def _add_shared(self, v, key):
        if v.extern or v.count == 0:
            self.shared_vars[key] = ("dynamic", max(v.alignment, 16))
            return
        a = v.alignment
        off = -(-self.static_shared // a) * a
        self.shared_vars[key] = off
        self.static_shared = off + v.size
        if v.init:
            self.shared_init.append((off, init_bytes(v)))

    def _place_module_shared(self, instrs):
        """Module-scope .shared variables this kernel (or a function it calls) names, in
        declaration order after the kernel's own."""
        used = set()

        def walk(op):
            if op.kind == "sym":
                used.add(op.value)
            elif op.kind == "addr" and op.base is not None:
                walk(op.base)
            elif op.kind in ("vec", "list", "pair", "tref"):
                for o in op.value:
                    walk(o)
        for ins in instrs:
            for op in ins.operands:
                walk(op)
        for v in self.module.variables:
            if v.space == "shared" and v.name in used:
                self._add_shared(v, v.name)

    def _finish_layout(self):
        """Dynamic shared memory (`.extern .shared x[]`) begins after the static variables,
        at the largest alignment an extern declaration asks for (at least 16 bytes)."""
        aligns = [v[1] for v in self.shared_vars.values() if isinstance(v, tuple)]
        if aligns:
            a = max(aligns)
            self.dynamic_shared_offset = -(-self.static_shared // a) * a

    def _place(self, fn, prefix, stack):
        """Number the registers and place the variables of one (inlined copy of a) function."""
        for key, t in fn.regs.items():
            self._slots[prefix + key] = len(self.reg_types)
            self.reg_types.append(t)
        for v in fn.variables:
            key = prefix + v.name
            if v.space == "shared":
                self._add_shared(v, key)
            elif v.space == "local":
                a = v.alignment
                off = -(-self.local_size // a) * a
                self.local_vars[key] = off
                self.local_sizes[key] = v.size
                self.local_size = off + v.size
            elif v.space == "param":
                self._add_param(key, v)
        if fn is not self.fn:
            for v in fn.params + fn.rets:
                self._add_param(prefix + v.name, v)

    def _add_param(self, key, v):
        a = max(v.alignment, 1)
        off = -(-self.param_size // a) * a
        self.param_vars[key] = (off, v)
        self.param_size = off + v.size

    # ---- names --------------------------------------------------------------------------------
    def reg_slot(self, name, ins):
        key = ins.extra.get("prefix", "") + name
        s = self._slots.get(key)
        if s is None:
            raise LayoutsimError(f"{lines.of(ins)}: register {name} is not declared (in {ins.text})")
        return s

    def symbol_address(self, name, ins):
        """Address of a variable in its own state space (shared offset, local offset, heap
        address for .global/.const, parameter offset)."""
        prefix = ins.extra.get("prefix", "")
        for key in (prefix + name, name):
            if key in self.shared_vars:
                v = self.shared_vars[key]
                return self.dynamic_shared_offset if isinstance(v, tuple) else v
            if key in self.local_vars:
                return self.local_vars[key]
            if key in self.param_vars:
                return self.param_vars[key][0]
        if name in self.global_vars:
            return self.global_vars[name]
        if name in self.module.functions:          # a function's address (function pointers)
            return self.module.function_address(name)
        for pname, _, off, _, _ in self.kernel_params:
            if pname == name:
                return off
        raise LayoutsimError(f"{lines.of(ins)}: unknown symbol {name!r} (in {ins.text})")

    def symbol_space(self, name, ins):
        prefix = ins.extra.get("prefix", "")
        for key in (prefix + name, name):
            if key in self.shared_vars:
                return "shared"
            if key in self.local_vars:
                return "local"
            if key in self.param_vars:
                return "param"
        if any(p[0] == name for p in self.kernel_params):
            return "kparam"
        if name in self.global_vars:
            return "global"
        return None

    # ---- expansion and compilation ------------------------------------------------------------
    def _compile(self):
        flat = []                               # Instr copies and ("label", name), in program order
        self._expand(self.fn, "", ((self.fn.name, ""),), flat, ret_label=None)
        self._place_module_shared([x for x in flat if not isinstance(x, tuple)])
        self._finish_layout()
        pcs, instrs = {}, []
        for item in flat:
            if isinstance(item, tuple):
                pcs[item[1]] = len(instrs)
            else:
                instrs.append(item)
        self.labels = pcs
        for pc, ins in enumerate(instrs):
            self.steps.append(compile_step(self, ins, pc, self._site(ins)))
        # falling off the end of the body exits: a step of no PTX line (an empty body is only it)
        self.steps.append(Step(pc=len(instrs), ins=None, site=-1, kind="exit", info={"hidden": True}))
        # what the scheduler reads per step: whether it counts as a warp-instruction, whether a
        # straight line of steps may run on into it (an "op" step that is no warp collective; a
        # warp collective only for a group of every live thread), whether it mallocs or frees
        self.counted = [not st.info.get("hidden") for st in self.steps]
        self.straight = [st.kind == "op" and st.sync is None for st in self.steps] + [False]
        self.collective = [st.kind == "op" and st.sync is not None for st in self.steps] + [False]
        self.mallocs = any(st.ins is not None and st.ins.opcode in ("malloc", "free") for st in self.steps)
        # runs of mma.sync steps the scheduler may run as one (mma_runs.py), per step; None: no mma.sync
        self.fused = None
        if any("mma_run" in st.info for st in self.steps):
            from .mma_runs import runs
            self.fused = runs(self.steps) + [None]
        # the steps of a PTX line whose result is approximate or documented (fidelity.py, the report)
        self.marked = [st for st in self.steps if st.site >= 0 and (st.info.get("approx") or st.info.get("documented"))]

    def _site(self, ins):
        key = ins.extra["origin"]
        s = self._site_of.get(key)
        if s is None:
            fn = ins.extra["function"]
            s = self._site_of[key] = len(self.sites)
            self.sites.append(Site(ins.line, ins.text, ins.extra["cuda"], fn.name))
        return s

    def _expand(self, fn, prefix, stack, out, ret_label):
        for item in fn.body:
            if isinstance(item, Label):
                out.append(("label", prefix + item.name))
                continue
            ins = Instr(item.line, item.text, item.opcode, item.mods, item.operands, item.guard,
                        item.loc, extra={"prefix": prefix, "origin": (fn.name, item.line, id(item)),
                                         "function": fn, "ret_label": ret_label,
                                         "cuda": self.module.cuda_line(item, fn)})
            if item.opcode == "call":
                self._expand_call(ins, fn, prefix, stack, out)
                continue
            out.append(ins)

    def _expand_call(self, ins, fn, prefix, stack, out):
        ops = list(ins.operands)
        rets = []
        if ops and ops[0].kind == "list":
            rets = list(ops.pop(0).value)
        if not ops or ops[0].kind not in ("sym", "reg"):
            raise UnsupportedPtx(f"{lines.of(ins)}: call without a target ({ins.text})")
        target = ops.pop(0)
        args = list(ops.pop(0).value) if ops and ops[0].kind == "list" else []
        if target.kind == "reg":
            return self._expand_indirect(ins, target, args, rets, ops, fn, prefix, stack, out)
        if ops:
            raise UnsupportedPtx(f"{lines.of(ins)}: call with a target list ({ins.text}) is not supported")
        name = target.value
        callee = self.module.functions.get(name)
        if callee is None:
            raise LayoutsimError(f"{lines.of(ins)}: call to undeclared function {name}")
        if not callee.defined:
            return self._external(ins, name, args, rets, out)
        self._inline(ins, callee, args, rets, prefix, stack, out)

    def _inline(self, ins, callee, args, rets, prefix, stack, out):
        """A direct call: a copy of the callee in place; a call to a function already being
        expanded (recursion) is a `rcall` step that pushes a frame of that copy (calls.py)."""
        name = callee.name
        if len(args) != len(callee.params) or len(rets) != len(callee.rets):
            raise LayoutsimError(f"{lines.of(ins)}: call to {name} passes {len(args)} argument(s) and "
                                 f"{len(rets)} result(s); it takes {len(callee.params)} and returns "
                                 f"{len(callee.rets)}")
        outer = next((p for n, p in stack if n == name), None)
        if outer is not None:
            site = len(self.recursion.setdefault(outer, []))
            resume = f"{prefix}$resume@{ins.line}.{len(self._slots)}.{site}"
            rcall = Instr(ins.line, ins.text, "rcall", ins.mods, ins.operands, ins.guard, ins.loc,
                          extra=dict(ins.extra, callee=callee, cprefix=outer, args=args, rets=rets,
                                     site_index=site, start=f"{outer}$start", resume=resume))
            self.recursion[outer].append(rcall)
            out.append(rcall)
            out.append(("label", resume))
            return
        k = len(self._slots)
        cprefix = f"{prefix}{name}@{ins.line}.{k}/"
        self._place(callee, cprefix, stack + ((name, cprefix),))
        end = ("label", f"{cprefix}$ret")
        call = Instr(ins.line, ins.text, "call", ins.mods, ins.operands, ins.guard, ins.loc,
                     extra=dict(ins.extra, callee=callee, cprefix=cprefix, args=args, rets=rets,
                                end=end[1]))
        out.append(call)
        out.append(("label", f"{cprefix}$start"))
        self._expand(callee, cprefix, stack + ((name, cprefix),), out, ret_label=end[1])
        out.append(end)
        out.append(Instr(ins.line, ins.text, "retcopy", (), (), None, ins.loc,
                         extra=dict(call.extra, hidden=True)))

    def _expand_indirect(self, ins, target, args, rets, ops, fn, prefix, stack, out):
        """`call (r), %rd, (a), prototype;`: one inlined copy per function whose address the
        module takes and whose parameters and results match; an `icall` step sends each thread
        to the copy its register names (calls.py) and every copy ends at one join label."""
        if len(ops) != 1 or ops[0].kind != "sym":
            raise UnsupportedPtx(f"{lines.of(ins)}: indirect call without a .callprototype ({ins.text})")
        cands = [f for f in self.module.functions.values() if f.kind == "func" and f.defined
                 and f.name in self.module.address_taken and len(f.params) == len(args)
                 and len(f.rets) == len(rets)]
        join = f"{prefix}$join@{ins.line}.{len(self._slots)}"
        labels = [f"{join}/{f.name}" for f in cands]
        out.append(Instr(ins.line, ins.text, "icall", (), (target,), ins.guard, ins.loc,
                         extra=dict(ins.extra, args=args, rets=rets, candidates=[(self.module.function_address(f.name), f.name)
                                                           for f in cands], labels=labels, join=join)))
        for f, lab in zip(cands, labels):
            out.append(("label", lab))
            self._inline(Instr(ins.line, ins.text, "call", ins.mods, (), None, ins.loc, extra=dict(ins.extra)),
                         f, args, rets, prefix, stack, out)
            out.append(Instr(ins.line, ins.text, "bra", ("uni",), (Operand("sym", join),), None, ins.loc,
                             extra=dict(ins.extra, hidden=True, prefix="")))
        out.append(("label", join))

    def _external(self, ins, name, args, rets, out):
        """vprintf, __assertfail, malloc, free and cudaGraphSetConditional (ops_sys.py); any other
        function the PTX only declares is refused."""
        if name not in SYSTEM_CALLS:
            what = DEVICE_RUNTIME.get(name) or ("a device-side graph call" if name.startswith(DEVICE_GRAPH_PREFIX)
                                                else None)
            if what is not None:
                raise UnsupportedPtx(f"{lines.of(ins)}: {what} ({name}) is not modelled: the executor runs "
                                     f"one launch")
            raise UnsupportedPtx(f"{lines.of(ins)}: call to {name}, which the PTX declares but does "
                                 f"not define (an external function)")
        out.append(Instr(ins.line, ins.text, SYSTEM_CALLS[name], (), (), ins.guard, ins.loc,
                         extra=dict(ins.extra, args=args, rets=rets)))
