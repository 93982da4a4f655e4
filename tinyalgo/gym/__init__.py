"""Gymnasium environments of the six tasks (paper section 3), and of gym's
classic algorithmic tasks.

``import tinyalgo.gym`` registers ``tinyalgo/Copy-v0``, ``tinyalgo/Reverse-v0``,
``tinyalgo/Walk-v0``, ``tinyalgo/Addition-v0``, ``tinyalgo/Addition3-v0`` and
``tinyalgo/Multiplication-v0``, and gym's classic six under their old names
(``tinyalgo/GymCopy-v0``, ``tinyalgo/GymRepeatCopy-v0``,
``tinyalgo/GymDuplicatedInput-v0``, ``tinyalgo/GymReverse-v0``,
``tinyalgo/GymReversedAddition-v0``, ``tinyalgo/GymReversedAddition3-v0``:
their conventions are in ``tinyalgo.gym.classic``)::

    import gymnasium as gym
    import tinyalgo.gym
    env = gym.make("tinyalgo/Reverse-v0", complexity=10)
    envs = gym.make_vec("tinyalgo/Reverse-v0", num_envs=16, complexity=10)

This package is the only part of tinyalgo that imports gymnasium (the ``gym``
extra: ``pip install -e '.[gym]'``); ``tinyalgo.gym.sb3`` is the one that
imports Stable-Baselines3 (the ``sb3`` extra).  ``TinyAlgoEnv`` steps one
instance on Python integers; ``TinyAlgoVectorEnv`` runs ``num_envs`` lanes of
tinyalgo's batched ``Environment``.

Action: ``MultiDiscrete([n_moves, 2, V])``, (move, write flag, symbol): the
moves of the task's interface (tape: 0 left, 1 right; grid: also 2 down,
3 up), whether to write, and the symbol written (a class of the vocabulary,
``tinyalgo.symbols``; ignored when the write flag is 0).

Observation: ``MultiDiscrete(obs_sizes)``, the five fields of
``tinyalgo.environment``: symbol under the input head, symbol written at the
previous step, explored flag, previous move, previous write flag.  The
explored flag is set by ``step(action, explored=True)`` (an exploratory
action, paper section 6); plain ``step(action)`` leaves it 0.

Other spaces (``tinyalgo.gym.spaces``): ``action_space="discrete"`` gives a
``Discrete`` action, one index per distinct valid (move, write, symbol) (the
symbol of a move without a write is ignored: Copy's 68 triples are 36
actions), for DQN and other libraries that take ``Discrete`` only;
``observation_space="onehot"`` gives a flat float32 ``Box``, the fields
one-hot side by side, which Stable-Baselines3's ``VecNormalize`` and
``VecFrameStack`` accept (as would ``gymnasium.wrappers.FlattenObservation``
around a single environment)::

    env = gym.make("tinyalgo/Copy-v0", action_space="discrete", observation_space="onehot")

End of an episode: a wrong write or all targets written ``terminated``; the
paper's timeout (complexity + 2 steps without a write) ``truncated``.  There
is no other step limit (``gym.make(..., max_episode_steps=n)`` adds one).

Reward: the paper's 0/1 reward, 1 for a correct write.  The "discretized"
and "continuous" rewards (paper Appendix C) score the symbol head's
probabilities, which a Gymnasium action (one chosen symbol) does not carry:
they are refused; use ``tinyalgo.environment.Environment`` for them.

Info, by default (what costs nothing): ``reset`` gives ``complexity`` (of the
episode) and ``level`` (the curriculum's level, or the fixed complexity); a
step that ends an episode gives ``reason`` ("all written", "wrong write",
"timeout"), ``n_correct`` (correct outputs), ``complexity`` and ``level``;
other steps give ``{}``.  With ``step_info=True`` every reset and step gives
all of these (``reason`` "running" while it runs) and ``v_hat`` (outputs still
to produce, counting the one due now: the paper's V-hat, section 6.1),
``next_target`` (the symbol a write must produce now) and ``ground_truth``
(the action (move, write, symbol) of the reference solution at this step, -1
three times past the reference solution's length: imitate it to solve the
task).  At an episode's last step there is no step to take: ``v_hat`` is 0,
``next_target`` the vocabulary's none, ``ground_truth`` -1.

Pictures: ``render_mode="ansi"`` (a text frame: the board around the head,
the targets, what has been written) or ``"rgb_array"`` (the same as a uint8
image, ``tinyalgo.gym.render``: ``gymnasium.wrappers.RecordVideo`` films it).

Complexity: ``complexity=c`` (every instance has complexity c; default 6)
or ``curriculum=True``: the paper's curriculum (section 5: start at 6, add 4
after a perfect validation; instances of complexity U{C-4..C} at level C).
A Gymnasium environment has no validation set, so the level advances after
``advance_after`` (default 100) episodes in a row end with all targets
written; any other end starts the count again, and so does an episode
abandoned by ``reset()`` (or cut by ``max_episode_steps``) before it ends.
The level is training progress: a seeded ``reset`` keeps it.

Seeding: every lane has its own ``numpy.random.Generator`` and draws its
instances from it (a chunk at a time, ``tinyalgo.gym.course``), so lane i of
a ``TinyAlgoVectorEnv`` reset with ``seed=s`` follows the same instances as a
``TinyAlgoEnv`` reset with ``seed=s + i`` (and reset again, without a seed,
after each episode).

Vector environment: ``gym.make_vec(id, num_envs=n)`` is one batched
``TinyAlgoVectorEnv`` with Gymnasium's ``NEXT_STEP`` autoreset (or
``autoreset_mode="SameStep"`` / ``"Disabled"``), so the wrappers of
``gymnasium.wrappers.vector`` compose with it; ``max_episode_steps=n``
truncates its episodes as ``TimeLimit`` truncates a single environment's (the
info of a cut episode is the running episode's).  Gymnasium applies single-environment ``wrappers=``
only to a vector of single environments:
``gym.make_vec(id, num_envs=n, vectorization_mode="sync", wrappers=[...])``.
"""
from __future__ import annotations

try:
    import gymnasium  # noqa: F401  (the optional dependency: a clear message without it)
except ImportError as exc:        # pragma: no cover - exercised only without gymnasium
    raise ImportError("tinyalgo.gym needs gymnasium: pip install -e '.[gym]'"
                      " (or pip install 'gymnasium>=1.1')") from exc

from tinyalgo.gym.classic import (CLASSIC_IDS, CLASSIC_SPECS, MAX_EPISODE_STEPS, GymAlgorithmicEnv,
                                  GymAlgorithmicVectorEnv)
from tinyalgo.gym.env import TinyAlgoEnv
from tinyalgo.gym.vector import TinyAlgoVectorEnv

ENV_IDS = {"copy": "tinyalgo/Copy-v0", "reverse": "tinyalgo/Reverse-v0", "walk": "tinyalgo/Walk-v0",
           "addition": "tinyalgo/Addition-v0", "addition3": "tinyalgo/Addition3-v0",
           "multiplication": "tinyalgo/Multiplication-v0"}

__all__ = ["TinyAlgoEnv", "TinyAlgoVectorEnv", "GymAlgorithmicEnv", "GymAlgorithmicVectorEnv", "ENV_IDS",
           "CLASSIC_IDS", "register_envs"]


def register_envs() -> None:
    """Register the six tasks and gym's classic six with gymnasium (``import tinyalgo.gym`` does it)."""
    for name, env_id in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="tinyalgo.gym.env:TinyAlgoEnv",
                               vector_entry_point="tinyalgo.gym.vector:TinyAlgoVectorEnv", kwargs={"task": name})
    for name, env_id in CLASSIC_IDS.items():
        kwargs, threshold = CLASSIC_SPECS[name]
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="tinyalgo.gym.classic:GymAlgorithmicEnv",
                               vector_entry_point="tinyalgo.gym.classic:GymAlgorithmicVectorEnv",
                               kwargs=dict(kwargs), max_episode_steps=MAX_EPISODE_STEPS,
                               reward_threshold=threshold)


register_envs()
