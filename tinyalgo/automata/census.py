"""A census of one length: every instance of the length of a counterexample
(or a large random sample where there are too many), run on the machine in
the real environment, and those it fails that the network solves (paper
section 6.4, "discretization of state").

The verifier reports one shortest counterexample; the machine usually fails
a family of instances of that length that the recording missed (for
3-number addition: 0.1 % to 10 % of the 10^6 boards of two digits, most of
them through a handful of transitions).  Recording the network on them (up
to ``RECORDED``) in the loop's next round teaches the extraction the family
at once, where recording the one counterexample would have it found again
one instance at a time.  Where a length has too many instances to run them
all (3-number addition's 10^9 boards of three digits), a random sample runs.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.witness import count_of_length, make, numbered_instances, random_instances, run_on, solves
from tinyalgo.tasks.instances import concatenate

CHUNK = 100_000          # instances run at once (fewer at long lengths: CELLS)
CELLS = 2_000_000        # digits of the instances run at once, at most
RECORDED = 1000          # at most this many failing instances are recorded (a random subset)
LIMIT = 1_000_000        # instances a census runs by default (10^6: about 3 s for 3-number addition's two digits)


def exhaustive(task: str, base: int, n: int, limit: int) -> bool:
    """Whether there are at most ``limit`` instances of length ``n`` (``witness.count_of_length``)."""
    count = count_of_length(task, base, n)
    return count is not None and count <= limit


def batches(task: str, base: int, n: int, limit: int, every: bool, rng):
    """The instances of length ``n`` in batches: every one, in order, if
    ``every`` (``exhaustive``), else ``limit`` random ones.  Each batch holds
    at most ``CHUNK`` instances and ``CELLS`` digits."""
    total = count_of_length(task, base, n) if every else limit
    per = max(1, min(CHUNK, CELLS // max(n, 1)))
    for i in range(0, total, per):
        k = min(per, total - i)
        if every:
            yield numbered_instances(task, base, n, np.arange(i, i + k))
        else:
            yield random_instances(task, base, n, k, rng)


def failing(machine, batch):
    """The instances of ``batch`` that ``machine`` fails in the environment."""
    return batch.take(np.nonzero(~np.asarray(run_on(machine, batch)[0], dtype=bool))[0])


def census(machine, controller, n: int, limit: int = LIMIT, seed: int = 0, recorded: int = RECORDED) -> dict:
    """Run ``machine`` on the instances of length ``n`` (``batches``) and the
    network on those it fails.
    Returns dict(length, tested, exhaustive,
    machine_fails, network_solves (of those), recorded (how many of them are
    returned), instances (at most ``recorded`` of the failing instances the
    network solves, a random subset; None if there are none))."""
    task, base = machine.task, machine.base
    rng = np.random.default_rng(seed)
    every = exhaustive(task, base, n, limit)
    tested = fails = 0
    good = []
    for batch in batches(task, base, n, limit, every, rng):
        tested += len(batch)
        failed = failing(machine, batch)
        fails += len(failed)
        if len(failed):
            good.append(failed.take(np.nonzero(solves(controller, task, base, failed))[0]))
    good = [g for g in good if len(g)]
    solved = sum(len(g) for g in good)
    chosen = concatenate(good, make(task, base).vocab.NONE) if good else None
    if solved > recorded:
        chosen = chosen.take(np.sort(rng.choice(solved, recorded, replace=False)))
    return dict(length=int(n), tested=int(tested), exhaustive=every, machine_fails=int(fails),
                network_solves=int(solved), recorded=min(solved, recorded), instances=chosen)
