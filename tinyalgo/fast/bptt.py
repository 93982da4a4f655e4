"""Backpropagation through time, faster: the gradients of ``tinyalgo.bptt``
from the caches of ``fast.controller.step``.

Top to bottom:

1. the heads, for all T steps at once: the log-softmax of the symbol scores
   (if the steps kept raw scores), the gradient on both heads' outputs, and
   back through tanh to ``da``, the gradient on the "extra" layer's
   pre-activation; from it ``dhidden`` (T, B, H), the gradient on the core's
   output at every step;
2. the backward recursion, from step T-1 down to 0: per step and layer, the
   core's one-step backward (``fast.cores``) gives the gradients on its
   pre-activations and on the state entering the step; at a lane that
   started an episode at that step the state gradient is cut (the episode
   barrier);
3. the weight gradients, activations.T @ pre-activation gradients summed
   over all steps in one product, and the embedding's through the one-hot
   observations.

Only step 2 is sequential.  With ``Controller.set_threads(2)`` the steps
are processed in chunks of ``CHUNK_STEPS``: the calling thread runs the
recursion, and a helper thread (``fast.threads``) computes what the
recursion does not wait for (the heads' and "extra" weight gradients, the
next chunks' ``dhidden`` and GRU factors before the recursion reaches them,
each finished chunk's weight gradients).  The sums over steps are then
split by chunk, so the gradients equal one thread's up to rounding.

Tested equal to ``tinyalgo.bptt`` in float64 (tests/test_fast.py).
"""
from __future__ import annotations

import numpy as np

from tinyalgo.fast import cores as fast_cores
from tinyalgo.fast.threads import Now, submitter
from tinyalgo.layers import log_softmax_backward, log_softmax_forward

CHUNK_STEPS = 10


def tn(a, b):
    """a.T @ b: a weight gradient from stacked activations a (N, D) and
    pre-activation gradients b (N, k)."""
    return a.T @ b


def chunk_starts(T: int, chunk: int) -> range:
    """The first step of each chunk of ``chunk`` steps, the last chunk first."""
    return range((T - 1) // chunk * chunk, -1, -chunk)


def backward(ctrl, caches, dq, dlogp, dstate_final=None):
    """``tinyalgo.bptt.backward`` over the T ``FastStepCache`` of a fast
    rollout: dq (T, B, n_actions), dlogp (T, B, n_symbols) -> (grads, dstate0)."""
    P, cfg, T = ctrl.params, ctrl.config, len(caches)
    core, H, A, dtype = cfg.core, cfg.units, cfg.n_actions, ctrl.dtype
    dq, dlogp = np.asarray(dq, dtype=dtype), np.asarray(dlogp, dtype=dtype)
    B = caches[0].obs.shape[0]
    if dq.shape != (T, B, A) or dlogp.shape != (T, B, cfg.n_symbols):
        raise ValueError(f"dq and dlogp must have shapes {(T, B, A)} and {(T, B, cfg.n_symbols)};"
                         f" got {dq.shape} and {dlogp.shape}")
    as_logits = {c.logits for c in caches}
    if len(as_logits) > 1:
        raise ValueError("the step caches mix logits=True and logits=False; use one setting for a whole rollout")
    buffers = caches[0].rows[0] if caches[0].rows is not None and caches[0].rows[0].covers(caches) else None
    gru_rows = buffers is not None and core == "gru"          # the core's activations are in the buffers too
    run = submitter(ctrl.threads)
    chunk = CHUNK_STEPS if ctrl.threads > 1 else T
    layers = ctrl.layers()
    L = len(layers)

    # 1. The heads, all steps at once.
    t_all = (buffers.t[:T] if buffers is not None else np.stack([c.t for c in caches])).reshape(T * B, H)
    logp = np.concatenate([c.logp for c in caches])
    if as_logits.pop():
        logp = log_softmax_forward(logp)[0]                   # the log-softmax of every step at once
    dheads = np.empty((T * B, A + cfg.n_symbols), dtype=dtype)   # both heads at once
    dheads[:, :A] = dq.reshape(T * B, A)
    dheads[:, A:] = log_softmax_backward(dlogp.reshape(T * B, -1), logp)
    heads_w = run(tn, t_all, dheads)
    db = dheads.sum(0)
    grads = {"q.b": db[:A], "sym.b": db[A:]}
    da = dheads @ np.concatenate([P["q.w"], P["sym.w"]], axis=1).T
    da *= 1.0 - t_all * t_all
    grads["extra.b"] = da.sum(0)
    if L:
        hid_all = (buffers.h_out[-1][:T] if gru_rows else np.stack([c.hidden for c in caches])).reshape(T * B, H)
        dhidden = np.empty((T, B, H), dtype=dtype)            # by chunk: the last one now, the others handed over
        dhidden_of = {}
        for lo in chunk_starts(T, chunk):
            hi = min(lo + chunk, T)
            args = (da[lo * B:hi * B], P["extra.w"].T, dhidden[lo:hi].reshape((hi - lo) * B, H))
            dhidden_of[lo] = run(np.matmul, *args) if hi < T else Now(np.matmul(*args))

    # 2. The recursion's inputs: per GRU layer the gates, entering state, r h and candidate of all steps,
    # and the step-independent factors of its backward (by chunk, like dhidden).
    if core == "gru":
        if gru_rows:
            acts = [(buffers.zr[l][:T], buffers.h_in[l][:T], buffers.rh[l][:T], buffers.cand[l][:T])
                    for l in range(L)]
        else:
            acts = [(np.concatenate([np.stack([c.cores[l].z for c in caches]),
                                     np.stack([c.cores[l].r for c in caches])], axis=2),
                     *(np.stack([getattr(c.cores[l], name) for c in caches]) for name in ("h", "rh", "cand")))
                    for l in range(L)]
        factors_of = {}
        for lo in chunk_starts(T, chunk):
            span = slice(lo, lo + chunk)
            for l, (zr, hs, rhs, cs) in enumerate(acts):
                args = (zr[span, :, :H], zr[span, :, H:], hs[span], rhs[span], cs[span])
                factors_of[l, lo] = run(fast_cores.gru_backward_factors, *args) if lo + chunk < T else \
                    Now(fast_cores.gru_backward_factors(*args))
    if L:
        extra_w = run(tn, hid_all, da)

    # 3's products, per layer: (name, stacked activations (T B, D), columns of the pre-activation gradient);
    # each weight gradient is activations.T @ those columns, summed over steps.  Layer 0's "wx" is the first
    # matrix after the embedding: at the end.
    products = []
    for l in range(L):
        hs = acts[l][1].reshape(T * B, H) if core == "gru" else np.concatenate([c.cores[l].h for c in caches])
        ps = [("wh", hs, slice(0, 2 * H)), ("whh", acts[l][2].reshape(T * B, H), slice(2 * H, 3 * H))] \
            if core == "gru" else [("wh", hs, slice(None))]
        if l > 0:
            xs = buffers.h_out[l - 1][:T].reshape(T * B, H) if gru_rows else \
                np.concatenate([c.cores[l].x for c in caches])
            ps.append(("wx", xs, slice(None)))
        products.append(ps)
    rows = np.concatenate([c.obs for c in caches]) + cfg._offsets
    onehots = np.zeros((T * B, P["embed.w"].shape[0]), dtype=dtype)        # the observations of all steps
    onehots[np.arange(T * B)[:, None], rows] = 1.0
    width = {"gru": 3, "lstm": 4, "ff": 0}[core] * H
    pre = [np.empty((T, B, width), dtype=dtype) for _ in range(L)]        # pre-activation gradients
    partial = {}                                                            # (layer, name) -> results by chunk

    def hand_over(lo, hi):
        """The weight-gradient products of steps lo .. hi-1, whose pre-activation gradients are final."""
        r = slice(lo * B, hi * B)
        for l, ps in enumerate(products):
            d = pre[l].reshape(T * B, -1)
            for name, acts_l, cols in ps:
                partial.setdefault((l, name), []).append(run(tn, acts_l[r], d[r, cols]))
        partial.setdefault((0, "M0"), []).append(run(tn, onehots[r], pre[0].reshape(T * B, -1)[r]))

    # 2. The recursion, from the last step to the first.
    n_state = {"gru": 1, "lstm": 2, "ff": 0}[core]
    dstate = [tuple(np.zeros((B, H), dtype) for _ in range(n_state)) for _ in range(L)]
    if dstate_final is not None:
        dstate = [tuple(np.array(a, dtype=dtype) for a in s) for s in dstate_final]
    wts = [fast_cores.transposed(p, skip=() if l else ("wx",)) for l, p in enumerate(layers)]
    for t in range(T - 1, -1, -1):
        if L and (t % chunk == chunk - 1 or t == T - 1):       # a new chunk of steps: its dhidden and factors
            lo = t - t % chunk
            dhidden_of[lo].result()
            if core == "gru":
                fac = [factors_of[l, lo].result() for l in range(L)]
        keep, layer_caches = caches[t].keep, caches[t].cores
        dx = dhidden[t] if L else None
        for l in range(L - 1, -1, -1):          # layer 0's input gradient: for all steps at once, at the end
            if core == "gru":
                dx, dh = fast_cores.gru_step_backward_factored(dx + dstate[l][0], [f[t - lo] for f in fac[l]],
                                                          pre[l][t], wts[l], l > 0)
                new = (dh,)
            else:
                dx, dh, dc, _ = fast_cores.lstm_step_backward_pre(dx + dstate[l][0], dstate[l][1], layer_caches[l],
                                                             pre[l][t], l > 0, wts[l])
                new = (dh, dc)
            dstate[l] = new if keep is None else tuple(a * keep for a in new)   # no gradient across a reset
        if t % chunk == 0 and L:
            hand_over(t, min(t + chunk, T))

    # 3. The weight gradients.
    for l in range(L):
        db = pre[l].reshape(T * B, -1).sum(0)
        g = {"bx": db, "bh": db[:2 * H].copy(), "bhh": db[2 * H:].copy()} if core == "gru" else \
            {"bx": db, "bh": db.copy()}
        for k, v in g.items():
            grads[f"core{l}.{k}"] = v
    dw = heads_w.result()
    grads["q.w"], grads["sym.w"] = dw[:, :A], dw[:, A:]
    if L:
        grads["extra.w"] = extra_w.result()
    for (l, name), parts in partial.items():
        total = parts[0].result()
        for part in parts[1:]:
            total += part.result()
        grads[f"core{l}.{name}"] = total
    # The embedding and the first matrix W after it (core0.wx, or extra.w for FF), from the gradient dA on
    # W's pre-activation without ever forming the embedded inputs: with X = onehot @ E + e and A = X @ W,
    # dW = E.T @ (onehot.T @ dA) + outer(e, sum dA) and dE = (onehot.T @ dA) @ W.T.
    first = "core0.wx" if L else "extra.w"
    dA = pre[0].reshape(T * B, -1) if L else da
    M0, s0 = grads.pop("core0.M0") if L else onehots.T @ dA, dA.sum(0)
    dE = run(np.matmul, M0, P[first].T)                     # the two products side by side with a helper
    grads[first] = P["embed.w"].T @ M0 + np.outer(P["embed.b"], s0)
    grads["embed.w"], grads["embed.b"] = dE.result(), s0 @ P[first].T
    return {k: grads[k] for k in P}, dstate                 # already cut where step 0 reset
