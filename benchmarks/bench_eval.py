"""Evaluation cost: 50 instances of complexity 2,000 and 20,000 with a
GRU-200 controller, time and peak memory (numpy allocations, tracemalloc).

    python benchmarks/bench_eval.py

The controller is first trained (supervised, a few seconds) on copy until it
solves complexity 1000, so that every instance runs to its end.
"""
import time
import tracemalloc

from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.runs.config import SupervisedConfig
from tinyalgo.supervised import train_supervised

controller, report = train_supervised(SupervisedConfig(task="copy", controller="gru", units=200, seed=0,
                                                       target=1000), log=lambda s: None)
assert report["solved_target"], "the benchmark's controller did not learn copy"
agent = GreedyAgent(controller)
print("GRU-200 float32, copy, 50 instances")
for c in (2000, 20000):
    t0 = time.perf_counter()
    row = evaluate_complexity(agent, "copy", c, instances=50, seed=1)
    seconds = time.perf_counter() - t0
    tracemalloc.start()                 # a second pass for memory: tracing slows every allocation
    evaluate_complexity(agent, "copy", c, instances=50, seed=1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"complexity {c:>6d}: {seconds:6.2f} s, peak {peak / 2 ** 20:6.2f} MiB,"
          f" solved {row['solved']:.0%}, {row['steps']} steps")
