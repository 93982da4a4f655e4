"""Pictures of a ``tinyalgo.inspection.trace.Trace`` (matplotlib, each on a
``tinyalgo.inspection.figure.Figure``: no backend needed, none switched): the head's
trajectory over the input grid, as in the paper's Appendix A (Figure "three
different solutions to the addition task"), and a timeline of the actions
taken and the Q-values of every joint action.

On a grid each move is an arrow from cell to cell (vertical arrows shifted
right when going down and left when going up, horizontal ones shifted up
when going left and down when going right, so that a column's round trip
shows as two arrows); a move that writes is red and labelled with the symbol
written.  On a tape (one row) the trajectory is drawn as the head's x against
time instead.
"""
from __future__ import annotations

import numpy as np
from matplotlib.patches import Rectangle

from tinyalgo.inspection.figure import Figure
from tinyalgo.runs.fileio import atomic_savefig
from tinyalgo.inspection.render import action_name

MOVE_DELTAS = ((-1, 0), (1, 0), (0, 1), (0, -1))          # left, right, down (y + 1), up (y - 1)
SHIFT = 0.14                                               # how far arrows sit from the cell centre line


def visited_window(trace, margin: int = 1):
    """(xs, ys): the board columns and rows the head visited, with ``margin``
    cells around them (clipped to the trace's recorded board)."""
    pos = trace.positions
    xs = np.arange(max(pos[:, 0].min() - margin, trace.board_x[0]),
                   min(pos[:, 0].max() + margin, trace.board_x[-1]) + 1)
    ys = np.arange(max(pos[:, 1].min() - margin, trace.board_y[0]),
                   min(pos[:, 1].max() + margin, trace.board_y[-1]) + 1)
    return xs, ys


def plot_grid_trajectory(ax, trace, margin: int = 1) -> None:
    """The head's moves as arrows over the board cells (y grows downwards)."""
    xs, ys = visited_window(trace, margin)
    cells = trace.board[np.searchsorted(trace.board_y, ys)][:, np.searchsorted(trace.board_x, xs)]
    for j, y in enumerate(ys):
        for i, x in enumerate(xs):
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, lw=0.6, color="0.6"))
            ax.text(x, y, trace.chars[cells[j, i]], ha="center", va="center", fontsize=9, color="0.45")
    for s in trace.steps:
        move, write = s.action % trace.n_moves, s.action >= trace.n_moves
        dx, dy = MOVE_DELTAS[move]
        ox, oy = (SHIFT * dy, 0.0) if dy else (0.0, SHIFT * dx)
        color = "tab:red" if write else ("tab:orange" if s.explored else "tab:blue")
        ax.annotate("", xy=(s.x + dx * 0.78 + ox, s.y + dy * 0.78 + oy),
                    xytext=(s.x + dx * 0.22 + ox, s.y + dy * 0.22 + oy),
                    arrowprops=dict(arrowstyle="->", color=color, lw=1.4))
        if write:
            ax.text(s.x + dx * 0.5 + ox, s.y + dy * 0.5 + oy - 0.18, trace.chars[s.symbol], color="tab:red",
                    ha="center", va="bottom", fontsize=8, fontweight="bold")
    start = trace.steps[0] if trace.steps else None
    if start is not None:
        ax.plot([start.x], [start.y], "o", ms=14, mfc="none", mec="tab:green", mew=1.5)
    ax.set_xlim(xs[0] - 0.6, xs[-1] + 0.6)
    ax.set_ylim(ys[-1] + 0.6, ys[0] - 0.6)
    ax.set_aspect("equal")
    ax.set_xticks(xs)
    ax.set_yticks(ys)
    ax.set_xlabel("x")
    ax.set_ylabel("y (row)")


def plot_tape_trajectory(ax, trace) -> None:
    """The head's x against time on a tape; writes in red with the symbol."""
    pos = trace.positions
    ax.plot(np.arange(len(pos)), pos[:, 0], "-", color="tab:blue", lw=1)
    for s in trace.steps:
        if s.action >= trace.n_moves:
            ax.plot(s.step, s.x, "o", color="tab:red", ms=4)
            ax.text(s.step, s.x + 0.3, trace.chars[s.symbol], color="tab:red", fontsize=7, ha="center")
        elif s.explored:
            ax.plot(s.step, s.x, "s", color="tab:orange", ms=4)
    ax.set_xlabel("step")
    ax.set_ylabel("head x")


def plot_trajectory(ax, trace) -> None:
    """The trajectory picture that fits the trace's interface."""
    if trace.interface == "tape":
        plot_tape_trajectory(ax, trace)
    else:
        plot_grid_trajectory(ax, trace)
    ax.set_title(f"{trace.task}, complexity {trace.complexity}, seed {trace.seed}: {trace.summary()}", fontsize=8)


def plot_timeline(ax_q, ax_a, trace) -> None:
    """Top: every joint action's Q-value over time, the chosen one marked
    (black: greedy, orange: exploratory).  Bottom: the joint action taken at
    each step, writes in red."""
    q = trace.q_values
    T, A = q.shape
    steps = np.arange(T)
    for a in range(A):
        ax_q.plot(steps, q[:, a], lw=1, label=action_name(a, trace.n_moves))
    chosen = q[steps, trace.actions]
    explored = np.array([s.explored for s in trace.steps], dtype=bool)
    ax_q.plot(steps[~explored], chosen[~explored], "k.", ms=5, label="chosen (greedy)")
    if explored.any():
        ax_q.plot(steps[explored], chosen[explored], "o", color="tab:orange", ms=5, label="chosen (exploratory)")
    ax_q.set_ylabel("Q(s, a)")
    ax_q.legend(fontsize=6, ncol=min(A + 2, 5), loc="best")
    writes = trace.actions >= trace.n_moves
    ax_a.scatter(steps[~writes], trace.actions[~writes], s=12, color="tab:blue", label="move")
    ax_a.scatter(steps[writes], trace.actions[writes], s=12, color="tab:red", label="move + write")
    ax_a.set_yticks(range(A))
    ax_a.set_yticklabels([action_name(a, trace.n_moves) for a in range(A)], fontsize=7)
    ax_a.set_ylim(-0.5, A - 0.5)
    ax_a.set_xlabel("step")
    ax_a.legend(fontsize=6, loc="best")


def trace_figure(trace, title: str | None = None) -> Figure:
    """The trajectory above, the Q-value timeline and the actions below."""
    fig = Figure(figsize=(9, 9))
    axes = fig.subplots(3, 1, gridspec_kw=dict(height_ratios=[1.3, 1, 0.8]))
    plot_trajectory(axes[0], trace)
    plot_timeline(axes[1], axes[2], trace)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def trajectory_figure(trace, title: str | None = None) -> Figure:
    """The trajectory picture alone (Appendix A)."""
    xs, ys = visited_window(trace)
    fig = Figure(figsize=(max(3.0, 0.7 * len(xs) + 1.5), max(2.5, 0.7 * len(ys) + 1.5)))
    ax = fig.subplots()
    plot_trajectory(ax, trace)
    if title:
        ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


def write_trace_png(trace, path, title: str | None = None) -> Figure:
    """``trace_figure`` saved to the PNG ``path``; returns the figure."""
    fig = trace_figure(trace, title)
    atomic_savefig(fig, path, dpi=110)
    return fig


def write_trajectory_png(trace, path, title: str | None = None) -> Figure:
    """``trajectory_figure`` saved to the PNG ``path``; returns the figure."""
    fig = trajectory_figure(trace, title)
    atomic_savefig(fig, path, dpi=110)
    return fig
