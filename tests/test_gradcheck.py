"""The public gradient-checking helpers themselves."""
import numpy as np

from tinyalgo.gradcheck import check_gradients, numerical_gradient, rel_error


def test_rel_error_definition():
    assert rel_error([1.0, 2.0], [1.0, 2.0]) == 0.0
    assert rel_error([1.0], [3.0]) == 0.5
    assert rel_error([0.0], [1e-12]) == 1e-12 / 1e-8


def test_numerical_gradient_of_a_quadratic_and_restores_x():
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    before = x.copy()
    g = numerical_gradient(lambda: float(np.sum(x ** 2)), x)
    np.testing.assert_allclose(g, 2 * before, rtol=1e-8)
    np.testing.assert_array_equal(x, before)


def test_check_gradients_reports_the_worst_entry_by_name():
    a, b = np.array([1.0, 2.0]), np.array([3.0])
    def f():
        return float(np.sum(a ** 2) + np.sum(b ** 3))
    report = check_gradients(f, {"a": a, "b": b}, {"a": 2 * a, "b": np.array([20.0])})
    assert report["errors"]["a"] < 1e-8
    assert report["worst"][0] == "b" and report["worst"][1] == (0,)
