"""kernel_corpus: the H200 kernel corpus of issue 10 (tests/data/kernels/) and its gpu-check group.

Files in tests/data/kernels/ (the contract between this corpus and the executor layoutsim.ptx):
    <stem>.cu                    CUDA source written for this project (what it exercises, at the top)
    <stem>.sm_80.ptx / .sm_90.ptx   exactly what the manifest's nvcc command printed (nvcc 13.0)
    manifest.json                one entry per case: name, source, ptx {arch: file}, kernel, grid,
                                 block, shared_bytes, args [{kind: array, dtype, shape, role} |
                                 {kind: scalar, dtype, value}], nvcc (exact command), what
    <case>.inputs.npz            the initial content of every array argument (arg0, arg1, ...)
    <case>.h200.npz, h200.json   the final content after the launch on the H200, and per case the
                                 ncu totals of that launch, the PTX arch run, GPU, driver, CUDA, date

Modules:
    cases.py     the cases and their deterministic inputs      build.py   nvcc -> PTX, inputs, manifest
    corpus.py    reading / writing the directory                device.py  one launch through pycuda
    ncu.py       the launches under Nsight Compute              launch.py  the program ncu profiles
    measure.py   the H200 measurement (the GPU job)             check.py   this corpus in the group `kernels`
    parts.py     every corpus of the project (this one, the CuTe tutorials, Triton, the Hopper
                 examples, CUB, clusters, constructs, textures): its data, measure command, reader
    group.py     the gpu-check group `kernels`: every corpus on the GPU in one command
    launches.py  every corpus launch as layoutsim.ptx.run's arguments (replay_all, bench_ptx.py)
    replay_all.py  every committed corpus on the executor, one summary (CI, no GPU)
    lowering.py  what ptxas makes of every memory instruction of the corpus, committed as
                 layoutsim/ptx/data/lowering_sm90.json (the method: layoutsim/ptx/lowering.py)
"""
