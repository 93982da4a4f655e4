"""Departure tests (paper section 6.4, "discretization of
state"): the recorded paths into the step where an extracted machine leaves
the network, which the loop adds to the behaviour tests of its later rounds
(tinyalgo/automata/loop.py, ``--departure-span``).
"""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.behaviour import previous_symbols
from tinyalgo.automata.extract import departures


def departure_tests(machine, rec, span: int = 12) -> tuple:
    """Distinguishing tests from the episodes of ``rec`` (the network run on
    instances ``machine`` fails) where the machine leaves the network
    (``extract.departures``, at row d): the recorded path from each of the
    ``span`` rows up to d, to d (symbols read, moves made).  The machine's
    state at such a row held the network's recurrent state together with
    others that answer the path otherwise, at d at the latest; tested on
    the path, they get different behaviour tags (the counterexample's
    suffix of Rivest and Schapire's L*).  Returns (keys (n, 5): each path's
    first row's feedback fields and previous symbol, inputs (n, span),
    moves (n, span), padded with -1), without repeats."""
    leaves = departures(machine, rec)
    back = [leaves[leaves >= 0]]
    before = np.full(len(rec) + 1, -1, dtype=np.int64)      # before[-1] = -1: the row before "no row"
    linked = np.nonzero(rec.next_row >= 0)[0]
    before[rec.next_row[linked]] = linked
    for _ in range(span - 1):
        back.append(before[back[-1]])
    back = np.stack(back, axis=1)                               # (departures, span): d, the row before, ...
    previous = previous_symbols(rec)
    keys, inputs, moves = [], [], []
    for j in range(span):
        start = back[:, j] >= 0
        path = np.full((int(start.sum()), span), -1, dtype=np.int64)
        path[:, :j + 1] = back[start, j::-1]
        keys.append(np.concatenate([rec.obs[path[:, 0], 1:5], previous[path[:, 0], None]], axis=1))
        inputs.append(np.where(path >= 0, rec.obs[np.maximum(path, 0), 0], -1))
        moves.append(np.where(path >= 0, rec.action[np.maximum(path, 0)] % rec.n_moves, -1))
    return union((np.concatenate(keys), np.concatenate(inputs), np.concatenate(moves)))


def union(*tests) -> tuple:
    """Sets of departure tests (each keys, inputs, moves) as one, without repeats."""
    widths = np.cumsum([part.shape[1] for part in tests[0]])[:-1]
    both = np.unique(np.concatenate([np.concatenate(t, axis=1) for t in tests]), axis=0)
    return tuple(np.split(both, widths, axis=1))
