"""Grading "dynamic_discount": qlearning.dynamic_one_step_targets against the reference, on
the hand-worked rollouts and on rollouts drawn at grading time."""
from tinyalgo.assignments.grading.qchecks import check, rollout


def _random(g, gamma=1.0):
    r = rollout(g)
    check(g, "dynamic_one_step_targets", f"dynamic one-step target (gamma {gamma})", rewards=r["rewards"],
          q_max=r["q_max"], v_hat=r["v_hat"], terminal=r["terminal"], gamma=gamma)


def test_dynamic_targets_by_hand(g):
    check(g, "dynamic_one_step_targets", "dynamic one-step target", rewards=[[1], [1], [1]],
          q_max=[[0.0], [0.5], [0.8], [0.9]], v_hat=[[3], [2], [1], [1]], terminal=[[False], [False], [True]])
    _random(g)


def test_dynamic_targets_gamma(g):
    _random(g, gamma=float(g.rng.uniform(0.5, 0.99)))


def test_dynamic_targets_new_episode(g):
    check(g, "dynamic_one_step_targets", "dynamic one-step target", rewards=[[1, 0], [0, 1]],
          q_max=[[0.0, 0.0], [0.6, 0.7], [0.2, 0.4]], v_hat=[[2, 1], [1, 2], [3, 1]],
          terminal=[[False, True], [True, False]])
    _random(g)
