"""The Mealy machine of a controller: (state, symbol read) -> (joint action,
symbol written, next state), built from a recording (``record``); its JSON
form.  ``minimise`` makes it minimal (partition refinement) and reduces it
with the transitions never seen treated as "don't care".

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
from tinyalgo.runs.fileio import atomic_write_json
from tinyalgo.runs.schema import Field, FileFormatError, check
from tinyalgo.symbols import Vocabulary

FORMAT = "tinyalgo-automaton"
VERSION = 1


def _table(minimum: int) -> Field:
    return Field("list", items=Field("list", items=Field("int", minimum=minimum)))


# The JSON a machine is saved as (``Machine.to_dict``); table shapes are checked against states x inputs on load.
SCHEMA = {"format": Field("str", choices=(FORMAT,)), "version": Field("int", choices=(VERSION,)),
          "task": Field("str", choices=("copy", "reverse", "walk", "addition", "addition3", "multiplication")),
          "base": Field("int", minimum=2, maximum=10), "n_moves": Field("int", choices=(2, 4)),
          "states": Field("int", minimum=1), "inputs": Field("int", minimum=1), "start": Field("int", minimum=0),
          "action": _table(-1), "symbol": _table(-1), "next": _table(-1), "cluster": Field("list", items=Field("int")),
          "feedback": _table(-1), "raw": _table(-1), "visits": Field("list", items=Field("int", minimum=0)),
          "centroids": Field("list", items=Field("list", items=Field("number"))), "info": Field("dict", required=False)}


class MachineError(ValueError):
    """A recording or machine file that cannot be used."""


@dataclass
class Machine:
    """A Mealy machine over the symbols of a task's vocabulary.

    task, base, n_moves
        the task it acts on.
    action, symbol, next : int (S, V)
        tables (see the module doc).
    start
        the state of an episode's first step.
    centroids : float (k, D)
        the cluster centres of the recurrent states.
    cluster, feedback : int (S,), (S, 4)
        each state's representative cluster and feedback fields (the raw
        state visited most).
    raw : int (R, 6)
        rows (cluster, feedback fields 1..4, state): where every raw state
        went.
    visits : int (S,)
        recorded steps in each state.
    info : dict
        how the machine was made (clusters, counts).
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

    def quotient(self, block: np.ndarray, tables) -> Machine:
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


def load_machine(path, task: str | None = None) -> Machine:
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
    except ValueError:                          # an integer of more digits than Python converts
        fail("not readable JSON (a number of thousands of digits)")
    except RecursionError:
        fail("not readable JSON (nested too deeply)")
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        fail("not a tinyalgo automaton")
    if d.get("version") != VERSION:
        fail(f"format version {d.get('version')!r}, this tinyalgo reads version {VERSION}")
    try:
        check(d, SCHEMA, f"machine {path}")
    except FileFormatError as err:
        raise MachineError(str(err)) from None
    if task is not None and d.get("task") != task:
        fail(f"is a machine of task {d.get('task')!r}, not of task {task!r}")
    S, V = d["states"], d["inputs"]
    for name, width in (("action", V), ("symbol", V), ("next", V), ("feedback", 4), ("cluster", None),
                        ("visits", None)):
        rows = d[name]
        if len(rows) != S or (width is not None and any(len(row) != width for row in rows)):
            fail(f"field {name} is not {S} rows" + (f" of {width}" if width else "") +
                 f" (states = {S}, inputs = {V}); allowed: one {'row' if width else 'value'} per state")
    if any(len(row) != 6 for row in d["raw"]):
        fail("field raw: a row not of 6 numbers; allowed: rows of 6 (cluster, feedback fields, state)")
    try:
        tables = [np.array(d[k], dtype=np.int64).reshape(S, V) for k in ("action", "symbol", "next")]
        centroids = np.array(d["centroids"], dtype=np.float64)
        m = Machine(d["task"], int(d["base"]), int(d["n_moves"]), *tables, int(d["start"]),
                    centroids.reshape(len(centroids), -1), np.array(d["cluster"], dtype=np.int64).reshape(S),
                    np.array(d["feedback"], dtype=np.int64).reshape(S, 4),
                    np.array(d["raw"], dtype=np.int64).reshape(-1, 6),
                    np.array(d["visits"], dtype=np.int64).reshape(S), d.get("info", {}))
    except (KeyError, TypeError, ValueError) as err:
        fail(f"malformed ({err})")
    if not m.start < S:
        fail(f"field start: found {m.start}; allowed: 0..{S - 1} (a state)")
    for name, table, high in (("next", m.next, S - 1), ("action", m.action, 2 * m.n_moves - 1)):
        bad = np.argwhere(table > high)
        if len(bad):
            fail(f"field {name}[{bad[0][0]}][{bad[0][1]}]: found {table[tuple(bad[0])]}; allowed: -1..{high}")
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
    S, V = len(raw_keys), Vocabulary(rec.base).size    # inputs: digits, the markers, none
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
