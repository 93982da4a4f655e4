"""Float64 centred-difference gradient checks of every layer, with random
shapes, inputs and biases (numpy-ml's lesson: never start biases at zero)."""
import numpy as np
import pytest

from tinyalgo.gradcheck import check_gradients, format_report, numerical_gradient, rel_error
from tinyalgo.layers import (affine_backward, affine_forward, field_offsets, log_softmax_backward,
                             log_softmax_forward, nll_loss, onehot, onehot_affine_backward,
                             onehot_affine_forward, tanh_backward, tanh_forward)

pytestmark = pytest.mark.gradcheck

SHAPES = [tuple(int(v) for v in np.random.default_rng(s).integers(1, 7, size=3)) for s in range(6)]


@pytest.mark.parametrize("B,D,H", SHAPES)
def test_affine(B, D, H):
    rng = np.random.default_rng(B * 100 + D * 10 + H)
    x, w, b, dout = rng.normal(size=(B, D)), rng.normal(size=(D, H)), rng.normal(size=H), rng.normal(size=(B, H))
    out, cache = affine_forward(x, w, b)
    dx, dw, db = affine_backward(dout, cache)
    report = check_gradients(lambda: np.sum(affine_forward(x, w, b)[0] * dout), dict(x=x, w=w, b=b),
                             dict(x=dx, w=dw, b=db))
    assert max(report["errors"].values()) < 1e-7, (B, D, H, format_report(report))


@pytest.mark.parametrize("B,D,H", SHAPES)
def test_tanh_and_log_softmax(B, D, H):
    rng = np.random.default_rng(B + 7 * D + 31 * H)
    x, dout = rng.normal(size=(B, D)) * 2, rng.normal(size=(B, D))
    out, cache = tanh_forward(x)
    dx = tanh_backward(dout, cache)
    assert rel_error(dx, numerical_gradient(lambda: np.sum((np.tanh(x) - out) * dout), x)) < 1e-7
    logp, cache = log_softmax_forward(x)
    dx = log_softmax_backward(dout, cache)
    num = numerical_gradient(lambda: np.sum((log_softmax_forward(x)[0] - logp) * dout), x)   # centred: small roundoff
    assert rel_error(dx, num) < 1e-7
    np.testing.assert_allclose(np.exp(logp).sum(1), 1.0)


def test_onehot_affine_equals_onehot_then_affine_and_its_gradient():
    rng = np.random.default_rng(3)
    sizes = (6, 6, 2, 5, 3)
    for B, H in [(1, 3), (4, 5), (7, 2)]:
        obs = np.stack([rng.integers(0, s, size=B) for s in sizes], axis=1)
        w, b, dout = rng.normal(size=(sum(sizes), H)), rng.normal(size=H), rng.normal(size=(B, H))
        out, cache = onehot_affine_forward(obs, field_offsets(sizes), w, b)
        np.testing.assert_allclose(out, onehot(obs, sizes) @ w + b)
        dw, db = onehot_affine_backward(dout, cache)
        def f():
            return np.sum(onehot_affine_forward(obs, field_offsets(sizes), w, b)[0] * dout)
        report = check_gradients(f, dict(w=w, b=b), dict(w=dw, b=db))
        assert max(report["errors"].values()) < 1e-7, format_report(report)


def test_nll_loss_gradient():
    rng = np.random.default_rng(4)
    logp = log_softmax_forward(rng.normal(size=(5, 7)))[0]
    targets, mask = rng.integers(0, 7, size=5), np.array([1, 0, 1, 1, 0], bool)
    loss, dlogp = nll_loss(logp, targets, mask)
    assert loss == pytest.approx(-sum(logp[i, targets[i]] for i in range(5) if mask[i]))
    num = numerical_gradient(lambda: nll_loss(logp, targets, mask)[0], logp)
    assert rel_error(dlogp, num) < 1e-8
