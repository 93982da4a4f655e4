"""Assignment "controller_backward": Controller.step_backward (tinyalgo/controller.py; tutorial 03).

One controller step (embedding, core layers, the "extra" layer and tanh, the
Q head and the symbol head's log-softmax) checked against centred
differences of Controller.step, on every parameter and the incoming state."""
import numpy as np

from grading import GRU_BLOCKS, LSTM_BLOCKS, assert_gradients, gradient_errors
from tinyalgo.controller import Controller
from tinyalgo.controller_config import ControllerConfig

OBS_SIZES, A, V = (4, 3, 2, 3, 3), 4, 3


def check_step(core, layers, seed, B=3, H=4):
    rng = np.random.default_rng(seed)
    ctrl = Controller(ControllerConfig(OBS_SIZES, n_actions=A, n_symbols=V, core=core, units=H, layers=layers),
                      rng=rng)
    obs = np.stack([rng.integers(0, s, size=B) for s in OBS_SIZES], axis=1)
    state = [tuple(rng.normal(size=(B, H)) for _ in s) for s in ctrl.initial_state(B)]
    dq, dlogp = rng.normal(size=(B, A)), rng.normal(size=(B, V))
    dstate = [tuple(rng.normal(size=(B, H)) for _ in s) for s in state]

    def loss():
        q, logp, new_state, _ = ctrl.step(obs, state)
        total = float(np.sum(q * dq) + np.sum(logp * dlogp))
        return total + sum(float(np.sum(a * d)) for s, ds in zip(new_state, dstate) for a, d in zip(s, ds))

    grads, dstate_in = ctrl.step_backward(dq, dlogp, dstate, ctrl.step(obs, state)[3])
    names = ("h", "c")
    arrays = dict(ctrl.params)
    analytic = dict(grads or {})
    for l, (s, ds) in enumerate(zip(state, dstate_in or [()] * len(state))):
        for i, a in enumerate(s):
            arrays[f"state{l}.{names[i]}"] = a
            analytic[f"state{l}.{names[i]}"] = ds[i] if len(ds) > i else None
    gate = GRU_BLOCKS if core == "gru" else LSTM_BLOCKS
    blocks = {f"core{l}.{k}": v for l in range(layers) for k, v in gate.items()}
    assert_gradients(f"Controller.step_backward ({core}, {layers} layer(s))",
                     gradient_errors(loss, arrays, analytic, blocks))


def test_step_backward_gru():
    check_step("gru", 1, 30)


def test_step_backward_lstm_two_layers():
    check_step("lstm", 2, 31)


def test_step_backward_ff():
    check_step("ff", 1, 32)
