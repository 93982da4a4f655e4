"""The verifier: does an extracted machine solve its task at every length?
(paper section 6.4: "discretization of state"; a discrete controller can be
checked exhaustively instead of sampled.)

The machine is first checked against the task it names (moves, symbols,
inputs, base: ``rules.check_machine``).  Then ``verify(machine)`` answers with
one of

* **proved**: every instance of every length (from one digit) ends with all
  targets written.  Lengths below a threshold N0 are each explored exactly
  (the whole board known up to the cells forgotten outside the window),
  lengths >= N0 all at once by the head-relative exploration of
  tinyalgo/automata/product.py, which covers every instance of every such
  length (the report says which window and range).  With ``certify``, the
  report holds a certificate: the configurations of every exploration, which
  tinyalgo/automata/check.py checks without searching;
* **counterexample**: an instance built by the task's ``build`` that the
  machine fails in the real environment (tinyalgo/automata/witness.py), the
  shortest found (the shortest that exists when every shorter length was
  proved, which the report says);
* **not proved**: for each exploration left undecided, either a failing
  abstract path (its failure and number of steps) that no concrete instance
  reproduced with the largest window tried, or the budget that stopped it
  (configurations or seconds).  Never a proof by default.

The machine is run as ``MachineAgent`` runs it without a controller: an
unknown (state, symbol) pair moves left without writing and keeps the state.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import time

import numpy as np

from tinyalgo.automata.check import MAX_WINDOW
from tinyalgo.automata.product import Search
from tinyalgo.automata.rules import LENGTH_MEANS, SMALLEST, SPECS, WINDOW, check_machine, make, ranges
from tinyalgo.automata.witness import confirm, describe, length_of, lengths_of, random_instances, realise, replay
from tinyalgo.runs.fileio import atomic_write_bytes

CERTIFICATE_FORMAT = "tinyalgo-certificate"
CERTIFICATE_VERSION = 1
# lengths also tried where a failing path leaves the length free (then every length between, for a shorter one)
LONGER = (64, 128, 256, 512, 1024)


def _search(machine, task_name, length, K, keep_all, psi_cap, max_configs, N0, deadline=None):
    task = make(task_name, machine.base)
    spec = SPECS[task_name](task, length, min_length=N0 if length is None else length)
    R, _ = ranges(task_name, K, psi_cap)
    return Search(machine, spec, K=K, R=R, keep_all=keep_all, psi_cap=psi_cap, max_configs=max_configs,
                  deadline=deadline).run()


def _concretise(machine, failures, lengths, rng, N0):
    """The first failure path that a concrete instance reproduces: (instance, reason, correct outputs)."""
    task_name = machine.task
    for kind, path in failures:
        facts = replay(path)
        fixed = lengths_of(task_name, facts)
        tries = [fixed] if fixed is not None else lengths
        instances = []
        for n in tries:
            if n is not None and n >= SMALLEST[task_name]:
                instances += realise(task_name, machine.base, n, facts, rng)
        found = confirm(machine, instances)
        if found is not None:
            return found + (kind,)
    return None


def _sample(machine, lengths, rng, per_length=64):
    """Random instances of exactly the given lengths: a failing one, or None."""
    batch = [random_instances(machine.task, machine.base, n, per_length, rng) for n in lengths]
    return confirm(machine, [b.take(np.array([i])) for b in batch for i in range(len(b))])


def verify(machine, window: int | None = None, max_window: int = 3, psi_cap: int = 12, max_configs: int = 400_000,
           max_seconds: float | None = None, seed: int = 0, certify: bool = False, log=None) -> dict:
    """Prove ``machine`` right at every length, or find an instance it fails
    (see the module doc).  ``window``: the first window K tried (default per
    task); larger ones up to ``max_window`` are tried while a failing path
    is not reproduced.  Budgets: ``max_configs`` configurations an
    exploration, ``max_seconds`` in all (None: none).  ``certify``: a proof's
    report holds ``certificate``.  Returns a JSON-able report.  A machine
    that does not fit its task raises MachineError, a window outside
    1..MAX_WINDOW (the largest check-proof accepts) ValueError, before any search."""
    for name, value in (("window", window), ("max_window", max_window)):
        if value is not None and not 1 <= value <= MAX_WINDOW:
            raise ValueError(f"{name} must be from 1 to {MAX_WINDOW} (the largest window check-proof accepts);"
                             f" got {value}")
    started = time.perf_counter()
    check_machine(machine)
    task_name = machine.task
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    rng = np.random.default_rng(seed)
    K0 = WINDOW[task_name] if window is None else window
    levels = [(K, keep) for K in range(K0, max(K0, max_window) + 1) for keep in (False, True)]
    smallest = SMALLEST[task_name]
    proved, undecided, report, best, out_of_time = {}, [], None, None, False
    for K, keep_all in levels:
        R, N0 = ranges(task_name, K, psi_cap)
        if best is None:
            todo = [n for n in range(smallest, N0) if n not in proved] + [None]
        else:                                   # a counterexample is known: look for a shorter one only
            todo = [n for n in range(smallest, min(length_of(task_name, best[0]), N0 + 48)) if n not in proved]
            if not todo:
                break
        undecided, configs = [], 0
        for n in todo:
            s = _search(machine, task_name, n, K, keep_all, psi_cap, max_configs, N0, deadline)
            configs += len(s.parent)
            if s.complete and not s.failures:
                proved[n] = (K, keep_all, s)
                continue
            where = f"length {n}" if n is not None else f"lengths >= {N0}"
            level = dict(lengths=where, window=K, every_cell_kept=keep_all, range=R, configurations=len(s.parent))
            if not s.failures:
                budget = (f"the budget of {max_seconds:g} s ran out" if s.stopped == "time" else
                          f"the budget of {max_configs:,} configurations ran out")
                undecided.append(dict(level, cause="budget", budget=s.stopped,
                                      text=f"{where}: {budget} after {len(s.parent):,} configurations, no failing"
                                           f" path found (window {K})"))
                out_of_time = s.stopped == "time"
                if out_of_time:
                    break
                continue
            kind, path = s.failures[0]
            lengths = [n] if n is not None else list(range(N0, N0 + 48)) + list(LONGER)
            counter = _concretise(machine, s.failures, lengths, rng, N0)
            if counter is not None and n is None and length_of(task_name, counter[0]) > N0 + 47:
                between = list(range(N0 + 48, length_of(task_name, counter[0])))
                counter = _concretise(machine, s.failures, between, rng, N0) or counter
            if counter is None and n is not None:
                counter = _sample(machine, [n], rng)
            if counter is not None:
                if best is None or length_of(task_name, counter[0]) < length_of(task_name, best[0]):
                    best = counter
                break                           # lengths go up: nothing shorter at this level
            tried = f"length {n}" if n is not None else f"lengths {N0}..{N0 + 47} and {', '.join(map(str, LONGER))}"
            undecided.append(dict(level, cause="failing path", failure=kind, steps=len(path) - 1,
                                  text=f"{where}: a failing abstract path of {len(path) - 1} steps ({kind}) that no"
                                       f" concrete instance of {tried} reproduced (window {K}"
                                       f"{', every cell kept' if keep_all else ''}, range {R}): the machine may"
                                       " fail at another length, or the path is one no board has"))
        if best is None and not undecided:
            report = dict(verdict="proved", window=K, every_cell_kept=keep_all, range=R, exact_below=N0,
                          smallest=smallest,
                          configurations=sum(len(proved[m][2].parent) for m in list(range(smallest, N0)) + [None]),
                          established=f"every instance of every length >= {smallest}"
                                      f" ({LENGTH_MEANS.get(task_name, 'digits')}) ends with all its targets written:"
                                      f" lengths {smallest}..{N0 - 1} explored one by one, every length >= {N0} at"
                                      f" once (cells remembered within {K} of the head, landmarks exact within {R})")
            if certify:
                report["certificate"] = certificate(machine, proved, smallest, N0, psi_cap)
            break
        if log and undecided:
            log(f"window {K}{' (every cell kept)' if keep_all else ''}: " + "; ".join(u["text"] for u in undecided))
        if out_of_time:
            break
    if best is not None:
        report = _counterexample(machine, best, proved, smallest, rng)
    if report is None:
        paths = [u for u in undecided if u["cause"] == "failing path"]
        report = dict(verdict="not proved", reasons=[u["text"] for u in undecided], undecided=undecided,
                      window=levels[-1][0] if not out_of_time else K,
                      summary=(f"a failing abstract path of {paths[0]['steps']} steps ({paths[0]['failure']}) found,"
                               " not reproduced by any concrete instance" if paths else
                               "the search ran out of its budget without finding a failing path"))
    report.update(task=task_name, base=machine.base, states=machine.n_states,
                  unknown_pairs=int((machine.action < 0).sum()), seconds=round(time.perf_counter() - started, 3),
                  semantics="as MachineAgent without a controller: an unknown (state, symbol) pair moves left"
                            " without writing and keeps its state")
    return report


def machine_digest(machine) -> str:
    """SHA-256 of what the machine does: task, base, moves, start and its three tables."""
    body = json.dumps([machine.task, machine.base, machine.n_moves, machine.start, machine.action.tolist(),
                       machine.symbol.tolist(), machine.next.tolist()], separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def _config_json(cfg) -> list:
    return [cfg.state, [None if p is None else list(p) for p in cfg.ptr],
            [[list(off), sorted(symbols)] for off, symbols in cfg.cells], list(cfg.w), cfg.psi, cfg.wrote,
            list(cfg.spec)]


def certificate(machine, proved, smallest, N0, psi_cap) -> dict:
    """What a proof established, as JSON: for each length below N0 and for
    every length >= N0 at once, the window and the configurations its
    exploration reached (closed under the machine's steps, none failing)."""
    sections = [dict(length=n, window=proved[n][0], every_cell_kept=proved[n][1],
                     configurations=[_config_json(c) for c in proved[n][2].parent])
                for n in list(range(smallest, N0)) + [None]]
    return dict(format=CERTIFICATE_FORMAT, version=CERTIFICATE_VERSION, machine_sha256=machine_digest(machine),
                task=machine.task, base=machine.base, psi_cap=psi_cap, smallest=smallest, exact_below=N0,
                sections=sections)


def write_certificate(path, cert: dict) -> None:
    """The certificate as compact JSON, gzip-compressed where ``path`` ends in .gz; atomically."""
    body = json.dumps(cert, separators=(",", ":")).encode()
    atomic_write_bytes(path, gzip.compress(body, mtime=0) if str(path).endswith(".gz") else body)


def _counterexample(machine, counter, proved, smallest, rng) -> dict:
    inst, reason, correct, kind = counter if len(counter) == 4 else counter + ("sampled",)
    task_name = machine.task
    n = length_of(task_name, inst)
    shorter = range(smallest, n)
    return dict(verdict="counterexample", length=n, complexity=int(inst.complexity[0]), reason=reason,
                correct_outputs=int(correct), found_as=kind, instance=describe(task_name, inst),
                shortest=all(m in proved for m in shorter),
                note="every shorter length was proved" if all(m in proved for m in shorter) else
                "the shortest found; not every shorter length was proved")
