"""tinyalgo: "Learning Simple Algorithms from Examples" (Zaremba et al., 2016) in NumPy.

The controller's matrices are small (20 x 200): one BLAS thread per process
is the fastest, and sweeps run several processes side by side.  The command
line, the sweeps and the benchmarks set ``OPENBLAS_NUM_THREADS=1`` (and the
OpenMP and MKL equivalents) before NumPy loads, unless already set
(``tinyalgo.host.threads``); a program that imports tinyalgo sets them itself.
"""

__version__ = "0.1.0"
