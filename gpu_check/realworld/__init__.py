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

The CUTLASS 3.x Hopper examples (warp-specialised GEMMs on clusters, whose TMA descriptors live
inside the kernel's Params), in tests/data/realworld/hopper/:
    hopper_cases.py          the examples, their command lines, which launches are cases
    hopper_build.py          nvcc over the pip package -> the binaries (carried) and their PTX (cut)
    hopper_capture.c         the LD_PRELOAD shim that records a launch and its buffers on the GPU
    hopper_fake_runtime.c    a CPU stand-in for the CUDA runtime (the examples' host code without a GPU)
    hopper_measure.py        the H200 run: capture, ncu five times
    hopper_local.py          the same capture on this machine over the stand-in (Params, maps)
    hopper_replay.py         a capture as the executor's launch (StructArg with pointers and maps)
The replay: tests/gpu_check/test_realworld_hopper.py. The hopper_* modules serve every captured
group (hopper_cases.Group); the second is ThunderKittens (HazyResearch, MIT), in tests/data/realworld/tk/:
    tk_harness.cu   our host program: #includes one ThunderKittens source as published and launches
                    its kernel through its own host code, at a small size
    tk_cases.py     the sources, their command lines, the cases
    tk_build.py     .tk-src/ from the snapshot (--prepare); nvcc -> binaries and their PTX (cut)
    tk_measure.py   on the GPU: build there, then hopper_measure --group tk; --merge the result here
The replay: tests/gpu_check/test_realworld_tk.py.

CUB (pip package nvidia-cuda-cccl==13.0.85), in tests/data/realworld/cub/: kernels that exist only
once a host call instantiates them, so our host program cub/cub_launches.cu calls CUB's
device-wide algorithms and cub/capture.cpp, linked into it, records every launch on the GPU:
    cub_build.py    the PTX (committed) and the capture program (build/cub_launches, carried)
    cub_measure.py  on the GPU: the capture, then ncu five times over the program
    cub_capture.py  the capture's files, stored compactly, and each launch replayed by the executor
    projects.py     the registry projects benchmarks/accept.py --project judges whole
The replay: tests/gpu_check/test_realworld_cub_replay.py.
"""
