"""sfu: the approximate-math instructions of an NVIDIA GPU (MUFU) measured over every input.

    python -m gpu_check.sfu.measure --out DIR [--max-seconds S] [--dry-run]

probe.cu    the kernels: tables of MUFU on canonical inputs, hypothesis checks over all 2^32
            inputs (mismatch counts per sign+exponent bin), error against the correctly rounded
            value, the PTX forms without .ftz against their SASS sequences, the 16-bit forms
patch.py    the cubin patch that makes sin/cos.approx reach MUFU.SIN/COS with any input
commit.py   the measured result -> layoutsim/numerics/data/sfu_sm90/ (what layoutsim.numerics.sfu reads)
(the table codec is layoutsim/numerics/sfu_tables.py)
measure.py  the driver: what runs, in which order, within a time budget; DIR/sfu.json + tables
"""
