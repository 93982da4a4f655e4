"""Drawing a machine with matplotlib, on a ``tinyalgo.inspection.figure.Figure`` (no
backend needed, none switched): a state diagram for machines of up to
``MAX_DIAGRAM_STATES`` states (the paper's Figure 4), a transition-table
heatmap for bigger ones."""
from __future__ import annotations

import numpy as np
from matplotlib.patches import Circle, FancyArrowPatch

from tinyalgo.inspection.figure import Figure
from tinyalgo.runs.fileio import atomic_savefig
from tinyalgo.symbols import Vocabulary
from tinyalgo.tasks import MOVE_NAMES

MAX_DIAGRAM_STATES = 30
MAX_DIAGRAM_EDGES = 48           # more arrows than this do not read: the heatmap instead
SHORT_MOVES = {"left": "L", "right": "R", "down": "D", "up": "U"}


def output_name(action: int, symbol: int, n_moves: int, chars) -> str:
    """'R' for a move, 'L w5' for a move that writes 5."""
    move = SHORT_MOVES[MOVE_NAMES[action % n_moves]]
    return move if action < n_moves else f"{move} w{chars[symbol]}"


def _ranges(inputs, chars) -> str:
    """'0-9' for consecutive digits, else the symbols joined."""
    inputs = sorted(inputs)
    if len(inputs) > 2 and inputs == list(range(inputs[0], inputs[-1] + 1)) and inputs[-1] < 10:
        return f"{chars[inputs[0]]}-{chars[inputs[-1]]}"
    return ",".join(chars[i] for i in inputs)


def edge_labels(machine) -> dict:
    """(source, target) -> label lines 'inputs / output' ('x' in the output:
    the symbol read is written)."""
    chars = Vocabulary(machine.base).chars
    groups = {}
    S, V = machine.action.shape
    for s in range(S):
        for x in range(V):
            a, t = machine.action[s, x], machine.next[s, x]
            if a < 0:
                continue
            y = machine.symbol[s, x]
            out = "copy" if a >= machine.n_moves and y == x else output_name(a, y, machine.n_moves, chars)
            groups.setdefault((s, int(t)), {}).setdefault(out, []).append(x)
    labels = {}
    for edge, outs in groups.items():
        lines = []
        for out, inputs in outs.items():
            if out == "copy":
                a = machine.action[edge[0], inputs[0]]
                out = f"{SHORT_MOVES[MOVE_NAMES[a % machine.n_moves]]} w(read)"
            lines.append(f"{_ranges(inputs, chars)} / {out}")
        if len(lines) > 4:
            lines = lines[:3] + [f"... {len(lines) - 3} more"]
        labels[edge] = "\n".join(lines)
    return labels


def state_name(machine, s: int) -> str:
    """A state's label: its number, and what it last did (its representative's feedback fields)."""
    fb = machine.feedback[s]
    move = "start" if fb[2] >= machine.n_moves else SHORT_MOVES[MOVE_NAMES[fb[2]]] + ("w" if fb[3] == 1 else "")
    return f"{s}\n({move})"


def drawing_kind(machine) -> str:
    """"diagram" up to ``MAX_DIAGRAM_STATES`` states and ``MAX_DIAGRAM_EDGES``
    arrows (pairs of states joined by a transition), else "heatmap"."""
    small = machine.n_states <= MAX_DIAGRAM_STATES and len(edge_labels(machine)) <= MAX_DIAGRAM_EDGES
    return "diagram" if small else "heatmap"


def machine_figure(machine, title: str = "") -> Figure:
    """``machine`` drawn as its ``drawing_kind`` says."""
    return _diagram(machine, title) if drawing_kind(machine) == "diagram" else _heatmap(machine, title)


def draw_machine(machine, path, title: str = "") -> Figure:
    """``machine_figure`` saved to the PNG ``path``; returns the figure."""
    fig = machine_figure(machine, title)
    atomic_savefig(fig, path, dpi=fig.dpi)
    return fig


def _layout(machine):
    """States on a circle in breadth-first order (the start state at the left)."""
    S = machine.n_states
    if S == 1:
        return np.zeros((1, 2))
    angle = np.pi - 2 * np.pi * np.arange(S) / S
    return np.stack([np.cos(angle), np.sin(angle)], axis=1) * (1.0 + 0.12 * S)


def _diagram(machine, title) -> Figure:
    S = machine.n_states
    pos = _layout(machine)
    size = 5 + 0.45 * S
    fig = Figure(figsize=(size, size * 0.85 if S > 2 else 3.6), dpi=110 if S <= 10 else 80)
    ax = fig.subplots()
    radius = 0.32
    for s in range(S):
        ax.add_patch(Circle(pos[s], radius, fill=True, fc="#dbe9f6", ec="black", lw=2 if s == machine.start else 1))
        ax.text(*pos[s], state_name(machine, s), ha="center", va="center", fontsize=9)
    start = pos[machine.start]
    corner = np.array([-0.7, -0.7])
    ax.annotate("start", xy=start + corner * radius, xytext=start + corner * (radius + 0.5), fontsize=8,
                ha="right", va="top", arrowprops=dict(arrowstyle="->"))
    fontsize = 8 if S <= 8 else 6
    for (s, t), label in edge_labels(machine).items():
        if t < 0:                                     # only the episode's end follows
            p = pos[s] + [0, -radius - 0.15]
            ax.text(*p, label + "\n(end)", ha="center", va="top", fontsize=fontsize, color="gray")
        elif s == t:
            direction = pos[s] / (np.linalg.norm(pos[s]) or 1.0) if S > 1 else np.array([0.0, 1.0])
            p = pos[s] + direction * (radius + 0.05)
            loop = FancyArrowPatch(p + [-0.12, 0], p + [0.12, 0], connectionstyle="arc3,rad=-2.2",
                                   arrowstyle="->", mutation_scale=10)
            ax.add_patch(loop)
            q = pos[s] + direction * (radius + 0.45)
            ax.text(*q, label, ha="center", va="center", fontsize=fontsize, color="darkblue")
        else:
            d = pos[t] - pos[s]
            u = d / np.linalg.norm(d)
            a, b = pos[s] + u * radius, pos[t] - u * radius
            ax.add_patch(FancyArrowPatch(a, b, connectionstyle="arc3,rad=0.15", arrowstyle="->",
                                         mutation_scale=12))
            normal = np.array([u[1], -u[0]])
            mid = (a + b) / 2 + normal * 0.18 * np.linalg.norm(b - a) / 2
            ax.text(*mid, label, ha="center", va="center", fontsize=fontsize, color="darkblue",
                    bbox=dict(fc="white", ec="none", alpha=0.7, pad=0.5))
    lim = np.abs(pos).max() + 1.2
    ax.set_xlim(-lim, lim)
    ax.set_ylim(-lim * (0.85 if S > 2 else 0.6), lim * (0.85 if S > 2 else 0.6))
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_title(title or f"{machine.task}: {S} states", fontsize=10)
    fig.tight_layout()
    return fig


def _heatmap(machine, title) -> Figure:
    S, V = machine.action.shape
    chars = Vocabulary(machine.base).chars
    seen_inputs = np.nonzero((machine.action >= 0).any(axis=0))[0]
    fig = Figure(figsize=(4 + 0.5 * len(seen_inputs), 2 + 0.09 * S + 2), dpi=100)
    axes = fig.subplots(1, 2, sharey=True)
    out = np.where(machine.action >= 0,
                   np.where(machine.action >= machine.n_moves, machine.action * 16 + np.maximum(machine.symbol, 0),
                            machine.action * 16), -1)
    codes, inv = np.unique(out[:, seen_inputs], return_inverse=True)
    inv = inv.reshape(S, len(seen_inputs)).astype(float)
    inv[out[:, seen_inputs] < 0] = np.nan
    axes[0].imshow(inv, aspect="auto", cmap="Pastel1", interpolation="nearest")
    axes[0].set_title("output: symbol written (a letter: move without writing)", fontsize=9)
    if S <= 80:
        for i in range(S):
            for j, x in enumerate(seen_inputs):
                a = machine.action[i, x]
                if a >= 0:
                    move = SHORT_MOVES[MOVE_NAMES[a % machine.n_moves]]
                    text = chars[machine.symbol[i, x]] if a >= machine.n_moves else move.lower()
                    axes[0].text(j, i, text, ha="center", va="center", fontsize=6)
    nxt = machine.next[:, seen_inputs].astype(float)
    nxt[nxt < 0] = np.nan
    im = axes[1].imshow(nxt, aspect="auto", cmap="viridis", interpolation="nearest")
    axes[1].set_title("next state", fontsize=9)
    fig.colorbar(im, ax=axes[1], fraction=0.05)
    for ax in axes:
        ax.set_xticks(range(len(seen_inputs)))
        ax.set_xticklabels([chars[i] for i in seen_inputs])
        ax.set_xlabel("symbol read")
    axes[0].set_ylabel("state")
    fig.suptitle(title or f"{machine.task}: {S} states (blank: never seen)", fontsize=10)
    fig.tight_layout()
    return fig
