"""``MachineAgent``: an extracted machine acting through the evaluation
protocol of ``tinyalgo.evaluation`` (``start(batch)``, ``act(env, obs,
reset) -> (actions, symbols)``), vectorised over lanes by table look-ups.
Each lane keeps one integer, its state id, whatever the length."""
from __future__ import annotations

import numpy as np

from tinyalgo.automata.discretise import assign
from tinyalgo.automata.machine import Machine
from tinyalgo.automata.record import flatten_state, unflatten_state
from tinyalgo.symbols import Vocabulary


class MachineAgent:
    """The machine ``machine`` acting alone.

    A (state, input) pair whose output, or whose next state, the machine does
    not know (never recorded) is answered once by the network, when
    ``controller`` is given: one step from the state's cluster centre on the
    observation, its greedy action and symbol, and as next state the state
    of (the nearest cluster of the new recurrent state, the feedback fields
    the step produces); the answer is kept in the agent's copy of the tables.
    ``fallbacks`` counts the lane-steps answered so, ``filled`` lists the
    pairs.  Without a controller an unknown pair moves left without writing
    and stays in its state (``fallbacks`` counts those too).
    """

    def __init__(self, machine: Machine, controller=None):
        self.machine, self.controller = machine, controller
        self.action, self.symbol, self.next = machine.action.copy(), machine.symbol.copy(), machine.next.copy()
        self.V = machine.n_inputs
        self.fallbacks, self.filled = 0, []
        self._raw = {tuple(r[:5]): int(r[5]) for r in machine.raw.tolist()}
        self._model = controller.rollout() if controller is not None else None

    def start(self, batch: int) -> None:
        self.state = np.full(batch, self.machine.start, dtype=np.int64)
        self.pending = np.zeros(batch, dtype=bool)       # the state is a transition whose next is unknown yet

    def act(self, env, obs: np.ndarray, reset: np.ndarray):
        s = self.state
        if reset.any():
            s[reset] = self.machine.start
            self.pending[reset] = False
        if self.pending.any():                          # a transition we did not know the end of: ask now
            lanes = np.nonzero(self.pending)[0]
            prev, x = np.divmod(s[lanes], self.V)
            self.resolve(prev, x, None)
            s[lanes] = self.next[prev, x]
            self.pending[lanes] = False
        x = obs[:, 0]
        flat = s * self.V + x
        actions = self.action.reshape(-1).take(flat)
        if (actions < 0).any():                         # never seen: ask the network once
            lanes = np.nonzero(actions < 0)[0]
            self.resolve(s[lanes], x[lanes], obs[lanes])
            actions = self.action.reshape(-1).take(flat)
        symbols = np.maximum(self.symbol.reshape(-1).take(flat), 0)
        new = self.next.reshape(-1).take(flat)
        waiting = new < 0
        if waiting.any():                               # resolved when (if) the episode goes on
            new[waiting] = flat[waiting]
            self.pending |= waiting
        self.state = new
        return actions, symbols

    # ------------------------------------------------------------ fallback
    def resolve(self, states, inputs, obs):
        """Fill the unknown entries of the (state, input) pairs given (arrays
        (n,)); ``obs`` (n, F) the observations, or None to rebuild them from
        the states' feedback fields."""
        self.fallbacks += len(states)
        pairs = np.unique(np.stack([states, inputs], axis=1), axis=0)
        if self._model is None:
            for s, x in pairs:
                if self.action[s, x] < 0:
                    self.action[s, x], self.symbol[s, x] = 0, -1
                if self.next[s, x] < 0:
                    self.next[s, x] = s
            return
        m = self.machine
        if obs is None:
            rows = np.concatenate([pairs[:, 1:2], m.feedback[pairs[:, 0]]], axis=1)
        else:
            first = {(int(s), int(x)): i for i, (s, x) in enumerate(zip(states, inputs))}
            rows = np.stack([obs[first[(int(s), int(x))]] for s, x in pairs])
        n = len(pairs)
        template = self._model.initial_state(n)
        h = flatten_state(template)
        if h is not None:
            h = unflatten_state(m.centroids[m.cluster[pairs[:, 0]]], template)
        else:
            h = template
        q, scores, new = self._model.infer(rows.astype(np.int64), h, None)
        action, symbol = q.argmax(axis=1), scores.argmax(axis=1)
        flat = flatten_state(new)
        clusters = np.zeros(n, dtype=np.int64) if flat is None else assign(flat, m.centroids)
        n_moves, none = m.n_moves, Vocabulary(m.base).NONE
        for i, (s, x) in enumerate(pairs):
            writes = action[i] >= n_moves
            if self.action[s, x] < 0:
                self.action[s, x] = action[i]
                self.symbol[s, x] = symbol[i] if writes else -1
            if self.next[s, x] < 0:
                fb = (int(symbol[i]) if writes else none, int(rows[i, 2]), int(action[i] % n_moves), int(writes))
                self.next[s, x] = self._state_of(int(clusters[i]), fb, flat[i] if flat is not None else None)
            self.filled.append((int(s), int(x)))

    def _state_of(self, cluster: int, fb: tuple, h) -> int:
        """The machine state of a raw state; if that raw state was never
        recorded, the recorded one with the same feedback fields whose
        cluster centre is nearest (else the start state)."""
        key = (cluster,) + fb
        if key in self._raw:
            return self._raw[key]
        m = self.machine
        same = [(key[0], s) for key, s in self._raw.items() if key[1:] == fb]
        if not same or h is None:
            return same[0][1] if same else m.start
        centres = m.centroids[[c for c, _ in same]]
        return same[int(((centres - h) ** 2).sum(axis=1).argmin())][1]
