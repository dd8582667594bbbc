"""tcgen05_cute: the CuTe Blackwell tutorial kernels (nvidia-cutlass 4.2.0.0 from PyPI) compiled for
sm_100a, and CuTe's tcgen05.mma instruction descriptors, for layoutsim.ptx to run without a
Blackwell GPU (tests/ptx/test_tcgen05_cute.py). build.py makes tests/data/tcgen05_cute/."""
