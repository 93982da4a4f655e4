"""Grading "penalty": qlearning.penalty, kappa * sum over states of (sum_a Qhat(s, a) - 1)^2 and
its gradient (paper section 6.3), against the reference on Q drawn at grading time."""
import numpy as np

from tinyalgo import qlearning as ref
from tinyalgo.assignments.grading.checks import compare, parts


def _check(g, q, kappa, mask=None):
    loss, dq = ref.penalty(q, kappa, mask)
    got = g.call("qlearning", function="penalty", arguments={"q": q, "kappa": kappa, "mask": mask})
    got_loss, got_dq = parts("penalty", got, 2)
    what = f"penalty (q of shape {q.shape}, kappa {kappa:.3g}{', masked' if mask is not None else ''})"
    compare(what, {"loss": got_loss, "dq": got_dq}, {"loss": np.float64(loss), "dq": dq})


def test_penalty_by_hand(g):
    _check(g, np.array([[0.2, 0.3, 0.1], [0.5, 0.5, 0.4]]), 0.5)
    _check(g, g.rng.uniform(-0.5, 1.0, size=(int(g.rng.integers(2, 6)), int(g.rng.integers(2, 6)))),
           float(g.rng.uniform(0.1, 2.0)))


def test_penalty_mask(g):
    T, B, A = (int(v) for v in g.rng.integers(2, 6, size=3))
    mask = g.rng.random((T, B)) < 0.6
    mask[0, 0], mask[-1, -1] = True, False
    _check(g, g.rng.uniform(-0.5, 1.0, size=(T, B, A)), float(g.rng.uniform(0.1, 2.0)), mask)


def test_penalty_gradient_check(g):
    T, B, A = (int(v) for v in g.rng.integers(2, 6, size=3))
    _check(g, g.rng.normal(size=(T, B, A)), float(g.rng.uniform(0.1, 2.0)))
