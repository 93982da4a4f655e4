"""Figure 4 and section 6.4 on trained models: each model's machine extracted
(``tinyalgo.automata``), drawn and saved, then the network and the machine
(acting as a controller, the paper's "discretization of state") compared at
growing lengths and on adversarial instances.  One JSON of results per model
(``<out>/<model>.results.json``), the machine (``<model>.json``) and its
drawing (``<model>.png``), then a Markdown table of all (``<out>/table.md``).

    tinyalgo experiment automata --models models/reverse-ff-s0 models/addition-gru-s0 --out figures/automata
"""
from __future__ import annotations

import glob
import json
import os
import time

from tinyalgo.automata.agent import MachineAgent
from tinyalgo.automata.extract import extract, fidelity
from tinyalgo.automata.machine import load_machine
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity, run_instances
from tinyalgo.runs.checkpoint import load_checkpoint
from tinyalgo.runs.fileio import atomic_write_bytes, atomic_write_json
from tinyalgo.tasks import make_task
from tinyalgo.tasks.corners import corner_instances

DEFAULT_OUT = os.path.join("figures", "automata")      # the command's --out unless given
TASK_ORDER = ("copy", "reverse", "walk", "addition", "addition3", "multiplication")


def run_canned(agent, task_name, instances, base=10) -> bool:
    """Whether ``agent`` solves the given instance (``corner_instances``' form) on one lane."""
    env = Environment(task_name, batch_size=1, base=base, seed=0, extra_curriculum=False)
    env.load(instances)
    return bool(run_instances(agent, env)["solved"][0])


def study(checkpoint: str, out: str, lengths=(100, 1000, 20000, 100000), instances: int = 100,
          long_instances: dict | None = None, adversarial_digits: int = 10000, record_instances: int = 50,
          reuse_network: bool = False, tests: int = 8, log=print) -> dict:
    """Extract, draw, save and compare one model; returns its results.  With
    ``reuse_network``, the network's figures (solved fractions, adversarial
    instances) are taken from the model's earlier results in ``out`` where
    they exist (the network does not change with the extraction).
    ``tests``: recorded paths per feedback group for the behaviour tags
    (``extract``).  ``lengths`` are the paper's lengths (digits; the
    complexity is the length times the task's factor, tinyalgo/tasks);
    ``long_instances`` {length: (network instances, machine instances)}."""
    from tinyalgo.automata.draw import draw_machine, drawing_kind  # matplotlib loads when drawing
    name = os.path.basename(os.path.dirname(os.path.abspath(checkpoint)))
    earlier = os.path.join(out, f"{name}.results.json")
    if reuse_network and os.path.exists(earlier):
        with open(earlier, encoding="utf-8") as f:
            earlier = json.load(f)
    else:
        earlier = {}
    known_net = {a["complexity"]: (a["network_solved"], a["network_instances"]) for a in earlier.get("accuracy", [])}
    known_adv = {a["instance"]: a["network"] for a in earlier.get("adversarial", [])}
    controller, extra = load_checkpoint(checkpoint)
    task, base = extra["config"]["task"], extra["config"].get("base", 10)
    r = extract(controller, task, base, instances=record_instances, tests=tests)
    m = r["reduced"]
    m.save(os.path.join(out, f"{name}.json"))
    draw_machine(m, os.path.join(out, f"{name}.png"),
                 f"{name}: {m.n_states} states ({r['minimal'].n_states} before the don't-care reduction)")
    log(f"{name}: k {r['k']}, states raw {r['raw'].n_states} minimal {r['minimal'].n_states}"
        f" reduced {m.n_states}, conflicts {r['raw'].info['conflicts']} of {r['steps']}, {r['seconds']}")
    res = dict(model=name, task=task, core=controller.config.core, units=controller.config.units, k=r["k"],
               raw_states=r["raw"].n_states, minimal_states=r["minimal"].n_states, states=m.n_states,
               conflicts=r["raw"].info["conflicts"], recorded_steps=r["steps"], record_instances=record_instances,
               tests=tests, refused_merges=r["raw"].info.get("refused_merges"),
               replay=r["tried"][r["k"]], extraction_seconds=r["seconds"],
               drawing=drawing_kind(m),
               fidelity=[fidelity(m, controller, c, instances, seed=1000 + c) for c in (100, 1000)],
               accuracy=[], adversarial=[])
    long_instances = long_instances or {}
    factor = make_task(task, base).factor
    for length in lengths:
        c = length * factor
        n_net, n_mach = long_instances.get(length, (instances, instances))
        t = time.perf_counter()
        agent = MachineAgent(m, controller)
        mach = evaluate_complexity(agent, task, c, n_mach, base, seed=2000 + c)
        t_m = time.perf_counter() - t
        if c in known_net:
            net = dict(solved=known_net[c][0])
            n_net = known_net[c][1]
        else:
            net = evaluate_complexity(GreedyAgent(controller), task, c, n_net, base, seed=2000 + c) if n_net else None
        row = dict(length=length, complexity=c, machine_solved=mach["solved"], machine_instances=n_mach,
                   machine_fallbacks=agent.fallbacks, machine_filled=agent.filled[:20],
                   network_solved=None if net is None else net["solved"], network_instances=n_net,
                   machine_seconds=round(t_m, 1))
        log(f"  length {length:>6d} (complexity {c}): machine {mach['solved']:.0%} of {n_mach}"
            f" ({agent.fallbacks} fallbacks)"
            + ("" if net is None else f", network {net['solved']:.0%} of {n_net}"))
        res["accuracy"].append(row)
    for label, inst in corner_instances(task, adversarial_digits, base).items():
        ok_m = run_canned(MachineAgent(m, controller), task, inst, base)
        ok_n = known_adv[label] if label in known_adv else run_canned(GreedyAgent(controller), task, inst, base)
        res["adversarial"].append(dict(instance=label, digits=adversarial_digits, machine=ok_m, network=ok_n))
        log(f"  {label} ({adversarial_digits} digits): machine {ok_m}, network {ok_n}")
    atomic_write_json(os.path.join(out, f"{name}.results.json"), res)
    return res


def table(results: list) -> str:
    """The markdown table of the results of ``study``."""
    head = ("| model | states raw / minimal / reduced | k | fidelity step / instance (100; 1000) |"
            " network solved at length 100 / 1k / 20k / 100k | machine solved at length 100 / 1k / 20k / 100k |"
            " adversarial machine (network) |")
    lines = [head, "|" + "---|" * 7]

    def key(r):
        return TASK_ORDER.index(r["task"]) if r["task"] in TASK_ORDER else 9, r["model"]

    for r in sorted(results, key=key):
        fid = "; ".join(f"{f['step']:.4f} / {f['instance']:.2f}" for f in r["fidelity"])

        def acc(kind):
            return " / ".join("-" if a[f"{kind}_solved"] is None else f"{a[f'{kind}_solved']:.0%}"
                              + (f" ({a[f'{kind}_instances']})" if a[f"{kind}_instances"] != 100 else "")
                              for a in r["accuracy"])
        adv = ", ".join(f"{'ok' if a['machine'] else 'FAIL'} ({'ok' if a['network'] else 'fail'})"
                        for a in r["adversarial"]) or "n/a"
        lines.append(f"| {r['model']} | {r['raw_states']} / {r['minimal_states']} / {r['states']} | {r['k']} | {fid} |"
                     f" {acc('network')} | {acc('machine')} | {adv} |")
    return "\n".join(lines) + "\n"


def model_name(model_dir: str) -> str:
    """A model's name in the results: its directory's name."""
    return os.path.basename(os.path.abspath(model_dir))


def results_path(out: str, model_dir: str) -> str:
    return os.path.join(out, f"{model_name(model_dir)}.results.json")


def to_study(models, out: str, redo: bool = False) -> list:
    """The model directories of ``models`` to study: those without results in ``out`` (all with ``redo``);
    a ValueError names the first of them without a ``checkpoint.npz``, before any is studied."""
    chosen = [d for d in models if redo or not os.path.exists(results_path(out, d))]
    for d in chosen:
        if not os.path.isfile(os.path.join(d, "checkpoint.npz")):
            raise ValueError(f"{d}: no checkpoint.npz there; give the directories of trained models")
    return chosen


def redraw(out: str) -> list:
    """Draw every machine JSON of ``out`` again (``<name>.png``); their paths."""
    from tinyalgo.automata.draw import draw_machine  # matplotlib loads when drawing
    drawn = []
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        if not path.endswith(".results.json"):
            m = load_machine(path)
            name = os.path.basename(path)[:-5]
            draw_machine(m, path[:-5] + ".png", f"{name}: {m.n_states} states"
                         f" ({m.info.get('minimal_states')} before the don't-care reduction)")
            drawn.append(path[:-5] + ".png")
    return drawn


def write_table(out: str) -> str:
    """``<out>/table.md`` from every ``*.results.json`` of ``out``; the table."""
    results = []
    for path in sorted(glob.glob(os.path.join(out, "*.results.json"))):
        with open(path, encoding="utf-8") as f:
            results.append(json.load(f))
    if not results:
        raise ValueError(f"{out} has no results (<model>.results.json) to tabulate; give --models")
    text = table(results)
    atomic_write_bytes(os.path.join(out, "table.md"), text.encode())
    return text
