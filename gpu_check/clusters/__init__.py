"""Thread-block cluster probes (issue 24): the launches of tests/ptx/kernels/cluster.cu measured on the
H200 (measure.py) and replayed by the executor (tests/ptx/test_ptx_cluster_replay.py)."""
