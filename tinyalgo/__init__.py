"""tinyalgo: "Learning Simple Algorithms from Examples" (Zaremba et al., 2016) in NumPy."""
import os as _os

# The controller's matrices are small (20 x 200): one BLAS thread per process
# is the fastest, and sweeps run several processes side by side.  Set these
# variables before importing tinyalgo to override.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_name, "1")

__version__ = "0.1.0"

# The speed layer puts its rollout and inference view into tinyalgo.controller.SPEED (tinyalgo/fast/__init__.py).
from tinyalgo import fast as _fast  # noqa: E402, F401
