"""Evaluation counts correctly; the curriculum advances only on a perfect score."""
import numpy as np
import pytest

from tinyalgo.curriculum import Curriculum
from tinyalgo.environment import Environment
from tinyalgo.evaluation import (EpsilonGreedyAgent, GroundTruthAgent, evaluate, evaluate_complexity,
                                 first_departures)


class RightUpToK(GroundTruthAgent):
    """Follows the ground truth but writes a wrong symbol at output k."""

    def __init__(self, k):
        self.k = k

    def act(self, env, obs, reset):
        actions, symbols = super().act(env, obs, reset)
        wrong = env.target_index == self.k
        return actions, np.where(wrong, (symbols + 1) % env.vocab.base, symbols)


@pytest.mark.parametrize("task", ["copy", "reverse", "walk", "addition", "addition3", "multiplication"])
def test_ground_truth_policy_scores_100(task):
    row = evaluate_complexity(GroundTruthAgent(), task, 40, instances=7)
    assert row["solved"] == 1.0 and row["char_accuracy"] == 1.0 and row["instances"] == 7


@pytest.mark.parametrize("k", [0, 3, 9])
def test_right_up_to_k_counts_k(k):
    row = evaluate_complexity(RightUpToK(k), "copy", 20, instances=5)
    assert row["solved"] == 0.0
    assert row["char_accuracy"] == k / 20 and row["mean_char_accuracy"] == k / 20


def test_evaluate_many_complexities_logs():
    lines = []
    rows = evaluate(GroundTruthAgent(), "addition", [10, 100], instances=3, log=lines.append)
    assert [r["complexity"] for r in rows] == [10, 100] and len(lines) == 2


class Scripted:
    """A stand-in controller: Q-values one-hot on the ground-truth action,
    except lane 0 at step ``k`` (up and down swapped) and lane 1 on its last
    write (another move); the right symbol always."""

    def __init__(self, env, k):
        self.env, self.k, self.t = env, k, 0

    def rollout(self):
        return self

    def initial_state(self, batch):
        return None

    def infer(self, obs, state, reset):
        env = self.env
        actions = np.maximum(env.ground_truth(), 0)
        if self.t == self.k:
            actions[0] = actions[0] ^ 1 if actions[0] % 4 >= 2 else actions[0]
        last = env.target_index == env.n_outputs - 1
        if last[1] and actions[1] >= 4:
            actions[1] = 4 + (actions[1] + 1) % 4
        self.t += 1
        q = np.eye(8)[actions]
        logp = np.log(np.eye(env.vocab.size)[env.next_target] + 1e-9)
        return q, logp, state


def test_first_departures_names_the_step_and_both_actions():
    env = Environment("addition", batch_size=3, complexity=12, seed=4, extra_curriculum=False)
    truth = env.gt_actions[0]
    k = next(t for t in range(3, len(truth)) if truth[t] in (2, 3))     # a vertical move of lane 0
    rows = first_departures(Scripted(env, k), "addition", 12, env=env)
    d = rows[0]["departure"]
    assert (d["step"], d["truth"], d["action"]) == (k, truth[k], truth[k] ^ 1)
    assert d["q_action"] == 1.0 and d["q_truth"] == 0.0 and len(d["obs"]) == 5
    assert rows[1]["departure"] is None and rows[2]["departure"] is None    # the last write's move does not count
    assert rows[1]["solved"] and rows[2]["solved"]


def test_epsilon_greedy_explores_at_rate_epsilon():
    """A uniformly random joint action with probability epsilon: with 8
    actions it differs from the greedy one 7/8 of those times; epsilon 0 is
    the greedy agent."""
    B = 500

    def act(epsilon, steps=4):
        env = Environment("addition", batch_size=B, complexity=12, seed=4, extra_curriculum=False)
        agent = EpsilonGreedyAgent(Scripted(env, -1), epsilon, seed=1)
        agent.start(B)
        obs, reset, taken, greedy = env.observe(), np.ones(B, bool), [], []
        for _ in range(steps):
            greedy.append(np.maximum(env.ground_truth(), 0))
            actions, symbols = agent.act(env, obs, reset)
            taken.append(actions)
            result = env.step(actions, symbols)
            obs, reset = result.obs, result.done
        return np.array(taken), np.array(greedy)

    taken, greedy = act(0.2)
    assert abs(np.mean(taken != greedy) - 0.2 * 7 / 8) < 0.03
    taken, greedy = act(0.0)
    np.testing.assert_array_equal(taken, greedy)
    taken, _ = act(1.0)
    assert np.all(np.abs(np.bincount(taken.ravel(), minlength=8) / taken.size - 1 / 8) < 0.03)
    with pytest.raises(ValueError, match=r"epsilon must be in \[0, 1\]; got 1.5"):
        EpsilonGreedyAgent(None, 1.5)


def test_curriculum_advances_only_on_perfect_score_and_records():
    cur = Curriculum(start=6, increment=4, minimum=2)
    assert cur.level == 6
    assert not cur.record(0.98)
    assert cur.level == 6
    assert cur.record(1.0)
    assert cur.level == 10
    s = cur.sampler()
    c = s.draw(np.random.default_rng(0), 1000)
    assert c.min() == 6 and c.max() == 10
    assert [h["advanced"] for h in cur.history] == [False, True]


def test_curriculum_sampler_clamps_to_minimum():
    cur = Curriculum(start=6, minimum=3)
    assert cur.sampler().draw(np.random.default_rng(0), 500).min() == 3


def test_curriculum_streak_needs_consecutive_perfect_scores():
    cur = Curriculum(start=6, streak=2)
    assert not cur.record(1.0) and not cur.record(0.9) and not cur.record(1.0)
    assert cur.record(1.0) and cur.level == 10
    assert not cur.record(1.0) and cur.level == 10
