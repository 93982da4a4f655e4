"""The controller's step, faster: ``Controller.step`` computed with

* a ``FrozenController`` (``fast.frozen``): the first pre-activation
  gathered from tables instead of ``onehot @ embed.w @ W``, both heads in
  one product, the recurrent matrix gate by gate;
* ``StepBuffers`` (``fast.buffers``): each step writes its activations into
  row t of (T, B, ...) arrays that the fast BPTT reads without stacking;
* the symbol head's raw scores returned instead of log-probabilities (the
  same argmax and softmax): the fast BPTT takes the log-softmax of all steps
  at once.

``FastRollout`` is what ``Controller.rollout`` returns on the fast path.
Tested equal to the reference path in float64 (tests/test_fast.py).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tinyalgo.fast import bptt as fast_bptt
from tinyalgo.fast import cores as fast_cores
from tinyalgo.fast.buffers import StepBuffers
from tinyalgo.fast.memory import keep_freed_memory
from tinyalgo.layers import log_softmax_forward, onehot_affine_forward


class FastStepCache(NamedTuple):
    """What one fast step keeps for ``fast.bptt.backward``."""

    obs: np.ndarray         # (B, F) the observation (the embedding's gradient is taken through it)
    keep: np.ndarray        # (B, 1) the episode barrier's multiplier, or None if no lane reset
    cores: list             # per layer: a cores.GRUCache or cores.LSTMCache
    hidden: np.ndarray      # (B, H) the last core layer's output; None for FF (recomputed)
    t: np.ndarray           # (B, H) tanh of the "extra" layer
    logp: np.ndarray        # (B, V) log-probabilities, or raw scores if ``logits``
    logits: bool
    rows: tuple             # (StepBuffers, row) if the step wrote into buffers, else None


def step(ctrl, obs, state, reset=None, fold=None, buffers=None, logits=False, keep_cache=True):
    """``Controller.step`` for all lanes, faster.  ``fold``: ``ctrl.frozen()``
    made after the last parameter change; ``buffers``: the rollout's
    ``StepBuffers``; ``logits``: return raw symbol scores.
    Returns (q (B, A), logp or scores (B, V), new state, FastStepCache or None)."""
    P, core = ctrl.params, ctrl.config.core
    row = None if buffers is None or not keep_cache else buffers.take_row()
    obs = ctrl.check_obs(obs)
    reset = None if reset is None else np.asarray(reset, dtype=bool)
    keep = None if reset is None or not reset.any() else (~reset)[:, None].astype(ctrl.dtype)
    if fold is None:
        x, _ = onehot_affine_forward(obs, ctrl.config._offsets, P["embed.w"], P["embed.b"])
        a0, W, b = None, None, None
    else:
        x, a0 = None, fold.first_preactivation(obs)
        W, b = fold.heads_w, fold.heads_b
    layer_caches, new_state = [], []
    for l, (p, s) in enumerate(zip(ctrl.layers(), state)):
        ax = a0 if l == 0 else None
        blocks = None if fold is None else fold.gate_blocks[l]
        rows_out = None
        if core == "gru" and row is not None:      # the state entering the step is cached in the buffer
            h_in, rows_out = buffers.h_in[l][row], buffers.gru_outputs(l, row)
            if keep is not None:
                np.multiply(s[0], keep, out=h_in)  # the episode barrier
            else:
                h_in[...] = s[0]
            s = (h_in,)
        elif keep is not None:
            s = tuple(a * keep for a in s)          # the episode barrier
        if core == "gru":
            h, cache = fast_cores.gru_step_forward(x, s[0], p, ax=ax, biases_in_ax=ax is not None, blocks=blocks,
                                                   out=rows_out)
            new_state.append((h,))
        else:
            h, c, cache = fast_cores.lstm_step_forward(x, s[0], s[1], p, ax=ax, biases_in_ax=ax is not None,
                                                       blocks=blocks)
            new_state.append((h, c))
        layer_caches.append(cache)
        x = h
    hidden = x             # None for FF with a fold: the backward pass recomputes it
    t_out = None if row is None else buffers.t[row]
    if hidden is None:
        t = np.tanh(a0, out=t_out)
    else:
        t = np.matmul(hidden, P["extra.w"], out=t_out)
        t += P["extra.b"]
        np.tanh(t, out=t)
    if W is None:
        q, scores = t @ P["q.w"] + P["q.b"], t @ P["sym.w"] + P["sym.b"]
    else:                       # both heads in one product
        out = t @ W
        out += b
        A = ctrl.config.n_actions
        q, scores = out[:, :A], out[:, A:]
    logp = scores if logits else log_softmax_forward(scores)[0]
    cache = FastStepCache(obs, keep, layer_caches, hidden, t, logp, logits,
                          None if row is None else (buffers, row)) if keep_cache else None
    return q, logp, new_state, cache


class FastRollout:
    """The fast path's rollout (see ``Controller.rollout``): a fold of the
    parameters, StepBuffers for T steps, raw symbol scores, the fast BPTT."""

    def __init__(self, ctrl, T: int, B: int):
        keep_freed_memory()                       # rollouts reuse the heap instead of page-faulting (once)
        cfg = ctrl.config
        self.controller, self.caches, self.fold = ctrl, [], ctrl.frozen()
        self.buffers = StepBuffers(T, B, cfg.units, len(ctrl.layers()), ctrl.dtype, gru=cfg.core == "gru")

    def step(self, obs, state, reset=None):
        q, scores, state, cache = step(self.controller, obs, state, reset, fold=self.fold, buffers=self.buffers,
                                       logits=True)
        self.caches.append(cache)
        return q, scores, state

    def infer(self, obs, state, reset=None):
        return self.fold.infer(obs, state, reset)

    def backward(self, dq, dlogp, dstate_final=None):
        return fast_bptt.backward(self.controller, self.caches, dq, dlogp, dstate_final)
