"""Text pictures of one lane of the environment (the release's trace frames,
docs/original-release.md#traces): the board window around the head, the targets, what has been
written so far."""
from __future__ import annotations

import numpy as np

from tinyalgo.environment import END_REASONS, Environment
from tinyalgo.tasks import MOVE_NAMES


LEGEND = ("legend: [x] the cell under the head; 0-9 digits; q end marker (the wall of the arithmetic tasks);"
          " e empty cell; p reverse's turn marker; l u d walk's arrows (left, up, down); Y: the targets;"
          " P: the outputs written so far; _ nothing written")


def complexity_note(env: Environment, asked: int, lane: int = 0) -> str:
    """Why the instance in ``lane`` has another complexity than the ``asked`` one
    ('' if it has that one)."""
    got = int(env.complexity[lane])
    if got == asked:
        return ""
    raised = "raised" if got > asked else "lowered"
    return f"note: complexity {asked} was {raised} to {got}: {env.task.complexity_rule}"


def action_name(action: int, n_moves: int) -> str:
    """``'left+write'`` style name of a joint action."""
    move, write = action % n_moves, action // n_moves
    return MOVE_NAMES[move] + ("+write" if write else "")


def render_lane(env: Environment, lane: int = 0, half_width: int = 8, half_height: int = 2,
                q_values=None, action=None) -> str:
    """A text frame of ``lane``: board window with the head in brackets,
    ``Y:`` the targets, ``P:`` the outputs written so far (wrong ones marked
    with ``!``), and the step's Q values and chosen action if given."""
    v = env.vocab
    hx, hy = int(env.input.x[lane]), int(env.input.y[lane])
    xs = np.arange(hx - half_width, hx + half_width + 1)
    tape = env.task.interface == "tape"
    ys = np.array([1]) if tape else np.arange(hy - half_height, hy + half_height + 1)
    cells = env.input.board.window(lane, xs, ys)
    if env.time[lane] >= env.clock[lane]:
        cells[:] = v.Q
    lines = [f"{env.task.name}  complexity {env.complexity[lane]}  step {env.time[lane]}"
             f"  V-hat {env.v_hat[lane]}  head (x={hx}, y={hy})"]
    lines.append("      " + "".join(f"{x:>3d}" for x in xs))
    for y, row in zip(ys, cells):
        text = "".join(("[" + v.chars[c] + "]") if (x == hx and y == hy) else f" {v.chars[c]} "
                       for x, c in zip(xs, row))
        lines.append(f"y={y:<3d} {text}")
    n, k = int(env.n_outputs[lane]), int(env.target_index[lane])
    targets = env.output.targets[lane, :n]
    lines.append("Y: " + v.to_chars(targets))
    lines.append("P: " + v.to_chars(targets[:k]))   # an episode ends at its first wrong write
    if q_values is not None:
        q = np.asarray(q_values)
        lines.append("Q: " + "  ".join(f"{action_name(a, env.n_moves)}={q[a]:.2f}" for a in range(len(q))))
    if action is not None:
        lines.append("action: " + action_name(int(action), env.n_moves))
    return "\n".join(lines)


def ground_truth_frames(env: Environment, lane: int = 0, **kwargs) -> list:
    """Frames of ``lane`` stepping through its ground-truth solution, from the
    start to the end of the episode (the other lanes follow theirs too)."""
    frames = []
    while True:
        actions = env.ground_truth()
        frames.append(render_lane(env, lane, action=actions[lane], **kwargs))
        n_outputs = int(env.n_outputs[lane])
        result = env.step(np.maximum(actions, 0), env.next_target)
        if result.done[lane]:
            frames.append(f"episode ended: {END_REASONS[result.reason[lane]]},"
                          f" {result.n_correct[lane]} of {n_outputs} outputs right")
            return frames


def print_frames(frames, step: bool = False) -> None:
    """Print ``frames`` (texts) with a numbered header each; with ``step``,
    wait for Enter after each one (q, or the end of input, stops)."""
    for i, frame in enumerate(frames):
        print(f"--- frame {i + 1}/{len(frames)} ---")
        print(frame)
        if step and i + 1 < len(frames):
            try:
                key = input("[Enter] next, q quit > ")
            except EOFError:
                key = "q"
            if key.strip().lower() == "q":
                break
