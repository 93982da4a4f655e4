"""Grading "watkins": qlearning.watkins_targets against the reference, with the dynamic and the
constant discount, exploratory cuts and new episodes, on rollouts drawn at grading time."""
import numpy as np

from tinyalgo.assignments.grading.qchecks import check, rollout

F = False


def _random(g, what, explore=True, dynamic=True, gamma=1.0, lam=1.0):
    r = rollout(g)
    check(g, "watkins_targets", what, rewards=r["rewards"], q_max=r["q_max"],
          exploratory=r["exploratory"] if explore else np.zeros_like(r["exploratory"]), terminal=r["terminal"],
          gamma=gamma, v_hat=r["v_hat"] if dynamic else None, lam=lam)


def test_watkins_dynamic_no_exploration(g):
    check(g, "watkins_targets", "Watkins target (no exploration)", rewards=[[1], [0], [1], [1]],
          q_max=[[0.9], [0.1], [0.2], [0.3], [0.4]], exploratory=[[F]] * 5, terminal=[[F], [F], [F], [True]],
          v_hat=[[4], [3], [2], [1], [1]])
    _random(g, "Watkins target (no exploration)", explore=False)


def test_watkins_exploratory_cut(g):
    _random(g, "Watkins target (exploratory steps)")
    _random(g, "Watkins target (exploratory steps)")


def test_watkins_rollout_end_and_new_episode(g):
    r = rollout(g, T=int(g.rng.integers(4, 9)), B=3)
    r["terminal"][1, 0] = True
    check(g, "watkins_targets", "Watkins target (a new episode in lane 0 after step 1)", rewards=r["rewards"],
          q_max=r["q_max"], exploratory=np.zeros_like(r["exploratory"]), terminal=r["terminal"], v_hat=r["v_hat"])


def test_watkins_constant_discount(g):
    _random(g, "Watkins target (constant discount)", dynamic=False, gamma=float(g.rng.uniform(0.5, 0.99)))
