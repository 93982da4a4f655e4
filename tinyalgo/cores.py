"""Controller cores: one time step forward and backward (paper section 2;
docs/original-release.md#cores).

Each core is a pair ``*_step_forward -> (outputs, cache)`` and
``*_step_backward(upstream gradients, cache) -> (input gradients, parameter
gradients)``, in the style of CS231n's ``rnn_layers.py``.  Parameters are
dicts of named arrays; x (B, D) is the step's input, h (B, H) the state.

GRU, in the original release's convention (every matrix with its own bias)::

    z  = sigmoid(x W_xz + b_xz + h W_hz + b_hz)          update gate
    r  = sigmoid(x W_xr + b_xr + h W_hr + b_hr)          reset gate
    h~ = tanh(x W_xh + b_xh + (r * h) W_hh + b_hh)       reset applied BEFORE the matrix
    h' = z * h~ + (1 - z) * h

PyTorch's ``nn.GRU`` differs twice: it applies r after the recurrent matrix,
``r * (h W_hh + b_hh)``, and its h' = (1 - z) * h~ + z * h (the roles of z and
1 - z are swapped).  Stored fused: ``wx`` (D, 3H) = [W_xz | W_xr | W_xh],
``bx`` (3H,), ``wh`` (H, 2H) = [W_hz | W_hr], ``bh`` (2H,), ``whh`` (H, H),
``bhh`` (H,).

LSTM (no forget-gate bias trick)::

    [i, f, o, g] = x W_x + b_x + h W_h + b_h;   i, f, o = sigmoid(.), g = tanh(.)
    c' = f * c + i * g;   h' = o * tanh(c')

Stored fused: ``wx`` (D, 4H), ``bx`` (4H,), ``wh`` (H, 4H), ``bh`` (4H,).

Feed-forward: no core and no state; its only memory is the previous action
and the previous symbol in the observation (docs/original-release.md#observation).

``tinyalgo.fast.cores`` computes the same steps with fewer NumPy calls; the
training loops use it unless the controller is built with ``reference=True``.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tinyalgo.layers import sigmoid

CORES = ("ff", "gru", "lstm")
STATE_ARRAYS = {"ff": 0, "gru": 1, "lstm": 2}     # arrays of state per layer: (h,) or (h, c)


class GRUCache(NamedTuple):
    """What a GRU step keeps for its backward pass; every array (B, H)
    except ``x`` (B, D).  ``rh`` = r * h, ``cand`` = h~."""

    x: np.ndarray
    h: np.ndarray
    z: np.ndarray
    r: np.ndarray
    rh: np.ndarray
    cand: np.ndarray
    p: dict


class LSTMCache(NamedTuple):
    """What an LSTM step keeps for its backward pass; every array (B, H)
    except ``x`` (B, D).  ``tc`` = tanh(c')."""

    x: np.ndarray
    h: np.ndarray
    c: np.ndarray
    i: np.ndarray
    f: np.ndarray
    o: np.ndarray
    g: np.ndarray
    tc: np.ndarray
    p: dict


def gru_step_forward(x, h, p):
    """One GRU step.  x (B, D), h (B, H), p = {wx, bx, wh, bh, whh, bhh}
    -> (h' (B, H), GRUCache)."""
    H = h.shape[1]
    ax = x @ p["wx"] + p["bx"]                        # (B, 3H): the input's part of all three pre-activations
    ah = h @ p["wh"] + p["bh"]                        # (B, 2H): the state's part of z and r
    z = sigmoid(ax[:, :H] + ah[:, :H])
    r = sigmoid(ax[:, H:2 * H] + ah[:, H:])
    rh = r * h
    cand = np.tanh(ax[:, 2 * H:] + rh @ p["whh"] + p["bhh"])
    h_new = z * cand + (1.0 - z) * h
    return h_new, GRUCache(x, h, z, r, rh, cand, p)


def gru_step_backward(dh_new, cache: GRUCache):
    """dh' (B, H) -> (dx (B, D), dh (B, H), grads {wx, bx, wh, bh, whh, bhh})."""
    ### BEGIN SOLUTION
    x, h, z, r, rh, cand, p = cache
    H = h.shape[1]
    dcand = dh_new * z * (1.0 - cand * cand)          # through tanh: the candidate's pre-activation
    dz = dh_new * (cand - h) * z * (1.0 - z)          # through sigmoid: z's pre-activation
    drh = dcand @ p["whh"].T
    dr = drh * h * r * (1.0 - r)                      # r's pre-activation
    dax = np.concatenate([dz, dr, dcand], axis=1)     # (B, 3H): all three pre-activations
    dah = dax[:, :2 * H]                              # the part that h W_h + b_h reaches
    dx = dax @ p["wx"].T
    dh = dh_new * (1.0 - z) + drh * r + dah @ p["wh"].T
    grads = {"wx": x.T @ dax, "bx": dax.sum(0), "wh": h.T @ dah, "bh": dah.sum(0),
             "whh": rh.T @ dcand, "bhh": dcand.sum(0)}
    return dx, dh, grads
    ### END SOLUTION


def lstm_step_forward(x, h, c, p):
    """One LSTM step.  x (B, D), h, c (B, H), p = {wx, bx, wh, bh}
    -> (h' (B, H), c' (B, H), LSTMCache)."""
    H = h.shape[1]
    a = x @ p["wx"] + p["bx"] + h @ p["wh"] + p["bh"]      # (B, 4H)
    i, f, o = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 2 * H:3 * H])
    g = np.tanh(a[:, 3 * H:])
    c_new = f * c + i * g
    tc = np.tanh(c_new)
    return o * tc, c_new, LSTMCache(x, h, c, i, f, o, g, tc, p)


def lstm_step_backward(dh_new, dc_new, cache: LSTMCache):
    """(dh' (B, H), dc' (B, H)) -> (dx (B, D), dh (B, H), dc (B, H), grads {wx, bx, wh, bh})."""
    ### BEGIN SOLUTION
    x, h, c, i, f, o, g, tc, p = cache
    dc_total = dc_new + dh_new * o * (1.0 - tc * tc)       # c' reaches the loss directly and through h'
    da = np.concatenate([dc_total * g * i * (1.0 - i),     # (B, 4H): the pre-activations of i, f, o, g
                         dc_total * c * f * (1.0 - f),
                         dh_new * tc * o * (1.0 - o),
                         dc_total * i * (1.0 - g * g)], axis=1)
    db = da.sum(0)
    grads = {"wx": x.T @ da, "bx": db, "wh": h.T @ da, "bh": db.copy()}
    return da @ p["wx"].T, da @ p["wh"].T, dc_total * f, grads
    ### END SOLUTION


def core_param_shapes(core: str, D: int, H: int) -> dict:
    """Named parameter shapes of one core layer with D inputs and H units."""
    if core == "gru":
        return {"wx": (D, 3 * H), "bx": (3 * H,), "wh": (H, 2 * H), "bh": (2 * H,), "whh": (H, H), "bhh": (H,)}
    if core == "lstm":
        return {"wx": (D, 4 * H), "bx": (4 * H,), "wh": (H, 4 * H), "bh": (4 * H,)}
    if core == "ff":
        return {}
    raise ValueError(f"unknown core {core!r}; allowed: {', '.join(CORES)}")


def core_fan_in(name: str, D: int, H: int) -> int:
    """The fan-in of a core parameter (its Torch ``nn.Linear`` input size)."""
    return D if name in ("wx", "bx") else H
