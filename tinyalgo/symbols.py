"""The vocabulary: digits of the chosen base, the marker symbols, and "none".

The paper's release (docs/original-release.md#vocabulary) has a fixed 24-class vocabulary of which
only digits, ``q``, ``e``, ``p``, ``l``, ``u`` and ``d`` are ever placed on a
board; the other letters are leftovers.  tinyalgo keeps exactly the symbols
that occur, so the vocabulary of base ``b`` has ``b + 7`` classes:

=========  =================================================================
index      symbol
=========  =================================================================
0..b-1     the digits 0..b-1 (digit ``d`` has index ``d``; this is the fix of
           docs/original-release.md#digit-zero: a written 0 is compared as a class index and scores)
b          ``q``  end marker / sentinel (the wall of ``q`` in arithmetic tasks)
b+1        ``e``  empty cell (addition)
b+2        ``p``  the reverse task's turn marker (the paper calls it "r")
b+3..b+5   ``l`` ``u`` ``d``  the walk task's arrows (left, up, down)
b+6        none   "nothing written" (observation after a non-writing step)
=========  =================================================================
"""
from __future__ import annotations

import numpy as np

MIN_BASE, MAX_BASE = 2, 10
MARKERS = ("q", "e", "p", "l", "u", "d")
NONE_CHAR = "_"


def check_base(base) -> int:
    """Return ``base`` as an int, or raise ValueError if it is not in 2..10."""
    if isinstance(base, bool) or not isinstance(base, (int, np.integer)) or not MIN_BASE <= base <= MAX_BASE:
        raise ValueError(f"base must be an integer from {MIN_BASE} to {MAX_BASE} (paper Appendix B); got {base!r}")
    return int(base)


class Vocabulary:
    """Class indices and printable characters for one base.

    Attributes ``Q``, ``E``, ``P``, ``L``, ``U``, ``D``, ``NONE`` are the
    class indices of the markers; ``size`` is the number of classes
    (the width of the symbol head's softmax).
    """

    def __init__(self, base: int = 10):
        self.base = check_base(base)
        self.chars = tuple(str(d) for d in range(self.base)) + MARKERS + (NONE_CHAR,)
        self.size = len(self.chars)
        self.Q, self.E, self.P, self.L, self.U, self.D = range(self.base, self.base + len(MARKERS))
        self.NONE = self.size - 1
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __repr__(self) -> str:
        return f"Vocabulary(base={self.base})"

    def digit(self, d: int) -> int:
        """Class index of digit ``d``."""
        if not 0 <= d < self.base:
            raise ValueError(f"digit must be in 0..{self.base - 1} for base {self.base}; got {d!r}")
        return int(d)

    def is_digit(self, index):
        """True where the class index is a digit (works on arrays)."""
        return np.asarray(index) < self.base

    def to_chars(self, indices) -> str:
        """Printable string for a 1-D sequence of class indices."""
        out = []
        for i in np.asarray(indices).ravel():
            if not 0 <= i < self.size:
                raise ValueError(f"class index must be in 0..{self.size - 1}; got {i}")
            out.append(self.chars[i])
        return "".join(out)

    def from_chars(self, text: str) -> np.ndarray:
        """Class indices (int64 array) of a printable string."""
        try:
            return np.array([self._index[c] for c in text], dtype=np.int64)
        except KeyError as err:
            raise ValueError(
                f"unknown symbol {err.args[0]!r} in {text!r}; allowed: {''.join(self.chars)}") from None
