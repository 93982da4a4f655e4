import pathlib
import sys

import tinyalgo  # noqa: F401  (first: it sets one BLAS thread before NumPy loads, as in a real run)

sys.path.insert(0, str(pathlib.Path(__file__).parent))     # tests' shared helpers
