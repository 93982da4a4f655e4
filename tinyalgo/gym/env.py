"""``TinyAlgoEnv``: one task instance at a time through the Gymnasium API.

A single environment steps one lane, where NumPy's per-call overhead (a
microsecond a call on arrays of one element) would cost more than the work:
so its step runs the rules of ``tinyalgo.environment.Environment.step`` on
Python integers (the same order of precedence, the same board reads:
``tinyalgo.board``'s stored cells and margins, ``tinyalgo.host.speed``'s random table), on the bytes
of an instance packed by ``tinyalgo.host.speed.Lanes.fit``.  The tests step it
side by side with the batched environment (``TinyAlgoVectorEnv``) lane by
lane.  Rendering loads the state into a one-lane ``Environment``, whose
pictures (``tinyalgo.inspection.render``, ``tinyalgo.gym.render``) it draws.
"""
from __future__ import annotations

from typing import ClassVar

import gymnasium
import numpy as np

from tinyalgo.environment import ALL_WRITTEN, END_REASONS, RUNNING, TIMEOUT, WRONG_WRITE, Environment
from tinyalgo.gym.course import LaneStream, paper_course
from tinyalgo.gym.render import frame_shape, rgb_frame, symbol_glyphs
from tinyalgo.gym.spaces import ACTION_SPACES, OBSERVATION_SPACES, check_space_kind, make_spaces
from tinyalgo.host.speed import HASH_STEP, F, board_hash, digit_table
from tinyalgo.inspection.render import render_lane

DEFAULT_ADVANCE_AFTER = 100
RENDER_MODES = (None, "ansi", "rgb_array")
_INTS = (int, np.integer)
_DIGIT_BYTES = {}


def digit_bytes(base: int) -> bytes:
    """``host.speed.digit_table(base)`` as bytes: indexing bytes with a Python int is the cheapest lookup."""
    if base not in _DIGIT_BYTES:
        _DIGIT_BYTES[base] = digit_table(base).tobytes()
    return _DIGIT_BYTES[base]


def check_render_mode(render_mode, modes=RENDER_MODES):
    if render_mode not in modes:
        raise ValueError(f"render_mode must be one of {', '.join(map(repr, modes))}; got {render_mode!r}")
    return render_mode


def check_flag(value, what):
    if value not in (True, False):
        raise ValueError(f"{what} must be True or False; got {value!r}")
    return bool(value)


def check_spaces(action_space, observation_space) -> tuple:
    return (check_space_kind(action_space, ACTION_SPACES, "action_space"),
            check_space_kind(observation_space, OBSERVATION_SPACES, "observation_space"))


def check_options(options, allowed):
    """The reset options' value of ``allowed`` (None if absent); ValueError for anything else."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict; got {options!r}")
    unknown = set(options) - {allowed}
    if unknown:
        raise ValueError(f"unknown reset option(s) {sorted(unknown)}; allowed: {allowed}")
    return options.get(allowed)


class TinyAlgoEnv(gymnasium.Env):
    """One of the six tasks as a Gymnasium environment (see ``tinyalgo.gym``).

    Parameters
    ----------
    task
        "copy", "reverse", "walk", "addition", "addition3", "multiplication".
    base
        2..10 (paper Appendix B).
    complexity
        the complexity of every instance (default 6), or
    curriculum
        True for the paper's curriculum (section 5; the level advances after
        ``advance_after`` episodes in a row with all targets written).
    reward
        "binary" only (see ``tinyalgo.gym``).
    extra_curriculum
        3-number addition: the extra curriculum of small digits in training
        instances; default on with the curriculum, off with a fixed
        complexity.
    render_mode
        None, "ansi" (a text frame of the board, the targets and what has
        been written) or "rgb_array" (the same as a picture,
        ``tinyalgo.gym.render``).
    step_info
        False (default): ``info`` is empty while an episode runs; True: every
        step's ``info`` also carries V-hat, the next target and the
        ground-truth action (see ``tinyalgo.gym``).
    action_space
        "multidiscrete" (default, (move, write, symbol)) or "discrete" (one
        index per distinct valid action, ``tinyalgo.gym.spaces``).
    observation_space
        "multidiscrete" (default, the observation fields) or "onehot" (a flat
        float32 ``Box``, ``tinyalgo.gym.spaces``).

    ``reset(seed=None, options=None)``: ``options={"complexity": c}`` sets the
    complexity of that episode alone.  After an episode ends, call ``reset``.
    """

    metadata: ClassVar[dict] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    option = "complexity"             # the reset option naming an episode's size

    def __init__(self, task: str = "copy", base: int = 10, complexity=None, curriculum: bool = False,
                 reward: str = "binary", advance_after: int = DEFAULT_ADVANCE_AFTER, extra_curriculum=None,
                 render_mode=None, step_info: bool = False, action_space: str = "multidiscrete",
                 observation_space: str = "multidiscrete"):
        self.render_mode = check_render_mode(render_mode)
        self.step_info = check_flag(step_info, "step_info")
        kinds = check_spaces(action_space, observation_space)
        self._setup(paper_course(task, base=base, complexity=complexity, curriculum=curriculum, reward=reward,
                                 advance_after=advance_after, extra_curriculum=extra_curriculum))
        self._make_spaces(*kinds, self._env.obs_sizes)

    def _make_spaces(self, action_kind, observation_kind, obs_sizes, observation=None) -> None:
        """The action and observation spaces (``tinyalgo.gym.spaces``): writes of ``self._V`` symbols;
        fields of ``obs_sizes``, or the ``observation`` space given (one field)."""
        self.joint_actions, self._onehot, self.action_space, self.observation_space = make_spaces(
            action_kind, observation_kind, self._nm, self._V, obs_sizes, observation)

    # ------------------------------------------------------------- setup
    def _setup(self, course) -> None:
        task = self.task = course.task
        env = self._env = Environment(task, batch_size=1, complexity=task.min_complexity, seed=0)
        env.restart = False
        self._stream = LaneStream(course, env.lanes)
        board, vocab = env.input.board, task.vocab
        self._top, self._srows = board.top, board.stored_rows
        self._digits = digit_bytes(vocab.base)
        self._mask = len(self._digits) - 1
        self._px, self._py = HASH_STEP
        self._q_from_clock = task.q_from_clock
        self._dx = tuple(m[0] for m in env.input.MOVES)
        self._dy = tuple(m[1] for m in env.input.MOVES)
        self._nm, self._V, self._NONE, self._Q = task.n_moves, vocab.size, vocab.NONE, vocab.Q
        self._glyphs = symbol_glyphs(vocab.chars)
        self._started = self._over = False
        self._last = None

    @property
    def environment(self) -> Environment:
        """The one-lane ``Environment`` that packs the instances and draws the pictures
        (it holds the episode's state only after ``render``)."""
        return self._env

    @property
    def level(self) -> int:
        """The complexity level: the curriculum's, or the fixed complexity."""
        return self._stream.level

    # ------------------------------------------------------------- state
    def _start(self, packed, i, row, init, caps) -> None:
        """Start the instance ``row``/``init`` (packed at ``caps``) in the scalar state."""
        wc, wt, wa = caps
        self._packed, self._i = packed, i
        self._row, self._wc, self._wa = row, wc, wa
        self._T = self._srows * wc                  # where the targets start in the row
        self._A = self._T + wt                      # ... and the ground-truth actions
        self._xs, self._key, self._n = init[F["xs"]], init[F["key"]], init[F["n_outputs"]]
        self._patience, self._complexity, self._clock = init[F["patience"]], init[F["complexity"]], init[F["clock"]]
        self._x = self._y = 1
        self._index = self._time = self._idle = self._explored = 0
        self._written, self._move, self._write = self._NONE, self._nm, 2
        self._episode_level = self._stream.level
        self._over, self._started, self._last = False, True, None

    def _read(self) -> int:
        """The symbol under the head (``Board.read`` and the task's clock, on Python ints)."""
        x, y, wc = self._x, self._y, self._wc
        c = x - self._xs
        if c < 0:
            c = 0
        elif c >= wc:
            c = wc - 1
        if self._top:
            r = y if y < self._srows else self._srows - 1
            v = self._row[(r if r > 0 else 0) * wc + c]
        else:
            v = self._row[c]
        if v < 0:                                   # undefined: the random table's digit
            v = self._digits[(self._key + x * self._px + y * self._py) & self._mask]
        if self._q_from_clock and self._time >= self._clock:
            v = self._Q
        return v

    def _parse(self, action):
        """(move, write, symbol) as ints, or one ValueError."""
        if self.joint_actions is not None:
            return self._parse_index(action)
        try:
            if type(action) is np.ndarray:
                if action.shape != (3,) or action.dtype.kind not in "iu":
                    raise TypeError
                m, w, s = action.tolist()
            else:
                m, w, s = action
                if not (isinstance(m, _INTS) and isinstance(w, _INTS) and isinstance(s, _INTS)):
                    raise TypeError
                m, w, s = int(m), int(w), int(s)
            if 0 <= m < self._nm and 0 <= w <= 1 and 0 <= s < self._V:
                return m, w, s
        except (TypeError, ValueError):
            pass
        raise ValueError(f"an action must be (move, write, symbol) integers with move in 0..{self._nm - 1},"
                         f" write 0 or 1, symbol in 0..{self._V - 1}; got {action!r}")

    def _parse_index(self, action):
        """(move, write, symbol) of a ``Discrete`` action's index, or one ValueError."""
        rows = self.joint_actions.rows
        if isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu":
            action = action.item()
        if isinstance(action, _INTS) and not isinstance(action, bool) and 0 <= action < len(rows):
            return rows[int(action)]
        raise ValueError(f"an action must be an integer in 0..{len(rows) - 1} (action_space='discrete');"
                         f" got {action!r}")

    def _act(self, m, w, s, explored):
        """One step of the rules (``Environment.step``) on the scalar state;
        returns (correct, reason, read)."""
        if explored is not None:
            if explored not in (True, False):
                raise ValueError(f"explored must be True or False (or 0/1); got {explored!r}")
            if explored:
                self._explored = 1
        idx = self._index
        correct = False
        if w:
            correct = s == self._row[self._T + idx]
            self._index = idx = idx + 1
            self._written = s
        else:
            self._written = self._NONE
        self._x += self._dx[m]
        self._y += self._dy[m]
        self._time += 1
        self._idle = idle = 0 if w else self._idle + 1
        self._move, self._write = m, w
        if w and not correct:
            reason = WRONG_WRITE
        elif idx >= self._n:
            reason = ALL_WRITTEN
        elif idle >= self._patience:
            reason = TIMEOUT
        else:
            reason = RUNNING
        return correct, reason, self._read()

    def _check_step(self):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self._over:
            raise RuntimeError("the episode has ended (terminated or truncated): call reset() before step()")

    # --------------------------------------------------------------- API
    def reset(self, *, seed=None, options=None):
        """Start an episode: ``(obs, info)``; ``options={"complexity": c}`` sets this episode's complexity."""
        complexity = check_options(options, self.option)
        if complexity is not None:
            complexity = self._stream.course.check(complexity, f"options[{self.option!r}]")
        self._abandon()
        super().reset(seed=seed)
        if seed is not None or self._stream.rng is None:
            self._stream.rng = self.np_random       # seeded by gymnasium from ``seed``
            self._stream.clear()
        self._start(*self._stream.next(complexity))
        return self._first_obs(), self._info(RUNNING, False)

    def load(self, instances):
        """Start one canned instance (a task's ``build``) as a new episode;
        returns (obs, info) as ``reset`` does.  The curriculum does not count
        it differently: its end is counted as any episode's."""
        if len(instances) != 1:
            raise ValueError(f"load takes one instance; got {len(instances)}")
        self._abandon()
        packed = self._env.lanes.fit(instances)
        self._start(packed, 0, packed.bytes[0].tolist(), packed.init[0].tolist(), packed.capacities)
        return self._first_obs(), self._info(RUNNING, False)

    def _abandon(self) -> None:
        """Count the running episode, if any, as abandoned (the curriculum's rule, ``Course.abandoned``)."""
        if self._started and not self._over:
            self._over = True
            self._stream.abandon(self._index, self._n)

    def _first_obs(self):
        return self._emit(np.array((self._read(), self._NONE, 0, self._nm, 2), dtype=np.int64))

    def _emit(self, obs):
        """The observation in the chosen space (the fields, or one-hot)."""
        if self._onehot is None:
            return obs
        return self._onehot.encode(np.asarray(obs)[..., None] if self._one_field else obs)

    _one_field = False            # the observation is one field, not the five of ``tinyalgo.environment``

    def step(self, action, explored=None):
        """One step (reward 1 for a right write, else 0): ``(obs, reward, terminated, truncated, info)``."""
        self._check_step()
        m, w, s = self._parse(action)
        correct, reason, read = self._act(m, w, s, explored)
        obs = self._emit(np.array((read, self._written, self._explored, m, w), dtype=np.int64))
        if reason:
            info = self._end(reason, reason == ALL_WRITTEN)
        else:
            info = self._info(RUNNING, False) if self.step_info else {}
        return obs, 1.0 if correct else 0.0, reason == ALL_WRITTEN or reason == WRONG_WRITE, reason == TIMEOUT, info

    def _end(self, reason, solved, wrong=None) -> dict:
        """The episode ended: its info, the curriculum's count (``wrong``: the
        last write was wrong, if ``reason`` does not say it)."""
        info = self._info(reason, True, wrong)
        self._over = True
        self._last = (reason, info["n_correct"], self._n)
        self._stream.record(solved)
        return info

    def _info(self, reason, ended, wrong=None) -> dict:
        n_correct = self._index - (reason == WRONG_WRITE if wrong is None else wrong)
        if not self.step_info:
            if not ended:
                return {self.size_key: self._complexity, "level": self._episode_level}
            return {"reason": END_REASONS[reason], "n_correct": n_correct, self.size_key: self._complexity,
                    "level": self._episode_level}
        info = {"reason": END_REASONS[reason], "n_correct": n_correct, self.size_key: self._complexity,
                "level": self._episode_level}
        info.update(self._step_keys(ended))
        return info

    size_key = "complexity"

    def _step_keys(self, ended) -> dict:
        """V-hat, the next target and the ground-truth action of this step (nothing to do once ended)."""
        if ended:
            return {"v_hat": 0, "next_target": self._NONE, "ground_truth": np.full(3, -1, dtype=np.int64)}
        t = self._time
        a = self._row[self._A + t] if t < self._wa else -1
        target = self._row[self._T + self._index]
        gt = (np.array((a % self._nm, a // self._nm, target), dtype=np.int64) if a >= 0
              else np.full(3, -1, dtype=np.int64))
        return {"v_hat": self._n - self._index, "next_target": target, "ground_truth": gt}

    # ---------------------------------------------------------- pictures
    def _sync(self) -> Environment:
        """Load the scalar state into the one-lane ``Environment`` (for its pictures)."""
        if not self._started:
            raise RuntimeError("call reset() before render()")
        env = self._env
        env.lanes.start(self._packed, slice(self._i, self._i + 1), np.zeros(1, dtype=np.int64))
        ints = env.lanes.ints
        for name, value in (("index", self._index), ("time", self._time), ("idle", self._idle), ("x", self._x),
                            ("y", self._y), ("hash", board_hash(self._key, self._x, self._y)),
                            ("explored", self._explored), ("prev_written", self._written),
                            ("prev_move", self._move), ("prev_write", self._write)):
            ints[F[name], 0] = value
        env.observe()
        return env

    def render(self):
        """The board as ``render_mode`` asks: a text frame ("ansi"), a picture ("rgb_array") or None."""
        if self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            if self._last is not None:
                reason, n_correct, n_outputs = self._last
                return f"episode ended: {END_REASONS[reason]}, {n_correct} of {n_outputs} outputs right"
            return render_lane(self._sync(), 0)
        return rgb_frame(self._sync(), 0, *self._glyphs, self._NONE)

    @property
    def frame_shape(self) -> tuple:
        """The shape (H, W, 3) of every ``rgb_array`` frame."""
        return frame_shape(self.task.interface != "tape")
