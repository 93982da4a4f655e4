"""Offsets of the verifier's pointers (tinyalgo/automata/product.py), which
check an extracted machine at every length at once (paper section 6.4,
"discretization of state": a discrete machine can be checked exhaustively).

A pointer is where something on the board lies (a landmark such as the end
marker, the next target, the last write) relative to the input head, one
integer per axis.  An offset of at most ``R`` in size is kept exactly; a
larger one is kept only as its sign, ``FAR`` or ``-FAR``: "more than R cells
that way".  So the configurations do not depend on where the head is on the
board, only on what lies near it, and the set of them is finite whatever the
length.  A far pointer the head moves towards may come within range at any
step (the true distance is unknown), so ``shift`` returns both possibilities:
the exploration covers every true distance.
"""
from __future__ import annotations

FAR = 1 << 40          # magnitude of a far offset (never a real distance)
INF = float("inf")


def is_far(v) -> bool:
    return abs(v) >= FAR


def clip(v: int, R: int) -> int:
    """``v`` kept exactly if |v| <= R, else its sign as a far offset."""
    return v if -R <= v <= R else (FAR if v > 0 else -FAR)


def shift(v, d: int, R: int) -> list:
    """The possible offsets of a pointer at offset ``v`` after the head moves by
    ``d`` (-1, 0, 1) along the axis: exact ones move; a far one the head moves
    towards may arrive at the edge of the range (``R`` cells away) or stay far."""
    if v is None or d == 0:
        return [v]
    if is_far(v):
        return [v, R if v > 0 else -R] if (v > 0) == (d > 0) else [v]
    return [clip(v - d, R)]


def sticky_shift(v: int, d: int, R: int) -> int:
    """As ``shift``, but a far pointer stays far (used where "far" only makes a
    bound weaker, never a case missed: the last write's position)."""
    return v if is_far(v) else clip(v - d, R)


def bounds(v, R: int) -> tuple:
    """(low, high) of the true offset that ``v`` stands for."""
    if v >= FAR:
        return R + 1, INF
    if v <= -FAR:
        return -INF, -R - 1
    return v, v


def difference_possible(p, q, lo, hi, R: int) -> bool:
    """Can the true ``q - p`` lie in [lo, hi] (None: unbounded), given offsets p and q?"""
    plo, phi = bounds(p, R)
    qlo, qhi = bounds(q, R)
    dlo, dhi = qlo - phi, qhi - plo
    return (hi is None or dlo <= hi) and (lo is None or dhi >= lo)


def compare(a, b, R: int):
    """-1, 0 or 1 for the true a - b's sign when the offsets say it, else None."""
    alo, ahi = bounds(a, R)
    blo, bhi = bounds(b, R)
    if ahi < blo:
        return -1
    if alo > bhi:
        return 1
    if alo == ahi == blo == bhi:
        return 0
    return None


def distance_change(v, d: int) -> int:
    """How |offset| changes when the head moves by ``d`` along the axis (for a far
    offset: -1 when moving towards it, +1 away)."""
    if d == 0:
        return 0
    if is_far(v):
        return -1 if (v > 0) == (d > 0) else 1
    return abs(v - d) - abs(v)

