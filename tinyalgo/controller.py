"""The controller (paper section 2, Figure 1), one time step at a time:

    observation (B, F) -> one-hot -> affine (no nonlinearity) -> core layers
      -> affine ("extra", no nonlinearity) -> tanh = t (B, H)
      -> action head: affine -> Q values (B, n_actions), unbounded
      -> symbol head: affine -> log-softmax (B, n_symbols)

``step`` is the forward pass of one step for all B lanes, built from the
layer pairs of ``tinyalgo.layers`` and the core steps of ``tinyalgo.cores``;
it returns a ``StepCache`` with each layer's cache by name.
``step_backward`` is its backward pass, the same pairs in reverse order, in
parts: ``heads_backward`` (the two heads and tanh), ``extra_backward``,
``cores_state_backward`` (the core layers to their pre-activations and the
state the step entered with), ``cores_weights_backward`` (the core layers'
weights, dW = X^T dZ) and ``first_layer_backward`` (the embedding and the
first matrix after it, composed).
Backpropagation through time (``tinyalgo.bptt``) runs the same parts over
a rollout: ``cores_state_backward`` from the last step to the first, the
others once for all its steps, since they read only their own step.

Lanes that start a new episode at a step (``reset``) get a zero incoming
state, and no gradient flows back from them into the previous episode: the
*episode barrier*.

Training and evaluation go through ``rollout()`` (``tinyalgo.controller_rollout``):
T steps with the parameters fixed, which look the first pre-activation up,
take each gate's recurrent weights as a contiguous block, run both heads as
one product and leave the log-softmax to backpropagation (``forward`` is
``step`` up to the symbol scores).  ``infer`` is ``forward`` without a cache
(evaluation, acting, the bootstrap).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tinyalgo import bptt
from tinyalgo.controller_config import (CACHE_ARRAYS, PARAM_COPIES, ControllerConfig,  # noqa: F401 (imported from here)
                                        check_params, init_params, layout_mismatch, memory_bytes)
from tinyalgo import controller_rollout
from tinyalgo.controller_rollout import Composed, Rollout, rollout_forward, stack_caches  # noqa: F401
from tinyalgo.cores import (STATE_ARRAYS, gru_state_backward, gru_step_forward, gru_weights_backward,
                            lstm_state_backward, lstm_step_forward, lstm_weights_backward, transposed)
from tinyalgo.host.memory import check_memory
from tinyalgo.layers import (AffineCache, OnehotCache, affine_backward, affine_forward, field_tables_forward,
                             log_softmax_backward, log_softmax_forward, onehot_affine_backward,
                             onehot_affine_forward, tanh_backward, tanh_forward)

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}   # obs viewed as unsigned: negatives are huge


class StepCache(NamedTuple):
    """What one step of ``Controller.step`` keeps for its backward pass.
    ``stack_caches`` makes one of T steps' worth of rows from T of them (the
    row-wise parts; ``cores`` and ``keep`` stay per step)."""

    keep: np.ndarray        # (B, 1): 0 at lanes that started an episode at this step, else 1; None if none did
    embed: tuple            # onehot_affine_forward's cache (a layers.OnehotCache)
    cores: list             # per core layer: a cores.GRUCache or cores.LSTMCache
    extra: tuple            # affine_forward's cache of the "extra" layer (a layers.AffineCache)
    tanh: np.ndarray        # tanh_forward's cache
    q: tuple                # affine_forward's cache of the action head
    sym: tuple              # affine_forward's cache of the symbol head
    log_softmax: np.ndarray  # log_softmax_forward's cache; None if the step did not take it (``forward``)
    scores: np.ndarray = None   # (B, V) the symbol head's raw scores, the log-softmax's input


def episode_barrier(reset, dtype):
    """The multiplier (B, 1) that zeroes the state of lanes starting an
    episode (``reset`` bool (B,)), or None when no lane does."""
    if reset is None:
        return None
    reset = np.asarray(reset, dtype=bool)
    return (~reset)[:, None].astype(dtype) if reset.any() else None


class Controller:
    """A controller: its configuration and a dict of named parameter arrays."""

    def __init__(self, config: ControllerConfig, params: dict | None = None,
                 rng: np.random.Generator | int | None = None):
        if not isinstance(config, ControllerConfig):
            raise ValueError(f"config must be a ControllerConfig; got {type(config).__name__}")
        if not (rng is None or isinstance(rng, np.random.Generator)
                or isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0):
            raise ValueError(f"rng must be a seed (an integer >= 0) or a numpy Generator; got {rng!r}")
        if params is not None:
            check_params(config, params)
        else:
            check_memory([(memory_bytes(config.units, config.layers, config.core,
                                        itemsize=np.dtype(config.dtype).itemsize),
                           f"units {config.units}", f"the parameters of {config.layers} {config.core} layer(s)")])
        self.config = config
        self.task = None              # (task name, base) it was trained on, where known (make_controller, checkpoints)
        if params is None:
            params = init_params(config, np.random.default_rng(rng))      # a Generator is used as it is
        self.params = params
        self._layer_params = [{k.split(".", 1)[1]: v for k, v in params.items() if k.startswith(f"core{l}.")}
                              for l in range(config.layers if config.core != "ff" else 0)]
        self._layer_keys = [[(k, f"core{l}.{k}") for k in p] for l, p in enumerate(self._layer_params)]

    @property
    def dtype(self):
        return self.params["q.w"].dtype

    def check_environment(self, env) -> None:
        """A ValueError unless this controller can act in ``env``: the same
        observation fields, actions and symbols, and, where known, the task
        and base it was trained on."""
        mismatch = layout_mismatch(self.config, env)
        if mismatch:
            name, have, need = mismatch
            raise ValueError(f"the controller has {name} {have}; {env.task.name} in base {env.task.base} needs {need}")
        if self.task is not None and self.task != (env.task.name, env.task.base):
            raise ValueError(f"the controller was trained on {self.task[0]} in base {self.task[1]}; the environment"
                             f" is {env.task.name} in base {env.task.base}")

    def initial_state(self, batch: int) -> list:
        """Zero state: per layer (h,) for GRU, (h, c) for LSTM; [] for FF."""
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ValueError(f"batch must be a positive integer; got {batch!r}")
        n = STATE_ARRAYS[self.config.core]
        return [tuple(np.zeros((batch, self.config.units), dtype=self.dtype) for _ in range(n))
                for _ in self._layer_params]

    def check_obs(self, obs) -> np.ndarray:
        """``obs`` as an integer array (B, F) within the field sizes, or a ValueError."""
        obs = np.asarray(obs)
        F = len(self.config.obs_sizes)
        if obs.ndim != 2 or obs.shape[1] != F or obs.dtype.kind not in "iu":
            raise ValueError(f"obs must be an integer array of shape (B, {F}); got shape {obs.shape} of {obs.dtype}")
        unsigned = obs.view(_UNSIGNED[obs.dtype.itemsize]) if obs.flags.c_contiguous else obs.astype(np.uint64)
        if (unsigned >= self.config._sizes).any():                                # negatives wrap around
            raise ValueError(f"obs values must be below the field sizes {self.config.obs_sizes}; got max per field"
                             f" {obs.max(axis=0).tolist()} and min {obs.min()}")
        return obs

    def check_state(self, state, batch: int) -> None:
        """A ValueError unless ``state`` is a state of this controller for
        ``batch`` lanes (what ``initial_state(batch)`` returns)."""
        n, core, H = STATE_ARRAYS[self.config.core], self.config.core, self.config.units
        layers = len(self._layer_params)
        shape = "[]" if not layers else f"a list of {layers} tuple(s) of {n} array(s) ({batch}, {H})"
        if not isinstance(state, (list, tuple)) or len(state) != layers:
            got = f"a list of {len(state)}" if isinstance(state, (list, tuple)) else type(state).__name__
            raise ValueError(f"state of a {core.upper()} controller with {layers} layer(s) must be {shape}"
                             f" (initial_state({batch})); got {got}")
        for layer, arrays in enumerate(state):
            if not isinstance(arrays, (list, tuple)) or len(arrays) != n:
                raise ValueError(f"state of layer {layer} must be a tuple of {n} array(s) for a {core.upper()} core"
                                 f" ({'h' if n == 1 else 'h, c'}); got {type(arrays).__name__}"
                                 f"{' of ' + str(len(arrays)) if isinstance(arrays, (list, tuple)) else ''}")
            for a in arrays:
                if not isinstance(a, np.ndarray) or a.shape != (batch, H) or a.dtype != self.dtype:
                    got = f"shape {a.shape} of {a.dtype}" if isinstance(a, np.ndarray) else type(a).__name__
                    raise ValueError(f"state of layer {layer} must hold {self.dtype} arrays of shape ({batch}, {H})"
                                     f" (lanes, units), the controller's dtype; got {got}")

    def layers(self) -> list:
        """Per core layer, its parameters by short name ({wx, bx, wh, ...}), views of ``params``."""
        P = self.params
        for p, keys in zip(self._layer_params, self._layer_keys):    # refresh the views if params were replaced
            for k, name in keys:
                p[k] = P[name]
        return self._layer_params

    # ------------------------------------------------------------ forward
    def first_matrix(self) -> tuple:
        """The names of the first weight matrix after the embedding and of its
        bias: core0's input weights, or the extra layer's for FF."""
        return ("core0.wx", "core0.bx") if self._layer_params else ("extra.w", "extra.b")

    def composed(self) -> Composed:
        """The ``Composed`` products of the current parameters (``controller_rollout.composed``)."""
        return controller_rollout.composed(self)

    def forward(self, obs, state, reset=None, composed: Composed | None = None, keep_cache: bool = True,
                state_checked: bool = False):
        """``step`` up to the symbol head's raw scores (the log-softmax's
        input): (q (B, A), scores (B, V), new state, the StepCache without its
        log-softmax, or None without ``keep_cache``).  ``composed``: see
        ``step``; ``state_checked``: ``state`` is one a step returned (not
        checked again)."""
        P, obs = self.params, self.check_obs(obs)
        if not state_checked:
            self.check_state(state, len(obs))
        if reset is not None and np.shape(reset) != (len(obs),):
            raise ValueError(f"reset must be None or a bool array of shape ({len(obs)},), one flag per lane;"
                             f" got shape {np.shape(reset)}")
        keep = episode_barrier(reset, self.dtype)
        offsets = self.config._offsets
        if composed is None:
            (x, embed), ax = onehot_affine_forward(obs, offsets, P["embed.w"], P["embed.b"]), None
        else:                                   # the first matrix's pre-activation, looked up: no embedding
            x, ax = None, field_tables_forward(obs, composed.first)
            embed = OnehotCache(obs + offsets, P["embed.w"].shape) if keep_cache else None
        new_state, core_caches = [], []
        for l, (p, s) in enumerate(zip(self.layers(), state)):
            if keep is not None:
                s = tuple(a * keep for a in s)              # the episode barrier: a new episode starts from zero
            gates = None if composed is None else composed.gates[l]
            if self.config.core == "gru":
                h, cache = gru_step_forward(x, s[0], p, ax=ax, gates=gates)
                new_state.append((h,))
            else:
                h, c, cache = lstm_step_forward(x, s[0], s[1], p, ax=ax, gates=gates)
                new_state.append((h, c))
            core_caches.append(cache)
            x, ax = h, None
        if ax is None:
            a, extra = affine_forward(x, P["extra.w"], P["extra.b"])
        else:                                               # FF: the looked-up first layer is the extra layer
            a, extra = ax, AffineCache(None, P["extra.w"])
        t, tanh_cache = tanh_forward(a)
        if composed is None:
            q, q_cache = affine_forward(t, P["q.w"], P["q.b"])
            scores, sym = affine_forward(t, P["sym.w"], P["sym.b"])
        else:                                               # both heads in one product
            heads, _ = affine_forward(t, composed.heads_w, composed.heads_b)
            A = self.config.n_actions
            q, scores = heads[:, :A], heads[:, A:]
            q_cache, sym = AffineCache(t, P["q.w"]), AffineCache(t, P["sym.w"])
        if not keep_cache:
            return q, scores, new_state, None
        return q, scores, new_state, StepCache(keep, embed, core_caches, extra, tanh_cache, q_cache, sym, None, scores)

    def step(self, obs, state, reset=None, composed: Composed | None = None, state_checked: bool = False):
        """One step for all lanes.  obs int (B, F); state from
        ``initial_state`` or the previous step; reset bool (B,): lanes that
        start an episode now.  ``composed``: ``composed()`` of the current
        parameters, to look the first pre-activation up, to take each gate's
        recurrent weights as a contiguous block and to run both heads in one
        product (else the observation is embedded and multiplied by the first
        matrix, the gates' weights are views of the fused matrices, and each
        head is its own product).  ``state_checked``: see ``forward``.
        Returns (q (B, A), logp (B, V), new state, StepCache)."""
        q, scores, new_state, cache = self.forward(obs, state, reset, composed, state_checked=state_checked)
        logp, log_softmax = log_softmax_forward(scores)
        return q, logp, new_state, cache._replace(log_softmax=log_softmax)

    def infer(self, obs, state, reset=None, composed: Composed | None = None, state_checked: bool = False):
        """``step`` without a cache and without the log-softmax: (q (B, A),
        the symbol scores (B, V), new state).  The scores' argmax is the most
        probable symbol and their softmax its probabilities."""
        q, scores, state, _ = self.forward(obs, state, reset, composed, keep_cache=False,
                                           state_checked=state_checked)
        return q, scores, state

    # ----------------------------------------------------------- backward
    stack_caches = staticmethod(stack_caches)       # T steps' caches as T B rows (``controller_rollout``)

    def heads_backward(self, dq, dlogp, cache: StepCache):
        """The backward pass of the two heads and tanh.  dq (N, A), dlogp
        (N, V) for the N rows of ``cache`` (one step's B lanes, or T steps
        stacked by ``stack_caches``).  Returns (grads of q and sym, the
        gradient on the extra layer's pre-activation (N, H))."""
        ### BEGIN SOLUTION
        A = dq.shape[1]
        dscores = log_softmax_backward(dlogp, cache.log_softmax)
        heads = AffineCache(cache.q.x, np.concatenate([cache.q.w, cache.sym.w], axis=1))   # both read t: one layer
        dt, dw, db = affine_backward(np.concatenate([dq, dscores], axis=1), heads)
        grads = {"q.w": dw[:, :A], "q.b": db[:A], "sym.w": dw[:, A:], "sym.b": db[A:]}
        return grads, tanh_backward(dt, cache.tanh)
        ### END SOLUTION

    def extra_backward(self, da, cache: StepCache):
        """The backward pass of the extra layer above the cores: da (N, H),
        the gradient on its pre-activation -> (grads of extra, the gradient
        on the last core layer's output (N, H))."""
        ### BEGIN SOLUTION
        grads = {}
        dx, grads["extra.w"], grads["extra.b"] = affine_backward(da, cache.extra)
        return grads, dx
        ### END SOLUTION

    def transposed_weights(self) -> list:
        """Per core layer, contiguous transposes of its weights (``cores.transposed``;
        not the first layer's input weights, whose product is the embedding's),
        made once by backpropagation through time for all its steps."""
        return [transposed(p, inputs=l > 0) for l, p in enumerate(self.layers())]

    def cores_state_backward(self, dhidden, dstate, cache: StepCache, wts=None):
        """The backward pass of one step's core layers, the last layer first,
        to their pre-activations and the state the step used.  dhidden (B, H):
        the gradient on the last layer's output from above; dstate: the
        gradient on the state the step returned (per layer (dh,) or (dh, dc)).
        Returns (per layer the gradient on its pre-activations (B, k H), the
        gradient on the state the step used: after the barrier, so
        ``tinyalgo.bptt`` cuts it at the lanes that reset).  ``wts``:
        ``transposed_weights()``, if the caller keeps them."""
        ### BEGIN SOLUTION
        dpre, dx, dstate_in = [None] * len(cache.cores), dhidden, list(dstate)
        wts = wts if wts is not None else [None] * len(cache.cores)
        for l in range(len(cache.cores) - 1, -1, -1):
            if self.config.core == "gru":
                dpre[l], dh = gru_state_backward(dx + dstate[l][0], cache.cores[l], wt=wts[l])
                dstate_in[l] = (dh,)
            else:
                dpre[l], dh, dc = lstm_state_backward(dx + dstate[l][0], dstate[l][1], cache.cores[l], wt=wts[l])
                dstate_in[l] = (dh, dc)
            if l > 0:                                        # to the layer below, at the same step
                dx = dpre[l] @ (cache.cores[l].p["wx"].T if wts[l] is None else wts[l]["wx"])
        return dpre, dstate_in
        ### END SOLUTION

    def cores_weights_backward(self, dpre, cache: StepCache) -> dict:
        """The core layers' parameter gradients from ``dpre``, the gradients
        on their pre-activations (per layer (N, k H)) for the N rows of
        ``cache``; the first layer's input weights with the embedding, in
        ``first_layer_backward``."""
        ### BEGIN SOLUTION
        grads = {}
        weights_backward = gru_weights_backward if self.config.core == "gru" else lstm_weights_backward
        for l in range(len(cache.cores)):
            _, g = weights_backward(dpre[l], cache.cores[l], inputs=l > 0)
            grads.update({f"core{l}.{k}": v for k, v in g.items()})
        return grads
        ### END SOLUTION

    def first_layer_backward(self, dpre0, cache: StepCache) -> dict:
        """The gradients of the embedding and of the first matrix after it
        (``first_matrix``: core0's input weights, or the extra layer's for FF)
        from ``dpre0`` (N, k H), the gradient on that matrix's pre-activations
        for the N rows of ``cache``.  The two maps compose (``Composed``):
        A = onehot M + m with M = E W, m = e W + b, so onehot_affine_backward
        gives dM and dm, and the product rule dE = dM W^T, de = dm W^T,
        dW = E^T dM + e^T dm, db = dm."""
        ### BEGIN SOLUTION
        P, (w, b) = self.params, self.first_matrix()
        E, e, W = P["embed.w"], P["embed.b"], P[w]
        dM, dm = onehot_affine_backward(dpre0, cache.embed)
        return {"embed.w": dM @ W.T, "embed.b": W @ dm, w: E.T @ dM + np.outer(e, dm), b: dm}
        ### END SOLUTION

    def step_backward(self, dq, dlogp, dstate, cache: StepCache):
        """The backward pass of one ``step``.  dq (B, A), dlogp (B, V): the
        gradients on its outputs; dstate: the gradient on the state it
        returned (per layer (dh,) or (dh, dc)).  Returns (grads: dict like
        ``params``, the gradient on the state the step used: after the
        barrier, so ``tinyalgo.bptt`` cuts it at the lanes that reset)."""
        ### BEGIN SOLUTION
        grads, da = self.heads_backward(dq, dlogp, cache)
        if not cache.cores:                                  # FF: the extra layer reads the embedding
            grads.update(self.first_layer_backward(da, cache))
            return grads, list(dstate)
        extra_grads, dx = self.extra_backward(da, cache)
        grads.update(extra_grads)
        dpre, dstate_in = self.cores_state_backward(dx, dstate, cache)
        grads.update(self.cores_weights_backward(dpre, cache))
        grads.update(self.first_layer_backward(dpre[0], cache))
        return grads, dstate_in
        ### END SOLUTION

    def backward(self, caches, dq, dlogp, dstate_final=None):
        """Backpropagation through time over the ``StepCache`` list of T
        ``step`` calls (``tinyalgo.bptt.backward``): dq (T, B, A), dlogp
        (T, B, V) -> (grads, gradient on the initial state)."""
        return bptt.backward(self, caches, dq, dlogp, dstate_final)

    def rollout(self) -> Rollout:
        """A rollout with the parameters fixed until it ends (training's
        unroll, or an evaluation; ``tinyalgo.controller_rollout``):
        ``.step(obs, state, reset) -> (q, symbol scores, state)`` keeps each
        step's cache, ``.infer(...) -> (q, scores, state)`` keeps none,
        ``.backward(dq, dlogp) -> (grads, dstate0)`` once at the end."""
        return Rollout(self)


def make_controller(env, cfg, seed: int) -> Controller:
    """A controller sized for ``env``'s observations, actions and vocabulary,
    as the run's configuration ``cfg`` says (controller, units, layers,
    dtype), its parameters drawn with ``seed``."""
    config = ControllerConfig.for_environment(env, cfg.controller, cfg.units, cfg.layers, cfg.dtype)
    controller = Controller(config, rng=np.random.default_rng(seed))
    controller.task = (env.task.name, env.task.base)
    return controller
