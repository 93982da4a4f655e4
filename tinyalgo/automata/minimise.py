"""Making a machine smaller (``machine.Machine``): Moore's partition
refinement to the minimal equivalent machine (``minimise``), the reduction of
an incompletely specified machine with the transitions never seen as "don't
care" (``reduce_dont_care``), and the merges that determinism forces on the
states a recorded (state, input) pair went to (``merge_alternatives``)."""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.machine import Machine
from tinyalgo.automata.record import NO_WRITE


def minimise(m: Machine):
    """The minimal machine equivalent to ``m`` as a completely specified
    machine ("never seen" and "unknown next" are values like the others):
    Moore's partition refinement.  Start from the blocks of states with the
    same outputs (action and symbol written, "never seen" -1 included) on
    every input; split a block while two of its states go, on some input, to
    different blocks (an unknown next state, -1, is a block of its own);
    stop when no block splits.  Unreachable states are minimised too.
    Number the blocks canonically with ``_renumber(block, m.start, m.next)``
    (breadth-first from the start state: its block is 0; unreachable blocks
    last) and build the machine of the blocks with ``_quotient_tables(m, block)``.
    Returns (machine, block (S,) of each state of ``m``)."""
    ### BEGIN SOLUTION
    out = np.concatenate([m.action, m.symbol], axis=1)
    block = np.unique(out, axis=0, return_inverse=True)[1].reshape(-1)
    while True:
        succ = np.where(m.next >= 0, block[np.maximum(m.next, 0)], -1)
        signature = np.concatenate([block[:, None], succ], axis=1)
        new = np.unique(signature, axis=0, return_inverse=True)[1].reshape(-1)
        if new.max() == block.max():
            break
        block = new
    block = _renumber(block, m.start, m.next)
    return _quotient_tables(m, block), block
    ### END SOLUTION


def _renumber(block, start, nxt):
    """Blocks numbered in breadth-first order from the start state (a canonical numbering)."""
    order, seen, queue = [], set(), [start]
    while queue:
        s = queue.pop(0)
        if block[s] in seen:
            continue
        seen.add(block[s])
        order.append(block[s])
        members = np.nonzero(block == block[s])[0]
        for t in nxt[members].reshape(-1):
            if t >= 0 and block[t] not in seen:
                queue.append(int(t))
    for b in np.unique(block):                  # unreachable blocks last
        if b not in seen:
            order.append(b)
    new = np.empty(int(block.max()) + 1, dtype=np.int64)
    new[np.array(order)] = np.arange(len(order))
    return new[block]


def _quotient_tables(m: Machine, block: np.ndarray) -> Machine:
    """Merge each block's rows: a known entry wins over an unknown one (the
    members of a block agree wherever both are known)."""
    n = int(block.max()) + 1
    V = m.n_inputs
    action = np.full((n, V), -1, dtype=np.int64)
    symbol = np.full((n, V), NO_WRITE, dtype=np.int64)
    nxt = np.full((n, V), -1, dtype=np.int64)
    for s in range(m.n_states):
        b, known = block[s], m.action[s] >= 0
        action[b, known], symbol[b, known] = m.action[s, known], m.symbol[s, known]
        go = m.next[s] >= 0
        nxt[b, go] = block[m.next[s, go]]
    return m.quotient(block, (action, symbol, nxt))


def reduce_dont_care(m: Machine):
    """Reduce ``m`` treating unknown entries (never seen, next unknown) as
    "don't care" (the reduction of incompletely specified machines): merge
    states greedily, in breadth-first order, each into the first earlier
    state it is compatible with, folding the successors that the merge
    forces together; a merge that would give one (state, input) two outputs
    is undone.  Every recorded transition keeps its output and (up to the
    merge) its next state.  Returns (machine, block (S,) of each state of ``m``)."""
    S = m.n_states
    action, symbol, nxt = m.action.copy(), m.symbol.copy(), m.next.copy()
    parent = np.arange(S)
    for q in range(1, S):
        if _find(parent, q) != q:
            continue
        for p in range(q):
            if _find(parent, p) != p:
                continue
            folded = _fold(action, symbol, nxt, parent, p, q)
            if folded is not None:
                action, symbol, nxt, parent = folded
                break
    return _merged(m, parent)


def _merged(m: Machine, parent: np.ndarray):
    """The quotient of ``m`` by the union-find forest ``parent`` (S,):
    (machine, block (S,) of each state of ``m``)."""
    roots = np.array([_find(parent, s) for s in range(m.n_states)])
    block = np.unique(roots, return_inverse=True)[1].reshape(-1)
    block = _renumber(block, m.start, m.next)
    return _quotient_tables(m, block), block


def _find(parent, s):
    while parent[s] != s:
        parent[s] = parent[parent[s]]
        s = parent[s]
    return s


def _fold(action, symbol, nxt, parent, p, q):
    """Merge states p and q and everything the merge forces together, on
    copies; None if two known outputs clash."""
    a0, b0 = action[p] >= 0, action[q] >= 0
    both = a0 & b0
    if (action[p, both] != action[q, both]).any() or (symbol[p, both] != symbol[q, both]).any():
        return None
    action, symbol, nxt, parent = action.copy(), symbol.copy(), nxt.copy(), parent.copy()
    stack = [(p, q)]
    while stack:
        a, b = stack.pop()
        a, b = _find(parent, a), _find(parent, b)
        if a == b:
            continue
        if b < a:
            a, b = b, a
        ka, kb = action[a] >= 0, action[b] >= 0
        both = ka & kb
        if (action[a, both] != action[b, both]).any() or (symbol[a, both] != symbol[b, both]).any():
            return None
        action[a] = np.where(ka, action[a], action[b])
        symbol[a] = np.where(ka, symbol[a], symbol[b])
        na, nb = nxt[a], nxt[b]
        for x in np.nonzero((na >= 0) & (nb >= 0))[0]:
            stack.append((int(na[x]), int(nb[x])))
        nxt[a] = np.where(na >= 0, na, nb)
        parent[b] = a
    return action, symbol, nxt, parent


def merge_alternatives(m: Machine, pairs: np.ndarray):
    """Merge the states that the recording shows as the next state of one
    (state, input) pair (``pairs`` (n, 2), from ``next_alternatives``): the
    clusters split the network's state more finely than its behaviour on the
    recorded paths needs, and determinism forces them together.  Each merge
    folds the successors it forces together and is refused if it would give
    one (state, input) two recorded outputs (then the two states differ and
    the recording's disagreement stays a conflict).  Returns (machine, block
    (S,) of each state of ``m``, merges refused)."""
    S = m.n_states
    action, symbol, nxt = m.action.copy(), m.symbol.copy(), m.next.copy()
    parent = np.arange(S)
    refused = 0
    for p, q in np.asarray(pairs, dtype=np.int64).reshape(-1, 2).tolist():
        p, q = _find(parent, p), _find(parent, q)
        if p == q:
            continue
        folded = _fold(action, symbol, nxt, parent, min(p, q), max(p, q))
        if folded is None:
            refused += 1
        else:
            action, symbol, nxt, parent = folded
    return _merged(m, parent) + (refused,)
