"""Q targets, the penalty and the TD gradient, as pure functions of arrays (paper section 6).

Arrays cover a rollout of T steps and B lanes.  A lane may end an episode and
start the next one inside the rollout: the row after a terminal step belongs
to the new episode.  Step t's reward is decided within step t (the write and
the move are chosen together, docs/original-release.md#writing).

=============  =========  ===================================================
name           shape      meaning
=============  =========  ===================================================
rewards        (T, B)     reward of step t (0/1; other reward variants in [0, 1])
q_max          (T+1, B)   max_a Q(s_t, a); row T is the state after the
                          rollout (used only where the episode goes on past it)
v_hat          (T+1, B)   outputs still to produce at step t, counting the
                          one that may be written at t (>= 1 in an episode,
                          paper section 6.1); row T as for q_max
terminal       (T, B)     the episode ended at step t (all written, a wrong
                          write or a timeout): nothing is bootstrapped past it
exploratory    (T+1, B)   the action of step t was not the greedy argmax.
                          Row T is unknown and ignored: the rollout's end is
                          always a cut, bootstrapping with q_max[T] (a
                          truncated return, as if step T had explored)
=============  =========  ===================================================

With the dynamic discount the network's outputs are Q-hat = Q / V-hat, which
stays in [0, 1] whatever the length (paper 6.1); every ``q_max`` is then a
max of Q-hat.  All bootstraps come from the current parameters: no target
network, no replay (docs/original-release.md#v-hat).
"""
from __future__ import annotations

import numpy as np


def _rollout(name, value):
    """``value`` as a float64 (T, B) array; T and B fix every other shape."""
    a = np.asarray(value, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{name} has shape {a.shape}; expected (T, B), a rollout of T steps and B lanes")
    return a


def _match(ref, name, value, rows, dtype=None):
    """``value`` as an array of shape (T + rows, B), else a ValueError naming both.

    ``ref`` is the (T, B) array the other shapes follow, or (label, (T, B))."""
    label, (T, B) = ref if isinstance(ref, tuple) else (f"rewards of shape {ref.shape}", ref.shape)
    a = np.asarray(value, dtype=dtype)
    want = (T + rows, B)
    if a.shape != want:
        sym = "(T, B)" if rows == 0 else f"(T+{rows}, B)"
        raise ValueError(f"{name} has shape {a.shape}; expected {sym} = {want} (T, B from {label})")
    return a


def _v_hat(ref, v_hat):
    """V-hat (T+1, B) as float64; the rows used as divisors must be positive."""
    v = _match(ref, "v_hat", v_hat, 1, np.float64)
    if np.any(v[:-1] <= 0):
        raise ValueError("v_hat must be >= 1 at every step of an episode (rows 0..T-1); "
                         f"got minimum {v[:-1].min()}")
    return v


def one_step_targets(rewards, q_max, terminal, gamma):
    """Classic one-step Q-learning targets with a constant discount (paper eq. 1, section 6).

        target_t = r_t + gamma * max_a Q(s_{t+1}, a),   or r_t if terminal[t].

    rewards (T, B), q_max (T+1, B), terminal (T, B) bool; gamma in (0, 1]
    (the paper tries 1, 0.99 and 0.95).  Returns targets (T, B).
    """
    r = _rollout("rewards", rewards)
    q = _match(r, "q_max", q_max, 1, np.float64)
    term = _match(r, "terminal", terminal, 0, bool)
    return r + np.where(term, 0.0, gamma * q[1:])


def dynamic_one_step_targets(rewards, q_max, v_hat, terminal, gamma=1.0):
    """One-step Q-learning with the dynamic discount (paper section 6.1, second display).

        target_t = r_t / V_t + gamma * (V_{t+1} / V_t) * max_a Qhat(s_{t+1}, a),
                   or r_t / V_t if terminal[t].

    The release uses gamma = 1 (no extra factor, docs/original-release.md#v-hat); the discount
    V_{t+1}/V_t falls to 1/2 at the end of a sequence.  rewards (T, B),
    q_max (T+1, B) of Q-hat, v_hat (T+1, B), terminal (T, B).  Returns (T, B).
    """
    r = _rollout("rewards", rewards)
    q = _match(r, "q_max", q_max, 1, np.float64)
    v = _v_hat(r, v_hat)
    term = _match(r, "terminal", terminal, 0, bool)
    ### BEGIN SOLUTION
    return r / v[:-1] + np.where(term, 0.0, gamma * (v[1:] / v[:-1]) * q[1:])
    ### END SOLUTION


def lambda_returns(rewards, discounts, bootstrap, lambdas):
    """Generic lambda-returns (rlax / trfl style; Sutton & Barto 12.1), the form behind paper 6.2.

        G_T = bootstrap_T
        G_t = r_t + discount_t * ((1 - lambda_t) * bootstrap_{t+1} + lambda_t * G_{t+1})

    rewards (T, B); discounts (T, B) (0 where the episode ends at t);
    bootstrap (T+1, B), row t+1 the value of the state after step t (row 0 is
    unused, so q_max can be passed as is); lambdas (T, B) or a scalar.
    lambda_t = 0 gives the one-step target at t, lambda_t = 1 follows G_{t+1}.
    Returns G (T, B).
    """
    r = _rollout("rewards", rewards)
    d = _match(r, "discounts", discounts, 0, np.float64)
    boot = _match(r, "bootstrap", bootstrap, 1, np.float64)
    lam = np.asarray(lambdas, dtype=np.float64)
    lam = np.broadcast_to(lam, r.shape) if lam.ndim == 0 else _match(r, "lambdas", lam, 0)
    ### BEGIN SOLUTION
    out = np.empty_like(r)
    g = boot[-1]
    for t in range(r.shape[0] - 1, -1, -1):
        g = r[t] + d[t] * ((1.0 - lam[t]) * boot[t + 1] + lam[t] * g)
        out[t] = g
    return out
    ### END SOLUTION


def watkins_targets(rewards, q_max, exploratory, terminal, gamma=1.0, v_hat=None, lam=1.0):
    """Watkins Q(lambda) targets (paper section 6.2; docs/original-release.md#watkins).

    Forward view with lam = 1 (the paper): ``last`` is the first step k > t of
    the same episode whose action was exploratory (step t itself is always
    included, exploratory or not; the rollout's end counts as such a step).

    * constant discount (``v_hat`` None)::

          target_t = sum_{k=t}^{last-1} gamma^(k-t) r_k + gamma^(last-t) max_a Q(s_last, a);

    * dynamic discount (``v_hat`` given, the paper's default, gamma = 1)::

          target_t = (sum_{k=t}^{last-1} r_k) / V_t + (V_last / V_t) max_a Qhat(s_last, a),

      i.e. the unnormalised return divided by V_t.

    With no cut before the episode ends the sum runs to the terminal step and
    nothing is bootstrapped.  With both ``v_hat`` and gamma != 1 every step
    also carries gamma (the paper's gamma V'/V).  ``lam`` < 1 is the standard
    Watkins lambda-return: lambda mixes in the one-step bootstraps along
    greedy steps and is cut to 0 before an exploratory step.

    Computed by a backward recursion on the unnormalised return U_t = V_t G_t
    (V = 1 without the dynamic discount), as the release sums rewards::

        U_t = r_t + gamma * [not terminal_t] * ((1 - l_t) V_{t+1} q_{t+1} + l_t U_{t+1}),
        l_t = 0 if step t+1 is exploratory or t+1 = T, else lam.

    rewards (T, B), q_max (T+1, B), exploratory (T+1, B), terminal (T, B),
    v_hat None or (T+1, B).  Returns targets (T, B).
    """
    r = _rollout("rewards", rewards)
    q = _match(r, "q_max", q_max, 1, np.float64)
    explore = _match(r, "exploratory", exploratory, 1, bool)
    term = _match(r, "terminal", terminal, 0, bool)
    T, B = r.shape
    v = np.ones((T + 1, B)) if v_hat is None else _v_hat(r, v_hat)
    ### BEGIN SOLUTION
    cut = explore.copy()
    cut[T] = True                                          # the rollout's end bootstraps with q_max[T]
    out = np.empty_like(r)
    u = np.zeros(B)
    for t in range(T - 1, -1, -1):
        l_t = np.where(cut[t + 1], 0.0, lam)
        after = (1.0 - l_t) * v[t + 1] * q[t + 1] + l_t * u
        u = r[t] + np.where(term[t], 0.0, gamma * after)
        out[t] = u / v[t]
    return out
    ### END SOLUTION


def targets(q_kind: str, discount: str, rewards, q_max, v_hat, exploratory, terminal, gamma=1.0, lam=1.0):
    """The Q targets (T, B) of one of the paper's variants (sections 6.1-6.2):
    ``q_kind`` "watkins" (Watkins Q(lambda)) or "one-step"; ``discount``
    "dynamic" (gamma * V-hat'/V-hat, with rewards divided by V-hat) or a
    constant ("1", "0.99", "0.95").  Arrays as in ``watkins_targets``."""
    dynamic = discount == "dynamic"
    if q_kind == "watkins":
        return watkins_targets(rewards, q_max, exploratory, terminal, gamma=gamma if dynamic else float(discount),
                               v_hat=v_hat if dynamic else None, lam=lam)
    if dynamic:
        return dynamic_one_step_targets(rewards, q_max, v_hat, terminal, gamma)
    return one_step_targets(rewards, q_max, terminal, float(discount))


def penalty(q, kappa, mask=None):
    """The penalty on the Q-function of paper section 6.3, kappa * ||sum_a Qhat(s, a) - 1||^2.

        loss = kappa * sum over states of (sum_a q[..., a] - 1)^2
        dq[..., j] = 2 kappa (sum_a q[..., a] - 1)      (the same on every action j)

    q (..., A) the (normalised) Q outputs, e.g. (T, B, A); mask None or (...)
    bool, the states it applies to (the release gates it per sample,
    docs/original-release.md#penalty).  Returns (loss float, dq (..., A)).

    The release adds kappa (sum Q - 1) to every output, i.e. the gradient of
    this loss with kappa / 2: call penalty(q, kappa / 2) for its exact scale.
    Its extra [0, 1] hinge has the wrong sign above 1 (docs/original-release.md#penalty); see
    ``penalty_hinge`` for the corrected version.
    """
    q = np.asarray(q, dtype=np.float64)
    if q.ndim < 1:
        raise ValueError(f"q has shape {q.shape}; expected (..., A) with one column per action")
    ### BEGIN SOLUTION
    excess = q.sum(axis=-1) - 1.0
    if mask is not None:
        excess = excess * _mask(mask, q.shape[:-1])
    dq = np.repeat((2.0 * kappa * excess)[..., None], q.shape[-1], axis=-1)
    return float(kappa * np.sum(excess ** 2)), dq
    ### END SOLUTION


def penalty_hinge(q, kappa, mask=None):
    """Optional pull of every Q(s, a) into [0, 1] (docs/original-release.md#penalty, with the sign fixed).

        loss = kappa / 2 * sum (min(Q, 0)^2 + max(Q - 1, 0)^2)
        dq   = kappa * Q where Q < 0,  kappa * (Q - 1) where Q > 1,  0 in [0, 1]

    The release adds -kappa (Q - 1) above 1, which under gradient descent
    pushes Q further up (docs/original-release.md#penalty); this is the corrected sign.  Not in
    the paper, which only has ``penalty``.  q (..., A); mask None or (...) bool.
    Returns (loss float, dq (..., A)).
    """
    q = np.asarray(q, dtype=np.float64)
    low, high = np.minimum(q, 0.0), np.maximum(q - 1.0, 0.0)
    if mask is not None:
        keep = _mask(mask, q.shape[:-1])[..., None]
        low, high = low * keep, high * keep
    return float(0.5 * kappa * np.sum(low ** 2 + high ** 2)), kappa * (low + high)


def _mask(mask, shape):
    m = np.asarray(mask, dtype=bool)
    if m.shape != shape:
        raise ValueError(f"mask has shape {m.shape}; expected {shape}, the leading dimensions of q")
    return m


def td_gradient(q, actions, targets, mask, q_lr=0.1):
    """Semi-gradient of the TD loss (paper eq. (1) and section 6.2; docs/original-release.md#optimiser).

        dq[t, b, a_t] = q_lr * (Q(s_t, a_t) - target_t)   where mask[t, b]
        dq = 0 on every other action and every masked-out step
        loss = q_lr / 2 * sum over unmasked (t, b) of (Q(s_t, a_t) - target_t)^2

    The target is a constant (no gradient flows into it).  q (T, B, A);
    actions (T, B) int in [0, A); targets (T, B); mask (T, B) bool (e.g. the
    training lanes, or only episodes that finished inside the rollout, as the
    release).  Returns (dq (T, B, A) float64, loss float).
    """
    q = np.asarray(q, dtype=np.float64)
    if q.ndim != 3:
        raise ValueError(f"q has shape {q.shape}; expected (T, B, A)")
    ref = (f"q of shape {q.shape}", q.shape[:2])
    tgt = _match(ref, "targets", targets, 0, np.float64)
    act = _match(ref, "actions", actions, 0)
    keep = _match(ref, "mask", mask, 0, bool)
    if not np.issubdtype(act.dtype, np.integer):
        raise ValueError(f"actions must be integers; got dtype {act.dtype}")
    if act.size and (act.min() < 0 or act.max() >= q.shape[2]):
        raise ValueError(f"actions must lie in [0, {q.shape[2]}); got range [{act.min()}, {act.max()}]")
    chosen = np.take_along_axis(q, act[..., None], axis=2)[..., 0]
    diff = np.where(keep, chosen - tgt, 0.0)
    dq = np.zeros(q.shape)
    np.put_along_axis(dq, act[..., None], (q_lr * diff)[..., None], axis=2)
    return dq, float(0.5 * q_lr * np.sum(diff ** 2))
