"""Preallocated arrays for one rollout's step caches (backprop through time,
docs/original-release.md#bptt).

Backpropagation through time needs every step's activations again, and its
weight gradients read each of them as one (T B, ...) array: ``h.T @ dz`` over
all T steps at once.  When the steps keep their activations as separate
(B, ...) arrays the backward pass first stacks them, T small copies per
quantity.  With ``StepBuffers`` each step writes its activations straight
into row t of (T, B, ...) arrays, and the backward pass takes those arrays
as they are.

Use: ``fast.controller.FastRollout`` makes one per rollout and passes it to
each ``fast.controller.step``; ``fast.bptt.backward`` then reads it.  A
buffer holds one rollout: make a new one for the next (the caches of the old
one stay valid as long as nothing else writes into it).  GRU and FF
controllers; an LSTM's step ignores the core's part (its caches are stacked
as before).
"""
from __future__ import annotations

import numpy as np


class StepBuffers:
    """Rows of (T, B, ...) arrays, one per cached activation:
    ``t`` (T, B, H): tanh of the "extra" layer; per GRU layer ``h_in`` (the state entering the step,
    after the episode barrier), ``zr`` (T, B, 2H) the update and reset gates,
    ``rh`` (r * h), ``cand`` (the candidate h~), ``h_out`` (the new state),
    each (T, B, H) unless said.  ``next`` is the row the next step writes."""

    def __init__(self, T: int, B: int, units: int, layers: int, dtype, gru: bool):
        if T < 1 or B < 1:
            raise ValueError(f"StepBuffers needs T >= 1 steps and B >= 1 lanes; got T={T}, B={B}")
        H = units
        self.T, self.B, self.next = T, B, 0
        self.t = np.empty((T, B, H), dtype=dtype)
        n = layers if gru else 0
        self.h_in = [np.empty((T, B, H), dtype=dtype) for _ in range(n)]
        self.zr = [np.empty((T, B, 2 * H), dtype=dtype) for _ in range(n)]
        self.rh = [np.empty((T, B, H), dtype=dtype) for _ in range(n)]
        self.cand = [np.empty((T, B, H), dtype=dtype) for _ in range(n)]
        self.h_out = [np.empty((T, B, H), dtype=dtype) for _ in range(n)]

    def take_row(self) -> int:
        """The row for the next step (and advance); an error past T steps."""
        i = self.next
        if i >= self.T:
            raise ValueError(f"these StepBuffers hold {self.T} steps; make new ones for the next rollout")
        self.next = i + 1
        return i

    def gru_outputs(self, layer: int, row: int) -> tuple:
        """Views (zr, rh, cand, h_out) of one GRU layer's row, for ``cores.gru_step_forward(out=...)``."""
        return self.zr[layer][row], self.rh[layer][row], self.cand[layer][row], self.h_out[layer][row]

    def covers(self, caches) -> bool:
        """True if ``caches`` are exactly this buffer's rows 0 .. T'-1, in order
        (then the backward pass can read the (T', B, ...) arrays directly)."""
        return all(c.rows is not None and c.rows[0] is self and c.rows[1] == i for i, c in enumerate(caches))
