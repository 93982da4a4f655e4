"""The curriculum of the paper (section 5): start at complexity 6; once the
model is 100% correct on held-out instances of the current complexity, add 4;
stop once it generalises to a target complexity or the budget runs out.

The level C sets the training sampler: complexities U{C-4..C}, clamped to the
task's minimum (docs/original-release.md#complexity).

The curriculum sets where each new instance's complexity comes from: a
*sampler*, any object with ``draw(rng, k) -> int array (k,)``; ``level``
(the curriculum's current complexity C) and ``low_accuracy`` are read by the
3-number addition extra curriculum.  The environment asks its sampler for the
complexities of the instances it draws.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def check_complexity(value, minimum: int, what: str = "complexity") -> int:
    """``value`` as an int, or ValueError saying it must be an integer >= minimum."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{what} must be an integer of at least {minimum}; got {value!r}")
    return int(value)


class FixedComplexity:
    """Every instance has complexity ``c`` (evaluation)."""

    def __init__(self, c: int, minimum: int = 1):
        self.c = check_complexity(c, minimum)
        self.level = self.c
        self.low_accuracy = False

    def draw(self, rng: np.random.Generator, k: int) -> np.ndarray:
        return np.full(k, self.c, dtype=np.int64)

    def __repr__(self) -> str:
        return f"FixedComplexity({self.c})"


class UniformComplexity:
    """Complexities uniform on ``lo..hi`` (training: C-4..C, clamped to the
    task's minimum; docs/original-release.md#complexity)."""

    def __init__(self, lo: int, hi: int, minimum: int = 1, level: int | None = None):
        self.lo = max(check_complexity(lo, 0, "lowest complexity"), minimum)
        self.hi = check_complexity(hi, self.lo, "highest complexity")
        self.level = self.hi if level is None else level
        self.low_accuracy = False

    def draw(self, rng: np.random.Generator, k: int) -> np.ndarray:
        return rng.integers(self.lo, self.hi + 1, size=k, dtype=np.int64)

    def __repr__(self) -> str:
        return f"UniformComplexity({self.lo}, {self.hi})"


def curriculum_sampler(level: int, minimum: int, spread: int = 4) -> UniformComplexity:
    """Training complexities U{C - spread .. C} at curriculum level C."""
    return UniformComplexity(level - spread, level, minimum=minimum, level=level)


@dataclass
class Curriculum:
    """Curriculum state; ``history`` records every validation and advance.

    start : first level C (paper: 6).  increment : added after a perfect
    validation (paper: 4).  spread : training complexities are C-spread..C.
    minimum : the task's minimum complexity.  threshold : fraction of
    validation instances that must be solved to advance (1.0 = "100%").
    streak : how many validations in a row must reach it (2 x 50 instances
    is close to the release's "no error among the last ~100 validation
    samples", docs/original-release.md#curriculum; a single lucky batch does not advance).
    """

    start: int = 6
    increment: int = 4
    minimum: int = 1
    spread: int = 4
    threshold: float = 1.0
    streak: int = 1
    level: int = field(init=False)
    run: int = field(init=False, default=0)
    history: list = field(default_factory=list)

    def __post_init__(self):
        check_complexity(self.start, 1, "curriculum start")
        check_complexity(self.increment, 1, "curriculum increment")
        check_complexity(self.minimum, 1, "curriculum minimum")
        check_complexity(self.spread, 0, "curriculum spread")
        check_complexity(self.streak, 1, "curriculum streak")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float)) \
                or not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"curriculum threshold must be a fraction in (0, 1] of the validation instances"
                             f" solved; got {self.threshold!r}")
        self.level = max(self.start, self.minimum)

    def sampler(self, low_accuracy: bool = False):
        """The training complexity sampler of the current level."""
        s = curriculum_sampler(self.level, self.minimum, self.spread)
        s.low_accuracy = low_accuracy
        return s

    def record(self, solved_fraction: float, **info) -> bool:
        """Record a validation score at the current level; advance by
        ``increment`` once ``streak`` scores in a row reach the threshold.
        Returns True on an advance."""
        ### BEGIN SOLUTION
        self.run = self.run + 1 if solved_fraction >= self.threshold else 0
        advanced = self.run >= self.streak
        if advanced:
            self.run = 0
        self.history.append(dict(level=self.level, solved=float(solved_fraction), advanced=advanced, **info))
        if advanced:
            self.level += self.increment
        return advanced
        ### END SOLUTION

    def state(self) -> dict:
        return dict(level=self.level, run=self.run, history=list(self.history))

    def restore(self, state: dict) -> None:
        self.level, self.history = int(state["level"]), list(state["history"])
        self.run = int(state.get("run", 0))
