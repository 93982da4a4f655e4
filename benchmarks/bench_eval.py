"""Evaluation cost: 50 instances of complexity 2,000 and 20,000 with a
GRU-200 controller, time and peak memory (numpy allocations, tracemalloc).

    python benchmarks/bench_eval.py [--smoke] [--cpu-time]

The controller is first trained (supervised, a few seconds) on copy until it
solves complexity 1000, so that every instance runs to its end.  ``--smoke``:
a GRU-16 trained for 2,000 characters, 5 instances of complexity 20 and 200.
``--cpu-time``: seconds of CPU time (``timing.py``).
"""
import os
import tracemalloc

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # as tinyalgo.host.threads does, before NumPy loads
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity  # noqa: E402
from tinyalgo.runs.config import SupervisedConfig  # noqa: E402
from tinyalgo.supervised import train_supervised  # noqa: E402
from timing import CLOCK, CPU_TIME, SMOKE  # noqa: E402

cfg = SupervisedConfig(task="copy", controller="gru", units=16, seed=0, target=20, budget=2000) if SMOKE else \
    SupervisedConfig(task="copy", controller="gru", units=200, seed=0, target=1000)
controller, report = train_supervised(cfg, log=lambda s: None)
assert SMOKE or report["solved_target"], "the benchmark's controller did not learn copy"
agent = GreedyAgent(controller)
instances = 5 if SMOKE else 50
print(f"GRU-{cfg.units} float32, copy, {instances} instances")
for c in ((20, 200) if SMOKE else (2000, 20000)):
    t0 = CLOCK()
    row = evaluate_complexity(agent, "copy", c, instances=instances, seed=1)
    seconds = CLOCK() - t0
    tracemalloc.start()                 # a second pass for memory: tracing slows every allocation
    evaluate_complexity(agent, "copy", c, instances=instances, seed=1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"complexity {c:>6d}: {seconds:6.2f} s{' CPU' if CPU_TIME else ''}, peak {peak / 2 ** 20:6.2f} MiB,"
          f" solved {row['solved']:.0%}, {row['steps']} steps")
