"""Layers as forward/backward pairs with explicit caches (CS231n style).

Each ``*_forward`` returns ``(out, cache)``; each ``*_backward`` takes the
upstream gradient and that cache and returns the gradients of the inputs and
parameters.  Shapes: B lanes, D inputs, H outputs, F observation fields.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class AffineCache(NamedTuple):
    """What ``affine_forward`` keeps: its input x (B, D) and weights w (D, H)."""

    x: np.ndarray
    w: np.ndarray


class OnehotCache(NamedTuple):
    """What ``onehot_affine_forward`` keeps: ``rows`` int (B, F), the row of w
    each field selects, and ``shape``, the shape of w."""

    rows: np.ndarray
    shape: tuple


def affine_forward(x, w, b):
    """out = x @ w + b.  x (B, D), w (D, H), b (H,) -> out (B, H).

    B may be any number of rows: the B lanes of one step, or the T B lanes
    of T steps stacked, whose weight gradient ``affine_backward`` then sums
    over the steps in one product."""
    return x @ w + b, AffineCache(x, w)


def affine_backward(dout, cache):
    """dout (B, H) -> dx (B, D), dw (D, H) = x^T dout, db (H,)."""
    ### BEGIN SOLUTION
    x, w = cache.x, cache.w
    return dout @ w.T, x.T @ dout, dout.sum(axis=0)
    ### END SOLUTION


def field_offsets(sizes) -> np.ndarray:
    """Row offset of each field's one-hot block: (F,)."""
    return np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)


def onehot(obs, sizes) -> np.ndarray:
    """Concatenated one-hots of the observation fields (docs/original-release.md#observation).
    obs int (B, F), field f in 0..sizes[f]-1 -> (B, sum(sizes)) of 0/1."""
    obs = np.asarray(obs)
    out = np.zeros((obs.shape[0], int(np.sum(sizes))))
    out[np.arange(obs.shape[0])[:, None], obs + field_offsets(sizes)] = 1.0
    return out


def onehot_affine_forward(obs, offsets, w, b):
    """``onehot(obs) @ w + b`` without building the one-hot: the sum of the
    rows of w that the fields select.  obs int (B, F), offsets (F,),
    w (sum(sizes), H), b (H,) -> out (B, H)."""
    rows = obs + offsets
    out = w[rows[:, 0]] + b
    for f in range(1, rows.shape[1]):
        out += w[rows[:, f]]
    return out, OnehotCache(rows, w.shape)


class FieldTables(NamedTuple):
    """``onehot(obs) @ w + b`` tabulated by ``field_tables``: per group of
    consecutive fields the (joint values, H) table of the sums of the rows
    of w its fields select (b in the first), and ``strides`` (F, G): obs @
    strides is each group's row."""

    tables: list
    strides: np.ndarray


MAX_TABLE_ROWS = 512    # a table of 512 x 600 float32 is 1.2 MB: small enough to gather from in cache


def field_tables(w, b, sizes, max_rows: int = MAX_TABLE_ROWS) -> FieldTables:
    """``onehot_affine_forward`` as a lookup, for a w and b that stay fixed
    for many steps (a rollout).  w (sum(sizes), H), b (H,), sizes: the F
    field sizes.

    Why: ``onehot(obs) @ w + b`` is the sum of the F rows of w that the
    fields select, F gathers and F - 1 additions of (B, H) arrays per step,
    which cost more than the arithmetic at B = 20.  Consecutive fields are
    grouped (at most ``max_rows`` joint values per group; a larger field is a
    group of its own) and each group's row sums are tabulated for all its
    joint values, so a step is one gather per group (two for the tasks'
    observations) and one addition.  ``field_tables_forward`` reads them."""
    groups, rows = [], 0
    for f, size in enumerate(sizes):
        if groups and rows * size <= max_rows:
            groups[-1].append(f)
            rows *= size
        else:
            groups.append([f])
            rows = size
    offsets, tables = field_offsets(sizes), []
    strides = np.zeros((len(sizes), len(groups)), dtype=np.int64)
    for g, fields in enumerate(groups):
        table = np.zeros((1, w.shape[1]), dtype=w.dtype) + (b if g == 0 else 0)
        stride = 1
        for f in reversed(fields):
            strides[f, g] = stride
            stride *= sizes[f]
        for f in fields:                                       # row-major over the fields: the last one fastest
            table = (table[:, None, :] + w[offsets[f]:offsets[f] + sizes[f]][None, :, :]).reshape(-1, w.shape[1])
        tables.append(np.ascontiguousarray(table, dtype=w.dtype))
    return FieldTables(tables, strides)


def field_tables_forward(obs, tables: FieldTables):
    """``onehot_affine_forward(obs, offsets, w, b)[0]`` from ``field_tables(w, b, sizes)``:
    obs int (B, F) within the field sizes -> out (B, H)."""
    rows = (obs @ tables.strides).T
    out = np.take(tables.tables[0], rows[0], axis=0)
    for table, r in zip(tables.tables[1:], rows[1:]):
        out += np.take(table, r, axis=0)
    return out


def onehot_affine_backward(dout, cache):
    """dout (B, H) -> dw (sum(sizes), H), db (H,): each selected row gets dout."""
    rows = cache.rows
    counts = np.zeros((rows.shape[0], cache.shape[0]), dtype=dout.dtype)
    counts[np.arange(rows.shape[0])[:, None], rows] = 1.0
    return counts.T @ dout, dout.sum(axis=0)


def tanh_forward(x):
    """out = tanh(x), any shape; the cache is out itself."""
    out = np.tanh(x)
    return out, out


def tanh_backward(dout, cache):
    """dout -> dx = dout (1 - out^2), from the cached out."""
    ### BEGIN SOLUTION
    return dout * (1.0 - cache * cache)
    ### END SOLUTION


def sigmoid(x, out=None):
    """1 / (1 + exp(-x)) as 0.5 * (tanh(x / 2) + 1): stable for large ``|x|``.
    ``out`` (may be ``x`` itself) saves the temporaries."""
    out = np.multiply(x, 0.5, out=out)
    np.tanh(out, out=out)
    out += 1.0
    out *= 0.5
    return out


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of (B, A) logits."""
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def log_softmax_forward(x):
    """Row-wise log-softmax.  x (B, V) -> logp (B, V)."""
    z = x - x.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return logp, logp


def log_softmax_backward(dlogp, cache):
    """dlogp (..., V) -> dx (..., V) = dlogp - softmax * sum(dlogp)."""
    ### BEGIN SOLUTION
    return dlogp - np.exp(cache) * dlogp.sum(axis=-1, keepdims=True)
    ### END SOLUTION


def nll_loss(logp, targets, mask=None):
    """Summed negative log-likelihood -log p[target] over the masked rows.
    logp (B, V), targets int (B,), mask bool (B,) -> (loss, dlogp (B, V))."""
    ### BEGIN SOLUTION
    B = logp.shape[0]
    mask = np.ones(B, bool) if mask is None else np.asarray(mask, bool)
    rows = np.arange(B)[mask]
    dlogp = np.zeros_like(logp)
    dlogp[rows, targets[mask]] = -1.0
    return float(-logp[rows, targets[mask]].sum()), dlogp
    ### END SOLUTION
