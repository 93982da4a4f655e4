"""Cost of one batched environment step and of drawing instances.

    python benchmarks/bench_env.py [--smoke] [--cpu-time] [--tasks copy,walk]

One step = all B = 20 lanes take a uniformly random joint action and write a
random symbol (so lanes fail and restart often, as early in training).
``--smoke``: 50 steps, one repeat.  ``--tasks``: the tasks to measure
(comma-separated; default all six).
"""
import os
import sys

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


TASKS = ("copy", "reverse", "walk", "addition", "addition3", "multiplication")


def chosen_tasks(argv) -> tuple:
    """The tasks named after ``--tasks`` in ``argv``, or all six."""
    if "--tasks" not in argv or argv.index("--tasks") + 1 >= len(argv):
        return TASKS
    names = tuple(argv[argv.index("--tasks") + 1].split(","))
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        print(f"bench_env.py: unknown task(s) {', '.join(unknown)}; allowed: {', '.join(TASKS)}", file=sys.stderr)
        raise SystemExit(2)
    return names


if __name__ == "__main__":
    tasks = chosen_tasks(sys.argv)
    print(f"{'task':16s} {'step us (B=20)':>15s} {'restarts/step':>14s} {'draw 20 @100 us':>16s}")
    for task in tasks:
        us, restarts = bench_step(task)
        print(f"{task:16s} {us:15.1f} {restarts:14.2f} {bench_draw(task):16.1f}")
