"""Gradient checking: centred differences against analytic gradients (used
by the tests, the tutorials and course assignments; CS231n's
``gradient_check.py`` in spirit)."""
from __future__ import annotations

import numpy as np


def rel_error(a, b) -> float:
    """max(|a - b| / max(1e-8, |a| + |b|)) over all entries."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b)))) if a.size else 0.0


def numerical_gradient(f, x: np.ndarray, h: float = 1e-5) -> np.ndarray:
    """Centred-difference gradient of the scalar ``f()`` with respect to the
    array ``x``, perturbed in place (and restored) entry by entry."""
    grad = np.zeros(x.shape, dtype=np.float64)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        plus = f()
        x[i] = old - h
        minus = f()
        x[i] = old
        grad[i] = (plus - minus) / (2.0 * h)
    return grad


def check_gradients(f, arrays: dict, analytic: dict, h: float = 1e-5) -> dict:
    """Compare ``analytic[name]`` with the numerical gradient of ``f()`` with
    respect to each ``arrays[name]`` (perturbed in place).  Returns a report:
    ``{"errors": {name: rel_error}, "worst": (name, index, analytic, numeric, error)}``."""
    errors, worst = {}, None
    for name, x in arrays.items():
        num = numerical_gradient(f, x, h)
        ana = np.asarray(analytic[name], dtype=np.float64)
        if ana.shape != num.shape:
            raise ValueError(f"analytic gradient of {name!r} has shape {ana.shape}, the array {num.shape}")
        errors[name] = rel_error(ana, num)
        if num.size:
            per = np.abs(ana - num) / np.maximum(1e-8, np.abs(ana) + np.abs(num))
            i = np.unravel_index(int(np.argmax(per)), per.shape)
            if worst is None or per[i] > worst[4]:
                worst = (name, i, float(ana[i]), float(num[i]), float(per[i]))
    return {"errors": errors, "worst": worst}


def format_report(report: dict) -> str:
    name, index, a, n, e = report["worst"]
    return f"worst: {name}{list(index)} analytic {a:.6e} numeric {n:.6e} rel error {e:.2e}"
