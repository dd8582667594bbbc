"""GPU backends. Each is imported lazily: importing gpu_check never needs pycuda or hip-python."""


class Unavailable(Exception):
    """No usable GPU / runtime: the CLI prints the message on one line and exits 2."""
