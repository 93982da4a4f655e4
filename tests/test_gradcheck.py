"""The public gradient-checking helpers themselves."""
import numpy as np
import pytest

from tinyalgo.gradcheck import check_gradients, format_report, numerical_gradient, rel_error

pytestmark = pytest.mark.gradcheck


def test_rel_error_definition():
    assert rel_error([1.0, 2.0], [1.0, 2.0]) == 0.0
    assert rel_error([1.0], [3.0]) == 0.5
    assert rel_error([0.0], [1e-12]) == 1e-12 / 1e-8
    assert rel_error([1.0, 1e-4], [1.0, 1e-4 + 1e-10]) < 1e-9      # against the largest entry, not each its own


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


def test_a_wrong_gate_block_is_named():
    """A fused GRU matrix is reported per gate block: a gradient wrong in the
    z columns of wx only is named wx[z], the other blocks stay right."""
    from tinyalgo.cores import core_param_shapes, gru_step_backward, gru_step_forward
    from tinyalgo.gradcheck import GATE_BLOCKS, TOLERANCE, format_report

    rng = np.random.default_rng(0)
    D, H = 3, 4
    p = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in core_param_shapes("gru", D, H).items()}
    x, h, dout = rng.normal(size=(2, D)), rng.normal(size=(2, H)), rng.normal(size=(2, H))
    _, _, grads = gru_step_backward(dout, gru_step_forward(x, h, p)[1])
    grads["wx"][:, :H] *= 1.5                                       # the z gate's columns
    report = check_gradients(lambda: float(np.sum(gru_step_forward(x, h, p)[0] * dout)), {"core0.wx": p["wx"]},
                             {"core0.wx": grads["wx"]}, blocks=GATE_BLOCKS["gru"])
    errors = report["errors"]
    assert set(errors) == {"core0.wx[z]", "core0.wx[r]", "core0.wx[h~]"}
    assert errors["core0.wx[z]"] > 0.1 and errors["core0.wx[r]"] < TOLERANCE and errors["core0.wx[h~]"] < TOLERANCE
    assert report["worst"][0] == "core0.wx[z]" and report["worst"][1][1] < H
    assert "over 1e-07: core0.wx[z]" in format_report(report)


def test_a_missing_gradient_fails_and_a_wrong_shape_is_named():
    a = np.array([1.0, 2.0])
    assert check_gradients(lambda: float(np.sum(a ** 2)), {"a": a}, {})["errors"] == {"a": float("inf")}
    with pytest.raises(AssertionError, match=r"the gradient of a has shape \(3,\); a has shape \(2,\)"):
        check_gradients(lambda: float(np.sum(a ** 2)), {"a": a}, {"a": np.zeros(3)})


@pytest.mark.parametrize("seed", range(5))
def test_a_right_gradient_passes_whatever_the_cpus_last_bits(seed):
    """Another CPU's BLAS kernels round the loss differently in its last bits;
    a right gradient must pass anyway, and a gradient with one entry off by a
    millionth of its block's largest must still fail."""
    from tinyalgo.cores import core_param_shapes, gru_step_backward, gru_step_forward
    from tinyalgo.gradcheck import GATE_BLOCKS, TOLERANCE

    rng, ulps = np.random.default_rng(seed), np.random.default_rng(100 + seed)
    D, H = 5, 4
    p = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in core_param_shapes("gru", D, H).items()}
    x, h, dout = rng.normal(size=(2, D)), rng.normal(size=(2, H)), rng.normal(size=(2, H))
    _, _, grads = gru_step_backward(dout, gru_step_forward(x, h, p)[1])

    def loss():                                             # the loss give or take 16 eps, relative
        return float(np.sum(gru_step_forward(x, h, p)[0] * dout)) * (1 + 4 * np.finfo(float).eps * ulps.integers(-4, 5))

    report = check_gradients(loss, dict(p), grads, blocks=GATE_BLOCKS["gru"])
    assert max(report["errors"].values()) < TOLERANCE, format_report(report)
    block = grads["wh"][:, :H]                               # the z gate's block of wh
    i = np.unravel_index(int(np.argmin(np.abs(block))), block.shape)
    grads["wh"][i] += 1e-6 * np.max(np.abs(block))          # its smallest entry, off by a millionth of the largest
    report = check_gradients(loss, {"wh": p["wh"]}, {"wh": grads["wh"]}, blocks=GATE_BLOCKS["gru"])
    assert report["errors"]["wh[z]"] > TOLERANCE and report["errors"]["wh[r]"] < TOLERANCE, report["errors"]
    assert report["worst"][:2] == ("wh[z]", tuple(int(v) for v in i)), report["worst"]
