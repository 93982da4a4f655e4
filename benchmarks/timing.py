"""The benchmarks' one timing rule: the median over repeats of ``CLOCK``
around a call (standard library only, so the PyTorch comparison can use it
from an environment without tinyalgo), and their two switches, read from
any script's command line:

* ``--smoke``: tiny sizes, one repeat, a few seconds, to show that the
  script still runs (CI runs every script so);
* ``--cpu-time``: ``CLOCK`` is the process's CPU time (``time.process_time``)
  instead of the wall clock (``time.perf_counter``).  On a machine whose
  cores other processes share, CPU time varies far less from run to run;
  the two agree on an idle machine (one thread)."""
import statistics
import sys
import time

SMOKE = "--smoke" in sys.argv
CPU_TIME = "--cpu-time" in sys.argv
CLOCK = time.process_time if CPU_TIME else time.perf_counter


def smoke_or(full, tiny):
    """``tiny`` in smoke mode, else ``full``."""
    return tiny if SMOKE else full


def median_seconds(fn, repeats=7, calls=1):
    """Median over ``repeats`` (one in smoke mode) of the seconds one call of
    ``fn`` takes (each repeat times ``calls`` calls and divides)."""
    times = []
    for _ in range(1 if SMOKE else repeats):
        t0 = CLOCK()
        for _ in range(calls):
            fn()
        times.append((CLOCK() - t0) / calls)
    return statistics.median(times)
