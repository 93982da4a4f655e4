"""Complexity samplers: where each new instance's complexity comes from.

The environment asks its sampler for the complexities of the instances it
draws; the curriculum (paper section 5; docs/original-release.md#complexity) controls the sampler.
A sampler is any object with ``draw(rng, k) -> int array (k,)``; ``level``
(the curriculum's current complexity C) and ``low_accuracy`` are read by the
3-number addition extra curriculum.
"""
from __future__ import annotations

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

    def __init__(self, lo: int, hi: int, minimum: int = 1, level: int = None):
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
