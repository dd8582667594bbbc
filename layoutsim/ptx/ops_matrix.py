"""ldmatrix / stmatrix / mma.sync / wmma (filled in below)."""
OPS = {}
