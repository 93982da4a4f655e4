"""One BLAS thread per process, set where a process starts.

The controller's products are small (20 x 200 by 200 x 600): one BLAS
thread runs them fastest, and sweeps run several processes side by side.
OpenBLAS, OpenMP and MKL read their thread counts once, when NumPy loads,
so ``one_blas_thread()`` must run before ``import numpy``.  The command line
(``tinyalgo.cli``) and the benchmarks call it; importing ``tinyalgo`` does
not.  A variable already set is left as it is.
"""
import os

VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def one_blas_thread() -> None:
    """Set each of ``VARIABLES`` to 1 in this process's environment unless
    it is set (child processes inherit them)."""
    for name in VARIABLES:
        os.environ.setdefault(name, "1")
