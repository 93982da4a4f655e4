"""Grading "softmax_nll": log_softmax_backward and nll_loss against the reference, on the
hand-worked cases and on shapes and values drawn at grading time."""
import numpy as np

from tinyalgo import layers as ref
from tinyalgo.assignments.grading.checks import compare, parts, sizes


def _log_softmax(g, x, dlogp, timed=False):
    _, cache = ref.log_softmax_forward(x)
    expected = ref.log_softmax_backward(dlogp, cache)
    args = dict(x=x, dlogp=dlogp)
    got = g.timed("log_softmax_backward", lambda: ref.log_softmax_backward(dlogp, cache), **args) if timed \
        else g.call("log_softmax_backward", **args)
    compare(f"log_softmax_backward (x of shape {x.shape})", {"x": got}, {"x": expected})


def _nll(g, logp, targets, mask=None):
    loss, dlogp = ref.nll_loss(logp, targets, mask)
    got_loss, got_d = parts("nll_loss", g.call("nll_loss", logp=logp, targets=targets, mask=mask), 2)
    what = f"nll_loss (logp of shape {logp.shape}{', masked' if mask is not None else ''})"
    compare(what, {"loss": got_loss, "dlogp": got_d}, {"loss": np.float64(loss), "dlogp": dlogp})


def _logp(g, B, V):
    return ref.log_softmax_forward(g.rng.normal(size=(B, V)))[0]


def test_log_softmax_backward_by_hand(g):
    _log_softmax(g, np.log(np.array([[0.5, 0.25, 0.25]])), np.array([[1.0, 0.0, 0.0]]))
    B, V = sizes(g.rng, 1, 5, 2)
    _log_softmax(g, g.rng.normal(size=(B, V)), g.rng.integers(-2, 3, (B, V)) * 1.0)
    _log_softmax(g, g.rng.normal(size=(256, 64)), g.rng.normal(size=(256, 64)), timed=True)


def test_log_softmax_backward_gradient_check(g):
    for _ in range(2):
        B, V = sizes(g.rng, 2, 9, 2)
        _log_softmax(g, g.rng.normal(size=(B, V)), g.rng.normal(size=(B, V)))
    _log_softmax(g, g.rng.normal(size=(256, 64)), g.rng.normal(size=(256, 64)), timed=True)


def test_nll_loss_by_hand(g):
    _nll(g, np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]])), np.array([0, 2]))
    B, V = sizes(g.rng, 2, 7, 2)
    _nll(g, _logp(g, B, V), g.rng.integers(0, V, B))


def test_nll_loss_mask(g):
    for _ in range(2):
        B, V = sizes(g.rng, 2, 7, 2)
        mask = g.rng.random(B) < 0.5
        mask[0] = not mask[-1]
        _nll(g, _logp(g, B, V), g.rng.integers(0, V, B), mask)
