"""Inference with frozen parameters, faster (the training loops build one per
rollout, evaluation one per model): ``FrozenController``.

Three things are folded once, when the parameters stop changing:

* **The embedding into the first matrix after it.**  The controller's input
  is the one-hot encoding of the observation's F fields (docs/original-release.md#observation),
  embedded by an affine map and multiplied by the first matrix W after it
  (the core's ``wx``, or ``extra.w`` for FF).  Both are linear, so
  ``onehot @ embed.w @ W`` is the sum of the F rows of M = embed.w @ W that
  the fields select.  The fields are grouped (consecutive fields, at most
  ``MAX_GROUP_ROWS`` joint values per group) and each group's sums of rows are
  tabulated for all its joint values, so the first pre-activation of a step is
  one gather per group (2 for the tasks' observations) and an add instead
  of the (B, sum of sizes) x (sum of sizes, 3H) product of the one-hots.  The constant terms (the embedding's bias
  through W, W's bias, and the first layer's recurrent biases, which add to
  the same pre-activations) go into the first group's table.
* **The two heads into one** (units, n_actions + n_symbols) matrix.
* **Each recurrent matrix into contiguous per-gate column blocks**
  (``fast.cores.gate_columns``: one product per gate is faster).

Same outputs as ``Controller.infer`` up to float rounding.  Build a new one
after the parameters change.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.fast import controller as fast_controller
from tinyalgo.fast.cores import gate_columns

MAX_GROUP_ROWS = 512    # a table of 512 x 600 float32 is 1.2 MB: small enough to gather from in cache


def field_groups(sizes, max_rows: int = MAX_GROUP_ROWS) -> list:
    """Consecutive observation fields grouped so that each group has at most
    ``max_rows`` joint values (a single larger field is a group of its own).
    sizes: the F field sizes -> list of lists of field indices."""
    groups, rows = [], 0
    for f, size in enumerate(sizes):
        if groups and rows * size <= max_rows:
            groups[-1].append(f)
            rows *= size
        else:
            groups.append([f])
            rows = size
    return groups


def group_tables(M, offsets, sizes, groups, const) -> list:
    """For each group, the (joint values, k) table of the sums of M's rows that
    its fields select, row-major over the fields (the last field fastest);
    ``const`` (k,) is added to the first group's table.  M (sum of sizes, k)."""
    tables = []
    for g, fields in enumerate(groups):
        table = M[offsets[fields[0]]:offsets[fields[0]] + sizes[fields[0]]]
        for f in fields[1:]:
            rows = M[offsets[f]:offsets[f] + sizes[f]]
            table = (table[:, None, :] + rows[None, :, :]).reshape(-1, M.shape[1])
        tables.append(table + const if g == 0 else np.ascontiguousarray(table))
    return tables


def group_strides(sizes, groups) -> np.ndarray:
    """(F, G) integer matrix S such that obs @ S is each group's row in its
    table (row-major over the group's fields)."""
    S = np.zeros((len(sizes), len(groups)), dtype=np.int64)
    for g, fields in enumerate(groups):
        stride = 1
        for f in reversed(fields):
            S[f, g] = stride
            stride *= sizes[f]
    return S


class FrozenController:
    """A faster inference-only view of a ``Controller``'s current parameters
    (see the module's docstring for what is folded)."""

    def __init__(self, controller):
        P, cfg = controller.params, controller.config
        self.controller, self.config = controller, cfg
        first = ("extra.w", "extra.b") if cfg.core == "ff" else ("core0.wx", "core0.bx")
        M = P["embed.w"] @ P[first[0]]
        const = P["embed.b"] @ P[first[0]] + P[first[1]]
        if cfg.core == "gru":
            const += np.concatenate([P["core0.bh"], P["core0.bhh"]])
        elif cfg.core == "lstm":
            const += P["core0.bh"]
        groups = field_groups(cfg.obs_sizes)
        self.tables = group_tables(M, cfg._offsets, cfg.obs_sizes, groups, const)
        self.strides = group_strides(cfg.obs_sizes, groups)
        self.gate_blocks = [gate_columns(P[f"core{l}.wh"], cfg.units)
                            for l in range(len(controller.layers()))]
        self.heads_w = np.concatenate([P["q.w"], P["sym.w"]], axis=1)
        self.heads_b = np.concatenate([P["q.b"], P["sym.b"]])
        self.initial_state = controller.initial_state

    def first_preactivation(self, obs):
        """embedding(obs) @ W + b (+ the folded recurrent biases) for the first
        matrix W after the embedding, from the group tables.  obs int (B, F),
        already checked to be within the field sizes -> (B, k)."""
        rows = (obs @ self.strides).T
        a0 = np.take(self.tables[0], rows[0], axis=0)
        for table, r in zip(self.tables[1:], rows[1:]):
            a0 += np.take(table, r, axis=0)
        return a0

    def infer(self, obs, state, reset=None):
        """Same as ``Controller.infer``.  Returns (q, logp, state)."""
        first = state[0][0] if isinstance(state, (list, tuple)) and state and isinstance(state[0], (list, tuple)) \
            and state[0] else None
        if not isinstance(first, np.ndarray) or first.dtype != self.controller.dtype:     # the full check if odd
            self.controller.check_state(state, len(np.atleast_2d(obs)))
        q, logp, state, _ = fast_controller.step(self.controller, obs, state, reset, fold=self, keep_cache=False)
        return q, logp, state
