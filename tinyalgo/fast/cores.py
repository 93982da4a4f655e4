"""The controller's cores, faster: the same steps as ``tinyalgo.cores`` with
fewer NumPy calls and no temporaries where an output array can be reused.

* Forward: the input's part of the pre-activations may come precomputed
  (``ax``: a ``FrozenController`` gathers it from a table), the recurrent
  matrix may be multiplied gate by gate (``blocks``), and a GRU step may
  write its activations straight into a rollout's ``StepBuffers`` (``out``).
* Backward: the step-independent factors of the GRU's backward pass are
  computed for all steps at once (``gru_backward_factors``), leaving half the
  calls in each step (``gru_step_backward_factored``); the weights'
  transposes are made contiguous once per rollout (``transposed``).  The
  weight gradients are not formed per step: the fast BPTT sums them over
  all steps in one product (``tinyalgo.fast.bptt``).

Tested equal to ``tinyalgo.cores`` in float64 (tests/test_fast.py).
"""
from __future__ import annotations

import numpy as np

from tinyalgo.cores import GRUCache, LSTMCache
from tinyalgo.layers import sigmoid


def gate_columns(w, H: int) -> list:
    """Contiguous copies of the H-wide column blocks of a fused matrix w
    (D, k H), one per gate.  Made once per rollout (``FrozenController``)."""
    return [np.ascontiguousarray(w[:, j:j + H]) for j in range(0, w.shape[1], H)]


def matmul_by_gate(a, w, blocks=None, out=None):
    """a (B, D) @ w (D, k H) -> (B, k H), as one product per gate when the
    contiguous column ``blocks`` of w are given.

    For the controller's shapes (B = 20 rows, 200-wide gates) OpenBLAS runs
    gate-wide products at a higher rate than one fused product, so the
    per-gate products take less time in all."""
    if blocks is None:
        return np.matmul(a, w, out=out)
    H = blocks[0].shape[1]
    if out is None:
        out = np.empty((a.shape[0], H * len(blocks)), dtype=np.result_type(a, blocks[0]))
    for j, block in enumerate(blocks):
        np.matmul(a, block, out=out[:, j * H:(j + 1) * H])
    return out


def matmul_t_by_gate(d, wt, H: int):
    """d (B, k H) @ wt (k H, D) -> (B, D), summed over gates: the backward
    counterpart of ``matmul_by_gate``, with ``wt`` a contiguous transpose (its
    row blocks are then contiguous too) or any (k H, D) array."""
    out = d[:, :H] @ wt[:H]
    for j in range(H, d.shape[1], H):
        out += d[:, j:j + H] @ wt[j:j + H]
    return out


def gru_step_forward(x, h, p, ax=None, biases_in_ax=False, blocks=None, out=None):
    """``cores.gru_step_forward``, faster.  x (B, D), h (B, H), p = {wx, bx, wh, bh, whh, bhh}
    -> (h' (B, H), cache).  ``ax`` = x @ wx + bx if already known; with
    ``biases_in_ax`` it also holds [bh, bhh] (a FrozenController folds them in,
    they are constant terms of the same pre-activations).  ``blocks``:
    ``gate_columns(p["wh"], H)``, if the caller keeps them (faster).
    ``out``: arrays (zr (B, 2H), rh, cand, h' (B, H)) to write the step's
    activations into (``StepBuffers.gru_outputs``)."""
    H = h.shape[1]
    zr_out, rh_out, c_out, h_out = (None,) * 4 if out is None else out
    if ax is None:
        ax = x @ p["wx"] + p["bx"]
    zr = matmul_by_gate(h, p["wh"], blocks, out=zr_out)
    zr += ax[:, :2 * H]
    if not biases_in_ax:
        zr += p["bh"]
    sigmoid(zr, out=zr)
    z, r = zr[:, :H], zr[:, H:]
    rh = np.multiply(r, h, out=rh_out)
    c = np.matmul(rh, p["whh"], out=c_out)
    c += ax[:, 2 * H:]
    if not biases_in_ax:
        c += p["bhh"]
    np.tanh(c, out=c)
    h_new = np.subtract(c, h, out=h_out)
    h_new *= z
    h_new += h
    return h_new, GRUCache(x, h, z, r, rh, c, p)


def transposed(p, skip=()) -> dict:
    """Contiguous transposes of a core's weight matrices, {name: w.T}
    (except the names in ``skip``).

    The backward recursion multiplies by every weight's transpose once per
    step; a contiguous copy made once per BPTT makes those products faster
    than with the strided view ``w.T``."""
    return {k: np.ascontiguousarray(v.T) for k, v in p.items() if k.startswith("w") and k not in skip}


def gru_backward_factors(z, r, h, rh, c):
    """The step-independent factors of the GRU backward pass, for T steps at
    once, from the activations of T steps (each (T, B, H): the gates z, r,
    the state h entering each step, r * h and the candidate c): arrays
    (T, B, H) of
        za = z (1 - c^2)            so that dcand = dh' za
        zp = (c - h) z (1 - z)      so that dz_pre = dh' zp
        rp = (r h) (1 - r)          so that dr_pre = drh rp
        omz = 1 - z,  r.
    Computed in bulk, on (T B, H) arrays, they leave about half the NumPy
    calls in each step of ``gru_step_backward_factored``."""
    omz = 1.0 - z
    za = c * c
    np.subtract(1.0, za, out=za)
    za *= z
    zp = c - h
    zp *= z
    zp *= omz
    rp = 1.0 - r
    rp *= rh
    return za, zp, rp, omz, r


def gru_step_backward_factored(dh_new, factors, dax, wt, need_dx=True):
    """``cores.gru_step_backward`` to the inputs and the pre-activations, with the factors of one step (the t-th rows of
    ``gru_backward_factors``) and a kept ``transposed(p)``: the same dx, dh and
    pre-activation gradients (written into ``dax`` (B, 3H)), fewer calls."""
    za, zp, rp, omz, r = factors
    H = dh_new.shape[1]
    dcand = np.multiply(dh_new, za, out=dax[:, 2 * H:])
    drh = dcand @ wt["whh"]
    np.multiply(dh_new, zp, out=dax[:, :H])
    np.multiply(drh, rp, out=dax[:, H:2 * H])
    dx = matmul_t_by_gate(dax, wt["wx"], H) if need_dx else None
    dh = matmul_t_by_gate(dax[:, :2 * H], wt["wh"], H)       # dh = dzr W_h^T + dh' (1 - z) + drh r
    drh *= r
    dh += drh
    np.multiply(dh_new, omz, out=drh)
    dh += drh
    return dx, dh


def lstm_step_forward(x, h, c, p, ax=None, biases_in_ax=False, blocks=None):
    """``cores.lstm_step_forward``, faster.  x (B, D), h, c (B, H), p = {wx, bx, wh, bh}
    -> (h' (B, H), c' (B, H), cache).  ``ax`` = x @ wx + bx if already known;
    with ``biases_in_ax`` it also holds bh.  ``blocks``:
    ``gate_columns(p["wh"], H)``, if the caller keeps them (faster)."""
    H = h.shape[1]
    a = matmul_by_gate(h, p["wh"], blocks)
    a += x @ p["wx"] + p["bx"] if ax is None else ax
    if not biases_in_ax:
        a += p["bh"]
    ifo = sigmoid(a[:, :3 * H], out=a[:, :3 * H])
    i, f, o = ifo[:, :H], ifo[:, H:2 * H], ifo[:, 2 * H:]
    g = np.tanh(a[:, 3 * H:], out=a[:, 3 * H:])
    c_new = f * c + i * g
    tc = np.tanh(c_new)
    return o * tc, c_new, LSTMCache(x, h, c, i, f, o, g, tc, p)


def lstm_step_backward_pre(dh_new, dc_new, cache, da=None, need_dx=True, wt=None):
    """``cores.lstm_step_backward`` to the inputs and the pre-activations: returns dx (B, D)
    (None unless ``need_dx``), dh (B, H), dc (B, H), da (B, 4H) (written into
    ``da`` if given).  ``wt``: ``transposed(p)``, if the caller keeps one."""
    x, h, c, i, f, o, g, tc, p = cache
    if wt is None:
        wt = {k: v.T for k, v in p.items() if k.startswith("w")}
    H = h.shape[1]
    if da is None:
        da = np.empty((h.shape[0], 4 * H), dtype=h.dtype)
    dc_total = dc_new + dh_new * o * (1.0 - tc * tc)
    np.multiply(dc_total * g, i * (1.0 - i), out=da[:, :H])
    np.multiply(dc_total * c, f * (1.0 - f), out=da[:, H:2 * H])
    np.multiply(dh_new * tc, o * (1.0 - o), out=da[:, 2 * H:3 * H])
    np.multiply(dc_total * i, 1.0 - g * g, out=da[:, 3 * H:])
    return ((matmul_t_by_gate(da, wt["wx"], H) if need_dx else None), matmul_t_by_gate(da, wt["wh"], H),
            dc_total * f, da)
