"""Assignment "lambda_returns": qlearning.lambda_returns (tutorial 05).

    G_T = bootstrap_T
    G_t = r_t + discount_t ((1 - lambda_t) bootstrap_{t+1} + lambda_t G_{t+1})

Here T = 3, one lane, rewards 1, 0, 2, bootstrap (row 0 unused) 2, 4, 8."""
import numpy as np

from grading import assert_targets
from tinyalgo.qlearning import lambda_returns

R, BOOT = [[1.0], [0.0], [2.0]], [[0.0], [2.0], [4.0], [8.0]]
HALF = [[0.5], [0.5], [0.5]]


def test_lambda_one():
    got = lambda_returns(R, HALF, BOOT, 1.0)
    assert_targets("lambda-return, lambda = 1", got, [[2.5], [3.0], [6.0]],
                   [["1 + 0.5 G_1"], ["0 + 0.5 G_2"], ["2 + 0.5 * 8 (G_3 = bootstrap_3)"]])


def test_lambda_zero():
    got = lambda_returns(R, HALF, BOOT, 0.0)
    assert_targets("lambda-return, lambda = 0 (one-step)", got, [[2.0], [2.0], [6.0]],
                   [["1 + 0.5 * 2"], ["0 + 0.5 * 4"], ["2 + 0.5 * 8"]])


def test_lambda_half():
    got = lambda_returns(R, HALF, BOOT, 0.5)
    assert_targets("lambda-return, lambda = 0.5", got, [[2.125], [2.5], [6.0]],
                   [["1 + 0.5 (0.5 * 2 + 0.5 G_1)"], ["0 + 0.5 (0.5 * 4 + 0.5 G_2)"], ["2 + 0.5 (0.5 * 8 + 0.5 * 8)"]])


def test_lambda_per_step_and_end():
    got = lambda_returns(R, HALF, BOOT, np.array([[1.0], [0.0], [1.0]]))
    assert_targets("lambda-return, lambdas 1, 0, 1", got, [[2.0], [2.0], [6.0]],
                   [["1 + 0.5 G_1"], ["0 + 0.5 * 4 (lambda_1 = 0)"], ["2 + 0.5 * 8"]])
    got = lambda_returns(R, [[0.5], [0.0], [0.5]], BOOT, 1.0)
    assert_targets("lambda-return, episode ends at t = 1 (discount 0)", got, [[1.0], [0.0], [6.0]],
                   [["1 + 0.5 G_1"], ["0 (discount 0: nothing after the end)"], ["2 + 0.5 * 8"]])
