"""A worked example: Stable-Baselines3 on ``tinyalgo/Copy-v0`` and
``tinyalgo/Reverse-v0``, side by side with tinyalgo's own Q-learner.

Each method trains on one task, then acts greedily on fresh instances at the
training complexity C, at 10 C and at 100 C.  Both are tested by the same
function, ``tinyalgo.evaluation.evaluate_complexity``, on the same instances
(same seed): an SB3 policy is wrapped as an agent of tinyalgo's batched
``Environment`` (``SB3Agent``: the gym action (move, write, symbol) is the
joint action move + n_moves * write and the symbol), so the solved fraction
and the character accuracy (correct outputs before the first error) mean
the same thing for every row.

- ``ppo``: SB3's PPO, ``MlpPolicy`` (feed-forward), on the batched adapter
  ``tinyalgo.gym.sb3.make_sb3_vec_env`` (64 lanes, 32 steps a lane per
  update), every episode of complexity C.
- ``recurrent_ppo``: sb3-contrib's ``RecurrentPPO``, ``MlpLstmPolicy``, the
  same way (needs ``pip install sb3-contrib``).
- ``q``: tinyalgo's Q-learner (``tinyalgo.qtraining.QTrainer``, the paper's
  full method and curriculum from complexity 6), stopped at the paper's solve
  (50 of 50 fresh instances of length 100) or at its budget.

Steps to solve: for SB3, the first update after which 50 of 50 fresh
instances at C are solved greedily (checked after every update); for the
Q-learner, the characters (lane-steps) trained at the paper's solve.
"""
from __future__ import annotations

import csv
import os
import time

import numpy as np

from tinyalgo.evaluation import GreedyAgent, evaluate_complexity
from tinyalgo.tasks import make_task

ENV_IDS = {"copy": "tinyalgo/Copy-v0", "reverse": "tinyalgo/Reverse-v0"}
METHODS = ("ppo", "recurrent_ppo", "q")
FACTORS = (1, 10, 100)
COLUMNS = ("task", "method", "policy", "train_complexity", "trained_steps", "steps_to_solve", "train_seconds",
           "test_complexity", "instances", "solved", "char_accuracy")
DEFAULT_OUT = "figures/sb3_example"


def missing_extra(methods) -> str | None:
    """Why ``methods`` cannot run here (a missing package), or None."""
    needed = {"ppo": "stable_baselines3", "recurrent_ppo": "sb3_contrib"}
    for method in methods:
        name = needed.get(method)
        if name is None:
            continue
        try:
            __import__(name)
        except ImportError:
            extra = "pip install -e '.[sb3]'" if method == "ppo" else "pip install sb3-contrib"
            return f"{method} needs {name.replace('_', '-')}, which is not installed ({extra})"
    return None


class SB3Agent:
    """An SB3 policy acting greedily in tinyalgo's batched ``Environment``
    (the agent interface of ``tinyalgo.evaluation``); LSTM state for a
    recurrent policy, reset where an episode starts."""

    def __init__(self, model, n_moves: int):
        self.model, self.n_moves = model, n_moves

    def start(self, batch: int) -> None:
        self.state = None

    def act(self, env, obs, reset):
        actions, self.state = self.model.predict(obs, state=self.state, episode_start=reset, deterministic=True)
        actions = np.asarray(actions)
        return actions[:, 0] + self.n_moves * actions[:, 1], actions[:, 2]


def evaluate_at(agent, task_name: str, complexity: int, instances: int, seed: int) -> list:
    """Greedy tests at C, 10 C and 100 C (``FACTORS``), fresh instances drawn with ``seed``."""
    task = make_task(task_name)
    rows = []
    for f in FACTORS:
        r = evaluate_complexity(agent, task, complexity * f, instances, seed=seed + f)
        rows.append(dict(test_complexity=r["complexity"], instances=r["instances"], solved=r["solved"],
                         char_accuracy=r["char_accuracy"]))
    return rows


def train_sb3(task_name: str, method: str = "ppo", steps: int = 50_000, complexity: int = 6, n_envs: int = 64,
              n_steps: int = 32, seed: int = 0, check_instances: int = 50, log=print):
    """Train PPO (``method="ppo"``) or RecurrentPPO (``"recurrent_ppo"``) for
    ``steps`` lane-steps on the batched env at ``complexity``.  Returns
    (model, agent, info): info has trained_steps, steps_to_solve (None if
    never solved at C), train_seconds, policy."""
    from stable_baselines3.common.callbacks import BaseCallback

    from tinyalgo.gym.sb3 import make_sb3_vec_env

    if method == "ppo":
        from stable_baselines3 import PPO as Algo
        policy = "MlpPolicy"
    elif method == "recurrent_ppo":
        from sb3_contrib import RecurrentPPO as Algo
        policy = "MlpLstmPolicy"
    else:
        raise ValueError(f"method must be ppo or recurrent_ppo; got {method!r}")

    task = make_task(task_name)
    venv = make_sb3_vec_env(ENV_IDS[task_name], n_envs=n_envs, seed=seed, complexity=complexity)
    model = Algo(policy, venv, n_steps=n_steps, seed=seed, device="cpu", verbose=0)
    agent = SB3Agent(model, task.n_moves)
    info = dict(steps_to_solve=None, policy=policy)

    class SolveCheck(BaseCallback):
        """After each update's rollout: 50 fresh instances at C, greedily."""

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            if info["steps_to_solve"] is None:
                r = evaluate_complexity(agent, task, complexity, check_instances, seed=10_000 + self.num_timesteps)
                if r["solved"] == 1.0:
                    info["steps_to_solve"] = int(self.num_timesteps)
                    log(f"{task_name} {method}: {check_instances} of {check_instances} solved at complexity"
                        f" {complexity} after {self.num_timesteps} steps")

    t0 = time.perf_counter()
    model.learn(steps, callback=SolveCheck())
    info.update(trained_steps=int(model.num_timesteps), train_seconds=round(time.perf_counter() - t0, 1))
    venv.close()
    return model, agent, info


def train_q(task_name: str, budget: int = 300_000, seed: int = 0, log=print, **options):
    """tinyalgo's Q-learner (paper's full method) until its solve or ``budget``
    characters.  Returns (trainer, agent, info) like ``train_sb3``; info also
    has the curriculum level reached."""
    from tinyalgo.qtraining import QTrainer
    from tinyalgo.runs.config import QConfig

    cfg = QConfig(task=task_name, budget=budget, seed=seed, confirm_length=0, **options)
    trainer = QTrainer(cfg, log=lambda *a: None)
    t0 = time.perf_counter()
    state = trainer.run()
    solved = state.solved_at["chars"] if state.solved_at else None
    info = dict(trained_steps=int(state.chars), steps_to_solve=solved, train_seconds=round(time.perf_counter() - t0, 1),
                policy=f"{cfg.controller} {cfg.units} units", level=trainer.curriculum.level)
    log(f"{task_name} q: {state.chars} characters, solved at {solved}, curriculum level {info['level']}")
    return trainer, GreedyAgent(trainer.controller), info


def run_example(tasks=("copy", "reverse"), methods=("ppo", "recurrent_ppo", "q"), steps: int = 50_000,
                complexity: int = 6, q_budget: int = 300_000, instances: int = 50, seed: int = 0,
                n_envs: int = 64, n_steps: int = 32, log=print, on_rows=None) -> list:
    """Every (task, method): train, then test at C, 10 C, 100 C.  One row per
    test (``COLUMNS``); ``on_rows(rows)`` after each method (to save as it goes)."""
    rows = []
    for task_name in tasks:
        for method in methods:
            if method == "q":
                _, agent, info = train_q(task_name, q_budget, seed, log=log)
            else:
                _, agent, info = train_sb3(task_name, method, steps, complexity, n_envs, n_steps, seed, log=log)
            for test in evaluate_at(agent, task_name, complexity, instances, seed=1000 * (seed + 1)):
                rows.append(dict(task=task_name, method=method, policy=info["policy"], train_complexity=(
                    f"curriculum 6..{info['level']}" if method == "q" else complexity),
                    trained_steps=info["trained_steps"], steps_to_solve=info["steps_to_solve"],
                    train_seconds=info["train_seconds"], **test))
                log(f"{task_name:8s} {method:14s} C={test['test_complexity']:5d}: solved {test['solved']:6.1%}"
                    f"  chars {test['char_accuracy']:6.1%}")
            if on_rows is not None:
                on_rows(rows)
    return rows


def write_rows(rows, out: str) -> str:
    """``out``/results.csv (``COLUMNS``); returns its path."""
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "results.csv")
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if row[k] is None else round(row[k], 4) if isinstance(row[k], float) else row[k])
                        for k in COLUMNS})
    return path
