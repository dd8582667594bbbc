"""realworld: kernels published by other projects, launched as published, measured on the H200
(issue 24's corpus), in tests/data/realworld/ with the layout of tests/data/kernels/ (see
gpu_check.kernel_corpus: manifest.json, <case>.inputs.npz, <case>.h200.npz, h200.json) except that
a case's source is not copied here: the manifest names the registry package it comes from
(`package`, `source`) and the PTX is what the manifest's nvcc command printed from it.

Modules:
    cases.py     the launches: which kernel of which example, grid, block, argument bytes
    build.py     nvcc over the pip package -> PTX, inputs, manifest, the package's licence
    measure.py   the H200 measurement: gpu_check.kernel_corpus.measure over this directory,
                 every launch under ncu five times
The replay: tests/gpu_check/test_realworld_replay.py.
"""
