"""Microseconds per time step (all B lanes) of the hand-written controllers.

    python benchmarks/bench_bptt.py [--default-malloc] [--threads 2] [--reference]

Forward (training mode, with caches) and forward + backward (BPTT) over
T = 50 steps of B = 20 lanes, for FF, GRU and LSTM at 200 units in float32 and
float64; and the inference forward at B = 50.  Median of repeats.  The
allocator is tuned as the trainers tune it (``tinyalgo.fast.memory``) unless
``--default-malloc`` is given.  ``--threads 2``: BPTT hands the weight
gradients to a helper thread (``Controller.set_threads``; what ``tinyalgo
train`` uses on a machine with two cores or more).  ``--reference``: the
reference path (``Controller(..., reference=True)``: the taught layer pairs and
the BPTT loop over named caches) instead of the fast path.
"""
import sys

import tinyalgo  # noqa: F401  (first: it sets one BLAS thread unless OPENBLAS_NUM_THREADS is set, before NumPy loads)
import numpy as np

from tinyalgo.controller import Controller, ControllerConfig
from tinyalgo.fast.memory import keep_freed_memory
from timing import median_seconds

SIZES, ACTIONS, SYMBOLS = (17, 17, 2, 5, 3), 8, 17


def bench(core, dtype, units=200, B=20, T=50, B_infer=50, threads=1, fast=True):
    ctrl = Controller(ControllerConfig(SIZES, ACTIONS, SYMBOLS, core=core, units=units, dtype=dtype),
                      rng=np.random.default_rng(0), reference=not fast).set_threads(threads)
    rng = np.random.default_rng(1)
    obs = np.stack([np.stack([rng.integers(0, s, size=B) for s in SIZES], axis=1) for _ in range(T)])
    resets = rng.random((T, B)) < 0.05
    dq = rng.normal(size=(T, B, ACTIONS)).astype(dtype)
    dlogp = rng.normal(size=(T, B, SYMBOLS)).astype(dtype)

    def forward():
        state, rollout = ctrl.initial_state(B), ctrl.rollout(T, B)        # as the training loops do
        for t in range(T):
            _, _, state = rollout.step(obs[t], state, resets[t])
        return rollout

    def forward_backward():
        forward().backward(dq, dlogp)

    obs_i = np.stack([np.stack([rng.integers(0, s, size=B_infer) for s in SIZES], axis=1) for _ in range(T)])

    def infer():
        model = ctrl.frozen()                                       # as evaluation does
        state = model.initial_state(B_infer)
        for t in range(T):
            _, _, state = model.infer(obs_i[t], state)

    return (median_seconds(forward) / T * 1e6, median_seconds(forward_backward) / T * 1e6,
            median_seconds(infer) / T * 1e6)


if __name__ == "__main__":
    if "--default-malloc" not in sys.argv:
        keep_freed_memory()                 # as the trainers do (tinyalgo/fast/memory.py)
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
    fast = "--reference" not in sys.argv
    print(f"{'core':5s} {'dtype':8s} {'forward us':>11s} {'fwd+bwd us':>11s} {'infer B=50 us':>14s}"
          f"   (per step, 200 units, B=20, T=50, {threads} thread{'s' if threads > 1 else ''},"
          f" {'fast' if fast else 'reference'} path)")
    for core in ("ff", "gru", "lstm"):
        for dtype in ("float32", "float64"):
            f, fb, i = bench(core, dtype, threads=threads, reference=not fast)
            print(f"{core:5s} {dtype:8s} {f:11.1f} {fb:11.1f} {i:14.1f}")
