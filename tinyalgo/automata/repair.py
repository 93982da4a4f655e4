"""Repairing an extracted machine where it leaves the network
(paper section 6.4, "discretization of state").

The clusters of ``extract.machines`` put recurrent states that hold
different memories into one machine state now and then, and the majority
vote of ``build_machine`` then sends some recorded paths to the wrong state.
The verifier finds such a place as an instance the machine fails; when the
network solves that instance, the network shows what the machine should
have done there.  ``repair`` runs the network on the instance and feeds the
machine the same inputs; at the first step where the machine answers
otherwise it changes one transition, and verifies again.  The changes that
would make the machine answer that step as the network does are:

* the answer that recorded rows of the machine's state give to that input
  (where the vote had gone the other way), with, as next state, the state
  most of them went to;
* the transition that led to the machine's state sent instead to a state
  holding a recorded row with the network's feedback fields, input and
  answer: the machine was in the wrong state.

Of these it makes the one after which the machine replays the most recorded
episodes (``extract.replay``; ties: the recorded answer, then the state whose
row is nearest to the network's own recurrent state at that step).  Every
change follows the network at the step where the machine left it, and is
chosen to keep the machine's agreement with the network's recorded runs.

With ``faithful``, only the changes that keep every recorded step the
machine answered as the network (``extract.followed``) are on offer: the
repaired machine departs from the network's recorded runs nowhere the
extracted one did not.

The repair stops at a proof; at an instance the network fails too
(training's case); where no recorded row answers as the network does, or
where every change would leave the machine replaying fewer recorded
episodes than before the repair by more than a slack (5 % of them; the
changes on the way to a proof may lose a few: figures/automata/README.md),
and the loop's next round records the instance instead; when a change
would undo an earlier one; or after ``limit`` changes.
"""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.extract import followed, replay
from tinyalgo.automata.record import record
from tinyalgo.automata.verify import verify
from tinyalgo.automata.witness import rebuild, solves


def first_departure(machine, rec):
    """Feed ``machine`` the inputs of the recording's first episode (the
    network's run): (row, state, (state, input) of the step before) at the
    first step where the machine's answer differs from the network's, or
    where its next state is unknown (state -1); None if it follows the
    network to the end."""
    r, s, before = int(np.nonzero(rec.first)[0][0]), machine.start, None
    while r >= 0:
        x = int(rec.obs[r, 0])
        a = machine.action[s, x]
        if a != rec.action[r] or (a >= machine.n_moves and machine.symbol[s, x] != rec.symbol[r]):
            return r, s, before
        nxt, r_next = int(machine.next[s, x]), int(rec.next_row[r])
        if r_next >= 0 and nxt < 0:
            return r_next, -1, (s, x)
        before, s, r = (s, x), nxt, r_next
    return None


def repair(machine, rec, rows, controller, limit: int = 100, slack: float = 0.05, verify_options=None,
           log=None, faithful: bool = False) -> tuple:
    """Repair ``machine`` (see the module doc), extracted from ``rec`` with
    ``rows`` (T,) the machine state of each recorded row, following
    ``controller``; no change may leave the machine replaying a fraction of
    the recorded episodes more than ``slack`` below the one it replayed
    before the repair.  With ``faithful``, no change may go against the
    network on its recorded episodes either: every recorded step the machine
    answered as the network before a change (``extract.followed``) it still
    answers so after it.  Returns (machine (a copy; the last one verified), its
    verification, dict(changes [one dict a change], stopped (why, None at a
    proof or a verdict other than a counterexample), verifications))."""
    m = machine.quotient(np.arange(machine.n_states), (machine.action.copy(), machine.symbol.copy(),
                                                       machine.next.copy()))
    next_state = np.where(rec.next_row >= 0, rows[np.maximum(rec.next_row, 0)], -1)
    changes, made, stopped = [], set(), None
    floor = round(replay(m, rec), 4) - slack
    for n in range(limit + 1):
        report = verify(m, **(verify_options or {}))
        if report["verdict"] != "counterexample":
            break
        if n == limit:
            stopped = f"{limit} changes made"
            break
        instance = rebuild(report["instance"])
        if not solves(controller, m.task, m.base, instance)[0]:
            stopped = "the network fails the counterexample too"
            break
        net = record(controller, m.task, [], 0, m.base, canned=instance)
        r, s, before = first_departure(m, net)        # not None: the machine fails where the network does not
        options = _options(m, rec, rows, next_state, net, r, s, before)
        if not options:
            stopped = (f"no recorded state answers symbol {int(net.obs[r, 0])} as the network does"
                       if before is not None else "the start state answers otherwise")
            break
        if faithful:
            kept = followed(m, rec)
            options = [c for c in options if _with(m, c, lambda: followed(m, rec)[kept].all())]
            if not options:
                stopped = "every change would answer a recorded step otherwise than the network (faithful)"
                break
        scores = [_with(m, c, lambda: replay(m, rec)) for c in options]
        best = int(np.argmax(scores))                 # ties: the first, as _options orders them
        change = dict(options[best], replay=round(scores[best], 4))
        if change["replay"] < floor:
            stopped = (f"every change would replay fewer recorded episodes than {floor:.2%}, the machine's replay"
                       " before the repair less the slack")
            break
        key = tuple(sorted((k, str(v)) for k, v in change.items() if k not in ("was", "replay")))
        if key in made:
            stopped = "a change would undo an earlier one"
            break
        made.add(key)
        changes.append(change)
        _apply(m, change)
        if log:
            log(f"  repair {len(changes)}: {_describe(change)} (counterexample of length {report['length']}; the"
                f" machine now replays {change['replay']:.2%} of the recorded episodes)")
    m.info = dict(machine.info, repairs=len(changes))
    return m, report, dict(changes=changes, stopped=stopped, verifications=n + 1)


def _options(m, rec, rows, next_state, net, r, s, before) -> list:
    """The changes that make the machine answer step ``r`` of the network's
    run ``net`` as the network, in the order ties are broken: the answer
    recorded in state ``s`` (if any row there gives it), then the transition
    into ``s`` sent to each state holding a recorded row with the network's
    feedback fields, input and answer, nearest row first."""
    xr, a, y = int(net.obs[r, 0]), int(net.action[r]), int(net.symbol[r])
    answers = (rec.obs[:, 0] == xr) & (rec.action == a) & (rec.symbol == y)
    options = []
    same = answers & (rows == s) if s >= 0 else np.zeros(len(rec), dtype=bool)
    if same.any():
        going = next_state[same]
        going = going[going >= 0]
        target = int(np.bincount(going).argmax()) if len(going) else int(m.next[s, xr])
        options.append(dict(kind="answer", state=int(s), input=xr, action=a, symbol=y, next=target,
                            was=[int(m.action[s, xr]), int(m.symbol[s, xr]), int(m.next[s, xr])]))
    if before is not None:
        like = np.nonzero(answers & (rec.obs[:, 1:5] == net.obs[r, 1:5]).all(axis=1))[0]
        distance = ((rec.state[like] - net.state[r]) ** 2).sum(axis=1)
        order = np.argsort(distance, kind="stable")
        targets = dict.fromkeys(int(t) for t in rows[like[order]])          # nearest first
        ps, px = before
        options += [dict(kind="next", state=int(ps), input=int(px), next=t, was=int(m.next[ps, px]))
                    for t in targets if t != m.next[ps, px]]
    return options


def _apply(m, change) -> None:
    s, x = change["state"], change["input"]
    if change["kind"] == "answer":
        m.action[s, x], m.symbol[s, x] = change["action"], change["symbol"]
    m.next[s, x] = change["next"]


def _with(m, change, measure):
    """``measure()`` of the machine with ``change`` made (the machine is left as it was)."""
    s, x = change["state"], change["input"]
    saved = m.action[s, x], m.symbol[s, x], m.next[s, x]
    _apply(m, change)
    try:
        return measure()
    finally:
        m.action[s, x], m.symbol[s, x], m.next[s, x] = saved


def _describe(change) -> str:
    if change["kind"] == "answer":
        return (f"state {change['state']} on {change['input']} answers ({change['action']}, {change['symbol']})"
                f" and goes to {change['next']}, as the network")
    return f"state {change['state']} on {change['input']} goes to {change['next']} instead of {change['was']}"
