"""Grading "machine_extraction": Moore's partition refinement (``minimise``) against the
reference, on machines drawn at grading time: duplicated states, states told apart only after
several steps, transitions never seen (-1), a start state other than 0."""
import numpy as np

from tinyalgo.automata.machine import Machine
from tinyalgo.automata.minimise import minimise

INPUTS = 3                         # the digits 0 and 1 and the reverse task's turn marker p


def machine(action, symbol, nxt, start=0) -> dict:
    """The fields of a reverse-task Machine with the given (S, 3) tables."""
    action, symbol, nxt = (np.asarray(t, dtype=np.int64) for t in (action, symbol, nxt))
    S = len(action)
    raw = np.stack([np.zeros(S), *np.zeros((4, S)), np.arange(S)], axis=1).astype(np.int64)
    return dict(task="reverse", base=2, n_moves=2, action=action, symbol=symbol, next=nxt, start=int(start),
                centroids=np.zeros((1, 0)), cluster=np.zeros(S, np.int64), feedback=np.zeros((S, 4), np.int64),
                raw=raw, visits=np.ones(S, np.int64))


def draw(g, S, unseen=0.0):
    """Random (S, 3) tables: actions 0-2 (2 writes a symbol 0 or 1), next states, a fraction ``unseen`` -1."""
    action = g.rng.integers(0, 3, (S, INPUTS))
    symbol = np.where(action == 2, g.rng.integers(0, 2, (S, INPUTS)), -1)
    nxt = g.rng.integers(0, S, (S, INPUTS))
    never = g.rng.random((S, INPUTS)) < unseen
    action[never], symbol[never] = -1, -1
    nxt[g.rng.random((S, INPUTS)) < unseen] = -1
    return action, symbol, nxt


def duplicated(g, action, symbol, nxt, copies):
    """The machine with ``copies`` extra copies of random states (transitions into a state spread over its copies),
    numbered in a random order."""
    S = len(action)
    origin = np.concatenate([np.arange(S), g.rng.integers(0, S, copies)])
    order = g.rng.permutation(len(origin))
    origin = origin[order]
    copies_of = {s: np.flatnonzero(origin == s) for s in range(S)}
    pick = np.vectorize(lambda s: -1 if s < 0 else int(g.rng.choice(copies_of[s])))
    new_next = pick(nxt[origin]) if len(origin) else nxt
    return action[origin], symbol[origin], new_next, int(copies_of[0][0])


def check(g, what, tables):
    expected_machine, expected_block = minimise(Machine(**tables))
    got = g.call("minimise", tables=tables)
    if not isinstance(got, dict) or got.get("form") != "ok":
        form = got.get("form") if isinstance(got, dict) else type(got).__name__
        raise AssertionError(f"{what}: minimise must return (machine, block); got {form}")
    block = got["block"]
    S = len(tables["action"])
    if not isinstance(block, np.ndarray) or block.shape != (S,) or block.dtype.kind not in "iu":
        raise AssertionError(f"{what}: block must hold one integer per state, shape ({S},)")
    if not np.array_equal(block, expected_block):
        same = lambda b: {(p, q) for p in range(S) for q in range(p + 1, S) if b[p] == b[q]}  # noqa: E731
        merged, kept = same(block) - same(expected_block), same(expected_block) - same(block)
        if merged or kept:
            pairs = [f"states {p} and {q} were merged but are not equivalent" for p, q in sorted(merged)[:2]]
            pairs += [f"states {p} and {q} were kept apart but are equivalent" for p, q in sorted(kept)[:2]]
            raise AssertionError(f"{what} ({S} states): " + "; ".join(pairs))
        raise AssertionError(f"{what}: the right blocks, numbered {block.tolist()}; expected"
                             f" {expected_block.tolist()} (breadth first from the start state, inputs in order)")
    for name in ("action", "symbol", "next"):
        mine, theirs = got.get(name), getattr(expected_machine, name)
        if not isinstance(mine, np.ndarray) or not np.array_equal(mine, theirs):
            raise AssertionError(f"{what}: the minimal machine's {name} table differs from the quotient of the"
                                 " blocks (build it with _renumber's numbering)")


def test_figure_4a_padded_with_duplicated_states(g):
    for _ in range(2):
        S = int(g.rng.integers(2, 5))
        a, s, n, start = duplicated(g, *draw(g, S), copies=int(g.rng.integers(2, 6)))
        check(g, "a machine with duplicated states", machine(a, s, n, start))


def test_refinement_needs_several_rounds(g):
    S = int(g.rng.integers(4, 9))                # a chain: only the last state differs, seen S - 1 steps ahead
    action = np.zeros((S, INPUTS), np.int64)
    action[-1] = 1
    nxt = np.tile(np.minimum(np.arange(S) + 1, S - 1)[:, None], (1, INPUTS))
    a, s, n, start = duplicated(g, action, np.full((S, INPUTS), -1), nxt, copies=int(g.rng.integers(1, 4)))
    check(g, f"a chain of {S} states told apart only at its end", machine(a, s, n, start))


def test_never_seen_entries_keep_states_apart(g):
    for _ in range(2):
        a, s, n, start = duplicated(g, *draw(g, int(g.rng.integers(2, 5)), unseen=0.3),
                                    copies=int(g.rng.integers(2, 5)))
        check(g, "a machine with transitions never seen (-1)", machine(a, s, n, start))


def test_blocks_numbered_breadth_first_from_the_start(g):
    a, s, n = draw(g, int(g.rng.integers(4, 8)))
    check(g, "a machine started in another state", machine(a, s, n, start=int(g.rng.integers(1, len(a)))))
