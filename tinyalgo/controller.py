"""The controller (paper section 4, Figure 1; REFERENCE 3.1):

    observation (B, F) -> one-hot -> affine (no nonlinearity) -> core layers
      -> affine ("extra", no nonlinearity) = h -> tanh(h)
      -> action head: affine -> Q values / logits (B, n_actions), unbounded
      -> symbol head: affine -> log-softmax (B, n_symbols)

``step`` runs one time step for all B lanes and keeps a cache; ``backward``
is backpropagation through time over the list of caches.  Lanes that start a
new episode at a step (``reset``) get a zero incoming state and pass no
gradient back into the previous episode: the release's EpisodeBarrier.
``infer`` is the same forward without caches (memory O(B x units)).
"""
from __future__ import annotations

import numpy as np

from tinyalgo import cores
from tinyalgo.buffers import StepBuffers
from tinyalgo.controller_config import ControllerConfig, init_params
from tinyalgo.frozen import FrozenController
from tinyalgo.layers import log_softmax_backward, log_softmax_forward, onehot_affine_forward


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
        """Arrays for the caches of a rollout of T steps of B lanes (``tinyalgo.buffers``)."""
        cfg = self.config
        return StepBuffers(T, B, cfg.units, len(self._layer_params), cfg.n_actions + cfg.n_symbols, self.dtype,
                           gru=cfg.core == "gru")

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
            if core == "gru" and row is not None:      # the state entering the step is cached in the buffer
                h_in = buffers.h_in[l][row]
                if keep is not None:
                    np.multiply(s[0], keep, out=h_in)  # the episode barrier
                else:
                    h_in[...] = s[0]
                h, cache = cores.gru_step_forward(x, h_in, p, ax=ax, biases_in_ax=ax is not None, blocks=blocks,
                                                  out=buffers.gru_outputs(l, row))
                new_state.append((h,))
                layer_caches.append(cache)
                x = h
                continue
            if keep is not None:
                s = tuple(a * keep for a in s)          # the episode barrier
            if core == "gru":
                h, cache = cores.gru_step_forward(x, s[0], p, ax=ax, biases_in_ax=ax is not None, blocks=blocks)
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
            out = np.matmul(t, W, out=None if row is None else buffers.heads[row])
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
        """A faster inference-only view of the current parameters (``tinyalgo.frozen``)."""
        return FrozenController(self)

    def backward(self, caches, dq, dlogp, dstate_final=None):
        """Backpropagation through time over T step caches.

        dq (T, B, n_actions): gradient on the action-head outputs; dlogp
        (T, B, n_symbols): gradient on the log-probabilities.  Returns
        (grads: dict like ``params``, dstate0: gradient on the initial state).
        """
        P, core, T = self.params, self.config.core, len(caches)
        dq, dlogp = np.asarray(dq, dtype=self.dtype), np.asarray(dlogp, dtype=self.dtype)
        B = caches[0][0].shape[0]
        if dq.shape != (T, B, self.config.n_actions) or dlogp.shape != (T, B, self.config.n_symbols):
            raise ValueError(f"dq and dlogp must have shapes {(T, B, self.config.n_actions)} and"
                             f" {(T, B, self.config.n_symbols)}; got {dq.shape} and {dlogp.shape}")
        H = self.config.units
        buffers = caches[0][7][0] if caches[0][7] is not None and caches[0][7][0].covers(caches) else None
        t_all = (buffers.t[:T] if buffers is not None else np.stack([c[4] for c in caches])).reshape(T * B, H)
        gru_rows = buffers is not None and core == "gru"    # the core's activations are in the buffers too
        rows = np.concatenate([c[0] for c in caches]) + self.config._offsets
        A = self.config.n_actions
        dheads = np.empty((T * B, A + self.config.n_symbols), dtype=self.dtype)   # both heads at once
        dheads[:, :A] = dq.reshape(T * B, A)
        logp = np.concatenate([c[5] for c in caches])
        as_logits = {c[6] for c in caches}
        if len(as_logits) > 1:
            raise ValueError("the step caches mix logits=True and logits=False; use one setting for a whole rollout")
        if as_logits.pop():
            logp = log_softmax_forward(logp)[0]                # the log-softmax of every step at once
        dheads[:, A:] = log_softmax_backward(dlogp.reshape(T * B, -1), logp)
        dw, db = t_all.T @ dheads, dheads.sum(0)
        grads = {"q.w": dw[:, :A], "q.b": db[:A], "sym.w": dw[:, A:], "sym.b": db[A:]}
        da = dheads @ np.concatenate([P["q.w"], P["sym.w"]], axis=1).T
        da *= 1.0 - t_all * t_all
        grads["extra.b"] = da.sum(0)
        layers = self._layers()
        L = len(layers)
        if L:
            hid_all = (buffers.h_out[-1][:T] if gru_rows else np.stack([c[3] for c in caches])).reshape(T * B, H)
            grads["extra.w"] = hid_all.T @ da
            dhidden = (da @ P["extra.w"].T).reshape(T, B, H)
        n_state = {"gru": 1, "lstm": 2, "ff": 0}[core]
        dstate = [tuple(np.zeros((B, H), self.dtype) for _ in range(n_state)) for _ in range(L)]
        if dstate_final is not None:
            dstate = [tuple(np.array(a, dtype=self.dtype) for a in s) for s in dstate_final]
        width = {"gru": 3, "lstm": 4, "ff": 0}[core] * H
        pre = [np.empty((T, B, width), dtype=self.dtype) for _ in range(L)]   # pre-activation grads
        wts = [cores.transposed(p, skip=() if l else ("wx",)) for l, p in enumerate(layers)]
        if core == "gru":       # per layer: the gates, entering state, r h and candidate of all T steps, (T, B, .)
            if gru_rows:
                acts = [(buffers.zr[l][:T], buffers.h_in[l][:T], buffers.rh[l][:T], buffers.cand[l][:T])
                        for l in range(L)]
            else:
                acts = [tuple(np.stack([c[2][l][i] for c in caches]) for i in (2, 1, 4, 5)) for l in range(L)]
                acts = [(np.concatenate([zs, np.stack([c[2][l][3] for c in caches])], axis=2), hs, rhs, cs)
                        for l, (zs, hs, rhs, cs) in enumerate(acts)]
            factors = [cores.gru_backward_factors(zr[..., :H], zr[..., H:], hs, rhs, cs) for zr, hs, rhs, cs in acts]
        for t in range(T - 1, -1, -1):
            keep, layer_caches = caches[t][1], caches[t][2]
            dx = dhidden[t] if L else None
            for l in range(L - 1, -1, -1):
                cache = layer_caches[l]
                if core == "gru":           # layer 0's input gradient is computed for all steps at once below
                    dx, dh = cores.gru_step_backward_factored(dx + dstate[l][0], [f[t] for f in factors[l]],
                                                              pre[l][t], wts[l], l > 0)
                    new = (dh,)
                else:
                    dx, dh, dc, _ = cores.lstm_step_backward_pre(dx + dstate[l][0], dstate[l][1], cache,
                                                                 pre[l][t], l > 0, wts[l])
                    new = (dh, dc)
                dstate[l] = new if keep is None else tuple(a * keep for a in new)   # no gradient across a reset
        for l in range(L):
            hs = acts[l][1].reshape(T * B, H) if core == "gru" else np.concatenate([c[2][l][1] for c in caches])
            dpre = pre[l].reshape(T * B, -1)
            db = dpre.sum(0)
            if l > 0:               # layer 0's "wx" is the first matrix after the embedding: below
                xs = buffers.h_out[l - 1][:T].reshape(T * B, H) if gru_rows else \
                    np.concatenate([c[2][l][0] for c in caches])
                grads[f"core{l}.wx"] = xs.T @ dpre
            if core == "gru":
                dah, dcand = dpre[:, :2 * H], dpre[:, 2 * H:]
                rhs = acts[l][2].reshape(T * B, H)
                g = {"bx": db, "wh": hs.T @ dah, "bh": db[:2 * H].copy(), "whh": rhs.T @ dcand, "bhh": db[2 * H:].copy()}
            else:
                g = {"bx": db, "wh": hs.T @ dpre, "bh": db.copy()}
            for k, v in g.items():
                grads[f"core{l}.{k}"] = v
        # The embedding and the first matrix W after it (core0.wx, or extra.w
        # for FF), from the gradient dA on W's pre-activation without ever
        # forming the embedded inputs: with X = onehot @ E + e and A = X @ W,
        # dW = E.T @ (onehot.T @ dA) + outer(e, sum dA) and dE = (onehot.T @ dA) @ W.T.
        first = "core0.wx" if L else "extra.w"
        dA = pre[0].reshape(T * B, -1) if L else da
        counts_t = np.zeros((P["embed.w"].shape[0], T * B), dtype=self.dtype)     # the one-hots, transposed
        counts_t[rows.T, np.arange(T * B)] = 1.0
        M0, s0 = counts_t @ dA, dA.sum(0)
        grads[first] = P["embed.w"].T @ M0 + np.outer(P["embed.b"], s0)
        grads["embed.w"], grads["embed.b"] = M0 @ P[first].T, s0 @ P[first].T
        return {k: grads[k] for k in P}, dstate        # already cut where step 0 reset


def rollout_forward(controller, obs, resets, state0):
    """Run T steps: obs (T, B, F), resets (T, B) -> (q (T,B,A), logp (T,B,V), caches, final state)."""
    qs, logps, caches, state = [], [], [], state0
    for t in range(len(obs)):
        q, logp, state, cache = controller.step(obs[t], state, resets[t])
        qs.append(q)
        logps.append(logp)
        caches.append(cache)
    return np.stack(qs), np.stack(logps), caches, state
