"""The controller over rollouts: gradient checks with an episode boundary,
random biases and initial states (FF, GRU, LSTM, 2 layers); the barrier cuts;
inference equals training; bad input is refused."""
import numpy as np
import pytest

from gradcheck_helpers import EXTENDED, H_STEP
from tinyalgo.controller import Controller, ControllerConfig, rollout_forward
from tinyalgo.gradcheck import check_gradients, format_report

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


def buffered_caches(ctrl, obs, resets, state0):
    """The caches of a rollout stepped as the training loops step it: a
    FrozenController fold and StepBuffers (the backward pass's fast path)."""
    fold, buffers, caches, state = ctrl.frozen(), ctrl.step_buffers(len(obs), obs.shape[1]), [], state0
    for t in range(len(obs)):
        _, _, state, cache = ctrl.step(obs[t], state, resets[t], fold=fold, buffers=buffers)
        caches.append(cache)
    assert buffers.covers(caches)
    return caches


@pytest.mark.parametrize("core,layers", CASES)
@pytest.mark.parametrize("T,B", [(3, 2), (5, 3)])
@pytest.mark.parametrize("path", ["plain", "buffers"])
def test_rollout_gradients(core, layers, T, B, path):
    rng = np.random.default_rng(T * 10 + B)
    ctrl = make(core, layers, seed=T + B)
    obs, resets, state0 = random_rollout(ctrl, T, B, rng)
    wq, wl = rng.normal(size=(T, B, 8)), rng.normal(size=(T, B, 6))
    caches = rollout_forward(ctrl, obs, resets, state0)[2] if path == "plain" else \
        buffered_caches(ctrl, obs, resets, state0)
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
    report = check_gradients(loss, arrays, analytic, h=H_STEP)
    assert set(report["errors"]) >= set(ctrl.params)
    assert max(report["errors"].values()) <= 1e-6, (core, layers, T, B, format_report(report))


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

    report = check_gradients(loss, dict(ctrl.params), grads)
    assert max(report["errors"].values()) <= 1e-6, format_report(report)


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
        qi, li, state = ctrl.infer(obs[t], state, resets[t])
        np.testing.assert_array_equal(qi, q[t])
        np.testing.assert_array_equal(li, logp[t])
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


@pytest.mark.parametrize("core,layers", CASES)
def test_frozen_inference_matches_infer(core, layers):
    rng = np.random.default_rng(4)
    ctrl = make(core, layers, units=7)
    obs, resets, _ = random_rollout(ctrl, 6, 4, rng)
    frozen = ctrl.frozen()
    s1, s2 = ctrl.initial_state(4), frozen.initial_state(4)
    for t in range(6):
        q1, l1, s1 = ctrl.infer(obs[t], s1, resets[t])
        q2, l2, s2 = frozen.infer(obs[t], s2, resets[t])
        np.testing.assert_allclose(q2, q1, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(l2, l1, rtol=1e-10, atol=1e-12)


def side_by_side(core, layers, seed, first, second):
    """Run one random rollout twice, stepping with ``first(ctrl, obs, state,
    reset, fold)`` and with ``second``; returns the controller, (dq, dlogp),
    and per run the list of (q, logp) and the caches."""
    rng = np.random.default_rng(seed)
    ctrl = make(core, layers, units=6)
    obs, resets, state0 = random_rollout(ctrl, 5, 3, rng)
    grads_in = rng.normal(size=(5, 3, 8)), rng.normal(size=(5, 3, 6))
    fold = ctrl.frozen()
    runs = []
    for stepper in (first, second):
        outputs, caches, state = [], [], state0
        for t in range(5):
            q, logp, state, cache = stepper(ctrl, obs[t], state, resets[t], fold)
            outputs.append((q, logp))
            caches.append(cache)
        runs.append((outputs, caches))
    return ctrl, grads_in, runs


def assert_same_gradients(ctrl, grads_in, caches1, caches2, rtol):
    g1, _ = ctrl.backward(caches1, *grads_in)
    g2, _ = ctrl.backward(caches2, *grads_in)
    for k in g1:
        np.testing.assert_allclose(g2[k], g1[k], rtol=rtol, atol=1e-12, err_msg=k)


@pytest.mark.parametrize("core,layers", CASES)
def test_folded_training_step_gives_the_same_outputs_and_gradients(core, layers):
    ctrl, grads_in, ((out1, plain), (out2, folded)) = side_by_side(
        core, layers, 6, lambda c, o, s, r, f: c.step(o, s, r), lambda c, o, s, r, f: c.step(o, s, r, fold=f))
    for (q1, l1), (q2, l2) in zip(out1, out2):
        np.testing.assert_allclose(q2, q1, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(l2, l1, rtol=1e-10, atol=1e-12)
    assert_same_gradients(ctrl, grads_in, plain, folded, 1e-9)


@pytest.mark.parametrize("core,layers", CASES)
def test_logits_step_defers_the_log_softmax_to_the_backward_pass(core, layers):
    """step(logits=True) returns the symbol scores (their log-softmax is the
    usual logp) and BPTT over such caches gives the same gradients."""
    ctrl, grads_in, ((out1, usual), (out2, deferred)) = side_by_side(
        core, layers, 8, lambda c, o, s, r, f: c.step(o, s, r, fold=f),
        lambda c, o, s, r, f: c.step(o, s, r, fold=f, logits=True))
    for (q1, l1), (q2, scores) in zip(out1, out2):
        np.testing.assert_array_equal(q2, q1)
        np.testing.assert_allclose(scores - np.log(np.exp(scores).sum(1, keepdims=True)), l1, rtol=1e-12, atol=1e-12)
        assert not np.allclose(scores, l1)
    assert_same_gradients(ctrl, grads_in, usual, deferred, 1e-10)
    with pytest.raises(ValueError, match="mix logits=True and logits=False"):
        ctrl.backward(usual[:2] + deferred[2:], *grads_in)


@pytest.mark.parametrize("core,layers", CASES)
def test_step_buffers_give_the_same_outputs_and_gradients(core, layers):
    """Steps that write into StepBuffers return the same outputs, and BPTT
    reading the buffers (or, for a part of the rollout, stacking the caches)
    gives the same gradients."""
    bufs = {}

    def buffered(c, o, s, r, f):
        b = bufs.setdefault("b", c.step_buffers(5, 3))
        return c.step(o, s, r, fold=f, buffers=b)

    ctrl, grads_in, ((out1, plain), (out2, buffered_caches_)) = side_by_side(
        core, layers, 9, lambda c, o, s, r, f: c.step(o, s, r, fold=f), buffered)
    for (q1, l1), (q2, l2) in zip(out1, out2):
        np.testing.assert_array_equal(q2, q1)
        np.testing.assert_array_equal(l2, l1)
    assert bufs["b"].covers(buffered_caches_)
    assert_same_gradients(ctrl, grads_in, plain, buffered_caches_, 1e-10)
    part = (grads_in[0][1:], grads_in[1][1:])             # rows 1..4 only: not covered, the caches are stacked
    assert not bufs["b"].covers(buffered_caches_[1:])
    assert_same_gradients(ctrl, part, plain[1:], buffered_caches_[1:], 1e-10)
    with pytest.raises(ValueError, match="these StepBuffers hold 5 steps"):
        ctrl.step(np.zeros((3, 5), int), ctrl.initial_state(3), buffers=bufs["b"])


@pytest.mark.parametrize("core,layers", CASES)
def test_helper_thread_gives_the_same_gradients(core, layers):
    """With set_threads(2) the weight-gradient products of chunks of steps go
    to a helper thread; over a rollout of several chunks the gradients are
    those of one thread up to rounding."""
    rng = np.random.default_rng(12)
    ctrl = make(core, layers, units=6)
    T, B = 23, 3                                  # chunks of 10, 10 and 3 steps
    obs, resets, state0 = random_rollout(ctrl, T, B, rng)
    resets[5, 1] = resets[17, 2] = True
    grads_in = rng.normal(size=(T, B, 8)), rng.normal(size=(T, B, 6))
    caches = buffered_caches(ctrl, obs, resets, state0)
    one, d1 = ctrl.backward(caches, *grads_in)
    two, d2 = ctrl.set_threads(2).backward(caches, *grads_in)
    ctrl.set_threads(1)
    for k in one:
        np.testing.assert_allclose(two[k], one[k], rtol=1e-12, atol=1e-12, err_msg=k)
    for s1, s2 in zip(d1, d2):
        for a1, a2 in zip(s1, s2):
            np.testing.assert_array_equal(a2, a1)
    with pytest.raises(ValueError, match="threads must be 1 or 2; got 3"):
        ctrl.set_threads(3)
