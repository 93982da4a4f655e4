"""The one path the controller trains and evaluates on: its parts agree with
each other in float64, and training runs the taught functions.

* a rollout's steps (the first layer looked up from the embedding composed
  with ``wx``, the recurrent weights in contiguous gate blocks, both heads in
  one product) equal ``Controller.step`` without them, and ``infer`` equals
  ``step`` up to the log-softmax it skips; the lookup (``field_tables``) and
  the gate blocks (``gate_columns``) each equal the plain maths;
* ``bptt.backward`` (products over all steps around the sweep) equals the
  sum of ``Controller.step_backward`` over the steps, and each core's step
  backward equals its two parts;
* the cores' backward with kept contiguous transposes equals it without;
* ``tinyalgo train`` (Q-learning and supervised) runs ``bptt.backward`` and
  the cores' taught backward passes, solves small tasks, and a run resumed
  equals a run uninterrupted.
The gradient checks themselves are in test_controller.py and test_cores.py."""
import numpy as np
import pytest

from test_controller import CASES, make, random_rollout
from tinyalgo import bptt, cores
from tinyalgo import controller as controller_module
from tinyalgo.cli import main
from tinyalgo.controller import rollout_forward
from tinyalgo.layers import (field_offsets, field_tables, field_tables_forward, log_softmax_forward,
                             onehot_affine_forward)
from tinyalgo.qtraining import QTrainer
from tinyalgo.runs.config import QConfig, SupervisedConfig
from tinyalgo.runs.rundir import resume_run
from tinyalgo.supervised import train_supervised

TIGHT = dict(rtol=1e-10, atol=1e-12)


def assert_same(a, b, what):
    if isinstance(a, dict):
        assert set(a) == set(b), what
        for k in a:
            np.testing.assert_allclose(b[k], a[k], err_msg=f"{what}: {k}", **TIGHT)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{what}[{i}]")
    else:
        np.testing.assert_allclose(b, a, err_msg=what, **TIGHT)


def randomised(ctrl, rng):
    """The controller with every parameter drawn anew, biases included."""
    for v in ctrl.params.values():
        v[...] = rng.uniform(-0.9, 0.9, size=v.shape)
    return ctrl


@pytest.mark.parametrize("core,layers", CASES)
def test_a_rollout_equals_the_plain_steps(core, layers):
    rng = np.random.default_rng(3)
    ctrl = randomised(make(core, layers, seed=3), rng)
    T, B = 5, 3
    obs, resets, state0 = random_rollout(ctrl, T, B, rng)
    q, logp, caches, final = rollout_forward(ctrl, obs, resets, state0)
    rollout, state = ctrl.rollout(), state0
    for t in range(T):
        q_t, scores, state = rollout.step(obs[t], state, resets[t])
        assert_same(q[t], q_t, f"q at step {t}")
        assert_same(logp[t], log_softmax_forward(scores)[0], f"logp at step {t}")
    assert_same(final, state, "final state")
    state = plain = state0
    for t in range(T):
        q_t, scores, state = rollout.infer(obs[t], state, resets[t])
        assert_same((q[t], logp[t]), (q_t, log_softmax_forward(scores)[0]), f"inferred outputs at step {t}")
        q_t, scores, plain = ctrl.infer(obs[t], plain, resets[t])
        assert_same((q[t], logp[t]), (q_t, log_softmax_forward(scores)[0]), f"plain inferred outputs at step {t}")
    dq, dlogp = rng.normal(size=(T, B, 8)), rng.normal(size=(T, B, 6))
    dfinal = [tuple(rng.normal(size=a.shape) for a in s) for s in state0]
    assert_same(ctrl.backward(caches, dq, dlogp, dfinal), rollout.backward(dq, dlogp, dfinal), "rollout.backward")


@pytest.mark.parametrize("core,layers", CASES)
def test_bptt_equals_the_sum_of_the_step_backward_passes(core, layers):
    rng = np.random.default_rng(4)
    ctrl = randomised(make(core, layers, seed=4), rng)
    T, B = 4, 3
    obs, resets, state0 = random_rollout(ctrl, T, B, rng)
    caches = rollout_forward(ctrl, obs, resets, state0)[2]
    dq, dlogp = rng.normal(size=(T, B, 8)), rng.normal(size=(T, B, 6))
    dfinal = [tuple(rng.normal(size=a.shape) for a in s) for s in state0]
    grads, dstate0 = bptt.backward(ctrl, caches, dq, dlogp, dfinal)
    total, dstate = {k: np.zeros_like(v) for k, v in ctrl.params.items()}, dfinal
    for t in range(T - 1, -1, -1):
        g, dstate = ctrl.step_backward(dq[t], dlogp[t], dstate, caches[t])
        for k, v in g.items():
            total[k] += v
        if caches[t].keep is not None:
            dstate = [tuple(a * caches[t].keep for a in s) for s in dstate]
    assert_same(total, grads, "bptt.backward against the summed step_backward")
    assert_same(dstate, dstate0, "the initial state's gradient")


@pytest.mark.parametrize("core", ["gru", "lstm"])
def test_a_core_step_backward_is_its_state_part_then_its_weights_part(core):
    rng = np.random.default_rng(5)
    B, D, H = 3, 4, 5
    p = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in cores.core_param_shapes(core, D, H).items()}
    x, h, c, dh, dc = (rng.normal(size=(B, n)) for n in (D, H, H, H, H))
    if core == "gru":
        _, cache = cores.gru_step_forward(x, h, p)
        dx, dh_in, grads = cores.gru_step_backward(dh, cache)
        dax, dh_part = cores.gru_state_backward(dh, cache)
        assert_same((dx, grads), cores.gru_weights_backward(dax, cache), "weights part")
        assert_same(dh_in, dh_part, "state part")
        _, folded = cores.gru_step_forward(x, h, p, ax=x @ p["wx"] + p["bx"])
    else:
        _, _, cache = cores.lstm_step_forward(x, h, c, p)
        dx, dh_in, dc_in, grads = cores.lstm_step_backward(dh, dc, cache)
        da, dh_part, dc_part = cores.lstm_state_backward(dh, dc, cache)
        assert_same((dx, grads), cores.lstm_weights_backward(da, cache), "weights part")
        assert_same((dh_in, dc_in), (dh_part, dc_part), "state part")
        _, _, folded = cores.lstm_step_forward(x, h, c, p, ax=x @ p["wx"] + p["bx"])
    assert_same(list(cache[:-1]), list(folded[:-1]), "a step given ax")


def test_the_stacked_weights_part_is_the_sum_over_steps():
    rng = np.random.default_rng(6)
    B, D, H = 2, 3, 4
    p = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in cores.core_param_shapes("gru", D, H).items()}
    caches = [cores.gru_step_forward(rng.normal(size=(B, D)), rng.normal(size=(B, H)), p)[1] for _ in range(3)]
    daxs = [rng.normal(size=(B, 3 * H)) for _ in caches]
    dx, grads = cores.gru_weights_backward(np.concatenate(daxs), cores.stack_caches(caches))
    parts = [cores.gru_weights_backward(d, c) for d, c in zip(daxs, caches)]
    assert_same(np.concatenate([part[0] for part in parts]), dx, "dx")
    assert_same({k: sum(part[1][k] for part in parts) for k in grads}, grads, "grads")


@pytest.mark.parametrize("core", ["gru", "lstm"])
def test_the_kept_transposes_give_the_same_backward(core):
    rng = np.random.default_rng(7)
    B, D, H = 3, 4, 5
    p = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in cores.core_param_shapes(core, D, H).items()}
    wt = cores.transposed(p)
    assert set(wt) == {k for k in p if k.startswith("w")} and all(wt[k].flags.c_contiguous for k in wt)
    x, h, c, dh, dc = (rng.normal(size=(B, n)) for n in (D, H, H, H, H))
    if core == "gru":
        cache = cores.gru_step_forward(x, h, p)[1]
        dax, _ = cores.gru_state_backward(dh, cache)
        assert_same(cores.gru_state_backward(dh, cache), cores.gru_state_backward(dh, cache, wt=wt), "state part")
        assert_same(cores.gru_weights_backward(dax, cache), cores.gru_weights_backward(dax, cache, wt=wt), "weights")
    else:
        cache = cores.lstm_step_forward(x, h, c, p)[2]
        da, _, _ = cores.lstm_state_backward(dh, dc, cache)
        assert_same(cores.lstm_state_backward(dh, dc, cache), cores.lstm_state_backward(dh, dc, cache, wt=wt), "state")
        assert_same(cores.lstm_weights_backward(da, cache), cores.lstm_weights_backward(da, cache, wt=wt), "weights")


def counting(monkeypatch, module, name):
    """Count the calls of the taught function ``name`` made through ``module``."""
    calls, taught = [], getattr(module, name)

    def spy(*args, **kwargs):
        calls.append(1)
        return taught(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_q_learning_runs_the_taught_backward_and_solves_copy(monkeypatch):
    states = counting(monkeypatch, controller_module, "gru_state_backward")
    sweeps = counting(monkeypatch, bptt, "backward")
    cfg = QConfig(task="copy", units=24, seed=0, budget=300_000, validate_every=5, val_instances=20,
                  test_length=20, confirm_length=0)
    lines = []
    trainer = QTrainer(cfg, log=lines.append)
    state = trainer.run()
    assert state.solved_at is not None, "\n".join(lines[-10:])
    assert len(sweeps) == state.updates
    assert len(states) == state.chars // cfg.batch      # one taught GRU state backward per training step


def test_supervised_runs_the_taught_layers_and_solves_reverse(monkeypatch):
    from tinyalgo import layers
    calls = counting(monkeypatch, controller_module, "affine_backward")
    assert layers.affine_backward is not controller_module.affine_backward
    cfg = SupervisedConfig(task="reverse", controller="ff", units=32, seed=0, target=60, budget=300_000)
    controller, report = train_supervised(cfg, log=lambda line: None)
    assert calls
    assert report["solved_target"], report["history"][-3:]


def test_a_resumed_run_equals_the_uninterrupted_run(tmp_path):
    whole, split = str(tmp_path / "whole"), str(tmp_path / "split")
    common = ["train", "--task", "copy", "--units", "16", "--confirm-length", "0"]
    assert main(common + ["--budget", "4000", "--out", whole]) == 0
    assert main(common + ["--budget", "2000", "--out", split]) == 0
    assert main(["train", "--resume", "--out", split, "--budget", "4000"]) == 0
    a, b = resume_run(whole, log=lambda line: None), resume_run(split, log=lambda line: None)
    assert a.state.chars == b.state.chars >= 4000
    for k in a.controller.params:
        assert np.array_equal(a.controller.params[k], b.controller.params[k]), k


@pytest.mark.parametrize("sizes,max_rows", [((5, 5, 2, 5, 3), 512), ((17, 17, 2, 5, 3), 512), ((7, 3, 4), 1),
                                            ((600, 2), 512), ((3,), 512)])
def test_the_first_layer_lookup_equals_the_onehot_affine_layer(sizes, max_rows):
    rng = np.random.default_rng(8)
    w, b = rng.normal(size=(sum(sizes), 6)), rng.normal(size=6)
    obs = np.stack([rng.integers(0, s, size=40) for s in sizes], axis=1)
    obs[0] = np.array(sizes) - 1                                   # every field at its largest value
    obs[1] = 0
    tables = field_tables(w, b, sizes, max_rows=max_rows)
    assert all(len(t) <= max(max_rows, max(sizes)) for t in tables.tables)
    assert_same(onehot_affine_forward(obs, field_offsets(sizes), w, b)[0], field_tables_forward(obs, tables),
                "looked up")


@pytest.mark.parametrize("core", ["gru", "lstm"])
def test_the_contiguous_gate_blocks_give_the_same_step(core):
    rng = np.random.default_rng(9)
    B, D, H = 3, 4, 5
    p = {k: rng.uniform(-0.9, 0.9, size=s) for k, s in cores.core_param_shapes(core, D, H).items()}
    gates = cores.gate_columns(p["wh"], H)
    assert len(gates) == p["wh"].shape[1] // H and all(g.flags.c_contiguous and g.shape == (H, H) for g in gates)
    assert_same(np.concatenate(gates, axis=1), p["wh"], "the blocks side by side")
    x, h, c = (rng.normal(size=(B, n)) for n in (D, H, H))
    if core == "gru":
        assert_same(cores.gru_step_forward(x, h, p)[:1], cores.gru_step_forward(x, h, p, gates=gates)[:1], "h'")
    else:
        assert_same(cores.lstm_step_forward(x, h, c, p)[:2], cores.lstm_step_forward(x, h, c, p, gates=gates)[:2],
                    "h', c'")


def test_a_rollout_checks_every_state_it_did_not_return():
    ctrl = make("gru", 1)
    rollout, obs = ctrl.rollout(), np.zeros((2, 5), dtype=np.int64)
    with pytest.raises(ValueError, match="state of layer 0 must hold"):
        rollout.step(obs, [(np.zeros((2, 4)),)])
    _, _, state = rollout.step(obs, ctrl.initial_state(2))
    _, _, state = rollout.step(obs, state)                 # the state it returned
    with pytest.raises(ValueError, match="state of layer 0 must hold"):
        rollout.infer(obs, [(state[0][0][:, :3],)])
    with pytest.raises(ValueError, match="obs values must be below"):
        rollout.step(obs + 9, state)                       # the observation is always checked
