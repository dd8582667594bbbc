"""Kernel source per backend: `cuda` (inline PTX in CUDA C, nvcc) and `hip` (clang builtins).

Both give every kernel one signature,

    extern "C" __global__ void k_...(const unsigned *in, const unsigned *aux, unsigned *out, int ncases)

and move raw 32-bit words only; what the words mean is decided on the host, by the family
specs (`gpu_check.families`) through the catalog.
"""
import hashlib
import re

SIGNATURE = ("(const unsigned *__restrict__ in, const unsigned *__restrict__ aux, "
             "unsigned *__restrict__ out, int ncases)")


def ident(name):
    """A C identifier for a catalog name."""
    return "k_" + re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_")


def source_hash(text, target):
    return hashlib.sha256(f"{target}\n{text}".encode()).hexdigest()[:20]
