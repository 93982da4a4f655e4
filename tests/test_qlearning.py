"""Q targets against explicit arithmetic on hand-made trajectories, Watkins
Q(lambda) against its literal forward view and against a generic
lambda-return, the penalties' gradients against numerical ones, and the TD
gradient's footprint."""
import numpy as np
import pytest

from tinyalgo.gradcheck import TOLERANCE, numerical_gradient, rel_error
from tinyalgo.qlearning import (dynamic_one_step_targets, lambda_returns, one_step_targets, penalty,
                                penalty_hinge, td_gradient, watkins_targets)

F, T_ = False, True
G = 0.95

# Two lanes, T = 6 (columns are lanes).
# Lane 0: episode A = steps 0-3 (3 outputs); step 2 explores (a); step 3 is a
#   failed write: reward 0, terminal (c); episode B starts at step 4 in the same
#   lane (b) and goes on past the rollout: bootstrap with q_max[6] (d).
# Lane 1: episode A = steps 0-2 (2 outputs), step 0 itself explores, all written
#   at step 2 (terminal with reward 1); episode B starts at step 3 with an
#   exploratory action, step 5 explores and fails; row 6 (unknown) says
#   exploratory, which must change nothing.
R = np.array([[1, 1], [0, 0], [1, 1], [0, 0], [1, 1], [0, 0]], dtype=float)
V = np.array([[3, 2], [2, 1], [2, 1], [1, 2], [4, 2], [3, 1], [3, 5]])
QMAX = np.array([[0.9, 0.5], [0.8, 0.45], [0.7, 0.4], [0.6, 0.35], [0.5, 0.3], [0.4, 0.25], [0.3, 0.1]])
TERM = np.array([[F, F], [F, F], [F, T_], [T_, F], [F, F], [F, T_]])
EXPL = np.array([[F, T_], [F, F], [T_, F], [F, T_], [F, F], [F, T_], [F, T_]])


def test_one_step_constant_discount():
    got = one_step_targets(R, QMAX, TERM, G)
    lane0 = [1 + G * 0.8, 0 + G * 0.7, 1 + G * 0.6,
             0.0,                                   # failed write: terminal, no bootstrap
             1 + G * 0.4, 0 + G * 0.3]              # step 5 bootstraps with q_max[6]
    lane1 = [1 + G * 0.45, 0 + G * 0.4, 1.0,        # all written at step 2: terminal
             0 + G * 0.3, 1 + G * 0.25, 0.0]
    np.testing.assert_allclose(got, np.array([lane0, lane1]).T, rtol=1e-14)


def test_one_step_dynamic_discount():
    got = dynamic_one_step_targets(R, QMAX, V, TERM)
    lane0 = [1 / 3 + (2 / 3) * 0.8, 0 / 2 + (2 / 2) * 0.7, 1 / 2 + (1 / 2) * 0.6, 0 / 1,
             1 / 4 + (3 / 4) * 0.4, 0 / 3 + (3 / 3) * 0.3]
    lane1 = [1 / 2 + (1 / 2) * 0.45, 0 / 1 + (1 / 1) * 0.4, 1 / 1,
             0 / 2 + (2 / 2) * 0.3, 1 / 2 + (1 / 2) * 0.25, 0 / 1]
    np.testing.assert_allclose(got, np.array([lane0, lane1]).T, rtol=1e-14)
    with_gamma = dynamic_one_step_targets(R, QMAX, V, TERM, gamma=0.9)
    assert with_gamma[0, 0] == pytest.approx(1 / 3 + 0.9 * (2 / 3) * 0.8)


def test_watkins_constant_discount():
    got = watkins_targets(R, QMAX, EXPL, TERM, gamma=G)
    lane0 = [1 + G * 0 + G ** 2 * 0.7,     # greedy step 1; step 2 explores: bootstrap there
             0 + G * 0.7,                  # cut at step 2
             1 + G * 0,                    # step 2 itself is included; step 3 failed: no bootstrap
             0.0,
             1 + G * 0 + G ** 2 * 0.3,     # episode B runs past the rollout: bootstrap q_max[6]
             0 + G * 0.3]
    lane1 = [1 + G * 0 + G ** 2 * 1,       # step 0 explored, still included; greedy to the end
             0 + G * 1,
             1.0,
             0 + G * 1 + G ** 2 * 0.25,    # a new episode's exploratory first step; cut at step 5
             1 + G * 0.25,
             0.0]                          # explored and failed; row 6's flag changes nothing
    np.testing.assert_allclose(got, np.array([lane0, lane1]).T, rtol=1e-14)


def test_watkins_dynamic_discount():
    got = watkins_targets(R, QMAX, EXPL, TERM, v_hat=V)
    lane0 = [(1 + 0) / 3 + (2 / 3) * 0.7,  # rewards summed to the cut at step 2, then V_last / V_t
             0 / 2 + (2 / 2) * 0.7,
             (1 + 0) / 2,                  # greedy to the failed write: no bootstrap
             0 / 1,
             (1 + 0) / 4 + (3 / 4) * 0.3,
             0 / 3 + (3 / 3) * 0.3]
    lane1 = [(1 + 0 + 1) / 2,              # the whole episode, undiscounted, over V_0
             (0 + 1) / 1,
             1 / 1,
             (0 + 1) / 2 + (1 / 2) * 0.25,
             1 / 2 + (1 / 2) * 0.25,
             0 / 1]
    np.testing.assert_allclose(got, np.array([lane0, lane1]).T, rtol=1e-14)


def test_watkins_lambda_below_one_by_hand():
    r = np.array([[1.0], [0.0], [1.0], [1.0]])
    q = np.array([[0.9], [0.8], [0.7], [0.6], [0.5]])
    explore = np.array([[F], [F], [T_], [F], [F]])
    term = np.zeros((4, 1), bool)
    g, lam = 0.9, 0.5
    g3 = 1 + g * 0.5                                   # the rollout's end: lambda = 0
    g2 = 1 + g * ((1 - lam) * 0.6 + lam * g3)
    g1 = 0 + g * 0.7                                   # step 2 explores: lambda = 0
    g0 = 1 + g * ((1 - lam) * 0.8 + lam * g1)
    got = watkins_targets(r, q, explore, term, gamma=g, lam=lam)[:, 0]
    np.testing.assert_allclose(got, [g0, g1, g2, g3], rtol=1e-14)


def test_watkins_lambda_zero_is_one_step():
    np.testing.assert_allclose(watkins_targets(R, QMAX, EXPL, TERM, gamma=G, lam=0.0),
                               one_step_targets(R, QMAX, TERM, G), rtol=1e-14)
    np.testing.assert_allclose(watkins_targets(R, QMAX, EXPL, TERM, v_hat=V, lam=0.0),
                               dynamic_one_step_targets(R, QMAX, V, TERM), rtol=1e-14)
    everywhere = np.ones_like(EXPL)                    # exploring at every step: lambda = 1 cuts at once
    np.testing.assert_allclose(watkins_targets(R, QMAX, everywhere, TERM, v_hat=V),
                               dynamic_one_step_targets(R, QMAX, V, TERM), rtol=1e-14)


def random_rollout(rng):
    T, B = int(rng.integers(1, 13)), int(rng.integers(1, 6))
    r = rng.random((T, B)) * (rng.random((T, B)) < 0.6)
    if rng.random() < 0.5:
        r = np.round(r)                                # 0/1 rewards
    term = rng.random((T, B)) < 0.2
    explore = rng.random((T + 1, B)) < rng.choice([0.0, 0.1, 0.4])
    q = rng.normal(size=(T + 1, B))
    v = rng.integers(1, 9, size=(T + 1, B))
    return T, B, r, q, v, term, explore


def forward_view(r, q, v, term, explore, gamma):
    """The literal definition (docs/original-release.md#watkins): find `last`, sum, bootstrap."""
    T, B = r.shape
    out = np.zeros((T, B))
    for b in range(B):
        for t in range(T):
            total, k = 0.0, t
            while True:
                total += gamma ** (k - t) * r[k, b]
                if term[k, b]:
                    break                              # the episode ended: no bootstrap
                k += 1
                if k == T or explore[k, b]:            # the cut: bootstrap at s_last
                    total += gamma ** (k - t) * v[k, b] * q[k, b]
                    break
            out[t, b] = total / v[t, b]
    return out


def test_watkins_matches_its_forward_view():
    rng = np.random.default_rng(0)
    for _ in range(200):
        T, B, r, q, v, term, explore = random_rollout(rng)
        g = float(rng.choice([1.0, 0.99, 0.95]))
        np.testing.assert_allclose(watkins_targets(r, q, explore, term, gamma=g),
                                   forward_view(r, q, np.ones_like(v), term, explore, g),
                                   rtol=0, atol=1e-12, err_msg=f"T={T} B={B} gamma={g}")
        np.testing.assert_allclose(watkins_targets(r, q, explore, term, v_hat=v),
                                   forward_view(r, q, v, term, explore, 1.0),
                                   rtol=0, atol=1e-12, err_msg=f"T={T} B={B} dynamic")


@pytest.mark.parametrize("lam", [1.0, 0.7, 0.0])
def test_watkins_dynamic_equals_generic_lambda_return(lam):
    rng = np.random.default_rng(1)
    for _ in range(300):
        T, B, r, q, v, term, explore = random_rollout(rng)
        got = watkins_targets(r, q, explore, term, v_hat=v, lam=lam)
        lambdas = lam * ~explore[1:]                   # lambda cut to 0 where the NEXT step explores
        lambdas[-1] = 0.0                              # ... and at the rollout's end
        discounts = np.where(term, 0.0, v[1:] / v[:-1])
        want = lambda_returns(r / v[:-1], discounts, q, lambdas)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"T={T} B={B} lam={lam}")


def test_watkins_without_exploration_or_truncation_is_the_monte_carlo_return():
    # lane 0: episodes [0..3] and [4..5]; lane 1: one episode [0..5]
    r = np.array([[1, 0], [1, 1], [0, 1], [1, 0], [1, 1], [0, 1]], dtype=float)
    term = np.array([[F, F], [F, F], [F, F], [T_, F], [F, F], [T_, T_]])
    v = np.array([[4, 6], [3, 5], [2, 4], [2, 3], [2, 3], [1, 2], [9, 9]])
    none = np.zeros((7, 2), bool)
    g = 0.9
    got = watkins_targets(r, np.full((7, 2), 7.0), none, term, gamma=g)
    lane0 = [1 + g + 0 + g ** 3, 1 + 0 + g ** 2, 0 + g, 1, 1 + 0, 0]
    lane1 = [0 + g + g ** 2 + 0 + g ** 4 + g ** 5, 1 + g + 0 + g ** 3 + g ** 4, 1 + 0 + g ** 2 + g ** 3,
             0 + g + g ** 2, 1 + g, 1]
    np.testing.assert_allclose(got, np.array([lane0, lane1]).T, rtol=1e-14)
    got = watkins_targets(r, np.full((7, 2), 7.0), none, term, v_hat=v)
    lane0 = [3 / 4, 2 / 3, 1 / 2, 1 / 2, 1 / 2, 0 / 1]
    lane1 = [4 / 6, 4 / 5, 3 / 4, 2 / 3, 2 / 3, 1 / 2]
    np.testing.assert_allclose(got, np.array([lane0, lane1]).T, rtol=1e-14)


def test_lambda_returns_by_hand_and_scalar_lambda():
    r = np.array([[1.0], [2.0]])
    d = np.array([[0.5], [0.25]])
    boot = np.array([[99.0], [10.0], [20.0]])          # row 0 unused
    got = lambda_returns(r, d, boot, 0.5)[:, 0]
    g1 = 2 + 0.25 * 20
    np.testing.assert_allclose(got, [1 + 0.5 * (0.5 * 10 + 0.5 * g1), g1])


@pytest.mark.gradcheck
@pytest.mark.parametrize("fn", [penalty, penalty_hinge])
@pytest.mark.parametrize("masked", [False, True])
def test_penalty_gradients(fn, masked):
    rng = np.random.default_rng(2)
    q = rng.normal(loc=0.5, scale=1.0, size=(3, 4, 8))
    mask = rng.random((3, 4)) < 0.5 if masked else None
    _, dq = fn(q, 0.01, mask)
    num = numerical_gradient(lambda: fn(q, 0.01, mask)[0], q)
    assert rel_error(dq, num) < TOLERANCE, rel_error(dq, num)
    if masked:
        assert not dq[~mask].any()


def test_penalty_values():
    loss, dq = penalty(np.array([[0.5, 0.25, 0.0, 0.75]]), 0.01)
    assert loss == pytest.approx(0.01 * (1.5 - 1) ** 2)
    np.testing.assert_allclose(dq, np.full((1, 4), 2 * 0.01 * (1.5 - 1)))
    loss, dq = penalty_hinge(np.array([-0.5, 0.25, 1.0, 1.5]), 0.01)
    assert loss == pytest.approx(0.01 / 2 * ((-0.5) ** 2 + 0.5 ** 2))
    np.testing.assert_allclose(dq, [0.01 * -0.5, 0, 0, 0.01 * (1.5 - 1)])   # descent pulls Q into [0, 1]


def test_td_gradient_only_on_chosen_masked_actions():
    q = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4) / 10
    actions = np.array([[0, 3, 1], [2, 2, 0]])
    targets = np.array([[0.5, 9.0, 0.25], [1.0, 0.0, 9.0]])
    mask = np.array([[T_, F, T_], [T_, T_, F]])
    dq, loss = td_gradient(q, actions, targets, mask, q_lr=0.1)
    expected = np.zeros_like(q)
    expected[0, 0, 0] = 0.1 * (0.0 - 0.5)
    expected[0, 2, 1] = 0.1 * (0.9 - 0.25)
    expected[1, 0, 2] = 0.1 * (1.4 - 1.0)
    expected[1, 1, 2] = 0.1 * (1.8 - 0.0)
    np.testing.assert_allclose(dq, expected, rtol=1e-14)
    assert loss == pytest.approx(0.05 * ((0.0 - 0.5) ** 2 + (0.9 - 0.25) ** 2 + (1.4 - 1.0) ** 2 + 1.8 ** 2))


@pytest.mark.parametrize("call, message", [
    (lambda: one_step_targets(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2), bool), 0.9),
     r"q_max has shape \(3, 2\); expected \(T\+1, B\) = \(4, 2\) \(T, B from rewards of shape \(3, 2\)\)"),
    (lambda: one_step_targets(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros((2, 3), bool), 0.9),
     r"terminal has shape \(2, 3\); expected \(T, B\) = \(3, 2\)"),
    (lambda: dynamic_one_step_targets(np.zeros((3, 2)), np.zeros((4, 2)), np.ones((4, 2)), np.zeros((4, 2))),
     r"terminal has shape \(4, 2\)"),
    (lambda: dynamic_one_step_targets(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros((4, 2)), np.zeros((3, 2))),
     r"v_hat must be >= 1"),
    (lambda: watkins_targets(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros((3, 2), bool), np.zeros((3, 2), bool)),
     r"exploratory has shape \(3, 2\); expected \(T\+1, B\) = \(4, 2\)"),
    (lambda: watkins_targets(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros((4, 2), bool), np.zeros((3, 2), bool),
                             v_hat=np.ones((3, 2))),
     r"v_hat has shape \(3, 2\); expected \(T\+1, B\) = \(4, 2\)"),
    (lambda: lambda_returns(np.zeros(3), np.zeros(3), np.zeros(4), np.zeros(3)),
     r"rewards has shape \(3,\); expected \(T, B\)"),
    (lambda: lambda_returns(np.zeros((3, 1)), np.zeros((3, 1)), np.zeros((4, 1)), np.zeros((4, 1))),
     r"lambdas has shape \(4, 1\); expected \(T, B\) = \(3, 1\)"),
    (lambda: td_gradient(np.zeros((2, 3)), np.zeros((2, 3), int), np.zeros((2, 3)), np.ones((2, 3), bool)),
     r"q has shape \(2, 3\); expected \(T, B, A\)"),
    (lambda: td_gradient(np.zeros((2, 3, 4)), np.zeros((3, 2), int), np.zeros((2, 3)), np.ones((2, 3), bool)),
     r"actions has shape \(3, 2\); expected \(T, B\) = \(2, 3\) \(T, B from q of shape \(2, 3, 4\)\)"),
    (lambda: td_gradient(np.zeros((2, 3, 4)), np.full((2, 3), 4), np.zeros((2, 3)), np.ones((2, 3), bool)),
     r"actions must lie in \[0, 4\)"),
    (lambda: penalty(np.zeros((2, 3, 4)), 0.01, mask=np.ones((2, 4), bool)),
     r"mask has shape \(2, 4\); expected \(2, 3\)"),
])
def test_bad_shapes_say_what_was_expected(call, message):
    with pytest.raises(ValueError, match=message):
        call()
