"""gpu_check: run the real matrix instructions on a GPU and compare every bit with layoutsim.

Kernels are generated from the catalog (`families/`, one module per instruction family, written
with the code generators of `codegen/`) and move raw 32-bit registers only; every
interpretation (which element a register slot holds, what the result should be) happens on the
host, in the family specs and `checks/`, through the catalog, `layoutsim.packing` and
`layoutsim.mma`. The same host
code compares live GPU output and dumps recorded earlier (tests/data/layouts), so CI replays a
GPU run without a GPU. The tools that need nvcc and write data the executor reads live here too,
out of layoutsim's import path (`kernel_corpus.lowering`, `wmma_probe`).
"""
__all__ = []
