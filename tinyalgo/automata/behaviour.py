"""Behaviour tags: what a recorded recurrent state does, as an id (equal ids:
equal behaviour on the tests), so that two states that answer some input
sequence differently never share a machine state (paper section 6.4,
"discretization of state").

A state is tested on the symbols, and on the recorded paths of several
steps, that the recording shows read in the same *context*: by default the
same feedback fields (what the controller sees of its own last step); with
``context="previous"`` also the same symbol read at the previous step.  The
narrower context leaves out answers to inputs that cannot come next: in a
column of two numbers of equal length, a state that has read a digit never
reads the blank below it, and what it would write there varies with details
of the recurrent state that no history fixes, splitting states that the task
never tells apart.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.record import unflatten_state
from tinyalgo.symbols import Vocabulary

CONTEXTS = ("feedback", "previous")


def _answer(a, y, n_moves):
    """One step's output as one integer: the joint action, and the symbol where it writes."""
    return np.where(a >= n_moves, a + 2 * n_moves * y, a)


def _next_feedback(a, y, n_moves, none):
    """The feedback fields 1..4 that a step's greedy output produces (the
    observation table of tinyalgo/environment.py; the greedy run never
    explores): (N, 4)."""
    writes = a >= n_moves
    return np.stack([np.where(writes, y, none), np.zeros_like(a), a % n_moves, writes.astype(a.dtype)], axis=1)


def suffix_tests(rec, rows, depth: int, count: int, rng):
    """Up to ``count`` distinct recorded paths of length ``depth`` from the
    rows ``rows``: the symbols read at the row and at the next depth - 1
    steps of the same episode, and the moves made there, drawn with ``rng``.
    Paths cut short by the episode's end (the last symbols read before it
    ends: the final carry) are drawn apart, up to ``count // 2`` of them,
    and padded with -1.  Returns (inputs, moves), int (n, depth) each."""
    seq, moves, cur = [rec.obs[rows, 0]], [rec.action[rows] % rec.n_moves], rows
    for _ in range(depth - 1):
        cur = np.where(cur >= 0, rec.next_row[np.maximum(cur, 0)], -1)
        seq.append(np.where(cur >= 0, rec.obs[np.maximum(cur, 0), 0], -1))
        moves.append(np.where(cur >= 0, rec.action[np.maximum(cur, 0)] % rec.n_moves, -1))
    both = np.concatenate([np.stack(seq, axis=1), np.stack(moves, axis=1)], axis=1)
    full = (both >= 0).all(axis=1)
    chosen = []
    for part, n in ((both[full], count), (both[~full], max(1, count // 2))):
        part = np.unique(part, axis=0)
        if len(part) > n:
            part = part[np.sort(rng.choice(len(part), n, replace=False))]
        chosen.append(part)
    both = np.concatenate(chosen)
    return both[:, :depth], both[:, depth:]


def run_tests(model, h, feedback, tests, n_moves, none, moves=None, chunk: int = 8192) -> np.ndarray:
    """The network's greedy outputs from each recurrent state of ``h`` (n, D),
    entered with the feedback fields ``feedback`` (4,), on each input
    sequence of ``tests`` (e, L), the feedback fields of each later step
    following from the outputs: int (n, e * L), one ``_answer`` per step.
    With ``moves`` (e, L), the moves of the recorded path each test was
    read on: once the network moves otherwise, it would not read the test's
    next symbols, so its later answers are -1 (its answers off the paths
    that the task can present are not part of its behaviour)."""
    n, (e, L) = len(h), tests.shape
    out = np.empty((n, e * L), dtype=np.int64)
    per = max(1, chunk // e)
    for i in range(0, n, per):
        hb = h[i:i + per]
        b = len(hb)
        template = model.initial_state(b * e)
        state = unflatten_state(np.repeat(hb, e, axis=0), template)
        fb = np.tile(np.asarray(feedback, dtype=np.int64), (b * e, 1))
        on_path = np.ones(b * e, dtype=bool)
        answers = []
        for step in range(L):
            x = np.tile(tests[:, step], b)
            on_path &= x >= 0                        # the recorded path ended here
            obs = np.concatenate([np.maximum(x, 0)[:, None], fb], axis=1)
            q, scores, state = model.infer(obs, state, None)
            a, y = q.argmax(axis=1), scores.argmax(axis=1)
            answers.append(np.where(on_path, _answer(a, y, n_moves), -1).reshape(b, e))
            fb = _next_feedback(a, y, n_moves, none)
            if moves is not None:
                on_path &= a % n_moves == np.tile(moves[:, step], b)
        out[i:i + b] = np.stack(answers, axis=2).reshape(b, e * L)
    return out


def contexts(rec, context: str = "feedback") -> tuple:
    """The context of every recorded row: (keys (G, 4 or 5), group (T,)):
    its feedback fields 1..4, and with ``context="previous"`` the symbol read
    at the episode's previous step (-1 at its first step)."""
    if context not in CONTEXTS:
        raise ValueError(f"context must be one of {', '.join(CONTEXTS)}; got {context!r}")
    key = rec.obs[:, 1:5]
    if context == "previous":
        key = np.concatenate([key, previous_symbols(rec)[:, None]], axis=1)
    keys, group = np.unique(key, axis=0, return_inverse=True)
    return keys, group.reshape(-1)


def previous_symbols(rec) -> np.ndarray:
    """The symbol read at each recorded row's previous step, -1 at an episode's first step: int (T,)."""
    previous = np.full(len(rec), -1, dtype=np.int64)
    linked = rec.next_row >= 0
    previous[rec.next_row[linked]] = rec.obs[linked, 0]
    return previous


def context_tests(rec, depth: int, tests: int, seed: int = 0, context: str = "feedback") -> dict:
    """The recorded paths each context of ``rec`` is tested on
    (``suffix_tests``, drawn in the order of ``contexts`` with one generator
    seeded ``seed``): {context key (tuple): (inputs, moves)}; empty for
    ``depth`` 1 (one step tests every symbol read instead)."""
    if depth < 2:
        return {}
    rng = np.random.default_rng(seed)
    keys, group = contexts(rec, context)
    out = {}
    for g, key in enumerate(map(tuple, keys.tolist())):
        out[key] = suffix_tests(rec, np.nonzero(group == g)[0], depth, tests, rng)
    return out


def behaviour_tags(rec, controller, depth: int = 1, tests: int = 16, seed: int = 0, chunk: int = 8192,
                   context: str = "feedback", paths=None) -> np.ndarray:
    """Each recorded state's behaviour, as an id (T,) (equal ids: equal
    behaviour).  Two states that answer some input sequence differently are
    different states of any machine the network is.

    One step: the network's greedy joint action (and symbol, where it
    writes) from the recurrent state on every symbol that the recording
    shows read in the same context (``contexts``).  With ``depth`` > 1, also
    its outputs over ``tests`` input sequences of length ``depth`` that the
    recording reads from rows of the same context (drawn with ``seed``), run
    from the recurrent state with the feedback fields that the network's own
    outputs produce: states that answer alike now but hold different
    memories (a carry, a digit read) are told apart by what they write
    later.  ``paths``: the sequences of ``context_tests``
    (drawn here if None).  Rows of different contexts never share a tag."""
    if depth < 1 or tests < 1:
        raise ValueError(f"behaviour tags need depth >= 1 and tests >= 1; got depth {depth}, tests {tests}")
    T, model = len(rec), controller.rollout()
    none = Vocabulary(rec.base).NONE
    keys, group = contexts(rec, context)
    paths = context_tests(rec, depth, tests, seed, context) if paths is None else paths
    tags = np.zeros(T, dtype=np.int64)
    offset = 0
    for g in range(len(keys)):
        rows = np.nonzero(group == g)[0]
        feedback = keys[g][:4]
        h, back = np.unique(rec.state[rows], axis=0, return_inverse=True)
        back = back.reshape(-1)
        answers = run_tests(model, h, feedback, np.unique(rec.obs[rows, 0])[:, None], rec.n_moves, none, chunk=chunk)
        if depth > 1:
            inputs, moves = paths[tuple(keys[g].tolist())]
            if len(inputs):
                longer = run_tests(model, h, feedback, inputs, rec.n_moves, none, moves, chunk)
                answers = np.concatenate([answers, longer], axis=1)
        ids = np.unique(answers, axis=0, return_inverse=True)[1].reshape(-1)
        tags[rows] = offset + ids[back]
        offset += int(ids.max()) + 1
    return tags
