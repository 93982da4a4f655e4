"""The benchmarks' one timing rule: the median over repeats of
``time.perf_counter`` around a call (standard library only, so the PyTorch
comparison can use it from an environment without tinyalgo)."""
import statistics
import time


def median_seconds(fn, repeats=7, calls=1):
    """Median over ``repeats`` of the seconds one call of ``fn`` takes
    (each repeat times ``calls`` calls and divides)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - t0) / calls)
    return statistics.median(times)
