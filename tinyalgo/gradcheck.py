"""Gradient checking: centred differences against analytic gradients (used
by the tests, the tutorials and the course's grading tests; CS231n's
``gradient_check.py`` in spirit).

A recurrent core keeps its gates' weights side by side in one matrix
(``cores.py``: ``wx`` is (D, 3H) for the GRU's z, r, h~).  Given
``GATE_BLOCKS[core]``, a report names each gate block on its own (``wx[z]``,
``wx[r]``, ``wx[h~]``), so a wrong gate is named, not only its matrix.

The house's bar is a relative error below ``TOLERANCE`` (1e-7) in float64,
measured per array (or gate block) against its largest entry:
``max|a - b| / max(1e-8, max(|a| + |b|))``.  A centred difference with a step
of 1e-5 is off by about 1e-10 for a loss of order 1 (truncation, and roundoff
of about eps |loss| / step that depends on the CPU's BLAS kernels) whatever an
entry's size, so an entry a thousand times smaller than its block's largest
cannot be held to 1e-7 of itself.  A block whose entries are all below about
1e-3 of the loss is still held to 1e-7 of its largest.
Deep unrolls lose more to roundoff: there the numerical side can run in
``EXTENDED`` precision (80-bit ``long double`` where the platform has it)
with the step ``EXTENDED_STEP``.
"""
from __future__ import annotations

import numpy as np

TOLERANCE = 1e-7
EXTENDED = np.longdouble if np.finfo(np.longdouble).eps < np.finfo(np.float64).eps else np.float64
EXTENDED_STEP = 1e-6 if EXTENDED is not np.float64 else 1e-5

# The gate blocks of each core's fused arrays, in the order of their columns (cores.py).
GATE_BLOCKS = {
    "gru": {"wx": ("z", "r", "h~"), "bx": ("z", "r", "h~"), "wh": ("z", "r"), "bh": ("z", "r")},
    "lstm": dict.fromkeys(("wx", "bx", "wh", "bh"), ("i", "f", "o", "g")),
}


def rel_error(a, b) -> float:
    """``max|a - b| / max(1e-8, max(|a| + |b|))``: the largest difference
    relative to the largest entry (the max-norm relative error)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(1e-8, np.max(np.abs(a) + np.abs(b)))) if a.size else 0.0


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


def gate_blocks(name: str, blocks: dict | None) -> tuple:
    """The gate labels of array ``name`` (``"wx"`` or a controller's ``"core0.wx"``) in ``blocks``, or ()."""
    return tuple((blocks or {}).get(name) or (blocks or {}).get(name.rsplit(".", 1)[-1]) or ())


def gate_pieces(labels: tuple, *arrays) -> list:
    """[(label, *parts)]: each of ``arrays`` split along its last axis into one
    part per gate label; [(None, *arrays)] whole where there are no labels or the
    last axis does not divide among them."""
    if labels and arrays[0].shape[-1] % len(labels) == 0:
        return list(zip(labels, *(np.split(a, len(labels), axis=-1) for a in arrays)))
    return [(None, *arrays)]


def check_gradients(f, arrays: dict, analytic: dict, h: float = 1e-5, blocks: dict | None = None) -> dict:
    """Compare ``analytic[name]`` with the numerical gradient of ``f()`` with
    respect to each ``arrays[name]`` (perturbed in place).  An array whose
    name (or last dotted part) is in ``blocks`` (e.g. ``GATE_BLOCKS["gru"]``)
    is split along its last axis into its gate blocks.  A missing analytic
    gradient has error inf.  Returns a report:
    ``{"errors": {label: rel_error}, "worst": (label, index, analytic, numeric, error)}``:
    the label with the largest error, its entry furthest from the numerical
    gradient (the index within the gate block) and the label's error."""
    errors, worst = {}, None
    for name, x in arrays.items():
        ana = analytic.get(name) if isinstance(analytic, dict) else None
        if ana is None:
            errors[name] = float("inf")
            continue
        ana = np.asarray(ana, dtype=np.float64)
        num = numerical_gradient(f, x, h)
        if ana.shape != num.shape:
            raise AssertionError(f"the gradient of {name} has shape {ana.shape}; {name} has shape {num.shape}")
        for label, a, n in gate_pieces(gate_blocks(name, blocks), ana, num):
            key = f"{name}[{label}]" if label else name
            errors[key] = rel_error(a, n)
            if a.size and (worst is None or errors[key] > worst[4]):
                i = np.unravel_index(int(np.argmax(np.abs(a - n))), a.shape)
                worst = (key, tuple(int(v) for v in i), float(a[i]), float(n[i]), errors[key])
    return {"errors": errors, "worst": worst}


def gradient_errors(f, arrays: dict, analytic: dict, blocks: dict | None = None, h: float = 1e-5) -> dict:
    """{label: relative error}: ``check_gradients``'s errors alone."""
    return check_gradients(f, arrays, analytic, h=h, blocks=blocks)["errors"]


def format_report(report: dict) -> str:
    """The worst entry of a ``check_gradients`` report, and every label over ``TOLERANCE``."""
    if report["worst"] is None:
        return "no entries checked"
    name, index, a, n, e = report["worst"]
    over = [label for label, err in report["errors"].items() if not err < TOLERANCE]
    return (f"worst: {name}{list(index)} analytic {a:.6e} numeric {n:.6e} rel error {e:.2e}"
            + (f"; over {TOLERANCE:.0e}: {', '.join(over)}" if over else ""))


def assert_gradients(what: str, errors: dict, tolerance: float = TOLERANCE) -> None:
    """Fail naming every gradient whose relative error is not below ``tolerance``, and the right ones."""
    wrong = {k: e for k, e in errors.items() if not e < tolerance}
    right = [k for k in errors if k not in wrong]
    assert not wrong, (f"{what}: wrong gradient of "
                       + ", ".join(f"{k} (relative error {e:.1e})" for k, e in wrong.items())
                       + f"; right: {', '.join(right) or 'none'}")
