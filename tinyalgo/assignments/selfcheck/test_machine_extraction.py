"""Assignment "machine_extraction": Moore's partition refinement, ``minimise``
in tinyalgo/automata/minimise.py (tutorial 06), graded on small machines
written by hand.

Every machine here reads three inputs: the digits 0 and 1 and the reverse
task's turn marker p (the symbols that matter; the tables keep only those
columns).  Actions: 0 left, 1 right, 2 left+write (move + 2 * write, two
moves on a tape); the symbol written is -1 where the action does not write.
-1 in ``action`` is a transition never seen, -1 in ``next`` an unknown next
state: for ``minimise`` both are values like any other.  The expected
equivalence classes below are worked by hand, each with what its states do."""
import numpy as np

from tinyalgo.automata.machine import Machine

L, R, LW, N = 0, 1, 2, -1          # left, right, left+write; N: never seen / unknown next
INPUTS = ("0", "1", "p")
NO = -1                            # the symbol of an action that does not write


def machine(action, symbol, nxt, start=0):
    """A Machine with the given (S, 3) tables (the other fields are bookkeeping minimise carries along)."""
    action, symbol, nxt = (np.array(t, dtype=np.int64) for t in (action, symbol, nxt))
    S = len(action)
    raw = np.stack([np.zeros(S), *np.zeros((4, S)), np.arange(S)], axis=1).astype(np.int64)
    return Machine("reverse", 2, 2, action, symbol, nxt, start, np.zeros((1, 0)), np.zeros(S, np.int64),
                   np.zeros((S, 4), np.int64), raw, np.ones(S, np.int64))


def output(m, s, x) -> str:
    a = int(m.action[s, x])
    if a < 0:
        return "never seen"
    return ("left", "right")[a % 2] + (f"+write {int(m.symbol[s, x])}" if a >= 2 else "")


def successor(m, s, x) -> str:
    t = int(m.next[s, x])
    return "unknown (-1)" if t < 0 else str(t)


def minimised(m):
    """minimise(m) as (machine, block), checked for shape."""
    from tinyalgo.automata.minimise import minimise
    result = minimise(m)
    assert isinstance(result, tuple) and len(result) == 2, \
        f"minimise must return (machine, block); got {type(result).__name__}"
    small, block = result
    block = np.asarray(block)
    assert block.shape == (m.n_states,) and np.issubdtype(block.dtype, np.integer), \
        f"block must hold one integer per state of m, shape ({m.n_states},); got {block.dtype} {block.shape}"
    assert isinstance(small, Machine), f"the first result must be a Machine; got {type(small).__name__}"
    used = sorted(set(block.tolist()))
    assert used == list(range(len(used))), f"block must number the blocks 0, 1, ...; got the numbers {used}"
    assert small.n_states == len(used), \
        f"the minimal machine has {small.n_states} states but block names {len(used)} blocks"
    return small, block


def check_partition(what, m, block, classes):
    """Fail naming the pairs of states ``block`` merges that the hand-worked
    ``classes`` [(states, what they do)] keep apart, and the reverse."""
    cls = {s: i for i, (states, _) in enumerate(classes) for s in states}
    assert sorted(cls) == list(range(m.n_states))            # the test's own bookkeeping
    problems, hints = [], []
    for p in range(m.n_states):
        for q in range(p + 1, m.n_states):
            merged, equivalent = block[p] == block[q], cls[p] == cls[q]
            if merged and not equivalent:
                why, hint = _why_apart(m, p, q, cls, classes)
                problems.append(f"states {p} and {q} were merged, but they are not equivalent: {why}")
                hints += [hint] if hint not in hints else []
            elif equivalent and not merged:
                outs = ", ".join(f"{output(m, p, x)} on {INPUTS[x]}" for x in range(m.n_inputs))
                problems.append(f"states {p} and {q} were kept apart, but they are equivalent "
                                f"({classes[cls[p]][1]}): both output {outs} and go to equivalent states "
                                f"(on {', '.join(INPUTS)}:"
                                f" {p} -> {', '.join(successor(m, p, x) for x in range(m.n_inputs))};"
                                f" {q} -> {', '.join(successor(m, q, x) for x in range(m.n_inputs))})")
                hint = "split a block only where two of its states output differently or go to different blocks"
                hints += [hint] if hint not in hints else []
    more = f" (and {len(problems) - 3} more pair{'s' * (len(problems) > 4)})" if len(problems) > 3 else ""
    assert not problems, f"{what}: " + "; ".join(problems[:3]) + more + ". " + "; ".join(hints)


def _why_apart(m, p, q, cls, classes):
    """(why states p and q differ, the hint for that mistake), from the hand-worked classes."""
    for x in range(m.n_inputs):
        if output(m, p, x) != output(m, q, x):
            return (f"on input {INPUTS[x]} state {p} outputs {output(m, p, x)} and state {q} outputs "
                    f"{output(m, q, x)}", "start from the blocks of states with the same outputs on every input"
                    " (\"never seen\", -1, is an output like any other for minimise)")
    for x in range(m.n_inputs):
        s, t = int(m.next[p, x]), int(m.next[q, x])
        if (s < 0) != (t < 0) or (s >= 0 and cls[s] != cls[t]):
            def name(u):
                return "an unknown next state (-1)" if u < 0 else f"state {u} ({classes[cls[u]][1]})"
            return (f"they output the same on every input, but on input {INPUTS[x]} state {p} goes to {name(s)}"
                    f" and state {q} goes to {name(t)}, which are not equivalent",
                    "the outputs alone are not enough: split a block while two of its states go, on some input,"
                    " to different blocks (an unknown next state, -1, is a block of its own), until no block splits")
    return "they differ (see the hand-worked classes)", "compare with the hand-worked classes"


def check_tables(what, small, action, symbol, nxt, start=0):
    """The minimal machine's tables against hand-worked ones, in the canonical numbering."""
    assert small.start == start, f"{what}: the minimal machine starts in state {small.start}, expected {start}"
    for label, got, want in (("action", small.action, action), ("symbol", small.symbol, symbol),
                             ("next", small.next, nxt)):
        want = np.array(want)
        assert np.shape(got) == want.shape, (f"{what}: the {label} table has shape {np.shape(got)},"
                                             f" expected {want.shape}")
        bad = np.argwhere(np.asarray(got) != want)
        assert not len(bad), f"{what}: the minimal machine's {label} table is wrong at " + "; ".join(
            f"state {s}, input {INPUTS[x]}: got {got[s, x]}, expected {want[s, x]}" for s, x in bad[:4])


def test_figure_4a_padded_with_duplicated_states():
    """The paper's Figure 4a reverse machine (move right over digits; at p turn left; then write each
    digit read, moving left), each of its two states written out two or three times."""
    m = machine(action=[[R, R, L], [LW, LW, N], [R, R, L], [LW, LW, N], [R, R, L]],
                symbol=[[NO, NO, NO], [0, 1, NO], [NO, NO, NO], [0, 1, NO], [NO, NO, NO]],
                nxt=[[2, 4, 1], [3, 1, N], [0, 2, 3], [1, 3, N], [4, 0, 1]])
    small, block = minimised(m)
    check_partition("Figure 4a with duplicated states", m, block,
                    [((0, 2, 4), "moves right over digits and turns at p"),
                     ((1, 3), "writes the digit read, moving left")])
    check_tables("Figure 4a with duplicated states", small,
                 action=[[R, R, L], [LW, LW, N]], symbol=[[NO, NO, NO], [0, 1, NO]], nxt=[[0, 0, 1], [1, 1, N]])


def test_refinement_needs_several_rounds():
    """Write every third digit: two states move right and only the third writes, so the outputs alone
    put states 0, 1, 3, 4 together; only where they go tells 'two digits to go' from 'one digit to go'."""
    m = machine(action=[[R, R, L], [R, R, L], [LW, LW, L], [R, R, L], [R, R, L], [LW, LW, L]],
                symbol=[[NO, NO, NO], [NO, NO, NO], [0, 1, NO], [NO, NO, NO], [NO, NO, NO], [0, 1, NO]],
                nxt=[[1, 4, 0], [2, 5, 1], [3, 0, 2], [4, 1, 3], [5, 2, 4], [0, 3, 5]])
    small, block = minimised(m)
    check_partition("write every third digit", m, block,
                    [((0, 3), "two digits to go before the next write"),
                     ((1, 4), "one digit to go before the next write"),
                     ((2, 5), "writes the digit read")])
    check_tables("write every third digit", small, action=[[R, R, L], [R, R, L], [LW, LW, L]],
                 symbol=[[NO, NO, NO], [NO, NO, NO], [0, 1, NO]], nxt=[[1, 1, 0], [2, 2, 1], [0, 0, 2]])


def test_never_seen_entries_keep_states_apart():
    """A recorded machine: state 1 is the start, which never read p (reverse starts on a digit); 3 wrote
    a 1 only at an episode's end, so where it goes next is unknown; 5 turns at p into 3.  minimise keeps
    'never seen' and 'unknown' apart from every known entry (merging them is reduce_dont_care's job; an
    unknown next state is a block of its own, not state 0's), but merges states whose unknown entries
    are the same."""
    m = machine(action=[[LW, LW, N], [R, R, N], [R, R, L], [LW, LW, N], [LW, LW, N], [R, R, L], [R, R, N]],
                symbol=[[0, 1, NO], [NO, NO, NO], [NO, NO, NO], [0, 1, NO], [0, 1, NO], [NO, NO, NO], [NO, NO, NO]],
                nxt=[[0, 4, N], [2, 2, N], [2, 2, 0], [0, N, N], [4, 0, N], [2, 2, 3], [2, 2, N]], start=1)
    small, block = minimised(m)
    check_partition("never seen and unknown entries", m, block,
                    [((0, 4), "writes the digit read, its next state known on both digits"),
                     ((1, 6), "moves right over digits, never seen reading p"),
                     ((2,), "moves right over digits and turns at p into a writing state whose next states"
                            " are all known"),
                     ((3,), "writes the digit read, its next state unknown after writing a 1"),
                     ((5,), "moves right over digits and turns at p into the state with an unknown next")])
    start = block[1]
    assert small.action[start, 2] == N and small.next[start, 2] == N, (
        f"never seen and unknown entries: the start state's block {start} must keep p 'never seen' (-1);"
        f" got action {small.action[start, 2]}, next {small.next[start, 2]}")


def test_blocks_numbered_breadth_first_from_the_start():
    """Figure 4a again, starting in state 4, with two unreachable states (1 and 5) that only move right.
    The canonical numbering: the start state's block is 0, then the blocks in the order a breadth-first
    walk of the minimal machine from it meets them (inputs 0, 1, p in that order), unreachable blocks
    last: {2, 4} (start) is 0, {0, 3} (reached on p) is 1, {1, 5} (unreachable) is 2."""
    m = machine(action=[[LW, LW, N], [R, R, R], [R, R, L], [LW, LW, N], [R, R, L], [R, R, R]],
                symbol=[[0, 1, NO], [NO, NO, NO], [NO, NO, NO], [0, 1, NO], [NO, NO, NO], [NO, NO, NO]],
                nxt=[[0, 3, N], [1, 1, 1], [4, 2, 3], [3, 0, N], [2, 4, 0], [5, 1, 5]], start=4)
    small, block = minimised(m)
    check_partition("Figure 4a starting in state 4", m, block,
                    [((2, 4), "moves right over digits and turns at p"),
                     ((0, 3), "writes the digit read, moving left"),
                     ((1, 5), "unreachable: moves right on every input, p included")])
    expected = [1, 2, 0, 1, 0, 2]
    assert block.tolist() == expected, (
        f"Figure 4a starting in state 4: the blocks are not numbered breadth-first from the start state:"
        f" got block {block.tolist()}, expected {expected} (the start state 4's block {{2, 4}} is 0, the block"
        f" it reaches on p, {{0, 3}}, is 1, the unreachable {{1, 5}} comes last as 2: use _renumber)")
    check_tables("Figure 4a starting in state 4", small, action=[[R, R, L], [LW, LW, N], [R, R, R]],
                 symbol=[[NO, NO, NO], [0, 1, NO], [NO, NO, NO]], nxt=[[0, 0, 1], [1, 1, N], [2, 2, 2]])
