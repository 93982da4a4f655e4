"""Assignment "softmax_nll": log_softmax_backward and nll_loss (tinyalgo/layers.py; tutorial 02)."""
import numpy as np

from grading import assert_gradients, gradient_errors
from tinyalgo.layers import log_softmax_backward, log_softmax_forward, nll_loss


def test_log_softmax_backward_by_hand():
    _, cache = log_softmax_forward(np.log(np.array([[0.5, 0.25, 0.25]])))
    dx = log_softmax_backward(np.array([[1.0, 0.0, 0.0]]), cache)
    # dx = dlogp - softmax * sum(dlogp) = [1, 0, 0] - [0.5, 0.25, 0.25]
    assert np.allclose(dx, [[0.5, -0.25, -0.25]]), f"dx: got {np.round(dx, 6).tolist()}, expected [[0.5, -0.25, -0.25]]"


def test_log_softmax_backward_gradient_check():
    rng = np.random.default_rng(3)
    x, dlogp = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    dx = log_softmax_backward(dlogp, log_softmax_forward(x)[1])
    errors = gradient_errors(lambda: float(np.sum(log_softmax_forward(x)[0] * dlogp)), {"x": x}, {"x": dx})
    assert_gradients("log_softmax_backward", errors)


def test_nll_loss_by_hand():
    logp = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3]]))
    loss, dlogp = nll_loss(logp, np.array([1, 2]))
    # -log 0.25 - log 0.3 = 1.386294 + 1.203973
    assert np.isclose(loss, 2.5902672867), f"loss: got {loss}, expected -log(0.25) - log(0.3) = 2.590267"
    assert np.allclose(dlogp, [[0, -1, 0], [0, 0, -1]]), \
        f"dlogp: got {np.round(dlogp, 6).tolist()}, expected -1 at each target, 0 elsewhere"


def test_nll_loss_mask():
    logp = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3]]))
    loss, dlogp = nll_loss(logp, np.array([1, 2]), mask=np.array([True, False]))
    assert np.isclose(loss, np.log(4.0)), f"loss: got {loss}, expected -log(0.25) = 1.386294 (row 1 masked out)"
    assert np.allclose(dlogp, [[0, -1, 0], [0, 0, 0]]), \
        f"dlogp: got {np.round(dlogp, 6).tolist()}, expected [[0, -1, 0], [0, 0, 0]] (row 1 masked out)"
