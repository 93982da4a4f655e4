"""Clipping outside the loss, the release's scaling, divergence detection."""
import numpy as np
import pytest

from tinyalgo.optim import TrainingDiverged, clip_by_global_norm, global_norm, scale_gradients, sgd_step


def test_clip_norm_50_to_5():
    g = {"a": np.full((3, 4), 50 / np.sqrt(24)), "b": np.full(12, -50 / np.sqrt(24))}
    assert global_norm(g) == pytest.approx(50)
    clipped, norm = clip_by_global_norm(g, 5.0)
    assert norm == pytest.approx(50) and global_norm(clipped) == pytest.approx(5)
    np.testing.assert_allclose(clipped["a"] / g["a"], 0.1)


def test_small_gradients_untouched():
    g = {"a": np.array([0.3, 0.4])}
    clipped, norm = clip_by_global_norm(g, 5.0)
    assert norm == pytest.approx(0.5) and clipped["a"] is g["a"]


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1e4])
def test_divergence_raises(bad):
    params = {"a": np.ones(2)}
    with pytest.raises(TrainingDiverged, match="training diverged"):
        sgd_step(params, {"a": np.array([bad, 0.0])})
    np.testing.assert_array_equal(params["a"], 1.0)     # parameters untouched


def test_sgd_and_scaling():
    params = {"a": np.array([1.0, 2.0], dtype=np.float32)}
    grads = scale_gradients({"a": np.array([40.0, 0.0])}, batch=20, steps=10)   # / (20 * 10 / 10)
    np.testing.assert_allclose(grads["a"], [2.0, 0.0])
    norm = sgd_step(params, grads, lr=0.1, max_norm=5.0)
    assert norm == pytest.approx(2.0) and params["a"].dtype == np.float32
    np.testing.assert_allclose(params["a"], [0.8, 2.0])
