"""Backpropagation through time (docs/original-release.md#bptt): the gradients of a
rollout's losses with respect to the controller's parameters and its
initial state, from the list of the rollout's step caches.

Only the core layers carry a step's state to the next, so the backward
pass is one sweep over the states and, around it, products over all the
steps at once, in the parts of ``Controller.step_backward``:

1. the heads, tanh and the "extra" layer (``heads_backward``,
   ``extra_backward``) for all T
   steps at once, on the caches stacked into one of T B rows
   (``Controller.stack_caches``): each weight gradient is then one product
   dW = X^T dZ of the T steps' inputs and output gradients, the sum of the
   T per-step products;
2. the sweep over the states, from the last step to the first: at each
   step the gradient from above and the gradient on the state the step
   returned (``dstate``, from the steps after it) go through the core
   layers to their pre-activations (``cores_state_backward``).  At a lane
   that started a new episode at step t the state entering step t was
   zeroed in the forward pass, so no gradient flows from it into the
   previous episode: the *episode barrier* cuts ``dstate`` there;
3. the core layers' weight gradients, dW = X^T dZ over all steps
   (``cores_weights_backward``), and those of the embedding and the first
   layer's input weights, which compose into one linear map
   (``first_layer_backward``).
"""
from __future__ import annotations

import numpy as np


def backward(controller, caches, dq, dlogp, dstate_final=None):
    """caches: the T ``StepCache`` of ``controller.step``; dq (T, B, A) and
    dlogp (T, B, V): the gradients on the outputs of every step;
    dstate_final: the gradient on the state after the last step (default 0).
    Returns (grads: dict like ``controller.params``, dstate0: the gradient on
    the initial state, per layer (dh,) or (dh, dc))."""
    T = len(caches)
    dq, dlogp = np.asarray(dq, dtype=controller.dtype), np.asarray(dlogp, dtype=controller.dtype)
    B = caches[0].tanh.shape[0] if T else 0
    if T == 0 or dq.shape != (T, B, controller.config.n_actions) or \
            dlogp.shape != (T, B, controller.config.n_symbols):
        raise ValueError(f"dq and dlogp must have shapes (T, B, {controller.config.n_actions}) and"
                         f" (T, B, {controller.config.n_symbols}) for T = {T} caches of B lanes;"
                         f" got {dq.shape} and {dlogp.shape}")
    ### BEGIN SOLUTION
    rows = controller.stack_caches(caches)                   # all T steps as T B rows
    grads, da = controller.heads_backward(dq.reshape(T * B, -1), dlogp.reshape(T * B, -1), rows)
    dstate = dstate_final if dstate_final is not None else \
        [tuple(np.zeros_like(a) for a in s) for s in controller.initial_state(B)]
    if not rows.cores:                                       # FF: no state, the embedding is the extra layer's input
        grads.update(controller.first_layer_backward(da, rows))
        return {k: grads[k] for k in controller.params}, dstate
    extra_grads, dhidden = controller.extra_backward(da, rows)
    grads.update(extra_grads)
    dhidden = dhidden.reshape(T, B, -1)
    dpre = [np.empty((T, B) + c.p["wx"].shape[1:], dtype=dhidden.dtype) for c in caches[0].cores]
    wts = controller.transposed_weights()                    # made once, read at every step
    for t in range(T - 1, -1, -1):                           # the sweep over the states
        pre_t, dstate = controller.cores_state_backward(dhidden[t], dstate, caches[t], wts)
        for l, d in enumerate(pre_t):
            dpre[l][t] = d
        keep = caches[t].keep
        if keep is not None:                                 # the episode barrier
            dstate = [tuple(a * keep for a in s) for s in dstate]
    dpre = [d.reshape(T * B, -1) for d in dpre]
    grads.update(controller.cores_weights_backward(dpre, rows))
    grads.update(controller.first_layer_backward(dpre[0], rows))
    return {k: grads[k] for k in controller.params}, dstate
    ### END SOLUTION
