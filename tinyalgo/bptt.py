"""Backpropagation through time (docs/original-release.md#bptt): the gradients of a
rollout's losses with respect to the controller's parameters and its
initial state, from the list of the rollout's step caches.

The loop runs from the last step to the first.  At each step the gradient
on the state the step returned (``dstate``, from the steps after it) and
the gradients on the step's outputs go through ``Controller.step_backward``;
the parameter gradients of all steps are summed.  At a lane that started a
new episode at step t the state entering step t was zeroed in the forward
pass, so no gradient flows from it into the previous episode: the *episode
barrier* cuts ``dstate`` there.

``tinyalgo.fast.bptt`` computes the same gradients with the steps' weight
gradients summed in one product each.
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
    grads = {k: np.zeros_like(v) for k, v in controller.params.items()}
    dstate = dstate_final if dstate_final is not None else \
        [tuple(np.zeros_like(a) for a in s) for s in controller.initial_state(B)]
    for t in range(T - 1, -1, -1):
        step_grads, dstate = controller.step_backward(dq[t], dlogp[t], dstate, caches[t])
        for k, g in step_grads.items():
            grads[k] += g
        keep = caches[t].keep
        if keep is not None:                              # the episode barrier
            dstate = [tuple(a * keep for a in s) for s in dstate]
    return grads, dstate
    ### END SOLUTION
