"""Traces of a controller on one instance (paper section 5 and Appendix A):
what it sees, what it values and what it does, step by step.

``trace_instance`` runs a controller greedily (or epsilon-greedily, with a
seed for the exploration) on one fresh instance until the episode ends, and
records per step a ``TraceStep``:

==============  ==========================================================
field           meaning
==============  ==========================================================
step            time step, from 0
x, y            the input head before the action
read            the symbol under the head (observation field 0)
q               (A,) Q-value of every joint action (``move + n_moves * write``)
action          the joint action taken
greedy          the greedy joint action (argmax of ``q``)
explored        the action was drawn at random (epsilon-greedy)
symbol          the symbol written, -1 when the action does not write
target          the symbol a write at this step had to produce
top_symbols     the most probable symbols as ((symbol, probability), ...)
reward          the environment's reward for the step
v_hat           outputs still to produce before the step (paper section 6.1)
t               (H,) the "extra" layer's output tanh(.) (``StepCache.tanh``)
h               (H,) the last core layer's hidden state after the step;
                None for a feed-forward controller (it has no state)
text            the step's text frame (``render.render_lane`` and the lines above)
==============  ==========================================================

The ``Trace`` keeps the steps, the instance's board around the start (for
the trajectory pictures of ``tinyalgo.inspection.trace_plots``) and how the episode
ended.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tinyalgo.environment import END_REASONS, Environment
from tinyalgo.inspection.render import action_name, render_lane


@dataclass
class TraceStep:
    """One step of a trace (see the module doc for the fields)."""

    step: int
    x: int
    y: int
    read: int
    q: np.ndarray
    action: int
    greedy: int
    explored: bool
    symbol: int
    target: int
    top_symbols: tuple
    reward: float
    v_hat: int
    t: np.ndarray
    h: np.ndarray
    text: str = ""


@dataclass
class Trace:
    """A controller's run on one instance.

    ``board`` (rows, cols) holds the instance's symbols over ``board_x``
    (cols,) and ``board_y`` (rows,) as they were at the start; ``end`` the
    head's position after the last step; ``reason`` an ``END_REASONS`` index.
    """

    task: str
    complexity: int
    seed: int
    n_moves: int
    interface: str
    chars: tuple
    steps: list
    board: np.ndarray
    board_x: np.ndarray
    board_y: np.ndarray
    end: tuple = (0, 0)
    reason: int = 0
    n_correct: int = 0
    n_outputs: int = 0
    epsilon: float = 0.0
    core: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def solved(self) -> bool:
        return END_REASONS[self.reason] == "all written"

    @property
    def actions(self) -> np.ndarray:
        return np.array([s.action for s in self.steps], dtype=np.int64)

    @property
    def q_values(self) -> np.ndarray:
        """(T, A) the Q-values of every step."""
        return np.stack([s.q for s in self.steps])

    @property
    def positions(self) -> np.ndarray:
        """(T + 1, 2) the head's (x, y) before every step, then after the last."""
        return np.array([(s.x, s.y) for s in self.steps] + [self.end], dtype=np.int64)

    def hidden_states(self) -> np.ndarray:
        """(T, H) the controller's state per step: the core's h for a
        recurrent controller, the "extra" layer's output t for a feed-forward
        one (which has no recurrent state; t is what its heads read)."""
        return np.stack([s.t if s.h is None else s.h for s in self.steps])

    def summary(self) -> str:
        return (f"episode ended: {END_REASONS[self.reason]}, {self.n_correct} of {self.n_outputs} outputs right,"
                f" {len(self.steps)} steps, {sum(s.explored for s in self.steps)} exploratory")


def step_text(frame: str, q, action: int, greedy: int, explored: bool, top_symbols, symbol: int,
              n_moves: int, chars) -> str:
    """A frame of ``render_lane`` with the step's decision under it: every
    joint action's Q-value (the chosen one marked ``*``), the action taken
    (greedy or exploratory), the most probable symbols."""
    qs = "  ".join(f"{action_name(a, n_moves)}={q[a]:.3f}{'*' if a == action else ''}" for a in range(len(q)))
    how = f"exploratory (greedy: {action_name(greedy, n_moves)})" if explored else "greedy"
    lines = [frame, "Q: " + qs, f"action: {action_name(action, n_moves)}, {how}"]
    tops = ", ".join(f"{chars[s]} {p:.3f}" for s, p in top_symbols)
    lines.append(f"symbols: {tops}" + (f"  -> writes {chars[symbol]}" if symbol >= 0 else ""))
    return "\n".join(lines)


def trace_instance(controller, task, complexity: int, seed: int = 0, base: int = 10, epsilon: float = 0.0,
                   explore_seed: int = 0, top: int = 3, half_width: int = 8, half_height: int = 2,
                   max_steps: int | None = None) -> Trace:
    """Run ``controller`` on one fresh instance of ``task`` (drawn with
    ``seed``) to the end of its episode and record every step.

    The controller acts greedily: the joint action of highest Q and its most
    probable symbol; with ``epsilon`` > 0 a uniformly random joint action
    replaces the greedy one with that probability (drawn from
    ``explore_seed``), as on a training lane of Q-learning (paper section 6).
    Runs the reference ``Controller.step`` so that every step's state is
    visible.  ``max_steps`` stops a long episode early (the trace then ends
    with reason "running")."""
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"epsilon must be in [0, 1]; got {epsilon}")
    env = Environment(task, batch_size=1, base=base, complexity=complexity, seed=seed, extra_curriculum=False)
    if env.n_actions != controller.config.n_actions or env.obs_sizes != controller.config.obs_sizes:
        raise ValueError(f"the controller was built for {controller.config.n_actions} actions and observation sizes"
                         f" {controller.config.obs_sizes}; task {env.task.name!r} (base {base}) has"
                         f" {env.n_actions} and {env.obs_sizes}")
    rng = np.random.default_rng(explore_seed)
    chars, n_moves = env.vocab.chars, env.n_moves
    reach = int(complexity) + 4
    x0 = int(env.input.x[0])
    board_x = np.arange(x0 - reach, x0 + reach + 1)
    board_y = np.array([1]) if env.task.interface == "tape" else np.arange(0, env.task.rows + 2)
    trace = Trace(env.task.name, int(complexity), int(seed), n_moves, env.task.interface, chars, [],
                  env.input.board.window(0, board_x, board_y), board_x, board_y, n_outputs=int(env.n_outputs[0]),
                  epsilon=float(epsilon), core=controller.config.core)
    state = controller.initial_state(1)
    obs, reset = env.observe(), np.ones(1, dtype=bool)
    while max_steps is None or len(trace.steps) < max_steps:
        q, logp, state, cache = controller.step(obs, state, reset)
        q = np.asarray(q[0], dtype=np.float64)
        probs = np.exp(np.asarray(logp[0], dtype=np.float64))
        greedy = int(q.argmax())
        explored = bool(epsilon > 0 and rng.random() < epsilon)
        action = int(rng.integers(env.n_actions)) if explored else greedy
        symbol = int(probs.argmax())
        writes = action >= n_moves
        order = np.argsort(-probs, kind="stable")[:top]
        tops = tuple((int(s), float(probs[s])) for s in order)
        frame = render_lane(env, 0, half_width=half_width, half_height=half_height)
        text = step_text(frame, q, action, greedy, explored, tops, symbol if writes else -1, n_moves, chars)
        record = TraceStep(step=len(trace.steps), x=int(env.input.x[0]), y=int(env.input.y[0]), read=int(obs[0, 0]),
                           q=q, action=action, greedy=greedy, explored=explored, symbol=symbol if writes else -1,
                           target=int(env.next_target[0]), top_symbols=tops, reward=0.0, v_hat=int(env.v_hat[0]),
                           t=np.array(cache.tanh[0], dtype=np.float64),
                           h=np.array(state[-1][0][0], dtype=np.float64) if state else None)
        position = (int(env.input.x[0]) + (1 if action % n_moves == 1 else -1 if action % n_moves == 0 else 0),
                    int(env.input.y[0]) + (1 if action % n_moves == 2 else -1 if action % n_moves == 3 else 0))
        result = env.step(np.array([action]), np.array([symbol]), probs[None, :], np.array([explored]))
        record.reward = float(result.reward[0])
        record.text = text + f"\nreward {record.reward:g}  V-hat {record.v_hat}"
        trace.steps.append(record)
        trace.end = position
        obs, reset = result.obs, result.done
        if result.done[0]:
            trace.reason, trace.n_correct = int(result.reason[0]), int(result.n_correct[0])
            break
    else:
        trace.n_correct = int(env.target_index[0])
    return trace


def trace_to_dict(trace: Trace) -> dict:
    """The trace's numbers as JSON-able lists (no text frames, no states)."""
    return dict(task=trace.task, complexity=trace.complexity, seed=trace.seed, epsilon=trace.epsilon,
                core=trace.core, end_reason=END_REASONS[trace.reason], n_correct=trace.n_correct,
                n_outputs=trace.n_outputs,
                steps=[dict(step=s.step, x=s.x, y=s.y, read=trace.chars[s.read],
                            action=action_name(s.action, trace.n_moves),
                            explored=s.explored, symbol=trace.chars[s.symbol] if s.symbol >= 0 else None,
                            q=[round(float(v), 5) for v in s.q], reward=s.reward, v_hat=s.v_hat)
                       for s in trace.steps])


def detour_free_actions(trace: Trace) -> list:
    """The trace's joint actions without its detours: a move into a cell
    that holds no digit (a blank or a marker) followed at once by the
    opposite move, neither writing; the head comes back having learned
    nothing about the numbers.  A move that reads a digit and comes back
    (down to the second number, then up) is kept."""
    n, steps, kept, i = trace.n_moves, trace.steps, [], 0
    while i < len(steps):
        a = steps[i].action
        if i + 1 < len(steps) and a < n and steps[i + 1].action < n and {a, steps[i + 1].action} in ({0, 1}, {2, 3}) \
                and not trace.chars[steps[i + 1].read].isdigit():
            i += 2
            continue
        kept.append(a)
        i += 1
    return kept


def action_cycle(trace: Trace, skip: int = 3, max_period: int = 8, detours: bool = True) -> tuple:
    """The joint actions (names) that repeat through the middle of the trace:
    the shortest period p <= ``max_period`` such that the actions, without the
    first and last ``skip`` steps, repeat with period p, as its
    lexicographically smallest rotation (the same whatever step the period is
    read from); () if there is none.  Two controllers with the same cycle move
    and write alike column after column (paper Appendix A).  With
    ``detours=False`` the cycle of ``detour_free_actions``."""
    actions = [s.action for s in trace.steps] if detours else detour_free_actions(trace)
    names = [action_name(int(a), trace.n_moves) for a in actions]
    middle = names[skip:len(names) - skip]
    for p in range(1, max_period + 1):
        if len(middle) >= 2 * p and all(middle[i] == middle[i + p] for i in range(len(middle) - p)):
            period = middle[:p]
            return min(tuple(period[i:] + period[:i]) for i in range(p))
    return ()
