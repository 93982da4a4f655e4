"""Evaluation: the fraction of instances solved completely and the fraction of
output symbols right before the first error, at chosen complexities (the
paper's Figure 3 and its test protocol: 50 instances of length 100, 1000).

The controller acts alone and greedily, in inference mode (no caches: memory
O(B x units) whatever the length), over a batch of instances at once.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.curriculum import check_complexity
from tinyalgo.environment import ALL_WRITTEN, Environment


class GreedyAgent:
    """The controller acting alone: the greedy joint action and the most
    probable symbol (docs/original-release.md#writing)."""

    def __init__(self, controller):
        if not callable(getattr(controller, "rollout", None)):
            raise ValueError(f"GreedyAgent needs a controller (tinyalgo.controller.Controller); got {controller!r}")
        self.controller = controller

    def check_environment(self, env: Environment) -> None:
        """A ValueError unless the controller can act in ``env`` (``Controller.check_environment``;
        a stand-in without that check is trusted)."""
        check = getattr(self.controller, "check_environment", None)
        if check is not None:
            check(env)

    def start(self, batch: int) -> None:
        """A new evaluation: the parameters are frozen for its duration."""
        self.model = self.controller.rollout()
        self.state = self.model.initial_state(batch)

    def act(self, env: Environment, obs: np.ndarray, reset: np.ndarray):
        self.q, scores, self.state = self.model.infer(obs, self.state, reset)
        return self.q.argmax(axis=1), scores.argmax(axis=1)         # the most probable symbol


class EpsilonGreedyAgent(GreedyAgent):
    """The controller acting as a training lane does (paper section 6): a
    uniformly random joint action with probability ``epsilon``, else the
    greedy one.  Run to the end of its instances, the solved fraction is the
    share of training episodes that reach their last output."""

    def __init__(self, controller, epsilon: float, seed: int = 0):
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1]; got {epsilon}")
        super().__init__(controller)
        self.epsilon, self.rng = epsilon, np.random.default_rng(seed)

    def act(self, env: Environment, obs: np.ndarray, reset: np.ndarray):
        actions, symbols = super().act(env, obs, reset)
        explore = self.rng.random(len(actions)) < self.epsilon
        return np.where(explore, self.rng.integers(0, env.n_actions, size=len(actions)), actions), symbols


class GroundTruthAgent:
    """The reference solution: ground-truth actions, target symbols."""

    def start(self, batch: int) -> None:
        pass

    def act(self, env: Environment, obs: np.ndarray, reset: np.ndarray):
        return np.maximum(env.ground_truth(), 0), env.next_target


def fresh_environment(task, complexity: int, instances: int, base: int = 10, seed: int = 0) -> Environment:
    """``instances`` fresh test instances of one complexity (never the
    3-number addition extra curriculum)."""
    return Environment(task, batch_size=instances, base=base, complexity=complexity, seed=seed, extra_curriculum=False)


def run_instances(agent, env: Environment) -> dict:
    """Run the current instance of every lane of ``env`` to its end (lanes
    that finish early restart, but their new instances are not counted).

    Returns per-lane arrays (B,): solved, n_correct, n_outputs, reason (the
    environment's end reason), complexity (of each lane's instance, which the
    task's sampler may have raised above the one asked: its
    ``complexity_rule``), and steps (time steps run)."""
    B = env.batch
    if hasattr(agent, "check_environment"):       # an agent of another task, base or layout is refused
        agent.check_environment(env)
    agent.start(B)
    obs = env.observe()
    reset = np.ones(B, dtype=bool)
    active = np.ones(B, dtype=bool)
    n_outputs, complexity = env.n_outputs.copy(), env.complexity.copy()
    n_correct = np.zeros(B, dtype=np.int64)
    reason = np.zeros(B, dtype=np.int64)
    steps = 0
    while active.any():
        actions, symbols = agent.act(env, obs, reset)
        result = env.step(actions, symbols)
        ended = result.done & active
        n_correct[ended] = result.n_correct[ended]
        reason[ended] = result.reason[ended]
        active &= ~result.done
        obs, reset = result.obs, result.done
        steps += 1
    return dict(solved=reason == ALL_WRITTEN, n_correct=n_correct, n_outputs=n_outputs, reason=reason,
                complexity=complexity, steps=steps)


def evaluate_complexity(agent, task, complexity: int, instances: int = 50, base: int = 10, seed: int = 0,
                        env: Environment = None) -> dict:
    """Run ``instances`` fresh instances of one complexity to their end.

    Returns a dict: complexity, instances, solved (fraction solved
    completely), char_accuracy (correct outputs before the first error over
    all outputs), mean_char_accuracy (the per-instance fraction, averaged),
    steps (time steps run), drawn (the smallest and largest complexity of
    the instances run, which the task's sampler may raise above the one
    asked: ``task.complexity_rule``).
    """
    env = fresh_environment(task, complexity, instances, base, seed) if env is None else env
    run = run_instances(agent, env)
    n_correct, n_outputs = run["n_correct"], run["n_outputs"]
    return dict(complexity=int(complexity), instances=int(env.batch), solved=float(run["solved"].mean()),
                char_accuracy=float(n_correct.sum() / n_outputs.sum()),
                mean_char_accuracy=float((n_correct / n_outputs).mean()), steps=run["steps"],
                drawn=[int(run["complexity"].min()), int(run["complexity"].max())])


class DepartureWatcher(GreedyAgent):
    """The greedy agent, noting in each lane's first instance the first step
    at which its joint action leaves the ground-truth path (docs/original-release.md#ground-truth),
    with the Q-values of both actions and the observation.  The move that
    goes with the last write does not count (the instance ends with it)."""

    def start(self, batch: int) -> None:
        super().start(batch)
        self.time, self.watching = 0, np.ones(batch, dtype=bool)   # first instance, not departed yet
        self.departures = [None] * batch

    def act(self, env: Environment, obs: np.ndarray, reset: np.ndarray):
        truth = env.ground_truth()                                # of this step, before it is taken
        actions, symbols = super().act(env, obs, reset)
        q = self.q
        if self.time:
            self.watching &= ~reset                               # a lane's first instance ended
        n = env.n_moves                                           # the last output's write ends the instance
        last_write = (actions >= n) & (truth >= n) & (env.target_index == env.n_outputs - 1)
        departing = self.watching & (truth >= 0) & (actions != truth) & ~last_write
        self.watching &= ~departing
        for lane in np.nonzero(departing)[0]:                     # once per lane at most
            self.departures[lane] = dict(step=self.time, action=int(actions[lane]), truth=int(truth[lane]),
                                         q_action=float(q[lane, actions[lane]]), q_truth=float(q[lane, truth[lane]]),
                                         output=int(env.target_index[lane]), obs=obs[lane].tolist())
        self.time += 1
        return actions, symbols


def first_departures(controller, task, complexity: int, instances: int = 50, base: int = 10, seed: int = 0,
                     env: Environment = None) -> list:
    """Where a controller leaves the reference solution, per instance.

    Runs ``instances`` fresh test instances greedily and returns one dict per
    instance: lane, solved, reason (``END_REASONS`` index), and ``departure``:
    None if the controller followed the ground-truth actions to its last
    step, else the first step it did not (step, action, truth, their
    Q-values, the output index reached, the observation).  A solved instance
    can depart (another path that works); a failed one shows the decision
    that started the failure."""
    env = fresh_environment(task, complexity, instances, base, seed) if env is None else env
    watcher = DepartureWatcher(controller)
    run = run_instances(watcher, env)
    return [dict(lane=b, solved=bool(run["solved"][b]), reason=int(run["reason"][b]),
                 departure=watcher.departures[b]) for b in range(env.batch)]


def evaluate(agent, task, complexities, instances: int = 50, base: int = 10, seed: int = 0, log=None) -> list:
    """``evaluate_complexity`` at each complexity of the list ``complexities``
    (seeded per complexity)."""
    if isinstance(complexities, (str, bytes)) or not hasattr(complexities, "__iter__"):
        raise ValueError(f"complexities must be a list of integers of at least 1; got {complexities!r}")
    complexities = [check_complexity(c, 1, "each of complexities") for c in complexities]
    rows = []
    for i, c in enumerate(complexities):
        row = evaluate_complexity(agent, task, c, instances, base, seed=seed + 7919 * i)
        if log:
            log(f"complexity {row['complexity']:>6d}: solved {row['solved']:6.1%}"
                f"  chars before first error {row['char_accuracy']:6.1%}  ({row['instances']} instances)")
        rows.append(row)
    return rows
