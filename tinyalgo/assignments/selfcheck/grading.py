"""Checks shared by the grading tests: gradients against centred differences
(``tinyalgo.gradcheck``), targets against numbers worked by hand."""
import numpy as np

from tinyalgo.gradcheck import numerical_gradient, rel_error

TOLERANCE = 1e-6
GRU_BLOCKS = {"wx": ("z", "r", "h~"), "bx": ("z", "r", "h~"), "wh": ("z", "r"), "bh": ("z", "r")}
LSTM_BLOCKS = dict.fromkeys(("wx", "bx", "wh", "bh"), ("i", "f", "o", "g"))


def random_params(shapes: dict, rng, scale=0.9) -> dict:
    """Every array, biases included, uniform in (-scale, scale): a zero bias hides a wrong gate."""
    return {k: rng.uniform(-scale, scale, size=s) for k, s in shapes.items()}


def gradient_errors(f, arrays: dict, analytic: dict, blocks: dict | None = None) -> dict:
    """{label: relative error} of ``analytic[name]`` against the centred
    differences of the scalar ``f()`` in every ``arrays[name]`` (perturbed in
    place).  A fused array named in ``blocks`` is split along its last axis:
    labels "wx[z]", "wx[r]", ..."""
    errors = {}
    for name, x in arrays.items():
        ana = analytic.get(name) if isinstance(analytic, dict) else None
        if ana is None:
            errors[name] = float("inf")
            continue
        ana = np.asarray(ana, dtype=np.float64)
        num = numerical_gradient(f, x)
        if ana.shape != num.shape:
            raise AssertionError(f"the gradient of {name} has shape {ana.shape}; {name} has shape {num.shape}")
        parts = (blocks or {}).get(name)
        if parts:
            for label, a, n in zip(parts, np.split(ana, len(parts), axis=-1), np.split(num, len(parts), axis=-1)):
                errors[f"{name}[{label}]"] = rel_error(a, n)
        else:
            errors[name] = rel_error(ana, num)
    return errors


def assert_gradients(what: str, errors: dict, tolerance: float = TOLERANCE):
    """Fail naming every gradient whose relative error is not below ``tolerance``."""
    wrong = {k: e for k, e in errors.items() if not e < tolerance}
    right = [k for k in errors if k not in wrong]
    assert not wrong, (f"{what}: wrong gradient of "
                       + ", ".join(f"{k} (relative error {e:.1e})" for k, e in wrong.items())
                       + f"; right: {', '.join(right) or 'none'}")


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
