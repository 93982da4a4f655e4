"""Q targets against explicit arithmetic on hand-made trajectories, the
dynamic-discount Watkins target against a generic lambda-return, and the
penalty's gradient against a numerical one."""
import numpy as np
import pytest

from tinyalgo.qlearning import (dynamic_one_step_targets, lambda_returns, one_step_targets, penalty,
                                penalty_hinge, td_gradient, watkins_targets)

F, T_ = False, True

# One lane, T = 6.  Episode A: steps 0-3 (3 outputs), step 2 exploratory,
# a failed write at step 3 ends it.  Episode B starts at step 4 and goes on
# past the rollout (bootstrap with q_max[6]).
R = np.array([[1.0], [0.0], [1.0], [0.0], [1.0], [0.0]])
V = np.array([[3], [2], [2], [1], [4], [3], [3]])
QMAX = np.array([[0.9], [0.8], [0.7], [0.6], [0.5], [0.4], [0.3]])
TERM = np.array([[F], [F], [F], [T_], [F], [F]])
EXPL = np.array([[F], [F], [T_], [F], [F], [F], [F]])


def test_one_step_constant_discount():
    got = one_step_targets(R, QMAX, TERM, 0.99)[:, 0]
    expected = [1 + 0.99 * 0.8, 0 + 0.99 * 0.7, 1 + 0.99 * 0.6, 0.0,     # step 3 failed: terminal
                1 + 0.99 * 0.4, 0 + 0.99 * 0.3]                          # step 5 bootstraps q_max[6]
    np.testing.assert_allclose(got, expected)


def test_one_step_dynamic_discount():
    got = dynamic_one_step_targets(R, QMAX, V, TERM)[:, 0]
    expected = [1 / 3 + (2 / 3) * 0.8, 0 / 2 + (2 / 2) * 0.7, 1 / 2 + (1 / 2) * 0.6, 0 / 1,
                1 / 4 + (3 / 4) * 0.4, 0 / 3 + (3 / 3) * 0.3]
    np.testing.assert_allclose(got, expected)


def test_watkins_constant_discount():
    g = 0.95
    got = watkins_targets(R, QMAX, EXPL, TERM, gamma=g)[:, 0]
    expected = [
        1 + g * 0 + g ** 2 * 0.7,      # greedy steps 0, 1; step 2 exploratory: bootstrap there
        0 + g * 0.7,                   # cut at step 2
        1 + g * 0,                     # step 2 itself is included; step 3 failed: no bootstrap
        0.0,
        1 + g * 0 + g ** 2 * 0.3,      # episode B runs past the rollout: bootstrap q_max[6]
        0 + g * 0.3,
    ]
    np.testing.assert_allclose(got, expected)


def test_watkins_dynamic_discount():
    got = watkins_targets(R, QMAX, EXPL, TERM, v_hat=V)[:, 0]
    expected = [
        (1 + 0) / 3 + (2 / 3) * 0.7,   # rewards summed to the cut at step 2, V_last / V_t
        0 / 2 + (2 / 2) * 0.7,
        (1 + 0) / 2,                   # greedy to the failed write: no bootstrap
        0 / 1,
        (1 + 0) / 4 + (3 / 4) * 0.3,
        0 / 3 + (3 / 3) * 0.3,
    ]
    np.testing.assert_allclose(got, expected)


def test_watkins_without_exploration_is_the_monte_carlo_return():
    r = np.array([[1.0], [1.0], [0.0], [1.0]])
    term = np.array([[F], [F], [F], [T_]])
    got = watkins_targets(r, np.full((5, 1), 7.0), np.zeros((5, 1), bool), term, gamma=0.9)[:, 0]
    np.testing.assert_allclose(got, [1 + 0.9 + 0 + 0.9 ** 3, 1 + 0 + 0.9 ** 2, 0 + 0.9, 1])


def test_watkins_dynamic_equals_generic_lambda_return():
    rng = np.random.default_rng(0)
    for _ in range(300):
        T, B = rng.integers(1, 12), rng.integers(1, 6)
        r = rng.random((T, B)) * (rng.random((T, B)) < 0.6)
        term = rng.random((T, B)) < 0.2
        explore = rng.random((T + 1, B)) < 0.3
        q = rng.normal(size=(T + 1, B))
        v = rng.integers(1, 9, size=(T + 1, B))
        got = watkins_targets(r, q, explore, term, v_hat=v)
        lam = (~explore[1:]).astype(float)                 # lambda cut to 0 where the next step explores
        lam[-1] = 0.0                                      # ... and at the rollout's end
        want = lambda_returns(r / v[:-1], (~term) * v[1:] / v[:-1], q, lam)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"T={T} B={B}")


def test_watkins_general_lambda_between_one_step_and_full():
    rng = np.random.default_rng(1)
    r, q = rng.random((5, 3)), rng.random((6, 3))
    term, explore, v = np.zeros((5, 3), bool), np.zeros((6, 3), bool), rng.integers(1, 5, (6, 3))
    zero = watkins_targets(r, q, explore, term, v_hat=v, lam=0.0)
    np.testing.assert_allclose(zero, dynamic_one_step_targets(r, q, v, term))


def numeric_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        fp = f(x)
        x[i] = old - h
        fm = f(x)
        x[i] = old
        g[i] = (fp - fm) / (2 * h)
    return g


@pytest.mark.parametrize("fn", [penalty, penalty_hinge])
def test_penalty_gradients(fn):
    q = np.random.default_rng(2).normal(scale=1.5, size=(3, 4, 8))
    _, dq = fn(q, 0.01)
    num = numeric_grad(lambda x: fn(x, 0.01)[0], q.copy())
    np.testing.assert_allclose(dq, num, rtol=1e-6, atol=1e-10)


def test_penalty_value():
    loss, dq = penalty(np.array([[0.5, 0.25, 0.0, 0.75]]), 0.01)
    assert loss == pytest.approx(0.01 * 0.5 ** 2)
    np.testing.assert_allclose(dq, 2 * 0.01 * 0.5)


def test_td_gradient_only_on_chosen_masked_actions():
    q = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)
    actions = np.array([[0, 3, 1], [2, 2, 0]])
    targets = np.zeros((2, 3))
    mask = np.array([[T_, F, T_], [T_, T_, F]])
    dq, loss = td_gradient(q, actions, targets, mask, q_lr=0.1)
    expected = np.zeros_like(q)
    for t, b in [(0, 0), (0, 2), (1, 0), (1, 1)]:
        expected[t, b, actions[t, b]] = 0.1 * q[t, b, actions[t, b]]
    np.testing.assert_allclose(dq, expected)
    assert loss == pytest.approx(0.05 * sum(q[t, b, actions[t, b]] ** 2 for t, b in [(0, 0), (0, 2), (1, 0), (1, 1)]))


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match=r"q_max must have shape \(4, 2\)"):
        one_step_targets(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2), bool), 0.9)
    with pytest.raises(ValueError, match=r"v_hat must have shape \(4, 2\)"):
        watkins_targets(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros((4, 2), bool), np.zeros((3, 2), bool),
                        v_hat=np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"rewards must have shape \(T, B\)"):
        lambda_returns(np.zeros(3), np.zeros(3), np.zeros(4), np.zeros(3))
