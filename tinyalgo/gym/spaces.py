"""The environments' action and observation spaces, and their two other forms.

Action (``action_space=``):

* ``"multidiscrete"`` (default): ``MultiDiscrete([n_moves, 2, V])``, the
  triple (move, write flag, symbol).
* ``"discrete"``: ``Discrete(n_moves + n_moves * V)``, one index per distinct
  valid action.  The symbol of an action without a write is ignored, so the
  ``n_moves * 2 * V`` triples make ``n_moves`` actions that only move and
  ``n_moves * V`` that move and write (Copy: 68 triples, 36 actions):

  ======================  ==================================
  index k                 (move, write, symbol)
  ======================  ==================================
  0 .. n_moves - 1        (k, 0, 0)
  n_moves + j             (j % n_moves, 1, j // n_moves)
  ======================  ==================================

  ``JointActions.decode`` turns indices into triples and ``encode`` triples
  into indices (``env.unwrapped.joint_actions``); ``info["ground_truth"]`` stays a
  triple.

Observation (``observation_space=``):

* ``"multidiscrete"`` (default): the observation fields as integers,
  ``MultiDiscrete(sizes)`` (gym's classic tasks: ``Discrete(base + 1)``).
* ``"onehot"``: ``Box(0, 1, (sum(sizes),), float32)``, each field one-hot, the
  fields side by side: what Stable-Baselines3's policies make of a
  ``MultiDiscrete`` observation, as a flat ``Box`` that ``VecNormalize`` and
  ``VecFrameStack`` accept.

The ``MultiDiscrete`` spaces here give their sizes as Python ints when
iterated (``sum(space.nvec)`` is an ``int``): libraries that size a layer
with that sum (sb3-contrib's LSTM policies through SB3's
``get_flattened_obs_dim``) need an ``int``, not a NumPy integer.
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces

ACTION_SPACES = ("multidiscrete", "discrete")
OBSERVATION_SPACES = ("multidiscrete", "onehot")


def check_space_kind(value, allowed, what) -> str:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value


class Sizes(np.ndarray):
    """An int64 array whose elements come out as Python ints when iterated;
    arithmetic on it gives plain arrays (a space's samples are plain)."""

    def __iter__(self):
        return iter(self.tolist())

    def __array_wrap__(self, array, context=None, return_scalar=False):
        out = np.asarray(array).view(np.ndarray)
        return out[()] if return_scalar else out


def multi_discrete(sizes) -> spaces.MultiDiscrete:
    """``MultiDiscrete(sizes)`` whose ``nvec`` iterates as Python ints."""
    space = spaces.MultiDiscrete(np.asarray([int(s) for s in sizes], dtype=np.int64))
    space.nvec = space.nvec.view(Sizes)
    return space


class JointActions:
    """The distinct valid actions of ``MultiDiscrete([n_moves, 2, n_symbols])``
    as the indices of a ``Discrete`` space (table in ``tinyalgo.gym.spaces``)."""

    def __init__(self, n_moves: int, n_symbols: int):
        self.n_moves, self.n_symbols = int(n_moves), int(n_symbols)
        k = np.arange(self.n_moves + self.n_moves * self.n_symbols)
        j = np.maximum(k - self.n_moves, 0)
        writes = k >= self.n_moves
        self.table = np.stack([np.where(writes, j % self.n_moves, k), writes.astype(np.int64),
                               np.where(writes, j // self.n_moves, 0)], axis=1)      # (K, 3)
        self.table.flags.writeable = False
        self.rows = [tuple(r) for r in self.table.tolist()]    # the single environment's lookup

    @property
    def n(self) -> int:
        return len(self.table)

    def space(self) -> spaces.Discrete:
        return spaces.Discrete(self.n)

    def decode(self, index) -> np.ndarray:
        """(..., 3) triples (move, write, symbol) of indices (...)."""
        return self.table[np.asarray(index)]

    def encode(self, actions) -> np.ndarray:
        """Indices (...) of triples (..., 3) (a triple without a write: its move's index)."""
        a = np.asarray(actions)
        return np.where(a[..., 1] > 0, self.n_moves + a[..., 0] + self.n_moves * a[..., 2], a[..., 0])


class OneHot:
    """Observations of fields of ``sizes`` as one flat float32 vector: field f
    one-hot in columns offsets[f] .. offsets[f] + sizes[f] - 1."""

    def __init__(self, sizes):
        self.sizes = np.asarray([int(s) for s in sizes], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.width = int(self.sizes.sum())

    def space(self) -> spaces.Box:
        return spaces.Box(0.0, 1.0, (self.width,), dtype=np.float32)

    def encode(self, obs) -> np.ndarray:
        """(..., width) float32 of the fields (..., F)."""
        fields = np.asarray(obs)
        out = np.zeros(fields.shape[:-1] + (self.width,), dtype=np.float32)
        np.put_along_axis(out, fields + self.offsets, 1.0, axis=-1)
        return out


def make_spaces(action_kind: str, observation_kind: str, n_moves: int, n_symbols: int, obs_sizes,
                observation=None) -> tuple:
    """(joint_actions, onehot, action_space, observation_space) of one lane:
    ``JointActions`` or None, ``OneHot`` or None, and the two spaces; the
    fields of ``obs_sizes`` observed as ``observation`` (default: their
    ``MultiDiscrete``)."""
    joint = JointActions(n_moves, n_symbols) if action_kind == "discrete" else None
    onehot = OneHot(obs_sizes) if observation_kind == "onehot" else None
    action_space = multi_discrete([n_moves, 2, n_symbols]) if joint is None else joint.space()
    observation_space = (onehot.space() if onehot is not None
                         else observation if observation is not None else multi_discrete(obs_sizes))
    return joint, onehot, action_space, observation_space
