"""Assignment "bptt": tinyalgo.bptt.backward, backpropagation through time with
the episode barrier (tutorial 03).

A rollout of T >= 3 steps and B >= 2 lanes in which a lane starts a new
episode mid-rollout; the gradients of every parameter and of the initial
state are checked against centred differences of the forward rollout."""
import numpy as np

from grading import GRU_BLOCKS, LSTM_BLOCKS, assert_gradients, gradient_errors
from tinyalgo import bptt
from tinyalgo.controller import Controller, rollout_forward
from tinyalgo.controller_config import ControllerConfig

OBS_SIZES, A, V, H = (4, 3, 2, 3, 3), 4, 3, 4


def rollout_setup(core, layers, seed, T, B):
    rng = np.random.default_rng(seed)
    ctrl = Controller(ControllerConfig(OBS_SIZES, n_actions=A, n_symbols=V, core=core, units=H, layers=layers),
                      rng=rng)
    obs = np.stack([rng.integers(0, s, size=(T, B)) for s in OBS_SIZES], axis=2)
    state0 = [tuple(rng.normal(size=(B, H)) for _ in s) for s in ctrl.initial_state(B)]
    return rng, ctrl, obs, state0


def check_rollout(core, layers, seed, T=4, B=3):
    rng, ctrl, obs, state0 = rollout_setup(core, layers, seed, T, B)
    resets = np.zeros((T, B), bool)
    resets[2, 1] = True                                   # lane 1 starts a new episode at step 2
    dq, dlogp = rng.normal(size=(T, B, A)), rng.normal(size=(T, B, V))
    dfinal = [tuple(rng.normal(size=(B, H)) for _ in s) for s in state0]

    def loss():
        q, logp, _, final = rollout_forward(ctrl, obs, resets, state0)
        total = float(np.sum(q * dq) + np.sum(logp * dlogp))
        return total + sum(float(np.sum(a * d)) for s, ds in zip(final, dfinal) for a, d in zip(s, ds))

    caches = rollout_forward(ctrl, obs, resets, state0)[2]
    grads, dstate0 = bptt.backward(ctrl, caches, dq, dlogp, dfinal)
    arrays, analytic, names = dict(ctrl.params), dict(grads), ("h", "c")
    for l, (s, ds) in enumerate(zip(state0, dstate0)):
        for i, a in enumerate(s):
            arrays[f"initial state{l}.{names[i]}"] = a
            analytic[f"initial state{l}.{names[i]}"] = ds[i]
    gate = GRU_BLOCKS if core == "gru" else LSTM_BLOCKS
    blocks = {f"core{l}.{k}": v for l in range(layers) for k, v in gate.items()}
    assert_gradients(f"bptt.backward ({core}, T={T}, B={B}, lane 1 resets at step 2)",
                     gradient_errors(loss, arrays, analytic, blocks))


def test_bptt_gradient_check_gru():
    check_rollout("gru", 1, 40)


def test_bptt_gradient_check_lstm():
    check_rollout("lstm", 1, 41, T=3, B=2)


def test_episode_barrier():
    """Lane 1 starts a new episode at step 2 and only its steps 2.. carry a
    loss: nothing may reach lane 1's initial state (lane 0's is reached)."""
    T, B = 4, 2
    rng, ctrl, obs, state0 = rollout_setup("gru", 1, 42, T, B)
    resets = np.zeros((T, B), bool)
    resets[2, 1] = True
    dq, dlogp = rng.normal(size=(T, B, A)), rng.normal(size=(T, B, V))
    dq[:2, 1], dlogp[:2, 1] = 0.0, 0.0
    caches = rollout_forward(ctrl, obs, resets, state0)[2]
    _, dstate0 = bptt.backward(ctrl, caches, dq, dlogp)
    dh0 = dstate0[0][0]
    assert np.all(dh0[1] == 0.0), (f"the gradient crossed the episode barrier: lane 1 restarts at step 2, yet its"
                                   f" initial state gets a gradient of norm {np.linalg.norm(dh0[1]):.3g}"
                                   " (cut dstate with caches[t].keep after step t's backward)")
    assert np.linalg.norm(dh0[0]) > 1e-6, "lane 0 never resets: its initial state must get a non-zero gradient"
