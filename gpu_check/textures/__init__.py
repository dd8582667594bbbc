"""Texture and surface fetches measured on the GPU (measure.py), bit for bit, and replayed through the
executor (replay.py): probe kernels in probes.py, the cases and their inputs in cases.py."""
