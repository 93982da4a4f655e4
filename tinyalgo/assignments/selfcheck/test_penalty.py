"""Assignment "penalty": qlearning.penalty, kappa * sum over states of
(sum_a Qhat(s, a) - 1)^2 and its gradient (paper section 6.3; tutorial 05)."""
import numpy as np

from grading import assert_gradients
from tinyalgo.gradcheck import numerical_gradient, rel_error
from tinyalgo.qlearning import penalty

Q = np.array([[0.2, 0.3, 0.1], [0.5, 0.5, 0.4]])     # sums 0.6 and 1.4: excess -0.4 and +0.4


def test_penalty_by_hand():
    loss, dq = penalty(Q, 0.5)
    assert np.isclose(loss, 0.16), f"loss: got {loss}, expected 0.5 * ((-0.4)^2 + 0.4^2) = 0.16"
    expected = [[-0.4] * 3, [0.4] * 3]
    assert np.allclose(dq, expected), (f"dq: got {np.round(dq, 6).tolist()},"
                                       f" expected 2 * 0.5 * excess on every action: {expected}")


def test_penalty_mask():
    loss, dq = penalty(Q, 0.5, mask=np.array([True, False]))
    assert np.isclose(loss, 0.08), f"loss: got {loss}, expected 0.5 * (-0.4)^2 = 0.08 (state 1 masked out)"
    expected = [[-0.4] * 3, [0.0] * 3]
    assert np.allclose(dq, expected), f"dq: got {np.round(dq, 6).tolist()}, expected {expected} (state 1 masked out)"


def test_penalty_gradient_check():
    rng = np.random.default_rng(50)
    q = rng.uniform(-0.5, 1.0, size=(3, 2, 4))       # (T, B, A)
    mask = rng.random((3, 2)) < 0.7
    loss, dq = penalty(q, 0.3, mask)
    assert np.shape(dq) == q.shape, f"dq has shape {np.shape(dq)}; expected q's shape {q.shape}"
    num = numerical_gradient(lambda: penalty(q, 0.3, mask)[0], q)
    assert_gradients("penalty", {"q": rel_error(dq, num)})
