"""tinyalgo: "Learning Simple Algorithms from Examples" (Zaremba et al., 2016) in NumPy."""
import os as _os

# The controller's matrices are small (20 x 200): one BLAS thread per process
# is the fastest, and sweeps run several processes side by side.  Set these
# variables before importing tinyalgo to override.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_name, "1")

__version__ = "0.1.0"
