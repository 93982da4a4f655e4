"""Assignment "watkins": qlearning.watkins_targets, Watkins Q(lambda) with the
dynamic discount (paper section 6.2; tutorial 05).  With lambda = 1 and the
dynamic discount:

    target_t = (r_t + ... + r_{last-1}) / V_t + (V_last / V_t) max_a Qhat(s_last, a)

where ``last`` is the first exploratory step after t (or the rollout's end);
nothing is bootstrapped past a terminal step."""

from grading import assert_targets
from tinyalgo.qlearning import watkins_targets

F = False


def test_watkins_dynamic_no_exploration():
    # an episode of 4 outputs (V = 4, 3, 2, 1) ending at t = 3; rewards 1, 0, 1, 1
    got = watkins_targets(rewards=[[1], [0], [1], [1]], q_max=[[0.9], [0.1], [0.2], [0.3], [0.4]],
                          exploratory=[[F]] * 5, terminal=[[F], [F], [F], [True]], v_hat=[[4], [3], [2], [1], [1]])
    assert_targets("Watkins target (no exploration)", got, [[0.75], [2 / 3], [1.0], [1.0]],
                   [["(1+0+1+1)/4"], ["(0+1+1)/3"], ["(1+1)/2"], ["1/1"]])


def test_watkins_exploratory_cut():
    # as above, but the action of step 2 was exploratory: steps 0 and 1 bootstrap from Qhat(s_2)
    got = watkins_targets(rewards=[[1], [0], [1], [1]], q_max=[[0.9], [0.1], [0.2], [0.3], [0.4]],
                          exploratory=[[F], [F], [True], [F], [F]], terminal=[[F], [F], [F], [True]],
                          v_hat=[[4], [3], [2], [1], [1]])
    assert_targets("Watkins target (step 2 exploratory)", got, [[0.35], [0.2 * 2 / 3], [1.0], [1.0]],
                   [["(1+0)/4 + (2/4) 0.2"], ["0/3 + (2/3) 0.2"], ["(1+1)/2 (step 2 itself counts)"], ["1/1"]])


def test_watkins_rollout_end_and_new_episode():
    # T = 4: an episode of 2 outputs ends at t = 1; the next one (V = 3, 2) is cut by the rollout's end
    got = watkins_targets(rewards=[[1], [1], [0], [1]], q_max=[[0.0], [0.5], [0.5], [0.5], [0.7]],
                          exploratory=[[F]] * 5, terminal=[[F], [True], [F], [F]], v_hat=[[2], [1], [3], [2], [1]])
    assert_targets("Watkins target (new episode at t = 2, rollout ends at T = 4)", got,
                   [[1.0], [1.0], [(1 + 0.7) / 3], [0.85]],
                   [["(1+1)/2"], ["1/1"], ["(0+1)/3 + (1/3) 0.7"], ["1/2 + (1/2) 0.7"]])


def test_watkins_constant_discount():
    # no V-hat: discount gamma = 0.9 per step; step 2 exploratory
    got = watkins_targets(rewards=[[1], [0], [1]], q_max=[[0.0], [0.3], [0.6], [0.5]],
                          exploratory=[[F], [F], [True], [F]], terminal=[[F], [F], [F]], gamma=0.9)
    assert_targets("Watkins target (gamma 0.9)", got, [[1.486], [0.54], [1.45]],
                   [["1 + 0.9 * 0 + 0.81 * 0.6"], ["0 + 0.9 * 0.6"], ["1 + 0.9 * 0.5 (rollout's end)"]])
