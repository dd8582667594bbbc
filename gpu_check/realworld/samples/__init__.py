"""The cuda-samples launches (NVIDIA/cuda-samples, BSD 3-Clause): each kernel launched as its
sample's host code launches it, at sizes the sample's own command line or macros allow.

A case is gpu_check.realworld.cases.Case: `source` a path in the checkout, `entry` (mangled-name
prefix, index among the PTX's entries with it), `argv` the sample's command line (or the
template instance and sizes its host code picks) that gives this launch, the grid, block and
dynamic shared bytes the host code computes from them. Inputs are seeded random data of the
kinds the sample feeds (gpu_check/kernel_corpus/cases.py fill specs), not the sample's own
constant fills, so that a wrong lane or rounding shows in the bits. One module per sample group.
"""
from . import async_copy, cg, convolution, histogram, intro, reduction, scan, sorting, tensorcores, transpose

PACKAGE = "NVIDIA/cuda-samples"     # the manifest adds @<commit> of the checkout built
CASES = (*intro.CASES, *transpose.CASES, *reduction.CASES, *scan.CASES, *histogram.CASES, *sorting.CASES,
         *cg.CASES, *convolution.CASES, *tensorcores.CASES, *async_copy.CASES)
BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "case names must be unique"
