"""A machine written for other tools (paper section 5, Figure 4; section
6.4): Graphviz DOT text to draw it, and the ``.dot`` form in which AALpy
(an automata learning library) saves and loads Mealy machines
(``save_automaton_to_file`` / ``load_automaton_from_file(path, "mealy")``),
so that a machine extracted here can be loaded and checked there.

AALpy's form: one node per state (``s0 [label="s0"];``), one edge per
(state, input) pair labelled ``"input/output"``, and a node ``__start0``
(``shape=none``, empty label) with an edge to the initial state.  Its loader
splits a label at "/", removes spaces and reads labels made of digits as
integers, and it needs every state to have every input, so the machine is
written as ``MachineAgent`` runs it without a controller (an unknown pair
moves left without writing and keeps its state; ``effective_tables``).
Inputs are the vocabulary's characters (``0``..``9``, ``q``, ``e``, ``p``,
``l``, ``u``, ``d``, ``_`` for none); an output is the move, with ``+w`` and
the character written when the action writes: ``left``, ``right+w7``.
Neither form needs Graphviz or AALpy to be written.
"""
from __future__ import annotations

import re

from tinyalgo.automata.product import effective_tables
from tinyalgo.runs.fileio import atomic_write_bytes
from tinyalgo.symbols import Vocabulary
from tinyalgo.tasks import MOVE_NAMES


def _outputs(machine):
    """Per (state, input): (next state, output label), as MachineAgent acts."""
    act, sym, nxt = effective_tables(machine)
    chars = Vocabulary(machine.base).chars
    rows = []
    for s in range(machine.n_states):
        row = []
        for x in range(machine.n_inputs):
            a = act[s][x]
            label = MOVE_NAMES[a % machine.n_moves] + (f"+w{chars[sym[s][x]]}" if a >= machine.n_moves else "")
            row.append((nxt[s][x], label))
        rows.append(row)
    return rows


def to_aalpy_dot(machine, name: str = "LearnedModel") -> str:
    """The machine in AALpy's Mealy ``.dot`` form (see the module doc)."""
    chars = Vocabulary(machine.base).chars
    lines = [f"digraph {name} {{"]
    lines += [f's{s} [label="s{s}"];' for s in range(machine.n_states)]
    for s, row in enumerate(_outputs(machine)):
        lines += [f's{s} -> s{t} [label="{chars[x]}/{label}"];' for x, (t, label) in enumerate(row)]
    lines += ['__start0 [label="", shape=none];', f'__start0 -> s{machine.start} [label=""];', "}"]
    return "\n".join(lines) + "\n"


def to_dot(machine, title: str | None = None) -> str:
    """Graphviz DOT text for drawing: one edge per (state, next state) pair
    with the inputs that take it and their outputs, pairs never recorded
    (answered by the default) left out, the start marked."""
    chars = Vocabulary(machine.base).chars
    seen = machine.action >= 0
    edges = {}
    for s, row in enumerate(_outputs(machine)):
        for x, (t, label) in enumerate(row):
            if seen[s, x]:
                edges.setdefault((s, t), []).append(f"{chars[x]}/{label}")
    lines = ["digraph machine {", "  rankdir=LR;", '  node [shape=circle, fontname="Helvetica"];']
    if title:
        lines.append(f'  label="{title}"; labelloc=t;')
    lines.append(f"  start [shape=point]; start -> s{machine.start};")
    lines += [f'  s{s} [label="{s}"];' for s in range(machine.n_states)]
    newline = "\\n"                                  # DOT's line break inside a label
    lines += [f'  s{s} -> s{t} [label="{newline.join(labels)}"];' for (s, t), labels in sorted(edges.items())]
    lines.append("}")
    return "\n".join(lines) + "\n"


def save_dot(machine, path, title: str | None = None) -> None:
    atomic_write_bytes(path, to_dot(machine, title).encode())


def save_aalpy(machine, path) -> None:
    atomic_write_bytes(path, to_aalpy_dot(machine).encode())


def _value(label: str):
    """A label as AALpy reads it: an integer if it is made of digits."""
    return int(label) if label.isdigit() else label


def parse_aalpy_dot(text: str) -> dict:
    """Read AALpy's Mealy ``.dot`` form back as AALpy's loader does (without
    AALpy): {"initial": id, "transitions": {(state, input): (next, output)}}.
    Inputs and outputs made of digits become integers, as AALpy reads them."""
    initial, transitions, states = None, {}, set()
    for m in re.finditer(r'^\s*(\w+)\s*->\s*(\w+)\s*\[label="([^"]*)"\];', text, re.M):
        src, dst, label = m.groups()
        if src == "__start0":
            initial = dst
            continue
        inp, out = label.replace(" ", "").split("/")
        transitions[(src, _value(inp))] = (dst, _value(out))
        states |= {src, dst}
    for m in re.finditer(r'^\s*(\w+)\s*\[label="([^"]*)"', text, re.M):
        if m.group(1) != "__start0":
            states.add(m.group(1))
    return dict(initial=initial, transitions=transitions, states=sorted(states))
