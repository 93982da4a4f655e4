"""Evaluation counts correctly; the curriculum advances only on a perfect score."""
import numpy as np
import pytest

from tinyalgo.curriculum import Curriculum
from tinyalgo.evaluation import GroundTruthAgent, evaluate, evaluate_complexity


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
