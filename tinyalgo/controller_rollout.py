"""A rollout of the controller (paper section 6, docs/original-release.md#bptt):
T steps of ``Controller.step`` for all lanes with the parameters fixed, as
training unrolls them before one SGD step and as evaluation runs them, then
backpropagation through time (``tinyalgo.bptt``) over the steps' caches.

While the parameters are fixed, what a step would compute from them alone
is computed once (``Composed``):

* the embedding and the first matrix W after it (core0's ``wx``, or the
  extra layer's for FF) are two linear maps with nothing between them:
  onehot(obs) @ embed.w @ W + embed.b @ W + b is onehot(obs) @ M + m with
  M = embed.w @ W, so a step looks its first pre-activation up
  (``layers.field_tables``) instead of embedding the observation and
  multiplying it by W;
* the two heads read the same t, so t @ [q.w | sym.w] gives the Q values
  and the symbol scores in one product;
* each core layer's recurrent weights, gate by gate, as contiguous blocks
  (``cores.gate_columns``, where it says why).

A rollout's steps return the symbol head's raw scores: their argmax is
the symbol written and their softmax the probabilities, so a step does not
take the log-softmax; backpropagation takes it for all T steps at once
(``stack_caches``).  Inference (``Rollout.infer``: evaluation, acting, the
bootstrap) keeps no cache.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tinyalgo import bptt
from tinyalgo.cores import gate_columns
from tinyalgo.cores import stack_caches as stack_core_caches
from tinyalgo.layers import AffineCache, FieldTables, OnehotCache, field_tables, log_softmax_forward


class Composed(NamedTuple):
    """What a rollout computes once from its fixed parameters (see the module's docstring)."""

    first: FieldTables      # onehot(obs) @ M + m looked up: M = embed.w @ W (sum of the field sizes, k H)
    heads_w: np.ndarray     # (H, A + V): [q.w | sym.w]
    heads_b: np.ndarray     # (A + V,): [q.b | sym.b]
    gates: list             # per core layer, its recurrent weights gate by gate (``cores.gate_columns``)


def composed(controller) -> Composed:
    """The ``Composed`` products of ``controller``'s current parameters."""
    P, (w, b) = controller.params, controller.first_matrix()
    return Composed(first=field_tables(P["embed.w"] @ P[w], P["embed.b"] @ P[w] + P[b], controller.config.obs_sizes),
                    heads_w=np.concatenate([P["q.w"], P["sym.w"]], axis=1),
                    heads_b=np.concatenate([P["q.b"], P["sym.b"]]),
                    gates=[gate_columns(p["wh"], controller.config.units) for p in controller.layers()])


def stack_caches(caches):
    """The row-wise parts of T step caches (``StepCache``) of B lanes as one
    cache of T B rows (the embedding, the "extra" layer, tanh and the
    heads), the step order kept: what ``Controller.heads_backward`` and
    ``first_layer_backward`` take to do all T steps in one call, and per core
    layer its T caches stacked (``cores.stack_caches``) for
    ``cores_weights_backward``.  ``keep`` is None.  The log-softmax, whose
    cache the symbol head's backward pass reads, is taken here for all T
    steps at once from their scores: a rollout's steps do not take it
    (``Rollout.step``)."""
    c0 = caches[0]
    rows = OnehotCache(np.concatenate([c.embed.rows for c in caches]), c0.embed.shape)
    t = np.concatenate([c.tanh for c in caches])
    extra_x = None if c0.extra.x is None else np.concatenate([c.extra.x for c in caches])
    core_rows = [stack_core_caches([c.cores[l] for c in caches]) for l in range(len(c0.cores))]
    scores = np.concatenate([c.scores for c in caches])
    return c0._replace(keep=None, embed=rows, cores=core_rows, extra=AffineCache(extra_x, c0.extra.w), tanh=t,
                       q=AffineCache(t, c0.q.w), sym=AffineCache(t, c0.sym.w),
                       log_softmax=log_softmax_forward(scores)[1], scores=scores)


class Rollout:
    """T steps of ``Controller.step`` with the parameters fixed: the
    ``Composed`` products made once, the steps' caches in a list, and
    ``tinyalgo.bptt.backward`` over them.  Make a new one after the
    parameters change.  A state this rollout returned is not checked again
    when it comes back (``Controller.check_state`` runs on any other)."""

    def __init__(self, controller):
        self.controller, self.caches, self.composed = controller, [], composed(controller)
        self.initial_state = controller.initial_state
        self._returned = None                  # the state the last step returned

    def step(self, obs, state, reset=None):
        """``Controller.step`` keeping its cache, up to the symbol scores:
        (q (B, A), scores (B, V), new state).  Their argmax is the symbol
        written and their softmax the probabilities; the log-softmax that
        backpropagation needs is taken for all steps at once
        (``stack_caches``)."""
        q, scores, state, cache = self.controller.forward(obs, state, reset, composed=self.composed,
                                                          state_checked=state is self._returned)
        self.caches.append(cache)
        self._returned = state
        return q, scores, state

    def infer(self, obs, state, reset=None):
        """``Controller.infer``: (q (B, A), symbol scores (B, V), new state), no cache."""
        q, scores, state = self.controller.infer(obs, state, reset, composed=self.composed,
                                                 state_checked=state is self._returned)
        self._returned = state
        return q, scores, state

    def backward(self, dq, dlogp, dstate_final=None):
        """``tinyalgo.bptt.backward`` over the steps' caches: (grads, gradient on the initial state)."""
        return bptt.backward(self.controller, self.caches, dq, dlogp, dstate_final)


def rollout_forward(controller, obs, resets, state0):
    """Run T steps: obs (T, B, F), resets (T, B) -> (q (T,B,A), logp (T,B,V), caches, final state)."""
    qs, logps, caches, state = [], [], [], state0
    for t in range(len(obs)):
        q, logp, state, cache = controller.step(obs[t], state, resets[t])
        qs.append(q)
        logps.append(logp)
        caches.append(cache)
    return np.stack(qs), np.stack(logps), caches, state
