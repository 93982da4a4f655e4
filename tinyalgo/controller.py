"""The controller (paper section 4, Figure 1; REFERENCE 3.1):

    observation (B, F) -> one-hot -> affine (no nonlinearity) -> core layers
      -> affine ("extra", no nonlinearity) = h -> tanh(h)
      -> action head: affine -> Q values / logits (B, n_actions), unbounded
      -> symbol head: affine -> log-softmax (B, n_symbols)

``step`` runs one time step for all B lanes and keeps a cache; ``backward``
is backpropagation through time over the list of caches (``tinyalgo.bptt``).  Lanes that start a
new episode at a step (``reset``) get a zero incoming state and pass no
gradient back into the previous episode: the release's EpisodeBarrier.
``infer`` is the same forward without caches (memory O(B x units)).
"""
from __future__ import annotations

import numpy as np

from tinyalgo import bptt, cores
from tinyalgo.fast.buffers import StepBuffers
from tinyalgo.controller_config import ControllerConfig, init_params
from tinyalgo.fast.frozen import FrozenController
from tinyalgo.layers import log_softmax_forward, onehot_affine_forward


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}   # obs viewed as unsigned: negatives are huge

class Controller:
    """A controller: its configuration and a dict of named parameter arrays."""

    def __init__(self, config: ControllerConfig, params: dict = None, rng: np.random.Generator = None):
        self.config = config
        if params is None:
            params = init_params(config, rng if rng is not None else np.random.default_rng())
        self.params = params
        self._layer_params = [{k.split(".", 1)[1]: v for k, v in params.items() if k.startswith(f"core{l}.")}
                              for l in range(config.layers if config.core != "ff" else 0)]
        self._layer_keys = [[(k, f"core{l}.{k}") for k in p] for l, p in enumerate(self._layer_params)]
        self.threads = 1

    def set_threads(self, threads: int) -> "Controller":
        """1 (default): everything on the calling thread.  2: BPTT hands the
        weight-gradient products, which no later step waits for, to a helper
        thread while the calling thread runs the backward recursion (NumPy
        releases the GIL in BLAS), using a second core.  For one run on a
        multi-core machine (``tinyalgo train``); a sweep of one process per
        core keeps 1.  Same gradients up to float rounding (the sums over
        steps are split into chunks of ``bptt.CHUNK_STEPS``)."""
        self.threads = bptt.check_threads(threads)
        return self

    @property
    def dtype(self):
        return self.params["q.w"].dtype

    def initial_state(self, batch: int) -> list:
        """Zero state: per layer (h,) for GRU, (h, c) for LSTM; [] for FF."""
        n = {"gru": 1, "lstm": 2, "ff": 0}[self.config.core]
        return [tuple(np.zeros((batch, self.config.units), dtype=self.dtype) for _ in range(n))
                for _ in self._layer_params]

    def _check_obs(self, obs):
        obs = np.asarray(obs)
        F = len(self.config.obs_sizes)
        if obs.ndim != 2 or obs.shape[1] != F or obs.dtype.kind not in "iu":
            raise ValueError(f"obs must be an integer array of shape (B, {F}); got shape {obs.shape} of {obs.dtype}")
        unsigned = obs.view(_UNSIGNED[obs.dtype.itemsize]) if obs.flags.c_contiguous else obs.astype(np.uint64)
        if (unsigned >= self.config._sizes).any():                                # negatives wrap around
            raise ValueError(f"obs values must be below the field sizes {self.config.obs_sizes}; got max per field"
                             f" {obs.max(axis=0).tolist()} and min {obs.min()}")
        return obs

    def _layers(self):
        P = self.params
        for p, keys in zip(self._layer_params, self._layer_keys):    # refresh views if params were replaced
            for k, name in keys:
                p[k] = P[name]
        return self._layer_params

    def step_buffers(self, T: int, B: int) -> StepBuffers:
        """Arrays for the caches of a rollout of T steps of B lanes (``tinyalgo.fast.buffers``)."""
        cfg = self.config
        return StepBuffers(T, B, cfg.units, len(self._layer_params), self.dtype, gru=cfg.core == "gru")

    def step(self, obs, state, reset=None, keep_cache=True, fold=None, logits=False, buffers=None):
        """One step for all lanes.  obs int (B, F); state from
        ``initial_state`` or the previous step; reset bool (B,) lanes that
        start an episode now.  Returns (q (B, A), logp (B, V), new state, cache).

        ``fold``: ``self.frozen()`` made after the last parameter change; the
        step then gathers the first pre-activation from it instead of
        computing embedding @ W (same numbers up to rounding, faster).  The
        training loops make one per rollout.  ``logits``: return the symbol
        head's raw scores instead of log-probabilities (same argmax); the
        backward pass then takes the log-softmax of all steps at once.  The
        training loops use it: they need only the argmax at each step, and a
        log-softmax per step on 20 x V numbers is mostly call overhead.
        ``buffers``: ``self.step_buffers(T, B)``; the step writes its
        activations into their next row (the backward pass then reads them
        without stacking; the training loops use it)."""
        P, core = self.params, self.config.core
        row = None if buffers is None or not keep_cache else buffers.take_row()
        obs = self._check_obs(obs)
        reset = None if reset is None else np.asarray(reset, dtype=bool)
        keep = None if reset is None or not reset.any() else (~reset)[:, None].astype(self.dtype)   # None: no lane resets
        if fold is None:
            x, _ = onehot_affine_forward(obs, self.config._offsets, P["embed.w"], P["embed.b"])
            a0, W, b = None, None, None
        else:
            x, a0 = None, fold.first_preactivation(obs)
            W, b = fold.heads_w, fold.heads_b
        layer_caches, new_state = [], []
        for l, (p, s) in enumerate(zip(self._layers(), state)):
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
                h, cache = cores.gru_step_forward(x, s[0], p, ax=ax, biases_in_ax=ax is not None, blocks=blocks,
                                                  out=rows_out)
                new_state.append((h,))
            else:
                h, c, cache = cores.lstm_step_forward(x, s[0], s[1], p, ax=ax, biases_in_ax=ax is not None,
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
            A = self.config.n_actions
            q, scores = out[:, :A], out[:, A:]
        logp = scores if logits else log_softmax_forward(scores)[0]
        cache = (obs, keep, layer_caches, hidden, t, logp, logits,
                 None if row is None else (buffers, row)) if keep_cache else None
        return q, logp, new_state, cache

    def infer(self, obs, state, reset=None):
        """Inference mode: ``step`` without a cache.  Returns (q, logp, state)."""
        q, logp, state, _ = self.step(obs, state, reset, keep_cache=False)
        return q, logp, state

    def frozen(self) -> FrozenController:
        """A faster inference-only view of the current parameters (``tinyalgo.fast.frozen``)."""
        return FrozenController(self)

    def backward(self, caches, dq, dlogp, dstate_final=None):
        """Backpropagation through time over T step caches.

        dq (T, B, n_actions): gradient on the action-head outputs; dlogp
        (T, B, n_symbols): gradient on the log-probabilities.  Returns
        (grads: dict like ``params``, dstate0: gradient on the initial state).
        """
        return bptt.backward(self, caches, dq, dlogp, dstate_final)


def rollout_forward(controller, obs, resets, state0):
    """Run T steps: obs (T, B, F), resets (T, B) -> (q (T,B,A), logp (T,B,V), caches, final state)."""
    qs, logps, caches, state = [], [], [], state0
    for t in range(len(obs)):
        q, logp, state, cache = controller.step(obs[t], state, resets[t])
        qs.append(q)
        logps.append(logp)
        caches.append(cache)
    return np.stack(qs), np.stack(logps), caches, state


def make_controller(env, core: str, units: int, layers: int, seed: int, dtype: str) -> Controller:
    """A controller sized for ``env``'s observations, actions and vocabulary."""
    config = ControllerConfig(obs_sizes=env.obs_sizes, n_actions=env.n_actions, n_symbols=env.vocab.size,
                              core=core, units=units, layers=layers, dtype=dtype)
    return Controller(config, rng=np.random.default_rng(seed))
