"""The Mealy machine of a controller: (state, symbol read) -> (joint action,
symbol written, next state), built from a recording (``record``), minimised
by partition refinement, and reduced with the transitions never seen treated
as "don't care".

States.  A state of the raw machine is a pair (cluster of the recurrent state
entering the step, the observation's feedback fields 1..4: symbol written at
the previous step, explored, previous move, previous write flag): what the
controller carries from one step to the next, in its recurrent state and
through the observation (tinyalgo/environment.py's field table).  A
feed-forward controller has one cluster, so its states are the feedback
fields alone.  The input of a transition is field 0, the symbol under the
head.

Tables.  ``action[s, x]`` is -1 where (s, x) was never seen; ``symbol[s, x]``
is -1 where the action does not write (or was never seen); ``next[s, x]`` is -1
where the next state is unknown (never seen, or only as an episode's last
step).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from tinyalgo.automata.record import NO_WRITE, Recording
from tinyalgo.fileio import atomic_write_json

FORMAT = "tinyalgo-automaton"
VERSION = 1


class MachineError(ValueError):
    """A recording or machine file that cannot be used."""


@dataclass
class Machine:
    """A Mealy machine over the symbols of a task's vocabulary.

    task, base, n_moves : the task it acts on.
    action, symbol, next : int (S, V) tables (see the module doc).
    start : the state of an episode's first step.
    centroids : float (k, D), the cluster centres of the recurrent states.
    cluster, feedback : int (S,), (S, 4): each state's representative
        cluster and feedback fields (the raw state visited most).
    raw : int (R, 6) rows (cluster, feedback fields 1..4, state): where every
        raw state went.
    visits : int (S,), recorded steps in each state.
    info : dict, how the machine was made (clusters, counts).
    """

    task: str
    base: int
    n_moves: int
    action: np.ndarray
    symbol: np.ndarray
    next: np.ndarray
    start: int
    centroids: np.ndarray
    cluster: np.ndarray
    feedback: np.ndarray
    raw: np.ndarray
    visits: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def n_states(self) -> int:
        return len(self.action)

    @property
    def n_inputs(self) -> int:
        return self.action.shape[1]

    def seen(self) -> np.ndarray:
        """bool (S, V): the transitions whose output is known."""
        return self.action >= 0

    def quotient(self, block: np.ndarray, tables) -> "Machine":
        """The machine whose states are the blocks of ``block`` (S,) -> 0..m-1,
        with the given (action, symbol, next) tables of the blocks."""
        m = int(block.max()) + 1
        rep = np.full(m, -1)
        for s in np.argsort(-self.visits, kind="stable"):     # each block's most visited member
            if rep[block[s]] < 0:
                rep[block[s]] = s
        raw = self.raw.copy()
        raw[:, 5] = block[raw[:, 5]]
        visits = np.bincount(block, weights=self.visits, minlength=m).astype(np.int64)
        action, symbol, nxt = tables
        return Machine(self.task, self.base, self.n_moves, action, symbol, nxt, int(block[self.start]),
                       self.centroids, self.cluster[rep], self.feedback[rep], raw, visits, dict(self.info))

    # ------------------------------------------------------------------ io
    def to_dict(self) -> dict:
        return dict(format=FORMAT, version=VERSION, task=self.task, base=self.base, n_moves=self.n_moves,
                    states=self.n_states, inputs=self.n_inputs, start=self.start,
                    action=self.action.tolist(), symbol=self.symbol.tolist(), next=self.next.tolist(),
                    cluster=self.cluster.tolist(), feedback=self.feedback.tolist(), raw=self.raw.tolist(),
                    visits=self.visits.tolist(), centroids=np.round(self.centroids, 6).tolist(), info=self.info)

    def save(self, path) -> None:
        """Write the machine as JSON, atomically."""
        atomic_write_json(path, self.to_dict())


def load_machine(path, task: str = None) -> Machine:
    """Read a machine written by ``Machine.save``; with ``task``, check that
    it is that task's.  Raises MachineError naming the file and the problem."""
    def fail(problem):
        raise MachineError(f"machine {path}: {problem}")

    try:
        with open(path) as f:
            d = json.load(f)
    except FileNotFoundError:
        fail("no such file")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        fail(f"not readable JSON ({err})")
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        fail("not a tinyalgo automaton")
    if d.get("version") != VERSION:
        fail(f"format version {d.get('version')!r}, this tinyalgo reads version {VERSION}")
    if task is not None and d.get("task") != task:
        fail(f"is a machine of task {d.get('task')!r}, not of task {task!r}")
    try:
        S, V = int(d["states"]), int(d["inputs"])
        tables = [np.array(d[k], dtype=np.int64).reshape(S, V) for k in ("action", "symbol", "next")]
        centroids = np.array(d["centroids"], dtype=np.float64)
        m = Machine(d["task"], int(d["base"]), int(d["n_moves"]), *tables, int(d["start"]),
                    centroids.reshape(len(centroids), -1), np.array(d["cluster"], dtype=np.int64).reshape(S),
                    np.array(d["feedback"], dtype=np.int64).reshape(S, 4), np.array(d["raw"], dtype=np.int64).reshape(-1, 6),
                    np.array(d["visits"], dtype=np.int64).reshape(S), d.get("info", {}))
    except (KeyError, TypeError, ValueError) as err:
        fail(f"malformed ({err})")
    if not 0 <= m.start < S or (m.next >= S).any() or (m.next < -1).any() or (m.action >= 2 * m.n_moves).any():
        fail("a state index or an action is out of range")
    return m


# ---------------------------------------------------------------- building
def _majority(keys: np.ndarray, values: np.ndarray):
    """For each distinct key (rows of ``keys``), the most frequent row of
    ``values`` (ties: the smallest).  Returns (distinct keys, their values,
    rows disagreeing with their key's majority)."""
    both = np.concatenate([keys, values], axis=1)
    pairs, counts = np.unique(both, axis=0, return_counts=True)
    order = np.lexsort((-counts,) + tuple(pairs[:, j] for j in range(keys.shape[1] - 1, -1, -1)))
    # order: by key (last sort key = first column), then by count descending
    pairs, counts = pairs[order], counts[order]
    first = np.ones(len(pairs), dtype=bool)
    first[1:] = (pairs[1:, :keys.shape[1]] != pairs[:-1, :keys.shape[1]]).any(axis=1)
    keep = pairs[first]
    disagreeing = int(len(keys) - counts[first].sum())
    return keep[:, :keys.shape[1]], keep[:, keys.shape[1]:], disagreeing


def raw_states(rec: Recording, labels: np.ndarray):
    """The raw states (cluster, feedback fields 1..4) of a recording whose
    recurrent states fall in the clusters ``labels``: (distinct keys (S, 5),
    state of each row (T,))."""
    keys = np.concatenate([np.asarray(labels, dtype=np.int64)[:, None], rec.obs[:, 1:5]], axis=1)
    raw_keys, row_state = np.unique(keys, axis=0, return_inverse=True)
    return raw_keys, row_state.reshape(-1)


def next_alternatives(rec: Recording, labels: np.ndarray, m: Machine) -> np.ndarray:
    """The pairs (majority next state, other next state) of the raw machine
    ``m`` built from ``rec`` and ``labels``: where one (state, input) pair
    was recorded going to two states: int (n, 2)."""
    _, row_state = raw_states(rec, labels)
    linked = np.nonzero(rec.next_row >= 0)[0]
    s, x, t = row_state[linked], rec.obs[linked, 0], row_state[rec.next_row[linked]]
    major = m.next[s, x]
    other = (t != major) & (major >= 0)
    return np.unique(np.stack([major[other], t[other]], axis=1), axis=0)


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
    roots = np.array([_find(parent, s) for s in range(S)])
    block = np.unique(roots, return_inverse=True)[1].reshape(-1)
    block = _renumber(block, m.start, m.next)
    return _quotient_tables(m, block), block, refused


def build_machine(rec: Recording, labels: np.ndarray, centroids: np.ndarray) -> Machine:
    """The raw machine of a recording whose recurrent states fall in the
    clusters ``labels`` (T,) with centres ``centroids`` (k, D).

    Where the recording is not deterministic (one (state, input) pair seen
    with two outputs or two next states), the most frequent wins; the rows
    that disagree are counted in ``info["conflicts"]``."""
    T = len(rec)
    if T == 0:
        raise MachineError("the recording has no steps: nothing to build a machine from")
    labels = np.asarray(labels, dtype=np.int64)
    if labels.shape != (T,):
        raise MachineError(f"labels must have one entry per recorded step ({T}); got shape {labels.shape}")
    raw_keys, row_state = raw_states(rec, labels)
    S, V = len(raw_keys), int(rec.base) + 7            # the vocabulary: digits, 6 markers, none
    starts = np.unique(row_state[rec.first])
    if len(starts) != 1:
        raise MachineError(f"the recording's episodes start in {len(starts)} different states; expected one")
    x = rec.obs[:, 0]
    # outputs
    pair = np.stack([row_state, x], axis=1)
    out_keys, out_vals, out_conflicts = _majority(pair, np.stack([rec.action, rec.symbol], axis=1))
    action = np.full((S, V), -1, dtype=np.int64)
    symbol = np.full((S, V), NO_WRITE, dtype=np.int64)
    action[out_keys[:, 0], out_keys[:, 1]] = out_vals[:, 0]
    symbol[out_keys[:, 0], out_keys[:, 1]] = out_vals[:, 1]
    # next states (known where the episode goes on)
    linked = rec.next_row >= 0
    nxt = np.full((S, V), -1, dtype=np.int64)
    next_conflicts = 0
    if linked.any():
        nk, nv, next_conflicts = _majority(pair[linked], row_state[rec.next_row[linked]][:, None])
        nxt[nk[:, 0], nk[:, 1]] = nv[:, 0]
    visits = np.bincount(row_state, minlength=S).astype(np.int64)
    raw = np.concatenate([raw_keys, np.arange(S)[:, None]], axis=1)
    info = dict(steps=int(T), clusters=int(len(centroids)), raw_states=int(S),
                conflicts=int(out_conflicts + next_conflicts), output_conflicts=int(out_conflicts),
                next_conflicts=int(next_conflicts))
    return Machine(rec.task, int(rec.base), int(rec.n_moves), action, symbol, nxt, int(starts[0]),
                   np.asarray(centroids, dtype=np.float64), raw_keys[:, 0].copy(), raw_keys[:, 1:5].copy(), raw,
                   visits, info)


# ------------------------------------------------------------- minimising
def minimise(m: Machine):
    """The minimal machine equivalent to ``m`` as a completely specified
    machine ("never seen" and "unknown next" are values like the others):
    Moore's partition refinement.  Start from the blocks of states with the
    same outputs on every input; split a block while two of its states go,
    on some input, to different blocks; stop when no block splits.
    Returns (machine, block (S,) of each state of ``m``)."""
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
    roots = np.array([_find(parent, s) for s in range(S)])
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
