"""Assignment "layers": affine_backward and tanh_backward (tinyalgo/layers.py; tutorial 02)."""
import numpy as np

from grading import assert_gradients, gradient_errors
from tinyalgo.layers import affine_backward, affine_forward, tanh_backward, tanh_forward


def test_affine_backward_by_hand():
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    w = np.array([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]])
    dout = np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 0.0]])
    _, cache = affine_forward(x, w, np.zeros(3))
    dx, dw, db = affine_backward(dout, cache)
    # dx = dout @ w.T; dw = x.T @ dout; db = the sum of dout over the lanes
    assert np.allclose(dx, [[0.0, 3.0], [0.0, 2.0]]), f"dx: got {np.round(dx, 6).tolist()}, expected [[0, 3], [0, 2]]"
    assert np.allclose(dw, [[1.0, 7.0, 1.0], [2.0, 0.0, 2.0]]), \
        f"dw: got {np.round(dw, 6).tolist()}, expected [[1, 7, 1], [2, 0, 2]]"
    assert np.allclose(db, [1.0, 3.0, 1.0]), f"db: got {np.round(db, 6).tolist()}, expected [1, 3, 1]"


def test_affine_backward_gradient_check():
    rng = np.random.default_rng(1)
    for B, D, H in ((2, 3, 4), (5, 4, 3)):
        x, w, b = rng.normal(size=(B, D)), rng.normal(size=(D, H)), rng.normal(size=H)
        dout = rng.normal(size=(B, H))
        dx, dw, db = affine_backward(dout, affine_forward(x, w, b)[1])
        errors = gradient_errors(lambda: float(np.sum(affine_forward(x, w, b)[0] * dout)),
                                 {"x": x, "w": w, "b": b}, {"x": dx, "w": dw, "b": db})
        assert_gradients(f"affine_backward (B={B}, D={D}, H={H})", errors)


def test_tanh_backward_by_hand():
    _, cache = tanh_forward(np.array([0.0, np.arctanh(0.5), -np.arctanh(0.5)]))
    dx = tanh_backward(np.array([2.0, 1.0, 4.0]), cache)
    # tanh' = 1 - tanh^2: 1 at 0, 0.75 where tanh = +-0.5
    assert np.allclose(dx, [2.0, 0.75, 3.0]), f"dx: got {np.round(dx, 6).tolist()}, expected [2, 0.75, 3]"


def test_tanh_backward_gradient_check():
    rng = np.random.default_rng(2)
    x, dout = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    dx = tanh_backward(dout, tanh_forward(x)[1])
    errors = gradient_errors(lambda: float(np.sum(tanh_forward(x)[0] * dout)), {"x": x}, {"x": dx})
    assert_gradients("tanh_backward", errors)
