"""Q-learning throughput in characters (training lane-steps) per second:
addition, GRU-200, the full method, B = 20, one thread.

    python benchmarks/bench_train.py [--level 46] [--updates 30] [--smoke] [--cpu-time]

Measured at a fixed curriculum level (default 46: the unroll has its full
length T = 49, as for most of a run), updates only (validation is excluded
and reported separately).  The paper's Torch code: about 2,100 per second.
``--smoke``: a GRU-8, level 6, 5 updates; ``--cpu-time``: per second of
the process's CPU time (``timing.py``).
"""
import argparse
import statistics

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # as tinyalgo.host.threads does, before NumPy loads
from tinyalgo.qtraining import QTrainer  # noqa: E402
from tinyalgo.runs.config import QConfig  # noqa: E402
from timing import CLOCK, CPU_TIME  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--level", type=int, default=46)
parser.add_argument("--updates", type=int, default=30)
parser.add_argument("--dtype", default="float32")
parser.add_argument("--smoke", action="store_true", help="a GRU-8 at level 6, 5 updates")
parser.add_argument("--cpu-time", action="store_true", help="characters per second of CPU time")
args = parser.parse_args()
units = 8 if args.smoke else 200
if args.smoke:
    args.level, args.updates = 6, 5
try:
    from tinyalgo.host.allocator import keep_freed_memory
except ImportError:                                  # revisions before the one path tuned it in their rollouts
    def keep_freed_memory():
        return None
keep_freed_memory()                                  # as the command line does

trainer = QTrainer(QConfig(task="addition", seed=0, start=args.level, dtype=args.dtype, units=units),
                   log=lambda s: None)
trainer.start_segment()
trainer.update()                                     # warm up
rates = []
for _ in range(5):
    chars, t0 = trainer.state.chars, CLOCK()
    for _ in range(max(1, args.updates // 5)):
        trainer.update()
    rates.append((trainer.state.chars - chars) / (CLOCK() - t0))
t0 = CLOCK()
trainer.validate(0.0)
val = CLOCK() - t0
print(f"addition GRU-{units} {args.dtype}, one thread, level {args.level}: median {statistics.median(rates):,.0f}"
      f" characters per {'CPU ' if CPU_TIME else ''}second (runs: {', '.join(f'{r:,.0f}' for r in rates)});"
      f" one validation of 50 instances: {val:.2f} s")
