"""The controller (``Controller.step`` / ``step_backward`` and
``tinyalgo.bptt``) over rollouts: gradient checks with an episode boundary,
random biases and initial states (FF, GRU, LSTM, 2 layers); the barrier
cuts; inference equals training; bad input is refused.  The parts of the
one path are tested equal to each other in test_one_path.py."""
import numpy as np
import pytest

from tinyalgo.controller import Controller, ControllerConfig, rollout_forward
from tinyalgo.layers import log_softmax_forward
from tinyalgo.gradcheck import EXTENDED, EXTENDED_STEP, GATE_BLOCKS, TOLERANCE, check_gradients, format_report

SIZES = (5, 5, 2, 5, 3)
CASES = [("ff", 1), ("gru", 1), ("lstm", 1), ("gru", 2), ("lstm", 2)]


def make(core, layers, units=5, seed=0, dtype="float64"):
    cfg = ControllerConfig(SIZES, n_actions=8, n_symbols=6, core=core, units=units, layers=layers, dtype=dtype)
    return Controller(cfg, rng=np.random.default_rng(seed))


def random_rollout(ctrl, T, B, rng):
    obs = np.stack([np.stack([rng.integers(0, s, size=B) for s in SIZES], axis=1) for _ in range(T)])
    resets = np.zeros((T, B), bool)
    resets[T // 2, 0] = True                       # an episode boundary inside the rollout
    state0 = [tuple(rng.normal(size=(B, ctrl.config.units)) for _ in s) for s in ctrl.initial_state(B)]
    return obs, resets, state0


@pytest.mark.gradcheck
@pytest.mark.parametrize("core,layers", CASES)
def test_rollout_gradients(core, layers, T=4, B=2):
    rng = np.random.default_rng(T * 10 + B)
    ctrl = make(core, layers, seed=T + B)
    obs, resets, state0 = random_rollout(ctrl, T, B, rng)
    wq, wl = rng.normal(size=(T, B, 8)), rng.normal(size=(T, B, 6))
    caches = rollout_forward(ctrl, obs, resets, state0)[2]
    grads, dstate0 = ctrl.backward(caches, wq, wl)
    ext = Controller(ctrl.config, params={k: v.astype(EXTENDED) for k, v in ctrl.params.items()})
    ext_state = [tuple(a.astype(EXTENDED) for a in s) for s in state0]

    def loss():
        q, logp, _, _ = rollout_forward(ext, obs, resets, ext_state)
        return np.sum(q * wq) + np.sum(logp * wl)

    arrays, analytic = dict(ext.params), dict(grads)
    for l, (s, ds) in enumerate(zip(ext_state, dstate0)):
        for j, (a, da) in enumerate(zip(s, ds)):
            arrays[f"state{l}.{j}"], analytic[f"state{l}.{j}"] = a, da
    report = check_gradients(loss, arrays, analytic, h=EXTENDED_STEP, blocks=GATE_BLOCKS.get(core))
    assert {label.split("[")[0] for label in report["errors"]} >= set(ctrl.params)     # every parameter
    assert max(report["errors"].values()) < TOLERANCE, (core, layers, T, B, format_report(report))


@pytest.mark.gradcheck
@pytest.mark.parametrize("core,layers", [("ff", 1), ("gru", 1)])
def test_single_layer_gradients_in_plain_float64(core, layers):
    rng = np.random.default_rng(5)
    ctrl = make(core, layers, seed=5)
    obs, resets, state0 = random_rollout(ctrl, 4, 3, rng)
    wq, wl = rng.normal(size=(4, 3, 8)), rng.normal(size=(4, 3, 6))
    q0, l0, caches, _ = rollout_forward(ctrl, obs, resets, state0)
    grads, _ = ctrl.backward(caches, wq, wl)

    def loss():       # subtracting the outputs at the centre keeps the roundoff small
        q, logp, _, _ = rollout_forward(ctrl, obs, resets, state0)
        return np.sum((q - q0) * wq) + np.sum((logp - l0) * wl)

    report = check_gradients(loss, dict(ctrl.params), grads, blocks=GATE_BLOCKS.get(core))
    # plain float64 differences: entries near 1e-4 carry a relative roundoff just above 1e-7
    assert max(report["errors"].values()) < 10 * TOLERANCE, format_report(report)


@pytest.mark.parametrize("core,layers", [("gru", 1), ("lstm", 2)])
def test_episode_barrier_cuts_the_gradient(core, layers):
    rng = np.random.default_rng(2)
    ctrl = make(core, layers)
    T, B = 6, 3
    obs, _, state0 = random_rollout(ctrl, T, B, rng)
    resets = np.zeros((T, B), bool)
    resets[3] = True                               # every lane starts a new episode at step 3
    q, logp, caches, _ = rollout_forward(ctrl, obs, resets, state0)
    dq, dlogp = np.zeros((T, B, 8)), np.zeros((T, B, 6))
    dq[3:], dlogp[3:] = rng.normal(size=(3, B, 8)), rng.normal(size=(3, B, 6))   # losses after the boundary only
    _, dstate0 = ctrl.backward(caches, dq, dlogp)
    for s in dstate0:
        for a in s:
            assert np.all(a == 0.0)
    dq[2] = 1.0                                    # a loss before the boundary does reach it
    _, dstate0 = ctrl.backward(caches, dq, dlogp)
    assert any(np.any(a != 0) for s in dstate0 for a in s)


@pytest.mark.parametrize("core,layers", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inference_equals_training_forward(core, layers, dtype):
    rng = np.random.default_rng(3)
    ctrl = make(core, layers, units=7, dtype=dtype)
    obs, resets, _ = random_rollout(ctrl, 6, 4, rng)
    q, logp, _, _ = rollout_forward(ctrl, obs, resets, ctrl.initial_state(4))
    state = ctrl.initial_state(4)
    for t in range(6):
        qi, scores, state = ctrl.infer(obs[t], state, resets[t])
        np.testing.assert_array_equal(qi, q[t])
        np.testing.assert_array_equal(log_softmax_forward(scores)[0], logp[t])    # infer skips the log-softmax
        np.testing.assert_array_equal(scores.argmax(axis=1), logp[t].argmax(axis=1))
        assert qi.dtype == np.dtype(dtype)


def test_parameter_counts_match_the_release_layout():
    # the release's grid GRU-200 has 300,232 parameters with 61 inputs and 24 symbols
    cfg = ControllerConfig((25, 25, 3, 5, 3), n_actions=8, n_symbols=24, core="gru", units=200)
    assert sum(np.prod(s) for s, _, _ in cfg.param_shapes().values()) == 300232
    cfg = ControllerConfig((25, 25, 3, 5, 3), n_actions=8, n_symbols=24, core="lstm", units=200)
    assert sum(np.prod(s) for s, _, _ in cfg.param_shapes().values()) == 380632
    cfg = ControllerConfig((25, 25, 3, 5, 3), n_actions=8, n_symbols=24, core="ff", units=200)
    assert sum(np.prod(s) for s, _, _ in cfg.param_shapes().values()) == 59032


def test_initialisations():
    cfg = ControllerConfig(SIZES, 8, 6, core="gru", units=50)
    p = Controller(cfg, rng=np.random.default_rng(0)).params
    assert np.abs(p["extra.w"]).max() <= 2 / np.sqrt(50) and np.abs(p["extra.b"]).max() > 0
    cfg = ControllerConfig(SIZES, 8, 6, core="gru", units=50, init="glorot")
    p = Controller(cfg, rng=np.random.default_rng(0)).params
    assert np.all(p["extra.b"] == 0) and np.abs(p["extra.w"]).max() > 2 / np.sqrt(50)


@pytest.mark.parametrize("kwargs,message", [
    (dict(core="rnn"), "unknown core 'rnn'; allowed: ff, gru, lstm"),
    (dict(units=0), "units must be a positive integer"),
    (dict(init="xavier"), "init must be 'torch' or 'glorot'"),
    (dict(dtype="float16"), "dtype must be 'float32' or 'float64'"),
])
def test_bad_config(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ControllerConfig(SIZES, 8, 6, **kwargs)


def test_bad_observations():
    ctrl = make("gru", 1)
    state = ctrl.initial_state(2)
    with pytest.raises(ValueError, match=r"obs must be an integer array of shape \(B, 5\)"):
        ctrl.step(np.zeros((2, 4), int), state)
    with pytest.raises(ValueError, match="obs values must be below the field sizes"):
        ctrl.step(np.full((2, 5), 5), state)
