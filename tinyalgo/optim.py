"""Plain SGD with global-norm clipping, applied outside the loss
(docs/original-release.md#optimiser; a clip inside the loss would corrupt a gradient check)."""
from __future__ import annotations

import numpy as np

ABSURD_NORM = 1e4        # the release aborts at this norm


class TrainingDiverged(RuntimeError):
    """The gradient norm is NaN, infinite or absurd: training stops here
    rather than silently corrupt the parameters."""


def global_norm(grads: dict) -> float:
    return float(np.sqrt(sum(float(np.vdot(g, g)) for g in grads.values())))


def clip_by_global_norm(grads: dict, max_norm: float = 5.0):
    """Rescale every gradient so that the global norm is at most ``max_norm``.
    Returns (clipped grads, norm before clipping); raises TrainingDiverged."""
    norm = global_norm(grads)
    if not np.isfinite(norm) or norm >= ABSURD_NORM:
        raise TrainingDiverged(f"gradient norm is {norm} (NaN, infinite or >= {ABSURD_NORM:g}): training diverged;"
                               " try a smaller learning rate or float64")
    if norm <= max_norm:
        return grads, norm
    scale = max_norm / norm
    return {k: g * scale for k, g in grads.items()}, norm


def scale_gradients(grads: dict, batch: int, steps: int) -> dict:
    """Divide the summed gradients by batch * steps / 10 (the release's
    scaling: the objective is 10 x the mean per lane-step)."""
    factor = 10.0 / (batch * steps)
    return {k: g * factor for k, g in grads.items()}


def sgd_step(params: dict, grads: dict, lr: float = 0.1, max_norm: float = 5.0) -> float:
    """Clip, then params -= lr * grads in place.  Returns the norm before clipping."""
    clipped, norm = clip_by_global_norm(grads, max_norm)
    for k, g in clipped.items():
        params[k] -= (lr * g).astype(params[k].dtype, copy=False)
    return norm
