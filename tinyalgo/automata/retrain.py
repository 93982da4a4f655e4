"""Training a controller on the counterexamples it fails (paper
section 6): the counterexample-guided loop's second branch.

When the verifier's counterexample is an instance the network itself gets
wrong, a better extraction cannot help: the network has to learn it.
``retrain`` goes on with the run's own Q-learning (``QTrainer.update``: the
same rollout, Q targets, penalty, BPTT and SGD, from where the run's
curriculum stood), except that a lane starting an episode starts one of the
counterexamples found so far with probability ``share``, instead of a fresh
instance of the curriculum.  Every ``check_every`` updates the controller is
run greedily on every counterexample and on the paper's test (50 fresh
instances of length 100); training stops once it solves all of them, or
after ``max_updates`` updates.
"""
from __future__ import annotations

import copy
from dataclasses import replace

import numpy as np

from tinyalgo.automata.witness import make, solves
from tinyalgo.qtraining import QTrainer, RunState
from tinyalgo.tasks.instances import concatenate


def retrain(controller, cfg, state: RunState, counterexamples: list, max_updates: int = 2000,
            share: float = 0.5, check_every: int = 50, seed: int = 0, log=None) -> dict:
    """Train ``controller`` in place on the run ``cfg`` (a QConfig) resumed at
    ``state`` (its RunState; None: the curriculum's start), with a share of
    the episodes on ``counterexamples`` (a list of one-instance batches).

    It trains on the path the controller is on (reference or fast: the same
    arithmetic, tests/test_fast.py), whatever the run's configuration says.
    Returns dict(fixed (solves every counterexample and the paper's test),
    updates, chars, solved_counterexamples, test_solved)."""
    if not counterexamples:
        raise ValueError("retrain needs at least one counterexample")
    if max_updates < 1 or check_every < 1:
        raise ValueError(f"max_updates and check_every must be at least 1; got {max_updates}, {check_every}")
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must be in (0, 1]; got {share}")
    pool = concatenate(counterexamples, make(cfg.task, cfg.base).vocab.NONE)
    run = copy.deepcopy(state) if state is not None else None
    if run is not None:
        run.done = False
    trainer = QTrainer(replace(cfg, budget=2 ** 62, seed=seed, reference=controller.reference), controller=controller,
                       state=run, log=lambda line: None)
    rng = np.random.default_rng(seed)
    trainer.start_segment()
    chars0 = trainer.state.chars
    for update in range(1, max_updates + 1):
        obs, hidden, reset = trainer.lanes
        starting = np.nonzero(reset)[0]
        chosen = starting[rng.random(len(starting)) < share]
        if len(chosen):                         # these lanes start a counterexample instead
            obs = trainer.env.load(pool.take(rng.integers(len(pool), size=len(chosen))), lanes=chosen)
            trainer.lanes = obs, hidden, reset
        trainer.update()
        if update % check_every and update != max_updates:
            continue                            # the last update is always checked: ``result`` is set
        solved = solves(controller, cfg.task, cfg.base, pool)
        test = trainer.evaluate(cfg.test_length, cfg.val_instances, seed=seed + update)["solved"]
        result = dict(fixed=bool(solved.all() and test == 1.0), updates=update, chars=trainer.state.chars - chars0,
                      solved_counterexamples=int(solved.sum()), counterexamples=len(pool), test_solved=float(test))
        if log:
            log(f"  trained {update} updates: {int(solved.sum())} of {len(pool)} counterexamples solved,"
                f" test at length {cfg.test_length} {test:.0%}")
        if result["fixed"]:
            break
    return result
