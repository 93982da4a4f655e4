"""Microseconds per time step (all B lanes) of the hand-written controllers.

    python benchmarks/bench_bptt.py [--cores ff,gru,lstm] [--default-malloc] [--smoke] [--cpu-time]

Forward (training, with caches) and forward + backward (BPTT) over T = 50
steps of B = 20 lanes, for FF, GRU and LSTM at 200 units in float32 and
float64, as the training loops run them (``Controller.rollout``); and the
inference forward at B = 50, as evaluation runs it.  Median of repeats.
The allocator is tuned as the command line tunes it
(``tinyalgo.host.allocator``) unless ``--default-malloc`` is given.
``--cores``: which cores (default all three); ``--smoke``: 8 units, T = 3,
one repeat; ``--cpu-time``: see ``timing.py``.
It also runs on revisions before the one path (for comparisons side by side):
there ``rollout`` takes (T, B) and the fast path is measured.
"""
import inspect
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # as tinyalgo.host.threads does, before NumPy loads
import numpy as np  # noqa: E402

from tinyalgo.controller import Controller, ControllerConfig  # noqa: E402
from timing import median_seconds, smoke_or  # noqa: E402

try:
    from tinyalgo.host.allocator import keep_freed_memory
except ImportError:                                     # revisions before the one path
    from tinyalgo.fast.memory import keep_freed_memory

SIZES, ACTIONS, SYMBOLS = (17, 17, 2, 5, 3), 8, 17


def bench(core, dtype, units=200, B=20, T=50, B_infer=50):
    ctrl = Controller(ControllerConfig(SIZES, ACTIONS, SYMBOLS, core=core, units=units, dtype=dtype),
                      rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    obs = np.stack([np.stack([rng.integers(0, s, size=B) for s in SIZES], axis=1) for _ in range(T)])
    resets = rng.random((T, B)) < 0.05
    dq = rng.normal(size=(T, B, ACTIONS)).astype(dtype)
    dlogp = rng.normal(size=(T, B, SYMBOLS)).astype(dtype)

    sized = "T" in inspect.signature(ctrl.rollout).parameters   # revisions before the one path

    def forward():
        state, rollout = ctrl.initial_state(B), ctrl.rollout(T, B) if sized else ctrl.rollout()   # as training does
        for t in range(T):
            _, _, state = rollout.step(obs[t], state, resets[t])
        return rollout

    def forward_backward():
        forward().backward(dq, dlogp)

    obs_i = np.stack([np.stack([rng.integers(0, s, size=B_infer) for s in SIZES], axis=1) for _ in range(T)])

    def infer():
        model = ctrl.frozen() if sized else ctrl.rollout()          # as evaluation does
        state = ctrl.initial_state(B_infer)
        for t in range(T):
            _, _, state = model.infer(obs_i[t], state)

    return (median_seconds(forward) / T * 1e6, median_seconds(forward_backward) / T * 1e6,
            median_seconds(infer) / T * 1e6)


if __name__ == "__main__":
    cores = sys.argv[sys.argv.index("--cores") + 1].split(",") if "--cores" in sys.argv[:-1] else ("ff", "gru", "lstm")
    if not set(cores) <= {"ff", "gru", "lstm"}:
        print(f"bench_bptt.py: --cores takes ff, gru and lstm separated by commas; got {','.join(cores)}",
              file=sys.stderr)
        sys.exit(2)
    if "--default-malloc" not in sys.argv:
        keep_freed_memory()
    units, T = smoke_or(200, 8), smoke_or(50, 3)
    print(f"{'core':5s} {'dtype':8s} {'forward us':>11s} {'fwd+bwd us':>11s} {'infer B=50 us':>14s}"
          f"   (per step, {units} units, B=20, T={T}, one thread)")
    for core in cores:
        for dtype in ("float32", "float64"):
            f, fb, i = bench(core, dtype, units=units, T=T)
            print(f"{core:5s} {dtype:8s} {f:11.1f} {fb:11.1f} {i:14.1f}")
