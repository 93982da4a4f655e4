"""Recording a controller's greedy run: per step, the recurrent state that
enters the step, the observation, the joint action and the symbol written.

The recorded rows are the material of the automaton (``tinyalgo.automata``):
each row is one transition of the Mealy machine, from the state entering the
step, reading the observation, to the state entering the next step of the
same episode (``next_row``; -1 after the episode's last step).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyalgo.environment import Environment

NO_WRITE = -1        # the symbol of a step that does not write


@dataclass
class Recording:
    """T recorded steps.

    state : float (T, D)
        the controller's recurrent state entering the step (zero at an
        episode's first step; D = 0 for a feed-forward core).
    obs : int (T, F)
        the observation of the step (tinyalgo/environment.py's fields).
    action : int (T,)
        the greedy joint action.
    symbol : int (T,)
        the symbol written, ``NO_WRITE`` where the action does not write.
    next_row : int (T,)
        the row of the same episode's next step, -1 after its last.
    first : bool (T,)
        the episode's first step.
    task, base, n_moves
        what was run.
    """

    state: np.ndarray
    obs: np.ndarray
    action: np.ndarray
    symbol: np.ndarray
    next_row: np.ndarray
    first: np.ndarray
    task: str
    base: int
    n_moves: int

    def __len__(self) -> int:
        return len(self.action)


def flatten_state(state) -> np.ndarray:
    """A controller state (per layer (h,) or (h, c)) as one array (B, D)."""
    arrays = [a for layer in state for a in layer]
    if not arrays:
        return None
    return np.concatenate(arrays, axis=1)


def unflatten_state(flat: np.ndarray, template) -> list:
    """The inverse of ``flatten_state``, shaped like ``template`` (a state of any batch)."""
    out, i = [], 0
    for layer in template:
        parts = []
        for a in layer:
            parts.append(np.ascontiguousarray(flat[:, i:i + a.shape[1]], dtype=a.dtype))
            i += a.shape[1]
        out.append(tuple(parts))
    return out


def state_size(controller) -> int:
    """D, the length of the flattened recurrent state."""
    flat = flatten_state(controller.initial_state(1))
    return 0 if flat is None else flat.shape[1]


def record(controller, task, complexities, instances: int = 50, base: int = 10, seed: int = 0,
           canned=None) -> Recording:
    """Run ``controller`` greedily on ``instances`` fresh instances of each
    complexity in ``complexities`` (each lane's first episode, to its end),
    and on the instances of ``canned`` (an Instances batch, e.g. the corner
    instances of tinyalgo/tasks/corners.py) if given (with ``instances`` 0,
    only those), and record every step."""
    if instances < 0:
        raise ValueError(f"record needs instances >= 0; got {instances}")
    complexities = [int(c) for c in complexities] if instances else []
    if not complexities and (canned is None or not len(canned)):
        raise ValueError("record needs at least one complexity and one instance, or canned instances")
    model = controller.rollout()
    D = state_size(controller)
    rows = dict(state=[], obs=[], action=[], symbol=[], lane=[], first=[], done=[])
    def environments():                       # one at a time: each holds its own pool of instances
        for i, c in enumerate(complexities):
            yield Environment(task, batch_size=instances, base=base, complexity=c, seed=seed + 7919 * i,
                              extra_curriculum=False)
        if canned is not None and len(canned):
            env = Environment(task, batch_size=len(canned), base=base, seed=seed, extra_curriculum=False)
            env.load(canned)
            yield env

    lanes_before = 0
    for env in environments():
        _record_episodes(model, env, D, rows, lanes_before)
        lanes_before += env.batch
    cat = {k: np.concatenate(v) for k, v in rows.items()}
    total = len(cat["action"])
    # a lane's rows are in time order: its next row is the following one of the same lane
    order = np.argsort(cat["lane"], kind="stable")
    next_row = np.full(total, -1, dtype=np.int64)
    same = (cat["lane"][order[1:]] == cat["lane"][order[:-1]]) & ~cat["done"][order[:-1]]
    next_row[order[:-1][same]] = order[1:][same]
    return Recording(state=cat["state"].reshape(total, D), obs=cat["obs"].astype(np.int64),
                     action=cat["action"].astype(np.int64), symbol=cat["symbol"].astype(np.int64),
                     next_row=next_row, first=cat["first"], task=env.task.name, base=int(base),
                     n_moves=int(env.n_moves))


def _record_episodes(model, env, D: int, rows: dict, lane_offset: int) -> None:
    """Append to ``rows`` every step of the current episode of each lane of
    ``env`` (numbered from ``lane_offset``), run greedily by ``model``."""
    B, n_moves = env.batch, env.n_moves
    state = model.initial_state(B)
    obs, reset = env.observe(), np.ones(B, dtype=bool)
    active = np.ones(B, dtype=bool)
    while active.any():
        flat = flatten_state(state)
        entering = np.zeros((B, D), dtype=np.float32) if flat is None else flat * ~reset[:, None]
        q, scores, state = model.infer(obs, state, reset)
        actions, symbols = q.argmax(axis=1), scores.argmax(axis=1)
        result = env.step(actions, symbols)
        lanes = np.nonzero(active)[0]
        rows["state"].append(entering[lanes].astype(np.float32))
        rows["obs"].append(obs[lanes])
        rows["action"].append(actions[lanes])
        rows["symbol"].append(np.where(actions[lanes] >= n_moves, symbols[lanes], NO_WRITE))
        rows["first"].append(reset[lanes])
        rows["done"].append(result.done[lanes])
        rows["lane"].append(lanes + lane_offset)
        active &= ~result.done
        obs, reset = result.obs, result.done
