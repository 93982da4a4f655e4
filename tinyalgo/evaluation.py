"""Evaluation: the fraction of instances solved completely and the fraction of
output symbols right before the first error, at chosen complexities (the
paper's Figure 3 and its test protocol: 50 instances of length 100, 1000).

The controller acts alone and greedily, in inference mode (no caches: memory
O(B x units) whatever the length), over a batch of instances at once.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.environment import ALL_WRITTEN, Environment


class GreedyAgent:
    """The controller acting alone: the greedy joint action and the most
    probable symbol (REFERENCE 2.4)."""

    def __init__(self, controller):
        self.controller = controller

    def start(self, batch: int) -> None:
        """A new evaluation: the parameters are frozen for its duration."""
        self.model = self.controller.frozen()
        self.state = self.model.initial_state(batch)

    def act(self, env: Environment, obs: np.ndarray, reset: np.ndarray):
        q, logp, self.state = self.model.infer(obs, self.state, reset)
        return q.argmax(axis=1), logp.argmax(axis=1)


class GroundTruthAgent:
    """The reference solution: ground-truth actions, target symbols."""

    def start(self, batch: int) -> None:
        pass

    def act(self, env: Environment, obs: np.ndarray, reset: np.ndarray):
        return np.maximum(env.ground_truth(), 0), env.next_target


def evaluate_complexity(agent, task, complexity: int, instances: int = 50, base: int = 10, seed: int = 0,
                        env: Environment = None) -> dict:
    """Run ``instances`` fresh instances of one complexity to their end.

    Returns a dict: complexity, instances, solved (fraction solved
    completely), char_accuracy (correct outputs before the first error over
    all outputs), mean_char_accuracy (the per-instance fraction, averaged),
    steps (time steps run).
    """
    if env is None:
        env = Environment(task, batch_size=instances, base=base, complexity=complexity, seed=seed,
                          extra_curriculum=False)
    B = env.batch
    agent.start(B)
    obs = env.observe()
    reset = np.ones(B, dtype=bool)
    active = np.ones(B, dtype=bool)
    n_outputs = env.n_outputs.copy()
    n_correct = np.zeros(B, dtype=np.int64)
    solved = np.zeros(B, dtype=bool)
    steps = 0
    while active.any():
        actions, symbols = agent.act(env, obs, reset)
        result = env.step(actions, symbols)
        ended = result.done & active
        n_correct[ended] = result.n_correct[ended]
        solved[ended] = result.reason[ended] == ALL_WRITTEN
        active &= ~result.done
        obs, reset = result.obs, result.done
        steps += 1
    return dict(complexity=int(complexity), instances=int(B), solved=float(solved.mean()),
                char_accuracy=float(n_correct.sum() / n_outputs.sum()),
                mean_char_accuracy=float((n_correct / n_outputs).mean()), steps=steps)


def evaluate(agent, task, complexities, instances: int = 50, base: int = 10, seed: int = 0, log=None) -> list:
    """``evaluate_complexity`` at each complexity (seeded per complexity)."""
    rows = []
    for i, c in enumerate(complexities):
        row = evaluate_complexity(agent, task, int(c), instances, base, seed=seed + 7919 * i)
        if log:
            log(f"complexity {row['complexity']:>6d}: solved {row['solved']:6.1%}"
                f"  chars before first error {row['char_accuracy']:6.1%}  ({row['instances']} instances)")
        rows.append(row)
    return rows
