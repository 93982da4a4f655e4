"""The whole extraction (``extract``) and its fidelity report (``fidelity``).

``extract`` records the controller on instances of the lengths it was
trained on and on the task's corner instances of 1 to 12 digits (all
zeros, all maximal digits, carry chains: tinyalgo/tasks/corners.py),
chooses the number of clusters as the smallest that makes the recorded
episodes replay exactly on the machine (doubling k from 1, then
bisecting); for each k it splits the clusters by one-step behaviour, builds
the machine, minimises it, and reduces it with unseen transitions as "don't
care".  ``fidelity`` runs the network greedily on held-out instances and
asks the machine, fed the same observations, what it would do at each step.
"""
from __future__ import annotations

import time

import numpy as np

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.discretise import kmeans
from tinyalgo.automata.machine import MachineError, build_machine, next_alternatives
from tinyalgo.automata.minimise import merge_alternatives, minimise, reduce_dont_care
from tinyalgo.automata.record import record, state_size, unflatten_state
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent
from tinyalgo.symbols import Vocabulary
from tinyalgo.tasks import make_task
from tinyalgo.tasks.corners import corner_batch

CORNER_DIGITS = range(1, 13)     # the corner instances recorded: 1 to 12 digits


def default_complexities(task, top: int = 100, count: int = 12) -> list:
    """Recording lengths: ``count`` complexities from the task's minimum to ``top``."""
    low = make_task(task).min_complexity
    return sorted({int(c) for c in np.linspace(low, max(top, low), count)})


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
            q, logp, state = model.infer(obs, state, None)
            a, y = q.argmax(axis=1), logp.argmax(axis=1)
            answers.append(np.where(on_path, _answer(a, y, n_moves), -1).reshape(b, e))
            fb = _next_feedback(a, y, n_moves, none)
            if moves is not None:
                on_path &= a % n_moves == np.tile(moves[:, step], b)
        out[i:i + b] = np.stack(answers, axis=2).reshape(b, e * L)
    return out


def behaviour_tags(rec, controller, depth: int = 1, tests: int = 16, seed: int = 0, chunk: int = 8192) -> np.ndarray:
    """Each recorded state's behaviour, as an id (T,) (equal ids: equal
    behaviour).  Two states that answer some input sequence differently are
    different states of any machine the network is.

    One step: the network's greedy joint action (and symbol, where it
    writes) from the recurrent state on every symbol that the recording
    shows read with the same feedback fields.  With ``depth`` > 1, also its
    outputs over ``tests`` input sequences of length ``depth`` that the
    recording reads from rows with the same feedback fields (drawn with
    ``seed``), run from the recurrent state with the feedback fields that the
    network's own outputs produce: states that answer alike now but hold
    different memories (a carry, a digit read) are told apart by what they
    write later."""
    if depth < 1 or tests < 1:
        raise ValueError(f"behaviour tags need depth >= 1 and tests >= 1; got depth {depth}, tests {tests}")
    T, model = len(rec), controller.frozen()
    none = Vocabulary(rec.base).NONE
    rng = np.random.default_rng(seed)
    fb_keys, fb_group = np.unique(rec.obs[:, 1:5], axis=0, return_inverse=True)
    fb_group = fb_group.reshape(-1)
    tags = np.zeros(T, dtype=np.int64)
    offset = 0
    for g in range(len(fb_keys)):
        rows = np.nonzero(fb_group == g)[0]
        h, back = np.unique(rec.state[rows], axis=0, return_inverse=True)
        back = back.reshape(-1)
        answers = run_tests(model, h, fb_keys[g], np.unique(rec.obs[rows, 0])[:, None], rec.n_moves, none, chunk=chunk)
        if depth > 1:
            inputs, moves = suffix_tests(rec, rows, depth, tests, rng)
            if len(inputs):
                longer = run_tests(model, h, fb_keys[g], inputs, rec.n_moves, none, moves, chunk)
                answers = np.concatenate([answers, longer], axis=1)
        ids = np.unique(answers, axis=0, return_inverse=True)[1].reshape(-1)
        tags[rows] = offset + ids[back]
        offset += int(ids.max()) + 1
    return tags


def refine_clusters(states, labels, tags):
    """The clusters split by behaviour: one cluster per (k-means cluster,
    behaviour tag) pair, with the mean of its states as centre."""
    pairs, new = np.unique(np.stack([labels, tags], axis=1), axis=0, return_inverse=True)
    new = new.reshape(-1)
    counts = np.bincount(new, minlength=len(pairs))
    centroids = np.zeros((len(pairs), states.shape[1]))
    np.add.at(centroids, new, states)
    return centroids / counts[:, None], new


def replay(machine, rec) -> float:
    """The fraction of the recorded episodes that ``machine``, started in its
    start state and fed the recorded symbols read, answers exactly (same
    joint action and, where it writes, the same symbol at every step; an
    unknown transition counts as a disagreement)."""
    rows = np.nonzero(rec.first)[0]
    state = np.full(len(rows), machine.start)
    good = np.ones(len(rows), dtype=bool)
    episode = np.arange(len(rows))
    while len(rows):
        x = rec.obs[rows, 0]
        a, y = machine.action[state, x], machine.symbol[state, x]
        ok = (a == rec.action[rows]) & ((a < machine.n_moves) | (y == rec.symbol[rows]))
        good[episode[~ok]] = False
        state = machine.next[state, x]
        rows = rec.next_row[rows]
        go = ok & (rows >= 0)
        good[episode[ok & (rows >= 0) & (state < 0)]] = False
        go &= state >= 0
        rows, state, episode = rows[go], state[go], episode[go]
    return float(good.mean())


def choose_clusters(rec, seed: int = 0, k_max: int = 256, log=None, tags=None):
    """The number of k-means clusters: the smallest k (doubling from 1, then
    bisecting) whose reduced machine answers every recorded episode exactly
    (``replay``); if none up to ``k_max`` does, or two doublings in a row do
    not improve, the k with the best replay.  Returns (k, raw machine,
    minimal machine, reduced machine, tried {k: replay})."""
    tried, fits = {}, {}

    def attempt(k):
        centroids, labels = kmeans(rec.state, k, seed=seed)
        if tags is not None:
            centroids, labels = refine_clusters(rec.state, labels, tags)
        raw = build_machine(rec, labels, centroids)
        merged, _, refused = merge_alternatives(raw, next_alternatives(rec, labels, raw))
        raw.info.update(merged_states=int(merged.n_states), refused_merges=int(refused))
        minimal, _ = minimise(merged)
        reduced, _ = reduce_dont_care(minimal)
        tried[k], fits[k] = replay(reduced, rec), (raw, minimal, reduced)
        if log:
            log(f"  k {k:4d}: {len(centroids):5d} clusters, states {raw.n_states} raw, {minimal.n_states} minimal,"
                f" {reduced.n_states} reduced; {raw.info['conflicts']} conflicting rows, {merged.n_states} states after"
                f" merging recorded alternatives ({refused} refused);"
                f" replays {tried[k]:.2%} of the recorded episodes")
        return tried[k]

    def best():
        k = max(tried, key=lambda j: (tried[j], -j))
        return (k,) + fits[k] + (tried,)

    if rec.state.shape[1] == 0:                  # a feed-forward controller: no recurrent state
        attempt(1)
        return best()
    lo, k, stale = 0, 1, 0
    while k <= k_max and attempt(k) < 1.0:
        if k > 1:
            stale = stale + 1 if tried[k] <= max(v for j, v in tried.items() if j < k) else 0
        if stale == 2:
            return best()
        lo, k = k, 2 * k
    if k > k_max:
        return best()
    hi = k
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if attempt(mid) == 1.0:
            hi = mid
        else:
            lo = mid
    return (hi,) + fits[hi] + (tried,)


def extract(controller, task, base: int = 10, complexities=None, instances: int = 50, seed: int = 0,
            k_max: int = 256, behaviour: bool = True, depth: int = 6, tests: int = 8, corners: bool = True,
            log=None) -> dict:
    """Extract the machine of ``controller`` on ``task``.  The recording runs
    ``instances`` random instances of each of ``complexities`` and, with
    ``corners``, the task's corner instances of ``CORNER_DIGITS`` digits:
    rare (state, input) pairs, such as a column of zeros with no carry before
    the end, are then seen rather than guessed by the don't-care reduction.
    Returns a dict: raw, minimal, reduced (Machines), k, tried, seconds,
    steps (the recording's size)."""
    t0 = time.perf_counter()
    complexities = default_complexities(task) if complexities is None else list(complexities)
    canned = corner_batch(task, CORNER_DIGITS, base) if corners else None
    rec = record(controller, task, complexities, instances, base, seed, canned)
    if len(rec) == 0:
        raise MachineError("the recording has no steps")
    t1 = time.perf_counter()
    tags = behaviour_tags(rec, controller, depth, tests, seed) if behaviour and rec.state.shape[1] else None
    t_tags = time.perf_counter()
    k, raw, minimal, reduced, tried = choose_clusters(rec, seed, k_max, log, tags)
    t2 = time.perf_counter()
    for m in (raw, minimal, reduced):
        m.info.update(k=int(k), recorded_complexities=complexities, instances=int(instances), seed=int(seed),
                      units=int(state_size(controller)), core=controller.config.core,
                      corner_digits=list(CORNER_DIGITS) if canned is not None else [],
                      raw_states=int(raw.n_states), minimal_states=int(minimal.n_states),
                      reduced_states=int(reduced.n_states))
    return dict(raw=raw, minimal=minimal, reduced=reduced, k=int(k), tried={int(a): b for a, b in tried.items()},
                steps=len(rec), seconds=dict(record=round(t1 - t0, 3), behaviour=round(t_tags - t1, 3),
                                             build=round(t2 - t1, 3), total=round(t2 - t0, 3)))


def fidelity(machine, controller, complexity: int, instances: int = 100, seed: int = 1,
             base: int | None = None) -> dict:
    """Agreement of ``machine`` with ``controller`` on ``instances`` fresh
    instances of ``complexity``: the network acts greedily; the machine, fed
    the same observations from its own state, proposes its action and symbol
    at every step.  A step agrees if the joint actions are equal and, where
    it writes, the symbols too.  Returns step (fraction of steps agreeing),
    instance (fraction of instances agreeing at every step), fallbacks
    (lane-steps the machine did not know), the first disagreeing (state,
    input) pairs and the network's solved fraction."""
    base = machine.base if base is None else base
    env = Environment(machine.task, batch_size=instances, base=base, complexity=int(complexity), seed=seed,
                      extra_curriculum=False)
    net, mach = GreedyAgent(controller), MachineAgent(machine, controller)
    B = env.batch
    net.start(B)
    mach.start(B)
    obs, reset = env.observe(), np.ones(B, dtype=bool)
    active, clean = np.ones(B, dtype=bool), np.ones(B, dtype=bool)
    steps = agree = 0
    wrong_pairs, solved = {}, np.zeros(B, dtype=bool)
    while active.any():
        s_before = np.where(reset, machine.start, mach.state)
        a_net, y_net = net.act(env, obs, reset)
        a_m, y_m = mach.act(env, obs, reset)
        writes = a_net >= env.n_moves
        ok = (a_net == a_m) & (~writes | (y_net == y_m))
        steps += int(active.sum())
        agree += int((ok & active).sum())
        for lane in np.nonzero(active & ~ok & clean)[0]:
            key = (int(s_before[lane]), int(obs[lane, 0]))
            wrong_pairs[key] = wrong_pairs.get(key, 0) + 1
        clean &= ok | ~active
        result = env.step(a_net, y_net)
        solved |= active & (result.reason == 1)
        active &= ~result.done
        obs, reset = result.obs, result.done
    worst = sorted(wrong_pairs.items(), key=lambda kv: -kv[1])[:10]
    return dict(complexity=int(complexity), instances=int(B), step=agree / steps, instance=float(clean.mean()),
                fallbacks=int(mach.fallbacks), filled=len(mach.filled), network_solved=float(solved.mean()),
                first_disagreements=[dict(state=s, input=x, instances=n) for (s, x), n in worst])
