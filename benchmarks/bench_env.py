"""Cost of one batched environment step and of drawing instances.

    python benchmarks/bench_env.py [--smoke]

One step = all B = 20 lanes take a uniformly random joint action and write a
random symbol (so lanes fail and restart often, as early in training).
``--smoke``: 50 steps, one repeat.
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")    # as tinyalgo.host.threads does, before NumPy loads
import numpy as np  # noqa: E402

from tinyalgo.environment import Environment  # noqa: E402
from tinyalgo.tasks import make_task  # noqa: E402
from timing import median_seconds, smoke_or  # noqa: E402


STEPS = smoke_or(2000, 50)


def bench_step(task, batch=20, complexity=10, steps=STEPS):
    env = Environment(task, batch_size=batch, complexity=complexity, seed=0)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, env.n_actions, size=(steps, batch))
    symbols = rng.integers(0, env.task.base, size=(steps, batch))
    restarts = [0]
    i = [0]

    def one():
        k = i[0] % steps
        restarts[0] += env.step(actions[k], symbols[k]).done.sum()
        i[0] += 1

    us = median_seconds(one, calls=steps) * 1e6
    return us, restarts[0] / i[0]


def bench_draw(task, k=20, complexity=100):
    t = make_task(task)
    rng = np.random.default_rng(0)
    c = np.full(k, complexity)
    return median_seconds(lambda: t.sample(rng, c), calls=smoke_or(200, 2)) * 1e6


if __name__ == "__main__":
    print(f"{'task':16s} {'step us (B=20)':>15s} {'restarts/step':>14s} {'draw 20 @100 us':>16s}")
    for task in ("copy", "reverse", "walk", "addition", "addition3", "multiplication"):
        us, restarts = bench_step(task)
        print(f"{task:16s} {us:15.1f} {restarts:14.2f} {bench_draw(task):16.1f}")
