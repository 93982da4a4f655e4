"""The supervised setting (paper section 5): the ground-truth actions are
given, so the controller only has to learn which action comes next and which
symbol to write, by backpropagation alone.

Training drives the environment with the ground-truth actions; the action
head is trained by cross-entropy towards them and the symbol head by
cross-entropy on every write (the symbol actually written is the model's own
argmax, so a wrong one ends the episode, as at test).  Lanes and the
recurrent state carry over from one rollout to the next (truncated BPTT);
episode starts cut the state (the episode barrier).  At evaluation the
controller acts alone, greedily.
"""
from __future__ import annotations

import time
from dataclasses import asdict

import numpy as np

from tinyalgo.controller import make_controller
from tinyalgo.curriculum import Curriculum, FixedComplexity
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.layers import softmax
from tinyalgo.optim import scale_gradients, sgd_step


def supervised_rollout(controller, env, obs, state, reset, T):
    """T steps along the ground truth; returns the gradients of the summed
    cross-entropies and the carried (obs, state, reset)."""
    B, ar = env.batch, np.arange(env.batch)
    rollout = controller.rollout()                               # parameters are fixed during the rollout
    dq = np.zeros((T, B, env.n_actions), dtype=controller.params["q.w"].dtype)
    dlogp = np.zeros((T, B, env.vocab.size), dtype=dq.dtype)
    for t in range(T):
        q, scores, state = rollout.step(obs, state, reset)
        gold = env.ground_truth()
        known = gold >= 0
        gold = np.maximum(gold, 0)
        dq[t] = softmax(q) * known[:, None]                     # d(-log softmax(q)[gold]) / dq
        dq[t, ar[known], gold[known]] -= 1.0
        write = known & (gold >= env.n_moves)
        dlogp[t, ar[write], env.next_target[write]] = -1.0      # d(-log p[target]) / dlogp
        result = env.step(gold, scores.argmax(axis=1))
        obs, reset = result.obs, result.done
    grads, _ = rollout.backward(dq, dlogp)
    return grads, obs, state, reset


def train_supervised(cfg, log=print, should_stop=lambda: False):
    """Train with the curriculum until ``cfg.target`` is solved or the budget
    is spent; ``cfg`` is a ``tinyalgo.runs.config.SupervisedConfig``.
    Returns (controller, report dict)."""
    rng = np.random.default_rng(cfg.seed)
    env = Environment(cfg.task, batch_size=cfg.batch, base=cfg.base, seed=int(rng.integers(2 ** 31)))
    curriculum = Curriculum(start=cfg.start, increment=cfg.increment, minimum=env.task.min_complexity)
    env.set_complexity(curriculum.sampler())
    controller = make_controller(env, cfg, int(rng.integers(2 ** 31)))
    agent = GreedyAgent(controller)
    state, obs = controller.initial_state(cfg.batch), env.observe()
    reset = np.ones(cfg.batch, dtype=bool)
    chars, updates, t0, solved_target = 0, 0, time.perf_counter(), False
    while chars < cfg.budget and not should_stop():
        T = min(cfg.max_rollout, curriculum.level + 5)
        grads, obs, state, reset = supervised_rollout(controller, env, obs, state, reset, T)
        norm = sgd_step(controller.params, scale_gradients(grads, cfg.batch, T), cfg.lr, cfg.max_norm)
        chars += cfg.batch * T
        updates += 1
        if updates % cfg.validate_every:
            continue
        # validation draws from the training distribution (with the 3-number addition extra
        # curriculum, as the release's validation samples do); the target test does not
        val_env = Environment(env.task, batch_size=cfg.val_instances, seed=int(rng.integers(2 ** 31)),
                              complexity=FixedComplexity(curriculum.level, env.task.min_complexity))
        val = evaluate_complexity(agent, env.task, curriculum.level, env=val_env)
        elapsed = time.perf_counter() - t0
        log(f"[{elapsed:7.1f}s] complexity {curriculum.level:4d}  validation solved {val['solved']:6.1%}"
            f"  chars {val['char_accuracy']:6.1%}  trained {chars:>9d} chars  {chars / elapsed:7.0f} chars/s"
            f"  grad norm {norm:.2f}")
        if curriculum.record(val["solved"], chars=chars, seconds=round(elapsed, 2)):
            test = evaluate_complexity(agent, cfg.task, cfg.target, cfg.val_instances, cfg.base,
                                       seed=int(rng.integers(2 ** 31)))
            curriculum.history[-1]["target_solved"] = test["solved"]
            if test["solved"] == 1.0:
                solved_target = True
                log(f"[{elapsed:7.1f}s] solved complexity {cfg.target}: done")
                break
            env.set_complexity(curriculum.sampler())
    elapsed = time.perf_counter() - t0
    report = dict(config=asdict(cfg), solved_target=solved_target, final_level=curriculum.level, chars=chars,
                  updates=updates, seconds=round(elapsed, 2), history=curriculum.history)
    return controller, report
