"""The calls the grader makes into a submission, run inside the worker.

Each probe takes plain data (arrays, numbers, lists, dicts: ``wire.py``),
builds what the student's function needs with the handed-out package (a
cache from the forward pass, a ``Controller``, a ``Machine``), calls the
student's function and returns plain data.  ``watched`` also reports the
arguments the function changed in place.

This file runs in the worker, beside the submission's code: whatever it
returns is an untrusted answer.  The grader compares it with the reference
solution computed in its own process; nothing here can award a point.
"""
import copy

import numpy as np


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return True


def watched(function, named: dict):
    """``{"out": function(*named.values()), "changed": [names of the arguments it changed in place]}``."""
    before = {k: copy.deepcopy(v) for k, v in named.items()}
    out = function(*named.values())
    return {"out": out, "changed": [k for k in named if not _same(before[k], named[k])]}


def _cache_dict(cache) -> dict:
    return {k: v for k, v in cache._asdict().items() if isinstance(v, np.ndarray)}


# -- layers and cores ------------------------------------------------------------------------------------------
def affine_backward(x, w, b, dout):
    from tinyalgo.layers import affine_backward, affine_forward
    return watched(affine_backward, {"dout": dout, "cache": affine_forward(x, w, b)[1]})


def tanh_backward(x, dout):
    from tinyalgo.layers import tanh_backward, tanh_forward
    return watched(tanh_backward, {"dout": dout, "cache": tanh_forward(x)[1]})


def log_softmax_backward(x, dlogp):
    from tinyalgo.layers import log_softmax_backward, log_softmax_forward
    return watched(log_softmax_backward, {"dlogp": dlogp, "cache": log_softmax_forward(x)[1]})


def nll_loss(logp, targets, mask=None):
    from tinyalgo.layers import nll_loss
    return watched(nll_loss, {"logp": logp, "targets": targets, "mask": mask})


def gru_step_backward(x, h, p, dout):
    from tinyalgo.cores import gru_step_backward, gru_step_forward
    return watched(gru_step_backward, {"dh_new": dout, "cache": gru_step_forward(x, h, p)[1]})


def lstm_step_backward(x, h, c, p, dh, dc):
    from tinyalgo.cores import lstm_step_backward, lstm_step_forward
    return watched(lstm_step_backward, {"dh_new": dh, "dc_new": dc, "cache": lstm_step_forward(x, h, c, p)[2]})


# -- the controller and BPTT -----------------------------------------------------------------------------------
def _controller(config: dict, params: dict):
    """A Controller of ``config`` (ControllerConfig's fields) with ``params`` (None: drawn from seed 0)."""
    from tinyalgo.controller import Controller
    from tinyalgo.controller_config import ControllerConfig
    cfg = ControllerConfig(**dict(config, obs_sizes=tuple(config["obs_sizes"])))
    params = None if params is None else {k: np.array(v) for k, v in params.items()}
    return Controller(cfg, params=params, rng=np.random.default_rng(0))


def controller_step_backward(config, params, obs, state, dq, dlogp, dstate):
    ctrl = _controller(config, params)
    state = [tuple(s) for s in state]
    cache = ctrl.step(obs, state)[3]
    return watched(ctrl.step_backward, {"dq": dq, "dlogp": dlogp, "dstate": [tuple(s) for s in dstate],
                                        "cache": cache})


def bptt_backward(config, params, obs, resets, state0, dq, dlogp, dfinal=None):
    from tinyalgo import bptt
    from tinyalgo.controller import rollout_forward
    ctrl = _controller(config, params)
    caches = rollout_forward(ctrl, obs, resets, [tuple(s) for s in state0])[2]
    dfinal = None if dfinal is None else [tuple(s) for s in dfinal]
    return watched(lambda *a: bptt.backward(ctrl, *a), {"caches": caches, "dq": dq, "dlogp": dlogp,
                                                        "dstate_final": dfinal})


# -- tasks, curriculum, Q-learning -----------------------------------------------------------------------------
def column_actions(task, base, digits, lengths):
    from tinyalgo.tasks import Addition, Addition3
    made = Addition(base) if task == "addition" else Addition3(base, extra_curriculum=False)
    return {"out": np.asarray(made.build(digits, lengths).actions), "changed": []}


def curriculum(options, scores):
    from tinyalgo.curriculum import Curriculum
    c = Curriculum(**options)
    steps = []
    for k, score in enumerate(scores):
        advanced = c.record(float(score), step=k)
        steps.append({"advanced": advanced if isinstance(advanced, bool) else repr(advanced),
                      "level": c.level, "run": c.run})
    history = [{k: v for k, v in h.items() if isinstance(v, (bool, int, float, str))} if isinstance(h, dict)
               else repr(h) for h in c.history]
    return {"out": {"steps": steps, "history": history}, "changed": []}


QLEARNING = ("dynamic_one_step_targets", "lambda_returns", "watkins_targets", "penalty")


def qlearning(function, arguments):
    from tinyalgo import qlearning
    if function not in QLEARNING:
        raise ValueError(f"no probe for qlearning.{function}")
    return watched(lambda *a: getattr(qlearning, function)(**dict(zip(arguments, a))), arguments)


def minimise(tables):
    from tinyalgo.automata.machine import Machine
    from tinyalgo.automata.minimise import minimise
    m = Machine(**{k: np.array(v) if isinstance(v, np.ndarray) else v for k, v in tables.items()})
    result = minimise(m)
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], Machine)):
        return {"out": {"form": f"a {type(result).__name__}, not (Machine, block)"}, "changed": []}
    small, block = result
    return {"out": {"form": "ok", "block": np.asarray(block), "action": np.asarray(small.action),
                    "symbol": np.asarray(small.symbol), "next": np.asarray(small.next), "start": int(small.start)},
            "changed": []}
