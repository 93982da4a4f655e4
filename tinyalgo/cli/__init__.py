"""The ``tinyalgo`` command line: ``main`` parses and dispatches; each
subcommand lives next to its options.  A process that starts here runs
with one BLAS thread unless told otherwise (``tinyalgo.host.threads``)."""
from tinyalgo.host.threads import one_blas_thread

one_blas_thread()                           # before NumPy loads

from tinyalgo.cli.main import main  # noqa: E402

__all__ = ["main"]
