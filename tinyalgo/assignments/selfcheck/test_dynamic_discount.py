"""Assignment "dynamic_discount": dynamic_one_step_targets (paper section 6.1;
tinyalgo/qlearning.py; tutorial 05).

    target_t = r_t / V_t + gamma (V_{t+1} / V_t) max_a Qhat(s_{t+1}, a),   r_t / V_t if terminal.
"""

from grading import assert_targets
from tinyalgo.qlearning import dynamic_one_step_targets


def test_dynamic_targets_by_hand():
    # one episode of 3 outputs: V = 3, 2, 1; every write right; terminal at t = 2
    got = dynamic_one_step_targets(rewards=[[1], [1], [1]], q_max=[[0.0], [0.5], [0.8], [0.9]],
                                   v_hat=[[3], [2], [1], [1]], terminal=[[False], [False], [True]])
    assert_targets("dynamic one-step target", got, [[2 / 3], [0.9], [1.0]],
                   [["1/3 + (2/3) 0.5"], ["1/2 + (1/2) 0.8"], ["1/1 (terminal: no bootstrap)"]])


def test_dynamic_targets_gamma():
    got = dynamic_one_step_targets(rewards=[[1], [1]], q_max=[[0.0], [0.5], [0.8]], v_hat=[[3], [2], [1]],
                                   terminal=[[False], [False]], gamma=0.9)
    assert_targets("dynamic one-step target with gamma 0.9", got, [[0.6333333333333333], [0.86]],
                   [["1/3 + 0.9 (2/3) 0.5"], ["1/2 + 0.9 (1/2) 0.8"]])


def test_dynamic_targets_new_episode():
    # lane 1: a wrong write ends its episode at t = 0; a new episode of 4 outputs starts at t = 1
    got = dynamic_one_step_targets(rewards=[[1, 0], [0, 1]], q_max=[[0.0, 0.0], [0.6, 0.7], [0.2, 0.4]],
                                   v_hat=[[2, 1], [2, 4], [2, 3]], terminal=[[False, True], [False, False]])
    assert_targets("dynamic one-step target", got, [[1.1, 0.0], [0.2, 0.55]],
                   [["1/2 + (2/2) 0.6", "0/1 (terminal: no bootstrap)"],
                    ["0/2 + (2/2) 0.2", "1/4 + (3/4) 0.4"]])
