"""Checks shared by the grading tests: gradients against centred differences
(``tinyalgo.gradcheck``), targets against numbers worked by hand."""
import numpy as np

from tinyalgo import gradcheck
from tinyalgo.gradcheck import GATE_BLOCKS, gradient_errors  # noqa: F401  (the tests import it from here)

TOLERANCE = 1e-6
GRU_BLOCKS, LSTM_BLOCKS = GATE_BLOCKS["gru"], GATE_BLOCKS["lstm"]


def random_params(shapes: dict, rng, scale=0.9) -> dict:
    """Every array, biases included, uniform in (-scale, scale): a zero bias hides a wrong gate."""
    return {k: rng.uniform(-scale, scale, size=s) for k, s in shapes.items()}


def assert_gradients(what: str, errors: dict, tolerance: float = TOLERANCE):
    """Fail naming every gradient whose relative error is not below ``tolerance`` (1e-6 here)."""
    gradcheck.assert_gradients(what, errors, tolerance)


def assert_targets(what: str, got, expected, how=None):
    """Fail naming the (step t, lane b) entries of ``got`` that differ from the hand-worked ``expected``
    (T, B); ``how[t][b]`` says how the expected number is made."""
    expected = np.asarray(expected, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}; expected {expected.shape}"
    bad = np.argwhere(~np.isclose(got, expected, rtol=1e-9, atol=1e-12))
    lines = []
    for index in bad[:4]:
        i = tuple(int(v) for v in index)
        where = ", ".join(f"{n} {v}" for n, v in zip(("step t", "lane b"), i)) if got.ndim == 2 else str(list(i))
        explain = f" = {how[i[0]][i[1]]}" if how is not None and got.ndim == 2 else ""
        lines.append(f"{where}: got {got[i]:.6g}, expected {expected[i]:.6g}{explain}")
    assert not lines, f"{what}: wrong at " + "; ".join(lines)
