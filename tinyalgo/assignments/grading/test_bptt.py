"""Grading "bptt": bptt.backward, backpropagation through time with the episode barrier,
against the reference: a rollout of T >= 3 steps and B >= 2 lanes drawn at grading time, in
which lanes start new episodes mid-rollout."""
import numpy as np

from tinyalgo import bptt as ref
from tinyalgo.assignments.grading.checks import compare, controller_blocks, parts, with_states
from tinyalgo.assignments.grading.test_controller_backward import draw
from tinyalgo.assignments.probes import _controller
from tinyalgo.controller import rollout_forward


def check_rollout(g, core, layers, barrier_only=False, timed=False):
    """A rollout drawn at grading time (T 3-5, B 2-4, H 3-5; with ``timed`` T 8, B 8, H 48 and the CPU time
    capped relative to the reference's)."""
    T, B, H = (8, 8, 48) if timed else (int(g.rng.integers(3, 6)), int(g.rng.integers(2, 5)),
                                        int(g.rng.integers(3, 6)))
    config, params, _, state0, _, _, _ = draw(g, core, layers, B=B, H=H)
    sizes, A, V = config["obs_sizes"], config["n_actions"], config["n_symbols"]
    obs = g.rng.integers(0, sizes, size=(T, B, len(sizes)))
    resets = g.rng.random((T, B)) < 0.25
    resets[0] = False
    resets[1 + int(g.rng.integers(0, T - 1)), int(g.rng.integers(0, B))] = True
    dq, dlogp = g.rng.normal(size=(T, B, A)), g.rng.normal(size=(T, B, V))
    dfinal = None if barrier_only else [tuple(g.rng.normal(size=a.shape) for a in s) for s in state0]
    if barrier_only:                            # the loss only after each lane's last reset
        for b in range(B):
            last = max([t for t in range(T) if resets[t, b]], default=0)
            dq[:last, b], dlogp[:last, b] = 0.0, 0.0
    ctrl = _controller(config, params)
    caches = rollout_forward(ctrl, obs, resets, state0)[2]
    expected, dstate_ref = ref.backward(ctrl, caches, dq, dlogp, dfinal)
    args = dict(config=config, params=params, obs=obs, resets=resets, state0=state0, dq=dq, dlogp=dlogp,
                dfinal=dfinal)
    got = g.timed("bptt_backward", lambda: ref.backward(ctrl, caches, dq, dlogp, dfinal), **args) if timed \
        else g.call("bptt_backward", **args)
    grads, dstate0 = parts("bptt.backward", got, 2)
    got_all, ref_all = with_states("bptt.backward", grads, expected, dstate0, dstate_ref, "initial state")
    if barrier_only:
        h0 = np.asarray(got_all.get("initial state0.h", np.zeros(1)), dtype=np.float64)
        reset_lanes = [b for b in range(B) if resets[:, b].any()]
        if h0.shape == dstate_ref[0][0].shape and np.any(h0[reset_lanes] != 0.0):
            raise AssertionError(f"the gradient crossed the episode barrier: lanes {reset_lanes} restart mid-rollout"
                                 " and carry a loss only after that, yet their initial state gets a gradient (cut"
                                 " dstate with caches[t].keep after step t's backward)")
    blocks = controller_blocks(core, layers)
    compare(f"bptt.backward ({core}, T={T}, B={B}, resets at (step, lane) {np.argwhere(resets).tolist()})",
            got_all, ref_all, blocks)


def test_bptt_gradient_check_gru(g):
    check_rollout(g, "gru", 1)
    check_rollout(g, "gru", 2)
    check_rollout(g, "gru", 1, timed=True)


def test_bptt_gradient_check_lstm(g):
    check_rollout(g, "lstm", 1)
    check_rollout(g, "lstm", 1, timed=True)


def test_episode_barrier(g):
    check_rollout(g, "gru", 1, barrier_only=True)
    check_rollout(g, "gru", 1, barrier_only=True, timed=True)
