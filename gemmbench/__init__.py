"""gemmbench: a ladder of hand-written SGEMM kernels, verified and timed against BLAS."""

__version__ = "0.1.0"
