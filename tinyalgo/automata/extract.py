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
from tinyalgo.automata.behaviour import behaviour_tags
from tinyalgo.automata.discretise import kmeans
from tinyalgo.automata.machine import MachineError, build_machine, next_alternatives, raw_states
from tinyalgo.automata.minimise import merge_alternatives, minimise, reduce_dont_care
from tinyalgo.automata.record import record, state_size
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent
from tinyalgo.tasks import make_task
from tinyalgo.tasks.corners import corner_batch

CORNER_DIGITS = range(1, 13)     # the corner instances recorded: 1 to 12 digits


def default_complexities(task, top: int = 100, count: int = 12) -> list:
    """Recording lengths: ``count`` complexities from the task's minimum to ``top``."""
    low = make_task(task).min_complexity
    return sorted({int(c) for c in np.linspace(low, max(top, low), count)})


def refine_clusters(states, labels, tags):
    """The clusters split by behaviour: one cluster per (k-means cluster,
    behaviour tag) pair, with the mean of its states as centre."""
    pairs, new = np.unique(np.stack([labels, tags], axis=1), axis=0, return_inverse=True)
    new = new.reshape(-1)
    counts = np.bincount(new, minlength=len(pairs))
    centroids = np.zeros((len(pairs), states.shape[1]))
    np.add.at(centroids, new, states)
    return centroids / counts[:, None], new


def departures(machine, rec) -> np.ndarray:
    """Where ``machine``, started in its start state and fed the recorded
    symbols read, first leaves each recorded episode: int (episodes,), the
    row of the first step it answers otherwise (another joint action, or
    another symbol where it writes; an unknown transition counts as another
    answer at the step it was needed for), -1 where it answers the whole
    episode exactly."""
    return _follow(machine, rec)[0]


def followed(machine, rec) -> np.ndarray:
    """bool (T,): the recorded steps ``machine`` answers as the network did,
    each episode up to where it first leaves it (``departures``)."""
    return _follow(machine, rec)[1]


def _follow(machine, rec) -> tuple:
    rows = np.nonzero(rec.first)[0]
    state = np.full(len(rows), machine.start)
    leaves = np.full(len(rows), -1, dtype=np.int64)
    kept = np.zeros(len(rec), dtype=bool)
    episode = np.arange(len(rows))
    while len(rows):
        x = rec.obs[rows, 0]
        a, y = machine.action[state, x], machine.symbol[state, x]
        ok = (a == rec.action[rows]) & ((a < machine.n_moves) | (y == rec.symbol[rows]))
        leaves[episode[~ok]] = rows[~ok]
        kept[rows[ok]] = True
        state = machine.next[state, x]
        rows = rec.next_row[rows]
        lost = ok & (rows >= 0) & (state < 0)
        leaves[episode[lost]] = rows[lost]
        go = ok & (rows >= 0) & (state >= 0)
        rows, state, episode = rows[go], state[go], episode[go]
    return leaves, kept


def replay(machine, rec) -> float:
    """The fraction of the recorded episodes that ``machine`` answers exactly
    (``departures``: same joint action and, where it writes, the same symbol
    at every step; an unknown transition counts as a disagreement)."""
    return float((departures(machine, rec) < 0).mean())


def machines(rec, k: int, seed: int = 0, tags=None) -> tuple:
    """The machines of ``k`` k-means clusters (split by ``tags`` if given):
    (raw, minimal, reduced), built, with recorded alternatives merged,
    minimised, and reduced with unseen pairs as "don't care"."""
    return machines_and_rows(rec, k, seed, tags)[:3]


def machines_and_rows(rec, k: int, seed: int = 0, tags=None, clusters=None) -> tuple:
    """``machines`` and the state of the reduced and of the minimal machine
    that each recorded row is in: (raw, minimal, reduced, rows (T,), minimal
    rows (T,)).  ``clusters``: the (centroids (k', D), labels (T,)) to use
    instead of a k-means of ``rec`` (``discretise.nearest_clusters`` of an
    earlier recording's centroids)."""
    centroids, labels = kmeans(rec.state, k, seed=seed) if clusters is None else clusters
    if tags is not None:
        centroids, labels = refine_clusters(rec.state, labels, tags)
    raw = build_machine(rec, labels, centroids)
    merged, merged_block, refused = merge_alternatives(raw, next_alternatives(rec, labels, raw))
    raw.info.update(merged_states=int(merged.n_states), refused_merges=int(refused))
    minimal, minimal_block = minimise(merged)
    reduced, reduced_block = reduce_dont_care(minimal)
    in_minimal = minimal_block[merged_block[raw_states(rec, labels)[1]]]
    return raw, minimal, reduced, reduced_block[in_minimal], in_minimal


def choose_clusters(rec, seed: int = 0, k_max: int = 256, log=None, tags=None):
    """The number of k-means clusters: the smallest k (doubling from 1, then
    bisecting) whose reduced machine answers every recorded episode exactly
    (``replay``); if none up to ``k_max`` does, or two doublings in a row do
    not improve, the k with the best replay.  Returns (k, raw machine,
    minimal machine, reduced machine, tried {k: replay})."""
    tried, fits = {}, {}

    def attempt(k):
        raw, minimal, reduced = machines(rec, k, seed, tags)
        tried[k], fits[k] = replay(reduced, rec), (raw, minimal, reduced)
        if log:
            log(f"  k {k:4d}: {raw.info['clusters']:5d} clusters, states {raw.n_states} raw, {minimal.n_states}"
                f" minimal, {reduced.n_states} reduced; {raw.info['conflicts']} conflicting rows,"
                f" {raw.info['merged_states']} states after merging recorded alternatives"
                f" ({raw.info['refused_merges']} refused); replays {tried[k]:.2%} of the recorded episodes")
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
             base: int | None = None, alone: bool = False) -> dict:
    """Agreement of ``machine`` with ``controller`` on ``instances`` fresh
    instances of ``complexity``: the network acts greedily; the machine, fed
    the same observations from its own state, proposes its action and symbol
    at every step.  A step agrees if the joint actions are equal and, where
    it writes, the symbols too.  With ``alone`` the machine answers its pairs
    never recorded as the verifier reads them (``MachineAgent`` without a
    controller), else the network answers them.  Returns step (fraction of steps agreeing),
    instance (fraction of instances agreeing at every step), fallbacks
    (lane-steps the machine did not know), the first disagreeing (state,
    input) pairs and the network's solved fraction."""
    base = machine.base if base is None else base
    env = Environment(machine.task, batch_size=instances, base=base, complexity=int(complexity), seed=seed,
                      extra_curriculum=False)
    net, mach = GreedyAgent(controller), MachineAgent(machine, None if alone else controller)
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
