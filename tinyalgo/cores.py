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

The steps are written gate by gate, as the equations read: each gate's
pre-activation is the input's part (``x @ wx + bx``, all gates in one
product, ``ax``) plus its own recurrent product ``h @ W_h.``.  (On
OpenBLAS, for the controller's shapes, two (B, H) x (H, H) products also
run faster than one (B, H) x (H, 2H).)  A rollout passes what it computed
once from its fixed parameters: the first layer's ``ax``, looked up
(``layers.field_tables``), and each gate's recurrent weights as a
contiguous block (``gate_columns``).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tinyalgo.layers import sigmoid

CORES = ("ff", "gru", "lstm")
STATE_ARRAYS = {"ff": 0, "gru": 1, "lstm": 2}     # arrays of state per layer: (h,) or (h, c)


class GRUCache(NamedTuple):
    """What a GRU step keeps for its backward pass; every array (B, H)
    except ``x`` (B, D), None if the step was given ``ax`` without x.
    ``rh`` = r * h, ``cand`` = h~."""

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


def transposed(p, inputs: bool = True) -> dict:
    """Contiguous copies of the transposes of a core layer's weight matrices,
    {name: w.T} (without ``inputs``, not wx).  A backward pass multiplies by
    them at every step; BLAS runs those products faster with a contiguous
    w.T than with the strided view, so backpropagation through time makes
    them once (the parameters are fixed during a rollout)."""
    return {k: np.ascontiguousarray(v.T) for k, v in p.items() if k.startswith("w") and (inputs or k != "wx")}


def gate_columns(w, H: int) -> tuple:
    """The H-wide column blocks of a fused matrix w (D, k H), one per gate,
    as contiguous copies: (W_1, ..., W_k), each (D, H).

    Why: a step multiplies h by each gate's block; OpenBLAS runs that
    product faster with a contiguous (D, H) block than with the strided view
    ``w[:, j:j + H]`` (whose rows are k H apart).  A rollout, whose
    parameters are fixed, makes them once for all its steps; the steps then
    compute what they compute from the views."""
    return tuple(np.ascontiguousarray(w[:, j:j + H]) for j in range(0, w.shape[1], H))


def gru_step_forward(x, h, p, ax=None, gates=None):
    """One GRU step, gate by gate as the equations read.  x (B, D), h (B, H),
    p = {wx, bx, wh, bh, whh, bhh} -> (h' (B, H), GRUCache).  ``ax`` (B, 3H):
    x @ wx + bx, if already known; ``gates``: (W_hz, W_hr) =
    ``gate_columns(p["wh"], H)``, if the caller keeps them (else views of wh)."""
    H = h.shape[1]
    if ax is None:
        ax = x @ p["wx"] + p["bx"]                    # (B, 3H): the input's part of all three pre-activations
    w_hz, w_hr = gates if gates is not None else (p["wh"][:, :H], p["wh"][:, H:])
    bh = p["bh"]
    z = sigmoid(ax[:, :H] + h @ w_hz + bh[:H])                  # update gate
    r = sigmoid(ax[:, H:2 * H] + h @ w_hr + bh[H:])             # reset gate
    rh = r * h
    cand = np.tanh(ax[:, 2 * H:] + rh @ p["whh"] + p["bhh"])    # candidate h~
    h_new = h + z * (cand - h)                        # h' = z h~ + (1 - z) h
    return h_new, GRUCache(x, h, z, r, rh, cand, p)


def gru_step_backward(dh_new, cache: GRUCache):
    """dh' (B, H) -> (dx (B, D), dh (B, H), grads {wx, bx, wh, bh, whh, bhh}).

    In two parts: ``gru_state_backward`` to the pre-activations and the
    entering state, then ``gru_weights_backward`` to the input and the
    parameters (which backpropagation through time runs once for all steps)."""
    ### BEGIN SOLUTION
    dax, dh = gru_state_backward(dh_new, cache)
    dx, grads = gru_weights_backward(dax, cache)
    return dx, dh, grads
    ### END SOLUTION


def gru_state_backward(dh_new, cache: GRUCache, wt=None):
    """The backward pass of one GRU step to its pre-activations and the
    state it entered with, gate by gate.  dh' (B, H) -> (dax (B, 3H): the
    gradients on the pre-activations of z, r and the candidate, in wx's
    column order; dh (B, H)).  ``wt``: ``transposed(p)``, if the caller keeps
    one (else the views p[...].T)."""
    ### BEGIN SOLUTION
    h, z, r, rh, cand, p = cache.h, cache.z, cache.r, cache.rh, cache.cand, cache.p
    wt = wt if wt is not None else {k: v.T for k, v in p.items() if k.startswith("w")}
    H = h.shape[1]
    dhz = dh_new * z
    dcand = dhz * (1.0 - cand * cand)                 # through tanh: the candidate's pre-activation
    dz = dhz * (cand - h) * (1.0 - z)                 # through sigmoid: z's, dh' (h~ - h) z (1 - z)
    drh = dcand @ wt["whh"]
    dr = drh * rh * (1.0 - r)                         # r's: drh h r (1 - r)
    whz_t, whr_t = wt["wh"][:H], wt["wh"][H:]         # W_hz^T, W_hr^T
    dh = (dh_new - dhz) + drh * r + dz @ whz_t + dr @ whr_t     # h reaches h', r h and both gates
    return np.concatenate([dz, dr, dcand], axis=1), dh
    ### END SOLUTION


def gru_weights_backward(dax, cache: GRUCache, inputs: bool = True, wt=None):
    """The gradients on the input and the parameters, from the gradients on
    the pre-activations: each weight's is dW = X^T dZ, its input's rows times
    the gradient rows.  dax (N, 3H) -> (dx (N, D), grads {wx, bx, wh, bh, whh, bhh}).
    Row by row, so N may be one step's B lanes or T steps' T B stacked
    (``stack_caches``): the products then sum over the steps.  Without
    ``inputs``, dx is None and grads lack wx and bx (the controller's first
    layer takes them through the embedding, ``Controller.first_layer_backward``).
    ``wt``: as for ``gru_state_backward``."""
    ### BEGIN SOLUTION
    h, rh, p = cache.h, cache.rh, cache.p
    H = h.shape[1]
    dah, dcand = dax[:, :2 * H], dax[:, 2 * H:]       # the part that h W_h + b_h reaches; the candidate's
    grads = {"wh": h.T @ dah, "bh": dah.sum(0), "whh": rh.T @ dcand, "bhh": dcand.sum(0)}
    if not inputs:
        return None, grads
    grads.update(wx=cache.x.T @ dax, bx=dax.sum(0))
    return dax @ (p["wx"].T if wt is None else wt["wx"]), grads
    ### END SOLUTION


def lstm_step_forward(x, h, c, p, ax=None, gates=None):
    """One LSTM step, gate by gate.  x (B, D), h, c (B, H), p = {wx, bx, wh, bh}
    -> (h' (B, H), c' (B, H), LSTMCache).  ``ax`` (B, 4H): x @ wx + bx, if
    already known; ``gates``: (W_hi, W_hf, W_ho, W_hg) = ``gate_columns(p["wh"], H)``,
    if the caller keeps them (else views of wh)."""
    H = h.shape[1]
    if ax is None:
        ax = x @ p["wx"] + p["bx"]
    gi, gf, go, gg = (slice(k * H, (k + 1) * H) for k in range(4))    # the gates' columns
    w_hi, w_hf, w_ho, w_hg = gates if gates is not None else (p["wh"][:, g] for g in (gi, gf, go, gg))
    bh = p["bh"]
    i = sigmoid(ax[:, gi] + h @ w_hi + bh[gi])              # input gate
    f = sigmoid(ax[:, gf] + h @ w_hf + bh[gf])              # forget gate
    o = sigmoid(ax[:, go] + h @ w_ho + bh[go])              # output gate
    g = np.tanh(ax[:, gg] + h @ w_hg + bh[gg])              # candidate
    c_new = f * c + i * g
    tc = np.tanh(c_new)
    return o * tc, c_new, LSTMCache(x, h, c, i, f, o, g, tc, p)


def lstm_step_backward(dh_new, dc_new, cache: LSTMCache):
    """(dh' (B, H), dc' (B, H)) -> (dx (B, D), dh (B, H), dc (B, H), grads {wx, bx, wh, bh}).

    In two parts, as ``gru_step_backward``: ``lstm_state_backward`` then
    ``lstm_weights_backward``."""
    ### BEGIN SOLUTION
    da, dh, dc = lstm_state_backward(dh_new, dc_new, cache)
    dx, grads = lstm_weights_backward(da, cache)
    return dx, dh, dc, grads
    ### END SOLUTION


def lstm_state_backward(dh_new, dc_new, cache: LSTMCache, wt=None):
    """The backward pass of one LSTM step to its pre-activations and the
    state it entered with, gate by gate.  (dh' (B, H), dc' (B, H)) -> (da
    (B, 4H): the gradients on the pre-activations of i, f, o, g; dh (B, H);
    dc (B, H)).  ``wt``: as for ``gru_state_backward``."""
    ### BEGIN SOLUTION
    c, p = cache.c, cache.p
    i, f, o, g, tc = cache.i, cache.f, cache.o, cache.g, cache.tc
    wt = wt if wt is not None else {k: v.T for k, v in p.items() if k.startswith("w")}
    H = c.shape[1]
    dc_total = dc_new + dh_new * o * (1.0 - tc * tc)       # c' reaches the loss directly and through h'
    di = dc_total * g * i * (1.0 - i)                      # the pre-activations of i, f, o, g
    df = dc_total * c * f * (1.0 - f)
    do = dh_new * tc * o * (1.0 - o)
    dg = dc_total * i * (1.0 - g * g)
    wh_t = wt["wh"]                                        # (4H, H): row block k is gate k's W_h^T
    dh = di @ wh_t[:H] + df @ wh_t[H:2 * H] + do @ wh_t[2 * H:3 * H] + dg @ wh_t[3 * H:]
    return np.concatenate([di, df, do, dg], axis=1), dh, dc_total * f
    ### END SOLUTION


def lstm_weights_backward(da, cache: LSTMCache, inputs: bool = True, wt=None):
    """The gradients on the input and the parameters from the gradients on
    the pre-activations, dW = X^T dZ.  da (N, 4H) -> (dx (N, D), grads
    {wx, bx, wh, bh}); N rows of one step or of T steps stacked.  Without
    ``inputs``: as ``gru_weights_backward``."""
    ### BEGIN SOLUTION
    db = da.sum(0)
    grads = {"wh": cache.h.T @ da, "bh": db}
    if not inputs:
        return None, grads
    grads.update(wx=cache.x.T @ da, bx=db.copy())
    return da @ (cache.p["wx"].T if wt is None else wt["wx"]), grads
    ### END SOLUTION


# What ``*_weights_backward`` reads of a cache besides p: the inputs of the weight products.
WEIGHT_INPUTS = {GRUCache: ("x", "h", "rh"), LSTMCache: ("x", "h")}


def stack_caches(caches):
    """T caches of one core layer (GRUCache or LSTMCache, B rows each) as one
    cache of T B rows, the step order kept, for ``*_weights_backward``: the
    fields it reads (``WEIGHT_INPUTS``) stacked, the others None (as is an
    input x the steps did not keep)."""
    c0, keep = caches[0], WEIGHT_INPUTS[type(caches[0])]
    return type(c0)(**{name: c0.p if name == "p" else None if name not in keep or getattr(c0, name) is None else
                       np.concatenate([getattr(c, name) for c in caches]) for name in c0._fields})


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
