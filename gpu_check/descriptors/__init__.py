"""gpu-check group `descriptors`: wgmma matrix descriptors and TMA swizzles measured on the GPU.

Shared memory is filled with unique ids (ids.py); a wgmma with a one-hot B (or one-hot A in
registers) copies into every accumulator element the id of the one shared-memory element that fed
it, so each output says where the hardware read operand element (m, k) or (k, n) (run.py). Every
swizzle mode x K-/MN-major x input type runs with the canonical CuTe tiles and with hundreds of
random descriptors (plan.py); TMA copies a tensor of unique ids with every swizzle mode and many
box shapes, and every landed byte is read back. The raw observations are kept (corpus.py) so
the readings of the PTX ISA can be fitted offline; comparing with layoutsim.smem is the check.
The plan runs as tasks (tasks.py), each phase in its own worker process (isolate.py), so a
fault costs one task and is reported with the descriptor or box that caused it; the TMA kernel
is launched through the driver with kernelParams (driver.py says why).

    python -m gpu_check.descriptors --out DIR [--seconds S] [--counters] [--epilogue]   (the GPU job)
    python -m gpu_check.descriptors --out DIR --dry-run [--simulate strides=core-matrix,...]
    gpu-check run --group descriptors [--record DIR]
"""
