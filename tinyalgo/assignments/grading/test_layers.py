"""Grading "layers": affine_backward and tanh_backward against the reference, on the
hand-worked case and on shapes and values drawn at grading time."""
import numpy as np

from tinyalgo import layers as ref
from tinyalgo.assignments.grading.checks import compare, parts, sizes


def _affine(g, x, w, b, dout, timed=False):
    _, cache = ref.affine_forward(x, w, b)
    expected = dict(zip(("x", "w", "b"), ref.affine_backward(dout, cache)))
    args = dict(x=x, w=w, b=b, dout=dout)
    got = g.timed("affine_backward", lambda: ref.affine_backward(dout, cache), **args) if timed else \
        g.call("affine_backward", **args)
    B, D = x.shape
    compare(f"affine_backward (B={B}, D={D}, H={w.shape[1]})", dict(zip(("x", "w", "b"),
                                                                        parts("affine_backward", got, 3))), expected)


def test_affine_backward_by_hand(g):
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    w = np.array([[1.0, 0.0, -1.0], [2.0, 1.0, 0.0]])
    _affine(g, x, w, np.zeros(3), np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 0.0]]))
    for _ in range(2):
        B, D, H = sizes(g.rng, 1, 7)
        _affine(g, g.rng.integers(-3, 4, (B, D)) * 1.0, g.rng.integers(-3, 4, (D, H)) * 1.0,
                g.rng.integers(-3, 4, H) * 1.0, g.rng.integers(-3, 4, (B, H)) * 1.0)
    _affine_at_size(g)


def test_affine_backward_gradient_check(g):
    for _ in range(3):
        B, D, H = sizes(g.rng, 2, 9)
        _affine(g, g.rng.normal(size=(B, D)), g.rng.normal(size=(D, H)), g.rng.normal(size=H),
                g.rng.normal(size=(B, H)))
    _affine_at_size(g)


def _affine_at_size(g):
    B, D, H = 64, 96, 96
    _affine(g, g.rng.normal(size=(B, D)), g.rng.normal(size=(D, H)), g.rng.normal(size=H),
            g.rng.normal(size=(B, H)), timed=True)


def _tanh(g, x, dout, timed=False):
    _, cache = ref.tanh_forward(x)
    expected = ref.tanh_backward(dout, cache)
    got = g.timed("tanh_backward", lambda: ref.tanh_backward(dout, cache), x=x, dout=dout) if timed else \
        g.call("tanh_backward", x=x, dout=dout)
    compare(f"tanh_backward (x of shape {x.shape})", {"x": got}, {"x": expected})


def test_tanh_backward_by_hand(g):
    _tanh(g, np.array([0.0, np.arctanh(0.5), -np.arctanh(0.5)]), np.array([2.0, 1.0, 4.0]))
    shape = sizes(g.rng, 1, 5, 2)
    _tanh(g, g.rng.uniform(-2, 2, size=shape), g.rng.integers(-3, 4, size=shape) * 1.0)
    _tanh(g, g.rng.normal(size=(128, 256)), g.rng.normal(size=(128, 256)), timed=True)


def test_tanh_backward_gradient_check(g):
    for _ in range(2):
        shape = sizes(g.rng, 2, 8, 2)
        _tanh(g, g.rng.normal(size=shape), g.rng.normal(size=shape))
    _tanh(g, g.rng.normal(size=(128, 256)), g.rng.normal(size=(128, 256)), timed=True)
