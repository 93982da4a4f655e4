"""The API refuses mismatches before any work: a controller evaluated on a
task, base or observation layout it was not made for, a state of another
dtype (tests/test_bad_input.py), a seed that is not one."""
import numpy as np
import pytest

from tinyalgo.controller import Controller, ControllerConfig, make_controller
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.runs.checkpoint import load_checkpoint, save_checkpoint
from tinyalgo.runs.config import QConfig


def adder():
    return make_controller(Environment("addition", batch_size=1), QConfig(task="addition", units=8), seed=0)


@pytest.mark.parametrize("task,base,message", [
    ("multiplication", 10, "the controller was trained on addition in base 10; the environment is multiplication in"
                           " base 10"),
    ("addition", 5, r"the controller has obs_sizes \(17, 17, 2, 5, 3\); addition in base 5 needs \(12, 12, 2, 5, 3\)"),
    ("walk", 10, "the controller was trained on addition in base 10; the environment is walk in base 10"),
])
def test_a_controller_is_evaluated_only_where_it_can_act(task, base, message):
    with pytest.raises(ValueError, match=message):
        evaluate_complexity(GreedyAgent(adder()), task, 6, instances=2, base=base)


def test_a_checkpoint_remembers_its_task(tmp_path):
    path = tmp_path / "m.npz"
    save_checkpoint(str(path), adder(), extra=dict(config=dict(task="addition", base=10)))
    loaded, _ = load_checkpoint(str(path))
    assert loaded.task == ("addition", 10)
    with pytest.raises(ValueError, match="trained on addition in base 10; the environment is multiplication"):
        evaluate_complexity(GreedyAgent(loaded), "multiplication", 6, instances=2)
    assert evaluate_complexity(GreedyAgent(loaded), "addition", 4, instances=2)["instances"] == 2


def test_a_hand_made_controller_is_checked_by_its_layout_alone():
    env = Environment("copy", batch_size=2)
    c = Controller(ControllerConfig.for_environment(env, "gru", 4), rng=np.random.default_rng(0))
    assert c.task is None
    assert evaluate_complexity(GreedyAgent(c), "copy", 4, instances=2)["instances"] == 2      # same layout: runs


@pytest.mark.parametrize("seed", [-1, 1.5, "7", True])
def test_an_environment_refuses_a_seed_that_is_not_one(seed):
    with pytest.raises(ValueError, match=f"seed must be None or an integer of at least 0; got {seed!r}"):
        Environment("copy", seed=seed)
    with pytest.raises(ValueError, match="seed must be None or an integer of at least 0"):
        Environment("copy").reset(seed=seed)


def test_a_state_of_another_dtype_is_refused_by_a_rollout_too():
    c = adder()
    state = [(np.zeros((2, 8), dtype=np.float32 if c.dtype == np.float64 else np.float64),)]
    with pytest.raises(ValueError, match=f"must hold {c.dtype} arrays of shape \\(2, 8\\) \\(lanes, units\\), the"
                                         " controller's dtype"):
        c.rollout().infer(np.zeros((2, 5), dtype=np.int64), state, None)
