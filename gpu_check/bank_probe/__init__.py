"""bank_probe: measure shared-memory wavefronts on an NVIDIA GPU with Nsight Compute and compare
them with the bank model (layoutsim.banks).

    python -m gpu_check.bank_probe.measure --out DIR          # on the GPU machine (nvcc, ncu)
    python -m gpu_check.bank_probe.measure --out DIR --dry-run   # anywhere: no GPU, no ncu

corpus.py   the deterministic corpus of access patterns (every NVIDIA op of the bank model)
probe.cu    one kernel per op; one launch per pattern executes exactly one instance of the
            instruction (inline PTX) from one warp, with per-lane offsets and an active mask
            read from global memory; loaded values go to global memory
ncu_csv.py  reading (and, for dry runs, writing) `ncu --csv` output
measure.py  the driver: corpus -> nvcc -> ncu -> DIR/bank_corpus.json + model-vs-measured summary

Shared with gpu_check/coalesce_probe (and written once, here):
probe_host.cuh  the probes' host side: pattern file, kernel table, CUDA checks, device, launch
common.py       running tools, the environment record, measuring order, build, SASS lines,
                per-op counts and fit verdicts of the summaries
"""
