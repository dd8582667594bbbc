"""Which entry of a PTX module a kernel name means: C++ kernels by their source name (issue 22).

`--kernel` / ptx.run(kernel=) is tried against each entry in this order, and the first rule
that some entry meets decides:

1. the entry's name as in the PTX (mangled, or an extern "C" name);
2. its demangled signature, with or without the return type: `void scale<float>(float*)`,
   `scale<float>(float*)`;
3. its name with template arguments: `scale<float>`, `ns::scale<float>`;
4. its name without them: `scale`, `ns::scale`.

Rules 2 to 4 compare without white space, and accept a name without its leading namespaces or
classes (`scale` finds `ns::scale`; the text given must start after a `::`) and without
`(anonymous namespace)::` (`outer::k` finds `outer::(anonymous namespace)::k`). When several entries
meet the deciding rule, the error lists them, demangled, and says how to choose one.
"""
from ..errors import LayoutsimError, one_line, suggest


def parts(name):
    """demangle.parts: imported for a name that is not an entry's own (the demangler is ~4 ms of
    every `ptx run` to import, and most names are given as the PTX spells them)."""
    from ..demangle import parts
    return parts(name)


def shown(name):
    """An entry as the messages list it: `_Z5scalePf (scale(float*))`."""
    p = parts(name)
    if p is None:
        return f"{name} (not demangled)"
    return name if p.full == name else f"{name} ({p.full})"


def _squash(text):
    return "".join(text.split())


def _meets(form, wanted):
    """`wanted` is `form`, or its tail after a `::` (white space ignored), with or without the
    `(anonymous namespace)::` the source never writes."""
    f = _squash(form)
    return any(g == wanted or g.endswith("::" + wanted) for g in (f, f.replace("(anonymousnamespace)::", "")))


def find_entry(entries, wanted):
    """The entry (its PTX name) that `wanted` names, or a one-line error."""
    if not isinstance(wanted, str) or not wanted.strip():
        raise LayoutsimError(f"kernel {wanted!r}: give the kernel's name (as in the source or the PTX)")
    if wanted in entries:
        return wanted
    want = _squash(wanted)
    demangled = {e: parts(e) for e in entries}
    rules = (lambda p: (p.full, p.signature), lambda p: (p.name,), lambda p: (p.base,))
    for forms in rules:
        hits = [e for e, p in demangled.items() if p and any(_meets(f, want) for f in forms(p))]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise LayoutsimError(one_line(
                f"kernel {wanted!r} names {len(hits)} entries: {'; '.join(demangled[e].full for e in hits)}; "
                f"give the template form (e.g. {demangled[hits[0]].name!r}), the signature or the mangled "
                f"name ({', '.join(hits)})", 2000))
    choices = list(entries) + [f for p in demangled.values() if p for f in (p.name, p.base)]
    raise LayoutsimError(one_line(f"kernel {wanted!r} is not in the PTX{suggest(wanted, list(dict.fromkeys(choices)))}; "
                                  f"its entries: {', '.join(shown(e) for e in entries) or 'none'}", 4000))
