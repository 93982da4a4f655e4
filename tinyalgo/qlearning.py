"""Q targets and the penalty, as pure functions of arrays (paper section 6).

Arrays cover a rollout of T steps and B lanes; a lane may end an episode and
start the next one inside the rollout.  Step t's reward is decided within
step t (the write and the move are chosen together, REFERENCE 2.5).

=============  =========  ===================================================
name           shape      meaning
=============  =========  ===================================================
rewards        (T, B)     reward of step t
q_max          (T+1, B)   max_a Q(s_t, a); row T is the state after the
                          rollout (used where the episode goes on past it)
v_hat          (T+1, B)   outputs still to produce at step t, counting the
                          one that may be written at t (>= 1 in an episode)
terminal       (T, B)     the episode ended at step t: no bootstrap past it
exploratory    (T+1, B)   the action of step t was not the greedy one; row T
                          is unknown and treated as a cut: the rollout's end
                          bootstraps with q_max[T] (a truncated return)
=============  =========  ===================================================

With the dynamic discount the network's Q is Q-hat = Q / V-hat, which stays
in [0, 1] whatever the length (paper 6.1); every ``q_max`` is then a Q-hat.
"""
from __future__ import annotations

import numpy as np


def _check(rewards, **arrays):
    """Shapes: rewards (T, B); others (T, B) or (T+1, B) as named."""
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"rewards must have shape (T, B); got {r.shape}")
    T, B = r.shape
    out = [r]
    for name, (value, rows) in arrays.items():
        a = np.asarray(value)
        want = (T + rows, B)
        if a.shape != want:
            raise ValueError(f"{name} must have shape {want} (rewards have shape {(T, B)}); got {a.shape}")
        out.append(a)
    return out


def one_step_targets(rewards, q_max, terminal, gamma: float):
    """Classic Q-learning (paper eq. 1): r_t + gamma * max_a Q(s_{t+1}, a),
    or r_t where the episode ended at t.  Returns (T, B)."""
    r, q, term = _check(rewards, q_max=(q_max, 1), terminal=(terminal, 0))
    return r + gamma * ~term.astype(bool) * q[1:]


def dynamic_one_step_targets(rewards, q_max, v_hat, terminal, gamma: float = 1.0):
    """One-step Q-learning with the dynamic discount (paper 6.1):
    r_t / V_t + gamma * (V_{t+1} / V_t) * max_a Qhat(s_{t+1}, a); as in the
    release gamma = 1.  Returns (T, B)."""
    r, q, v, term = _check(rewards, q_max=(q_max, 1), v_hat=(v_hat, 1), terminal=(terminal, 0))
    v = v.astype(np.float64)
    return r / v[:-1] + gamma * ~term.astype(bool) * (v[1:] / v[:-1]) * q[1:]


def lambda_returns(rewards, discounts, bootstrap, lambdas):
    """Generic lambda-returns (rlax style), by a backward recursion:

        G_T = bootstrap_T
        G_t = r_t + discount_t * ((1 - lambda_t) * bootstrap_{t+1} + lambda_t * G_{t+1})

    rewards, discounts, lambdas (T, B); bootstrap (T+1, B).  Returns (T, B).
    """
    r, d, boot, lam = _check(rewards, discounts=(discounts, 0), bootstrap=(bootstrap, 1), lambdas=(lambdas, 0))
    out = np.empty_like(r)
    g = boot[-1].astype(np.float64)
    for t in range(r.shape[0] - 1, -1, -1):
        g = r[t] + d[t] * ((1 - lam[t]) * boot[t + 1] + lam[t] * g)
        out[t] = g
    return out


def watkins_targets(rewards, q_max, exploratory, terminal, gamma: float = 1.0, v_hat=None, lam: float = 1.0):
    """Watkins Q(lambda) targets (paper 6.2; REFERENCE 4.2).

    With lam = 1 (the paper): rewards are summed along the greedy steps that
    follow t, up to ``last``, the first later exploratory step of the same
    episode, where max_a Q(s_last, a) is the bootstrap; with no such step the
    sum runs to the end of the episode, without bootstrap.  Step t itself is
    always included, exploratory or not.

    * constant discount gamma: sum_k gamma^(k-t) r_k + gamma^(last-t) max Q(s_last);
    * dynamic discount (``v_hat`` given, the paper's default): the return is
      divided by V_t, i.e. (sum_k r_k + V_last * max Qhat(s_last)) / V_t.

    Computed in the forward view's unnormalised form U_t = r_t + gamma * next,
    next = 0 at a terminal step, V_{t+1} max Qhat(s_{t+1}) (or max Q) at a
    cut, U_{t+1} otherwise.  ``lam`` < 1 mixes in the one-step bootstraps along
    greedy steps (the standard lambda-return, via ``lambda_returns``).
    Returns (T, B).
    """
    r, q, explore, term = _check(rewards, q_max=(q_max, 1), exploratory=(exploratory, 1),
                                 terminal=(terminal, 0))
    T, B = r.shape
    if v_hat is None:
        v = np.ones((T + 1, B))
    else:
        v = _check(rewards, v_hat=(v_hat, 1))[1].astype(np.float64)
    cut = explore.astype(bool).copy()
    cut[T] = True                                      # the rollout's end bootstraps
    if lam != 1.0:
        discounts = gamma * ~term.astype(bool) * (v[1:] / v[:-1])
        return lambda_returns(r / v[:-1], discounts, q, lam * ~cut[1:])
    out = np.empty_like(r)
    u = np.zeros(B)
    for t in range(T - 1, -1, -1):
        after = np.where(cut[t + 1], v[t + 1] * q[t + 1], u)   # value of what follows step t
        u = r[t] + gamma * np.where(term[t], 0.0, after)
        out[t] = u / v[t]
    return out


def penalty(q, kappa: float):
    """The penalty of paper 6.3, kappa * sum over states of (sum_a Q(s,a) - 1)^2,
    on Q outputs q (..., A).  Returns (loss, dq) with dq the gradient (..., A):
    2 kappa (sum_a Q - 1) on every action.  (The release adds kappa (sum Q - 1),
    the gradient of this loss with kappa / 2.)"""
    q = np.asarray(q, dtype=np.float64)
    excess = q.sum(axis=-1) - 1.0
    dq = np.broadcast_to((2.0 * kappa * excess)[..., None], q.shape).copy()
    return float(kappa * np.sum(excess ** 2)), dq


def penalty_hinge(q, kappa: float):
    """Optional pull of every Q(s,a) into [0, 1] (REFERENCE 4.5, with the sign
    the release got wrong for Q > 1, 8.4): loss kappa/2 * (min(Q,0)^2 +
    max(Q-1,0)^2) summed; gradient kappa*Q below 0, kappa*(Q-1) above 1."""
    q = np.asarray(q, dtype=np.float64)
    low, high = np.minimum(q, 0.0), np.maximum(q - 1.0, 0.0)
    return float(0.5 * kappa * np.sum(low ** 2 + high ** 2)), kappa * (low + high)


def td_gradient(q, actions, targets, mask, q_lr: float = 0.1):
    """Semi-gradient of the TD loss (REFERENCE 4.3, 3.5): q_lr * (Q(s_t,a_t) -
    target_t) on the chosen action only, zero where ``mask`` is False; the
    target is a constant.  q (T, B, A); actions, targets, mask (T, B).
    Returns (dq (T, B, A), loss = q_lr / 2 * sum diff^2)."""
    q = np.asarray(q)
    if q.ndim != 3:
        raise ValueError(f"q must have shape (T, B, A); got {q.shape}")
    targets, actions, mask = _check(targets, actions=(actions, 0), mask=(mask, 0))
    if targets.shape != q.shape[:2]:
        raise ValueError(f"targets must have shape {q.shape[:2]} (q has shape {q.shape}); got {targets.shape}")
    chosen = np.take_along_axis(q, actions[..., None], axis=2)[..., 0]
    diff = (chosen - targets) * mask
    dq = np.zeros(q.shape, dtype=np.float64)
    np.put_along_axis(dq, actions[..., None], (q_lr * diff)[..., None], axis=2)
    return dq, float(0.5 * q_lr * np.sum(diff ** 2))
