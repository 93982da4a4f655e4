"""The benchmarks' one timing rule: the median over repeats of
``time.perf_counter`` around a call (standard library only, so the PyTorch
comparison can use it from an environment without tinyalgo), and their
smoke mode: ``--smoke`` on any script's command line runs it at tiny sizes
with one repeat, in a few seconds, to show that it still runs (CI runs every
script so)."""
import statistics
import sys
import time

SMOKE = "--smoke" in sys.argv


def smoke_or(full, tiny):
    """``tiny`` in smoke mode, else ``full``."""
    return tiny if SMOKE else full


def median_seconds(fn, repeats=7, calls=1):
    """Median over ``repeats`` (one in smoke mode) of the seconds one call of
    ``fn`` takes (each repeat times ``calls`` calls and divides)."""
    times = []
    for _ in range(1 if SMOKE else repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)
