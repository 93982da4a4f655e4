"""Gym's classic algorithmic tasks (gym 0.19, ``gym/envs/algorithmic``,
dropped from gym in 2021), on tinyalgo's environment, with their old
conventions: ``tinyalgo/GymCopy-v0``, ``tinyalgo/GymRepeatCopy-v0``,
``tinyalgo/GymDuplicatedInput-v0``, ``tinyalgo/GymReverse-v0``,
``tinyalgo/GymReversedAddition-v0`` and ``tinyalgo/GymReversedAddition3-v0``.

Each task is a small ``tinyalgo.tasks.Task``: where the input goes on the
board, the targets, the time limit, and a reference solution (the ground
truth); tinyalgo's ``Environment`` runs it, and only the old rules below
differ from the paper's tasks (``tinyalgo.gym``).

The old conventions, kept:

* Input: a tape of symbols (a grid of ``rows`` rows for the additions) of
  ``base`` symbols; the read head starts on the first (top-left) symbol.
  Observation: ``Discrete(base + 1)``, the symbol under the head, or ``base``
  (blank) off the input, in any direction.
* Action: (move, write, symbol): moves 0 left, 1 right (grid: also 2 up,
  3 down), write 0 or 1, the symbol written (ignored without a write), as
  ``MultiDiscrete([moves, 2, base])`` (gym's was a ``Tuple`` of the same three
  ``Discrete``; Stable-Baselines3 takes ``MultiDiscrete`` and not ``Tuple``,
  and a tuple of three ints is still a valid action).
* Reward: +1 a correct write, -0.5 a wrong write (which ends the episode),
  -1 past the time limit (which ends it, whatever the step did), else 0.  An
  episode ends (``terminated``, gym's ``done``) when every target is written,
  at a wrong write, or past the time limit: more than ``input length +
  targets + 4`` steps (``2 x input length + 4`` for the additions).
  ``info["reason"]`` says which ("timeout" for the time limit, even where
  the step also wrote the last target or a wrong one).  The ids keep gym's
  ``max_episode_steps=200`` (a ``truncated`` end the curriculum's lengths,
  at most 32, never reach: the time limit comes first; a fixed ``length``
  can) and ``reward_threshold``.
* Curriculum: input lengths U{m .. m + 2}, m starting at 2 (Reverse: 1); m
  grows by 1, up to 30, after ``last`` episodes in a row (10; Reverse and
  RepeatCopy: 50) each fall short of the targets' count by at most the
  task's threshold (-1; Reverse and RepeatCopy: -0.1) in total reward.  An
  episode that ends is solved only with every target written in time (a
  wrong write or the time limit costs at least 1.5).  An episode abandoned
  by ``reset()`` (or cut by ``max_episode_steps``) counts too, as in gym:
  its shortfall is the targets it did not write, so with the -1 threshold
  an episode abandoned one target short counts as solved, and any other
  abandoned episode breaks the run.  Each lane has its own curriculum (gym
  0.19's was per environment); ``length=L`` fixes the input length instead.
* Defaults: Copy, RepeatCopy, DuplicatedInput base 5, Reverse base 2, the
  additions base 3; letters A, B, ... for the symbols in pictures (digits for
  the additions).  ``base`` is 2..10 here (tinyalgo's vocabulary).

The old documentation's errors, fixed here (and said in each class):

* Reverse: "a special character ``r`` indicates the end of the sequence"
  (gym's page of Reverse-v0, which described the paper's task) -- gym's
  Reverse has no such character: the head finds the end by reading the blank
  past the last symbol.  (The paper's reverse, with its marker, is
  ``tinyalgo/Reverse-v0``.)
* ReversedAddition: "the read head starts on the last digit of the top
  number (the upper-right corner)" -- the numbers are written least
  significant digit first (hence "reversed"), from the left, and the head
  starts on the top number's least significant digit, the upper-*left*
  corner; every row has the same length, and the sum has no leading zero (a
  final carry of 0 is not written).
* "The time limit is fairly conservative" -- not for ReversedAddition3:
  reading three digits a column takes 3 steps a column, more than the
  2 x length + 4 allowed beyond 4 digits (3 with a final carry), so from a
  length of 5 no episode can be solved and the curriculum stalls at m = 3..4
  (gym's own code said so in a TODO).  ``solvable_time_limit=True`` allows
  rows x length + 4 steps instead.
* RepeatCopy and DuplicatedInput are not from "Learning Simple Algorithms
  from Examples" (arXiv:1511.07275), as gym's sources and pages said, but
  from "Reinforcement Learning Neural Turing Machines" (Zaremba and
  Sutskever, 2015); RepeatCopy's target is the input forward, backward and
  forward again.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np
from gymnasium import spaces

from tinyalgo.curriculum import FixedComplexity, UniformComplexity
from tinyalgo.environment import ALL_WRITTEN, END_REASONS, RUNNING, TIMEOUT
from tinyalgo.gym.course import Course
from tinyalgo.gym.env import TinyAlgoEnv, check_flag, check_render_mode, check_spaces
from tinyalgo.gym.render import symbol_glyphs
from tinyalgo.gym.vector import TinyAlgoVectorEnv
from tinyalgo.symbols import check_base
from tinyalgo.tasks.base import DOWN, LEFT, RIGHT, UP, Task, _pad_actions
from tinyalgo.tasks.instances import NO_CLOCK, Instances, add_digits, lengths_mask

# gym's moves (0 left, 1 right, 2 up, 3 down) -> tinyalgo's (0 left, 1 right, 2 down, 3 up), and back
MOVE_TO_TINYALGO = np.array([LEFT, RIGHT, UP, DOWN])
MOVE_TO_GYM = np.argsort(MOVE_TO_TINYALGO)
_TO_TINYALGO = tuple(int(m) for m in MOVE_TO_TINYALGO)
MAX_LEVEL = 30


class _Classic(Task):
    """A classic task: the input at x = 1.. on rows 1..rows, every other cell
    blank (the board's ``e`` fill, observed as ``base``)."""

    fill, min_complexity = "e", 1
    start, last, default_base, chars = 2, 10, 5, True
    min_shortfall = -1.0          # gym's MIN_REWARD_SHORTFALL_FOR_PROMOTION

    def time_limits(self, lengths, n_targets):
        """gym's ``time_limit``: more steps than this end the episode."""
        return lengths + n_targets + 4

    def _instances(self, cells, lengths, targets, n_outputs, actions, n_steps) -> Instances:
        k = len(lengths)
        return Instances(cells=cells, x0=np.ones(k, np.int64), key=np.zeros(k, np.int64), targets=targets,
                         n_outputs=n_outputs, complexity=self.time_limits(lengths, n_outputs), actions=actions,
                         n_steps=n_steps, clock=np.full(k, NO_CLOCK))


class _ClassicTape(_Classic):
    interface = "tape"

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        n = self.check_complexities(complexities)
        return self.build(rng.integers(0, self.base, size=(len(n), int(n.max(initial=1)))), n)

    def build(self, digits, lengths):
        """digits (k, L) left to right, lengths (k,): the instances."""
        digits, n = np.asarray(digits, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
        L = max(int(n.max(initial=1)), 1)
        digits = np.pad(digits, ((0, 0), (0, max(0, L - digits.shape[1]))))[:, :L]
        cells = np.where(lengths_mask(n, L), digits, -1)[:, None, :]
        targets, n_out, actions, steps = self.solution(digits, n)
        return self._instances(cells, n, targets, n_out, actions, steps)

    def solution(self, digits, n):
        """(targets, n_outputs, ground-truth actions, their count) of the inputs."""
        raise NotImplementedError


def _moves_table(k, width, segments):
    """Actions (k, width): ``segments`` is a list of (action, length (k,)) laid end to end."""
    s = np.arange(width)[None, :]
    table = np.full((k, width), -1, dtype=np.int64)
    end = np.zeros((k, 1), dtype=np.int64)
    for action, length in segments:
        begin, end = end, end + np.asarray(length)[:, None]
        table = np.where((s >= begin) & (s < end), action, table)
    return table, end[:, 0]


class GymCopy(_ClassicTape):
    """gym's Copy-v0: copy the input tape.  Reference: right and write, n times."""

    name = "copy"

    def solution(self, digits, n):
        k, L = digits.shape
        targets = np.where(lengths_mask(n, L), digits, self.vocab.NONE)
        actions, steps = _moves_table(k, L, [(self.action(RIGHT, 1), n)])
        return targets, n.copy(), actions, steps


class GymRepeatCopy(_ClassicTape):
    """gym's RepeatCopy-v0: the input forward, backward and forward again
    (x1..xn xn..x1 x1..xn; from "Reinforcement Learning Neural Turing
    Machines", not from the paper gym cited).  Reference: copy to the blank
    past the end, step back, copy backwards to the blank before the start,
    step forward, copy again: 3n + 2 steps."""

    name, last, min_shortfall = "repeat_copy", 50, -0.1

    def solution(self, digits, n):
        k, L = digits.shape
        j = np.arange(3 * L)[None, :]
        idx = np.where(j < n[:, None], j, np.where(j < 2 * n[:, None], 2 * n[:, None] - 1 - j, j - 2 * n[:, None]))
        targets = np.where(j < 3 * n[:, None], np.take_along_axis(digits, np.clip(idx, 0, L - 1), 1), self.vocab.NONE)
        one = np.ones(k, dtype=np.int64)
        actions, steps = _moves_table(k, 3 * L + 2, [(self.action(RIGHT, 1), n), (self.action(LEFT, 0), one),
                                                     (self.action(LEFT, 1), n), (self.action(RIGHT, 0), one),
                                                     (self.action(RIGHT, 1), n)])
        return targets, 3 * n, actions, steps


class GymDuplicatedInput(_ClassicTape):
    """gym's DuplicatedInput-v0: every symbol of the input appears
    ``duplication`` times in a row; write each once (from "Reinforcement
    Learning Neural Turing Machines").  An input of length L has
    L // duplication groups (at least one).  Reference: write and move right,
    then move right ``duplication - 1`` times, per group."""

    name = "duplicated_input"

    def __init__(self, base: int = 10, duplication: int = 2):
        super().__init__(base)
        if isinstance(duplication, bool) or not isinstance(duplication, (int, np.integer)) or duplication < 1:
            raise ValueError(f"duplication must be an integer of at least 1; got {duplication!r}")
        self.duplication = int(duplication)

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        n = self.check_complexities(complexities)
        groups = np.maximum(n, self.duplication) // self.duplication
        return self.build_groups(rng.integers(0, self.base, size=(len(n), int(groups.max(initial=1)))), groups)

    def build_groups(self, symbols, groups):
        """symbols (k, g): each group's symbol, groups (k,): how many."""
        d = self.duplication
        symbols, g = np.asarray(symbols, dtype=np.int64), np.asarray(groups, dtype=np.int64)
        return self.build(np.repeat(symbols, d, axis=1), g * d)

    def solution(self, digits, n):
        k, L = digits.shape
        d = self.duplication
        g = n // d
        G = max(L // d, 1)
        targets = np.where(lengths_mask(g, G), digits[:, ::d][:, :G], self.vocab.NONE)
        s = np.arange(max(L, 1))[None, :]
        steps = (g - 1) * d + 1
        table = np.where(s % d == 0, self.action(RIGHT, 1), self.action(RIGHT, 0))
        return targets, g, _pad_actions(steps, s.shape[1], table), steps


class GymReverse(_ClassicTape):
    """gym's Reverse-v0: write the input backwards.  gym's page said that a
    special character ``r`` marks the end of the input: there is none, the
    head meets the blank past the last symbol.  Reference: right n times (to
    the blank), left once, then left and write n times: 2n + 1 steps."""

    name, last, start, default_base, min_shortfall = "reverse", 50, 1, 2, -0.1

    def solution(self, digits, n):
        k, L = digits.shape
        j = np.arange(L)[None, :]
        targets = np.where(j < n[:, None], np.take_along_axis(digits, np.clip(n[:, None] - 1 - j, 0, L - 1), 1),
                           self.vocab.NONE)
        one = np.ones(k, dtype=np.int64)
        actions, steps = _moves_table(k, 2 * L + 1, [(self.action(RIGHT, 0), n), (self.action(LEFT, 0), one),
                                                     (self.action(LEFT, 1), n)])
        return targets, n.copy(), actions, steps


class GymReversedAddition(_Classic):
    """gym's ReversedAddition-v0 (rows 2) and ReversedAddition3-v0 (rows 3):
    add the ``rows`` numbers of the grid, written least significant digit
    first from the left (gym's page said the head starts on the last digit,
    the upper-right corner: it starts on the top number's least significant
    digit, the upper-left corner).  The sum, least significant digit first,
    has a final carry only if it is not 0.  Reference: per column, rows - 1
    vertical moves (down on even columns, up on odd ones), then right and
    write; then a last write for a final carry.  Time limit 2 x length + 4
    (gym's), or rows x length + 4 with ``solvable_time_limit``."""

    name, interface, default_base, chars = "reversed_addition", "grid", 3, False

    def __init__(self, base: int = 10, rows: int = 2, solvable_time_limit: bool = False):
        if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
            raise ValueError(f"rows must be an integer of at least 1; got {rows!r}")
        self.rows = int(rows)
        super().__init__(base)
        self.solvable_time_limit = check_flag(solvable_time_limit, "solvable_time_limit")

    def time_limits(self, lengths, n_targets):
        return lengths * (self.rows if self.solvable_time_limit else 2) + 4

    def sample(self, rng, complexities, level=None, low_accuracy=False):
        n = self.check_complexities(complexities)
        return self.build(rng.integers(0, self.base, size=(len(n), self.rows, int(n.max(initial=1)))), n)

    def build(self, grid, lengths):
        """grid (k, rows, L): grid[i, y, x] the digit of row y in column x
        (x = 0 the least significant), lengths (k,)."""
        grid, n = np.asarray(grid, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
        k, r, L = grid.shape
        inside = lengths_mask(n, L)
        grid = np.where(inside[:, None, :], grid, 0)
        total = add_digits(grid, self.base)                        # (k, L + 1), the final carry last
        carry = total[np.arange(k), n] > 0
        n_out = n + carry
        targets = np.where(lengths_mask(n_out, L + 1), total, self.vocab.NONE)
        s = np.arange(r * L + 1)[None, :]
        column, phase = s // r, s % r
        vertical = np.where(column % 2 == 0, self.action(DOWN, 0), self.action(UP, 0))
        table = np.where((phase == r - 1) | (s == r * n[:, None]), self.action(RIGHT, 1), vertical)
        steps = r * n + carry
        cells = np.where(inside[:, None, :], grid, -1)
        return self._instances(cells, n, targets, n_out, _pad_actions(steps, s.shape[1], table), steps)


CLASSIC_TASKS = {t.name: t for t in (GymCopy, GymRepeatCopy, GymDuplicatedInput, GymReverse, GymReversedAddition)}
CLASSIC_IDS = {"copy": "tinyalgo/GymCopy-v0", "repeat_copy": "tinyalgo/GymRepeatCopy-v0",
               "duplicated_input": "tinyalgo/GymDuplicatedInput-v0", "reverse": "tinyalgo/GymReverse-v0",
               "reversed_addition": "tinyalgo/GymReversedAddition-v0",
               "reversed_addition3": "tinyalgo/GymReversedAddition3-v0"}
# gym 0.19's registrations: (keyword arguments, reward_threshold); all had max_episode_steps=200
CLASSIC_SPECS = {"copy": ({"task": "copy"}, 25.0), "repeat_copy": ({"task": "repeat_copy"}, 75.0),
                 "duplicated_input": ({"task": "duplicated_input"}, 9.0), "reverse": ({"task": "reverse"}, 25.0),
                 "reversed_addition": ({"task": "reversed_addition", "rows": 2}, 25.0),
                 "reversed_addition3": ({"task": "reversed_addition", "rows": 3}, 25.0)}
MAX_EPISODE_STEPS = 200


class ClassicCourse(Course):
    """gym's curriculum: input lengths U{m .. m + 2}; m starts at the task's
    ``start`` and grows by 1, up to 30, after ``advance_after`` episodes in a
    row are solved (``tinyalgo.gym.classic``); or a fixed ``length``."""

    increment, top, what = 1, MAX_LEVEL, "length"

    def __init__(self, task, length, advance_after):
        self.start = task.start
        super().__init__(task, complexity=length, curriculum=length is None,
                         advance_after=task.last if advance_after is None else advance_after)

    def abandoned(self, n_correct, n_outputs):
        """gym's rule: an abandoned episode's total reward is its correct writes, and it
        counts as solved if it falls short of the targets' count by at most the
        task's threshold."""
        return np.asarray(n_correct) - np.asarray(n_outputs) >= self.task.min_shortfall

    def sampler(self, level: int):
        if not self.curriculum:
            return FixedComplexity(int(level), 1)
        return UniformComplexity(int(level), int(level) + 2, minimum=1, level=int(level))


def classic_course(task, base, rows, duplication, length, advance_after, solvable_time_limit) -> ClassicCourse:
    """The ``ClassicCourse`` of a classic task, from the environments' options (each checked)."""
    if task not in CLASSIC_TASKS:
        raise ValueError(f"unknown classic task {task!r}; allowed: {', '.join(CLASSIC_TASKS)}")
    cls = CLASSIC_TASKS[task]
    base = check_base(cls.default_base if base is None else base)
    if task == "reversed_addition":
        t = cls(base, 2 if rows is None else rows, solvable_time_limit)
    else:
        if rows not in (None, 1):
            raise ValueError(f"rows is an option of reversed_addition only; got rows={rows!r} for {task!r}")
        check_flag(solvable_time_limit, "solvable_time_limit")
        t = cls(base, duplication) if task == "duplicated_input" else cls(base)
    if task != "duplicated_input" and duplication != 2:
        raise ValueError(f"duplication is an option of duplicated_input only; got {duplication!r} for {task!r}")
    return ClassicCourse(t, length, advance_after)


def classic_glyphs(task, chars):
    """How the symbols are drawn: digits as letters A, B, ... (``chars``) or
    digits; every other symbol (the blank) as a blank."""
    v = task.vocab
    shown = [chr(ord("A") + i) if chars else str(i) for i in range(v.base)] + [" "] * (v.size - v.base)
    return symbol_glyphs(shown), shown


_CLASSIC_DOC = """

    Parameters
    ----------
    task
        "copy", "repeat_copy", "duplicated_input", "reverse" or
        "reversed_addition".
    base
        symbols of the input (default: gym's, 5 / 2 for reverse / 3 for the
        additions; 2..10).
    rows
        reversed_addition's numbers (2, or 3 for ReversedAddition3).
    duplication
        duplicated_input's copies of each symbol (default 2).
    length
        a fixed input length; default None: gym's curriculum.
    advance_after
        episodes in a row to solve before the curriculum's length grows
        (default gym's 10, or 50 for reverse and repeat_copy).
    chars
        draw the symbols as letters (default gym's choice per task).
    solvable_time_limit
        reversed_addition: rows x length + 4 steps instead of gym's
        2 x length + 4 (see ``tinyalgo.gym.classic``).
    render_mode
        None, "ansi" or "rgb_array".
    step_info
        also V-hat, the next target and the ground-truth action (gym's moves)
        in every step's info.
    action_space
        "multidiscrete" (default) or "discrete" (``tinyalgo.gym.spaces``).
    observation_space
        "multidiscrete" (default: ``Discrete(base + 1)``) or "onehot" (a
        ``Box`` of base + 1 columns).
"""


class _ClassicRules:
    """What the single and the vector classic environments share."""

    option, size_key = "length", "time_limit"

    def _classic_setup(self, course, chars):
        task = course.task
        self._base = task.base
        self.chars = task.chars if chars is None else check_flag(chars, "chars")
        self._glyphs, self._shown = classic_glyphs(task, self.chars)


class GymAlgorithmicEnv(_ClassicRules, TinyAlgoEnv):
    __doc__ = """One of gym's classic algorithmic tasks, one episode at a time
    (see ``tinyalgo.gym.classic``).""" + _CLASSIC_DOC

    metadata: ClassVar[dict] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, task: str = "copy", base=None, rows=None, duplication: int = 2, length=None,
                 advance_after=None, chars=None, solvable_time_limit: bool = False, render_mode=None,
                 step_info: bool = False, action_space: str = "multidiscrete",
                 observation_space: str = "multidiscrete"):
        self.render_mode = check_render_mode(render_mode)
        self.step_info = check_flag(step_info, "step_info")
        kinds = check_spaces(action_space, observation_space)
        course = classic_course(task, base, rows, duplication, length, advance_after, solvable_time_limit)
        self._setup(course)
        self._classic_setup(course, chars)
        self._V = self._base                          # the symbols an action may write
        self._make_spaces(*kinds, [self._base + 1], spaces.Discrete(self._base + 1))

    _one_field = True

    def _first_obs(self):
        read = self._read()
        return self._emit(np.int64(read if read < self._base else self._base))

    def step(self, action, explored=None):
        """One step with gym's rewards (1 for a right write, -0.5 for a wrong one, -1 past the time limit):
        ``(obs, reward, terminated, truncated, info)``."""
        self._check_step()
        if explored is not None:
            raise ValueError("gym's classic tasks observe no explored flag: step(action) takes no explored")
        m, w, s = self._parse(action)
        correct, reason, read = self._act(_TO_TINYALGO[m], w, s, None)
        late = self._time > self._complexity          # gym's time limit (the instance's "complexity")
        reward = -1.0 if late else 1.0 if correct else -0.5 if w else 0.0
        obs = self._emit(np.int64(read if read < self._base else self._base))
        if late:                                      # the time limit decides, whatever the step did
            return obs, reward, True, False, self._end(TIMEOUT, False, bool(w and not correct))
        if reason:
            return obs, reward, True, False, self._end(reason, reason == ALL_WRITTEN)
        return obs, reward, False, False, self._info(RUNNING, False) if self.step_info else {}

    def _step_keys(self, ended) -> dict:
        keys = super()._step_keys(ended)
        gt = keys["ground_truth"]
        if gt[0] >= 0:
            gt[0] = MOVE_TO_GYM[gt[0]]
        return keys

    def render(self):
        """The board as gym's classic tasks draw it ("ansi"), or as a picture ("rgb_array")."""
        if self.render_mode == "ansi":
            if self._last is not None:
                reason, n_correct, n_outputs = self._last
                return f"episode ended: {END_REASONS[reason]}, {n_correct} of {n_outputs} outputs right"
            return classic_text(self._sync(), 0, self._shown)
        return super().render()


class GymAlgorithmicVectorEnv(_ClassicRules, TinyAlgoVectorEnv):
    __doc__ = """``num_envs`` copies of one of gym's classic algorithmic tasks on
    one batched tinyalgo ``Environment`` (see ``tinyalgo.gym.classic``); the
    autoreset modes, ``max_episode_steps`` and seeding of
    ``TinyAlgoVectorEnv``.""" + _CLASSIC_DOC

    def __init__(self, task: str = "copy", num_envs: int = 1, base=None, rows=None, duplication: int = 2,
                 length=None, advance_after=None, chars=None, solvable_time_limit: bool = False, render_mode=None,
                 step_info: bool = False, autoreset_mode="NextStep", max_episode_steps=None,
                 action_space: str = "multidiscrete", observation_space: str = "multidiscrete"):
        self._check_common(num_envs, render_mode, step_info, autoreset_mode, max_episode_steps)
        kinds = check_spaces(action_space, observation_space)
        course = classic_course(task, base, rows, duplication, length, advance_after, solvable_time_limit)
        self._setup(course)
        self._classic_setup(course, chars)
        self._V = self._base
        self._make_spaces(*kinds, [self._base + 1], spaces.Discrete(self._base + 1))

    _idle_rewards = True          # past the time limit, even a lane that waits would get -1
    _one_field = True

    def _moves(self, moves):
        return MOVE_TO_TINYALGO.take(moves)

    def _fields(self, obs):
        return np.minimum(obs[..., 0], self._base)

    def _outcome(self, res, write):
        env = self._env
        late = env.time > env.complexity                # gym's time limit (the instances' "complexity")
        reward = np.where(write, np.where(res.reward > 0, 1.0, -0.5), 0.0)
        reward[late] = -1.0
        return reward, res.done | late, np.zeros(self.num_envs, dtype=bool)

    def _solved(self, res):
        env = self._env
        return (res.reason == ALL_WRITTEN) & (env.time <= env.complexity)

    def _reasons(self, res):
        env = self._env
        return np.where(env.time > env.complexity, TIMEOUT, res.reason)     # past the time limit: that decides

    def _ground_truth(self, gt):
        out = super()._ground_truth(gt)
        out[:, 0] = np.where(gt >= 0, MOVE_TO_GYM[np.maximum(gt, 0) % self._nm], -1)
        return out

    def render(self):
        if self.render_mode == "ansi":
            if not self._started:
                raise RuntimeError("call reset() before render()")
            return tuple(classic_text(self._env, b, self._shown) for b in range(self.num_envs))
        return super().render()


def classic_text(env, lane: int, shown) -> str:
    """gym's text frame of a lane: the input around the head (in brackets),
    what has been written, the targets."""
    x, y = int(env.input.x[lane]), int(env.input.y[lane])
    n, k = int(env.n_outputs[lane]), int(env.target_index[lane])
    grid = env.task.interface != "tape"
    width = int(env.complexity[lane])                  # wide enough: the time limit exceeds the input
    xs = np.arange(-1, max(width, x + 2))
    ys = np.arange(0, env.task.rows + 2) if grid else np.array([1])
    cells = env.input.board.window(lane, xs, ys)
    targets = env.output.targets[lane, :n]
    lines = [f"step {int(env.time[lane])}, time limit {width}"]
    for row_y, row in zip(ys, cells):
        text = "".join(f"[{shown[c]}]" if (cx == x and row_y == y) else f" {shown[c]} " for cx, c in zip(xs, row))
        lines.append(("Observation         : " if row_y == ys[0] else " " * 22) + text)
    lines.append("Output Tape         : " + "".join(shown[t] for t in targets[:k]))
    lines.append("Targets             : " + "".join(shown[t] for t in targets))
    return "\n".join(lines)
