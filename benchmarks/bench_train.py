"""Q-learning training throughput in characters (training lane-steps) per
second: addition, GRU-200, the full method, B = 20.

    python benchmarks/bench_train.py [--level 46] [--updates 30] [--threads 2] [--reference]

Measured at a fixed curriculum level (default 46: the unroll has its full
length T = 49, as for most of a run), updates only (validation is excluded
and reported separately).  The paper's Torch code: about 2,100 per second.
"""
import argparse
import statistics
import time

from tinyalgo.qtraining import QTrainer
from tinyalgo.runs.config import QConfig

parser = argparse.ArgumentParser()
parser.add_argument("--level", type=int, default=46)
parser.add_argument("--updates", type=int, default=30)
parser.add_argument("--dtype", default="float32")
parser.add_argument("--threads", type=int, choices=(1, 2), default=1,
                    help="2: BPTT's weight gradients on a helper thread (what `tinyalgo train` uses on 2 cores)")
parser.add_argument("--reference", action="store_true", help="the reference path (tinyalgo train --reference)")
args = parser.parse_args()
extra = {"reference": True} if args.reference else {}      # older revisions have no such option

trainer = QTrainer(QConfig(task="addition", seed=0, start=args.level, dtype=args.dtype, threads=args.threads,
                           **extra), log=lambda s: None)
trainer.start_segment()
trainer.update()                                     # warm up
rates = []
for _ in range(5):
    chars, t0 = trainer.state.chars, time.perf_counter()
    for _ in range(args.updates // 5):
        trainer.update()
    rates.append((trainer.state.chars - chars) / (time.perf_counter() - t0))
t0 = time.perf_counter()
trainer.validate(0.0)
val = time.perf_counter() - t0
print(f"addition GRU-200 {args.dtype}, {args.threads} thread(s), {'reference' if args.reference else 'fast'} path,"
      f" level {args.level}: median {statistics.median(rates):,.0f} characters/s"
      f" (runs: {', '.join(f'{r:,.0f}' for r in rates)}); one validation of 50 instances: {val:.2f} s")
