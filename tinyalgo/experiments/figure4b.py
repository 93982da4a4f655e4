"""Paper Figure 4b and section 5's "higher-order form of over-fitting" on
reverse: an LSTM trained supervised on instances of at most 2 digits, and
the machine extracted from it on recordings of those lengths only.

    tinyalgo experiment figure4b --out figures/automata

1. Trains an LSTM-200 supervised on reverse (``train_short`` of
   ``tinyalgo.experiments.table2`` with ``max_digits`` 2, ``settle`` 0: the
   curriculum at complexity 5 until 2 digits are solved on 50 instances).
2. Measures the network's greedy solved fraction at 1 to 12 and 20 digits
   (50 instances each) and where it first leaves the ground-truth path
   (``first_departures``): the step and the action taken there.
3. Extracts its machine (``tinyalgo.automata.extract``) on 50 instances of
   each training complexity (2 to 5: 1 or 2 digits), without the corner
   instances (they have up to 12 digits), and runs the exact-minimisation
   machine and the don't-care reduced machine at the same lengths, alone
   (an unknown (state, input) pair moves left without writing) and with the
   network answering unknown pairs.
4. Records the network on 50 instances of each complexity 2 to 13 (1 to 6
   digits, past the training lengths, where it fails) and clusters its
   recurrent states with k-means (k 8, ``tinyalgo.automata.discretise.kmeans``):
   the clusters of the states reached by moves right only, per time step,
   show whether the moving-right phase is one state or drifts with time.

Writes figure4b.png (solved fraction per length; the clusters of the
moving-right states per time step; the two machines) and figure4b.json (the
numbers).  About a minute on one core.
"""
from __future__ import annotations

import collections
import os
import tempfile

import numpy as np

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.discretise import kmeans
from tinyalgo.automata.extract import extract
from tinyalgo.automata.record import record
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity, first_departures
from tinyalgo.experiments.table2 import train_short
from tinyalgo.runs.fileio import atomic_savefig, atomic_write_json
from tinyalgo.tasks import RIGHT

DIGITS = tuple(range(1, 13)) + (20,)
INSTANCES = 50


def solved(agent, digits: int) -> float:
    """Solved fraction of ``agent`` on INSTANCES reverse instances of ``digits`` digits (seed 1000 + digits)."""
    return evaluate_complexity(agent, "reverse", 2 * digits + 1, INSTANCES, seed=1000 + digits)["solved"]


def departures(controller, digits: int) -> dict:
    """How the network's first instances of ``digits`` digits leave the
    ground truth: {"step s, <action> on <digit|marker>": instances}."""
    names = {0: "left", 1: "right", 2: "left+write", 3: "right+write"}
    counts = collections.Counter()
    for d in first_departures(controller, "reverse", 2 * digits + 1, INSTANCES, seed=1000 + digits):
        dep = d["departure"]
        if dep is None:
            counts["follows the ground truth"] += 1
        else:
            read = "digit" if dep["obs"][0] < 10 else "marker"
            counts[f"step {dep['step']}: {names[dep['action']]} on a {read} (truth {names[dep['truth']]})"] += 1
    return dict(sorted(counts.items()))


def right_phase_clusters(controller, max_digits: int = 6, k: int = 8) -> np.ndarray:
    """Record ``controller`` on INSTANCES instances of each complexity 2 to
    2 ``max_digits`` + 1 (1 to ``max_digits`` digits; recording seed 0), cluster all recorded states into
    ``k`` k-means clusters (seed 0), and count, for the states reached by
    moves right only (time step t: t moves right so far), the states of each
    cluster at each t: int (clusters that occur, max_digits + 1)."""
    rec = record(controller, "reverse", list(range(2, 2 * max_digits + 2)), INSTANCES, 10, 0, None)
    _, labels = kmeans(rec.state, k, seed=0)
    table = np.zeros((k, max_digits + 1), dtype=np.int64)
    for row in np.nonzero(rec.first)[0]:
        t = 0
        while row >= 0 and t <= max_digits:
            table[labels[row], t] += 1
            if rec.action[row] % rec.n_moves != RIGHT or rec.action[row] >= rec.n_moves:
                break
            row, t = rec.next_row[row], t + 1
    table = table[table.sum(axis=1) > 0]
    return table[np.argsort([np.average(np.arange(table.shape[1]), weights=r) for r in table])]


def machine_summary(m) -> dict:
    """States, start state and the transitions as 'inputs / output' per (source, target)."""
    from tinyalgo.automata.draw import edge_labels  # matplotlib loads when needed
    return dict(states=int(m.n_states), start=int(m.start),
                edges={f"{s}->{t}": label.replace("\n", " | ") for (s, t), label in sorted(edge_labels(m).items())})


def draw_panels(network, machines, clusters, drawings, path) -> None:
    from matplotlib.image import imread

    from tinyalgo.inspection.figure import Figure

    fig = Figure(figsize=(23, 6))
    axes = fig.subplots(1, 4, gridspec_kw=dict(width_ratios=[1, 0.8, 1.3, 1.3]))
    ax = axes[0]
    x = np.arange(len(DIGITS))
    ax.plot(x, [network[d] for d in DIGITS], "o-", color="black", label="LSTM-200 (greedy)")
    styles = {"reduced": ("s--", "tab:blue"), "minimal": ("^:", "tab:orange")}
    for key, acc in machines.items():
        ax.plot(x, [acc[d] for d in DIGITS], styles[key][0], color=styles[key][1], label=f"{key} machine alone")
    ax.axvspan(-0.5, 1.5, color="0.9", zorder=0, label="training lengths")
    ax.set_xticks(x, [str(d) for d in DIGITS])
    ax.set_xlabel("digits")
    ax.set_ylabel(f"solved fraction ({INSTANCES} instances)")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(fontsize=8)
    ax.set_title("reverse, trained on 1-2 digits", fontsize=11)
    ax = axes[1]
    share = clusters / np.maximum(clusters.sum(axis=0, keepdims=True), 1)
    ax.imshow(share, cmap="Greys", vmin=0, vmax=1, aspect="auto")
    for (i, j), n in np.ndenumerate(clusters):
        if n:
            ax.text(j, i, str(n), ha="center", va="center", fontsize=8, color="white" if share[i, j] > 0.5 else "black")
    ax.set_xticks(range(clusters.shape[1]))
    ax.set_yticks(range(len(clusters)), [f"cluster {i + 1}" for i in range(len(clusters))])
    ax.set_xlabel("moves right so far")
    ax.set_title("states while moving right (1-6 digits):\nk-means cluster per time step", fontsize=10)
    for ax, (title, png) in zip(axes[2:], drawings):
        ax.imshow(imread(png))
        ax.set_axis_off()
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    atomic_savefig(fig, path, dpi=100)


def figure4b(out: str, seed: int = 0, max_digits: int = 2, budget: int = 2_000_000, log=print) -> dict:
    """Train, measure, extract and cluster as the module says; write ``<out>/figure4b.png`` and
    ``<out>/figure4b.json``; the numbers."""
    from tinyalgo.automata.draw import draw_machine  # matplotlib loads when drawing
    if max_digits < 1 or budget < 1:
        raise ValueError(f"figure4b needs max_digits and budget of at least 1; got {max_digits}, {budget}")
    os.makedirs(out, exist_ok=True)
    controller, report = train_short("lstm", 200, seed, budget=budget, max_digits=max_digits, settle=0)
    network = {d: solved(GreedyAgent(controller), d) for d in DIGITS}
    log(f"network solved: {network}")
    training = list(range(2, 2 * max_digits + 2))
    r = extract(controller, "reverse", complexities=training, instances=INSTANCES, corners=False, seed=0)
    machines, with_network = {}, {}
    for key in ("reduced", "minimal"):
        machines[key] = {d: solved(MachineAgent(r[key]), d) for d in DIGITS}
        with_network[key] = {d: solved(MachineAgent(r[key], controller), d) for d in DIGITS}
        log(f"{key} machine ({r[key].n_states} states) alone: {machines[key]}")

    clusters = right_phase_clusters(controller)
    log(f"moving-right states, cluster x moves right so far:\n{clusters}")
    with tempfile.TemporaryDirectory() as tmp:
        drawings = []
        for key, what in (("reduced", "don't-care reduced"), ("minimal", "exact minimisation")):
            png = os.path.join(tmp, f"{key}.png")
            draw_machine(r[key], png)
            drawings.append((f"{what} machine ({r[key].n_states} states), recorded on 1-{max_digits} digits", png))
        draw_panels(network, machines, clusters, drawings, os.path.join(out, "figure4b.png"))

    result = dict(
        task="reverse", controller="lstm", units=200, seed=seed, max_training_digits=max_digits,
        training=dict(budget=budget, settle=0, chars=report["chars"], solved_training_target=report["solved_target"],
                      curriculum_up_to_complexity=report["curriculum_up_to"]),
        instances=INSTANCES, instance_seed="1000 + digits",
        network_solved={str(d): v for d, v in network.items()},
        network_first_departures={str(d): departures(controller, d) for d in (3, 4, 6, 10, 20)},
        extraction=dict(recorded_complexities=training, recorded_instances=INSTANCES, corners=False, k=r["k"],
                        recorded_steps=r["steps"], raw_states=r["raw"].n_states,
                        minimal_states=r["minimal"].n_states, reduced_states=r["reduced"].n_states),
        machine_alone_solved={k: {str(d): v for d, v in acc.items()} for k, acc in machines.items()},
        machine_with_network_fallback_solved={k: {str(d): v for d, v in acc.items()}
                                              for k, acc in with_network.items()},
        machines={k: machine_summary(r[k]) for k in ("reduced", "minimal")},
        moving_right_clusters=dict(recorded_complexities=list(range(2, 14)), recorded_instances=INSTANCES, k=8,
                                   rows="k-means clusters that occur, ordered by mean time step",
                                   columns="moves right so far (0 = first step)", counts=clusters.tolist()),
    )
    atomic_write_json(os.path.join(out, "figure4b.json"), result)
    return result
