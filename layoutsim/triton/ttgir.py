"""Reading Triton's ttgir text: the layout encodings it declares or spells inline, their
parameters, and where each is used (the op, the tensor or shared-memory shape, the Python line).

    encodings(ttgir) -> {text: Encoding}, where text is the alias (`#blocked1`) or an inline
    encoding's own spelling (`#ttg.slice<{dim = 1, parent = #blocked}>`).
"""
import re
from dataclasses import dataclass, field

ALIAS = re.compile(r"^(#\w+)\s*=\s*(#ttg\.\w+(?:<.*>)?)\s*$")
# a location: a file position "f.py":L:C, a name around another location "x"(#loc2), or a call
# site callsite(#callee at #caller) (an inlined @jit helper: the kernel's line is the caller's)
LOC = re.compile(r'^(#loc\d*)\s*=\s*loc\((?:"([^"]*)":(\d+):(\d+)|"[^"]*"\((#loc\d*)\)'
                 r'|callsite\((#loc\d*) at (#loc\d*)\))\)')
TYPE = re.compile(r"(tensor|!ttg\.memdesc)<([0-9x]+)x([a-z!][\w.<>]*?)\s*,\s*")
OP = re.compile(r"=\s*([a-z_]+\.[\w.]+)|^\s*([a-z_]+\.[\w.]+)")
OP_LOC = re.compile(r"loc\((#loc\d*)\)\s*$")
FUNC_END = re.compile(r"^(\s*)\}\s*loc\((#loc\d*)\)\s*$")   # the end of a region (a tt.func's) and its location


@dataclass
class Encoding:
    name: str                       # the alias or the inline text
    kind: str                       # blocked, nvidia_mma, dot_op, slice, linear, nvmma_shared, swizzled_shared, ...
    params: dict
    uses: list = field(default_factory=list)   # {"op", "shape", "dtype", "memory", "line"}


def _balanced(text, i):
    """Index just past the '<...>' (or '{...}', '[...]') group starting at text[i]."""
    pairs = {"<": ">", "{": "}", "[": "]", "(": ")"}
    stack = []
    for j in range(i, len(text)):
        c = text[j]
        if c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return j + 1
    return len(text)


def parse_encoding(text):
    """'#ttg.blocked<{sizePerThread = [1, 8], ...}>' -> ('blocked', {params})."""
    m = re.match(r"#ttg\.(\w+)", text)
    if not m:
        return None, {}
    kind = m.group(1)
    body = text[m.end():]
    if not body.startswith("<{"):
        return kind, {}
    return kind, _parse_dict(body[1:_balanced(body, 0) - 1])


def _parse_dict(text):
    """'{a = 1, b = [1, 2], parent = #mma, p2 = #ttg.blocked<{...}>, t = false}' -> dict."""
    out, s = {}, text.strip()[1:-1]
    i = 0
    while i < len(s):
        m = re.compile(r"\s*(\w+)\s*=\s*").match(s, i)
        if not m:
            break
        key, j = m.group(1), m.end()
        k = j
        while k < len(s) and s[k] != ",":
            if s[k] in "<{[(":
                k = _balanced(s, k)
            else:
                k += 1
        out[key] = _value(s[j:k].strip())
        i = k + 1
    return out


def _value(v):
    if v in ("true", "false"):
        return v == "true"
    if v.startswith("["):
        inner = v[1:-1].strip()
        if not inner:
            return []
        parts, depth, cur = [], 0, ""
        for c in inner:
            if c == "," and depth == 0:
                parts.append(cur)
                cur = ""
                continue
            depth += c in "[<{" 
            depth -= c in "]>}"
            cur += c
        parts.append(cur)
        return [_value(p.strip()) for p in parts]
    v = v.split(":")[0].strip()          # '16 : i32'
    try:
        return int(v)
    except ValueError:
        return v


def _locations(lines):
    """loc alias -> (file, line): the line the executor attributes an op's PTX to (the PTX
    loader's rule, ptx/module.py): along a call-site chain (an inlined @jit helper) the innermost
    location in the kernel's own file (the file of the tt.func's `} loc(#loc)`), so a helper
    defined beside the kernel keeps its own line and one from another file (triton/language's
    `tl.max`) its call site in the kernel's file."""
    direct, named, calls = {}, {}, {}
    home, func = None, None
    for ln in lines:
        m = LOC.match(ln)
        if m is None:
            if func is None and "tt.func" in ln:
                func = ln[:len(ln) - len(ln.lstrip())]         # its indentation: its `}` has the same
            fm = FUNC_END.match(ln)
            if fm and home is None and func is not None and fm.group(1) == func:
                home = fm.group(2)
            continue
        if m.group(2) is not None:
            direct[m.group(1)] = (m.group(2), int(m.group(3)))
        elif m.group(5) is not None:
            named[m.group(1)] = m.group(5)
        else:
            calls[m.group(1)] = (m.group(6), m.group(7))

    def chain(name, depth=0):
        """The file positions of a location, innermost first."""
        if depth > 50 or name is None:
            return []
        if name in direct:
            return [direct[name]]
        if name in calls:
            callee, caller = calls[name]
            return chain(callee, depth + 1) + chain(caller, depth + 1)
        return chain(named.get(name), depth + 1)
    kernel_file = (chain(home) or [(None, 0)])[0][0]

    def resolve(name):
        found = chain(name)
        mine = [f for f in found if f[0] == kernel_file]
        return (mine or found or [None])[0]
    return resolve


def encodings(ttgir):
    """Every encoding of the module with its uses, in the order the text first names them."""
    lines = ttgir.splitlines()
    found = {}
    for ln in lines:
        m = ALIAS.match(ln.strip())
        if m and not m.group(2).startswith("#ttg.shared_memory"):
            kind, params = parse_encoding(m.group(2))
            found[m.group(1)] = Encoding(m.group(1), kind, params)
    where = _locations(lines)
    for ln in lines:
        s = ln.strip()
        if s.startswith("#") or "tensor<" not in s and "memdesc<" not in s:
            continue
        om = OP.search(s)
        op = (om.group(1) or om.group(2)) if om else "?"
        lm = OP_LOC.search(s)
        loc = where(lm.group(1)) if lm else None
        for tm in TYPE.finditer(s):
            start = tm.end()
            if s.startswith("#ttg.", start):
                end = _balanced(s, start + s[start:].index("<"))
                enc = s[start:end]
                if enc not in found:
                    kind, params = parse_encoding(enc)
                    found[enc] = Encoding(enc, kind, params)
            else:
                em = re.match(r"#\w+", s[start:])
                if not em:
                    continue
                enc = em.group(0)
            if enc not in found:
                continue
            use = {"op": op, "shape": [int(x) for x in tm.group(2).split("x")], "dtype": tm.group(3),
                   "memory": tm.group(1) != "tensor", "line": list(loc) if loc else None}
            if use not in found[enc].uses:
                found[enc].uses.append(use)
    return found


# ---- the ops that read or write a shared-memory allocation ------------------------------------
# op -> what it does to the memdesc it names: a store of registers (st), a load into registers
# (ld), a cp.async of a pointer tensor (cp.async), the TMA unit's copy (tma), wgmma's operand
# read (gmma); local_alloc stores only when it is given a value
MEMORY_OPS = {"ttg.local_store": "st", "ttg.local_alloc": "st", "ttg.local_load": "ld",
              "ttg.async_copy_global_to_local": "cp.async", "ttng.async_tma_copy_global_to_local": "tma",
              "ttng.async_tma_copy_local_to_global": "tma", "ttng.warp_group_dot": "gmma"}
SHARED_TYPE = re.compile(r"(?:!ttg\.memdesc|(?<=-> ))<([0-9x]+)x(\w+)\s*,\s*(#\w+)")
ATTR_INT = re.compile(r"(\w+)\s*=\s*(-?\d+)\s*:\s*i32")


def _tensor_types(s):
    """[(shape, dtype, encoding text)] of the tensor<...> types of an op line, in order."""
    out = []
    for tm in re.finditer(r"tensor<([0-9x]+)x((?:!tt\.ptr<\w+>)|[\w.]+)\s*,\s*", s):
        start = tm.end()
        if s.startswith("#ttg.", start):
            enc = s[start:_balanced(s, start + s[start:].index("<"))]
        else:
            em = re.match(r"#\w+", s[start:])
            if not em:
                continue
            enc = em.group(0)
        out.append(([int(x) for x in tm.group(1).split("x")], tm.group(2), enc))
    return out


def memory_ops(ttgir):
    """Every op of MEMORY_OPS that names a shared-memory descriptor, in program order:
    {"op", "kind", "line" ([file, line] or None), "registers": [(shape, dtype, encoding)] (the
    tensors it moves; a pointer tensor for cp.async), "shared": [(shape, dtype, encoding)]
    (the memdescs, wgmma's A then B), "attrs": {name: int}, "result": tensor or None}."""
    lines = ttgir.splitlines()
    where = _locations(lines)
    out = []
    for ln in lines:
        s = ln.strip()
        om = OP.search(s)
        op = (om.group(1) or om.group(2)) if om else None
        if op not in MEMORY_OPS:
            continue
        shared = [([int(x) for x in m.group(1).split("x")], m.group(2), m.group(3)) for m in SHARED_TYPE.finditer(s)]
        if not shared:
            continue
        lm = OP_LOC.search(s)
        loc = where(lm.group(1)) if lm else None
        tensors = _tensor_types(s)
        kind = MEMORY_OPS[op]
        if op == "ttg.local_alloc" and not tensors:
            continue                          # an allocation without a value moves nothing
        attrs = {k: int(v) for k, v in ATTR_INT.findall(s)}
        out.append({"op": op, "kind": kind, "line": list(loc) if loc else None, "shared": shared,
                    "registers": tensors if kind != "gmma" else [t for t in tensors[:-1]],
                    "result": tensors[-1] if kind == "gmma" and tensors else None, "attrs": attrs})
    return out


# ops whose lowering may go through shared-memory scratch that no ttgir encoding names; a
# tensormap_create (tl.make_tensor_descriptor) zeroes the 128-byte descriptor in shared memory
# and fills it with tensormap.replace before copying it to its global scratch
SCRATCH_OPS = ("ttg.convert_layout", "tt.reduce", "tt.scan", "ttng.tensormap_create")


def scratch_ops(ttgir):
    """[{"op", "line"}]: the distinct SCRATCH_OPS of the kernel with their Python lines (a
    region op such as tt.reduce carries its location where its region closes)."""
    lines = ttgir.splitlines()
    where = _locations(lines)
    out, open_ops = [], []
    for ln in lines:
        s = ln.strip()
        m = re.search(r'(?:=\s*"?|^)(' + "|".join(re.escape(o) for o in SCRATCH_OPS) + r')(?![\w.])', s)
        lm = OP_LOC.search(s)
        if m and (lm is None or s.endswith("({")):
            open_ops.append(m.group(1))
            continue
        if m:
            op = m.group(1)
        elif open_ops and s.startswith("})") and lm:
            op = open_ops.pop()
        else:
            continue
        loc = where(lm.group(1)) if lm else None
        rec = {"op": op, "line": list(loc) if loc else None}
        if rec not in out:
            out.append(rec)
    return out
