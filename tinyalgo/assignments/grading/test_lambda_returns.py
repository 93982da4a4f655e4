"""Grading "lambda_returns": qlearning.lambda_returns against the reference, with lambda 1, 0,
in between and per step, on rollouts drawn at grading time."""
import numpy as np

from tinyalgo.assignments.grading.qchecks import check


def _random(g, lambdas):
    T, B = int(g.rng.integers(3, 9)), int(g.rng.integers(2, 5))
    discounts = g.rng.uniform(0.3, 1.0, (T, B)) * (g.rng.random((T, B)) > 0.2)
    lam = lambdas(T, B) if callable(lambdas) else lambdas
    check(g, "lambda_returns", f"lambda-return (lambda {'per step' if callable(lambdas) else lambdas})",
          rewards=g.rng.normal(size=(T, B)), discounts=discounts, bootstrap=g.rng.normal(size=(T + 1, B)),
          lambdas=lam)


def test_lambda_one(g):
    check(g, "lambda_returns", "lambda-return (lambda 1)", rewards=[[1.0], [2.0], [3.0]],
          discounts=[[0.5]] * 3, bootstrap=[[0.0], [4.0], [8.0], [16.0]], lambdas=1.0)
    _random(g, 1.0)


def test_lambda_zero(g):
    _random(g, 0.0)


def test_lambda_half(g):
    _random(g, 0.5)
    _random(g, float(g.rng.uniform(0.1, 0.9)))


def test_lambda_per_step_and_end(g):
    _random(g, lambda T, B: g.rng.uniform(0, 1, (T, B)) * (g.rng.random((T, B)) > 0.3))
    _random(g, lambda T, B: np.where(g.rng.random((T, B)) < 0.5, 0.0, 1.0))
