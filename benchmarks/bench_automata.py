"""Automaton extraction and the machine agent, timed (tinyalgo.automata).

    python benchmarks/bench_automata.py runs/models/addition-gru-s0/checkpoint.npz [--repeats 3] [--smoke]

Prints, as medians over the repeats: the extraction time (record, behaviour
tags, clustering and minimisation) and lane-steps per second of
MachineAgent.act alone (observations replayed from 200 steps of a real run at
complexity 100, many lanes),
of a whole evaluation with the machine, and of the same evaluation with the
network (tinyalgo.evaluation.GreedyAgent).
"""
from __future__ import annotations

import argparse
import pathlib
import statistics
import time

import numpy as np

from tinyalgo.automata import MachineAgent, extract
from tinyalgo.runs.checkpoint import load_checkpoint
from tinyalgo.environment import Environment
from tinyalgo.evaluation import GreedyAgent, evaluate_complexity

SMOKE_CHECKPOINT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "q-copy" / "checkpoint.npz"


def replay_rate(machine, controller, task, lanes, complexity, steps):
    """Lane-steps per second of ``act`` over observations recorded from a run of the machine itself."""
    env = Environment(task, batch_size=lanes, complexity=complexity, seed=3,
                      extra_curriculum=False)   # a pool of 64 x lanes instances
    agent = MachineAgent(machine, controller)
    agent.start(lanes)
    obs, reset, tape = env.observe(), np.ones(lanes, dtype=bool), []
    for _ in range(steps):
        tape.append((obs, reset))
        a, y = agent.act(env, obs, reset)
        r = env.step(a, y)
        obs, reset = r.obs, r.done
    first, agent = agent, MachineAgent(machine, controller)
    for name in ("action", "symbol", "next"):          # the tables the first run filled, so no fallback is timed
        setattr(agent, name, getattr(first, name))
    agent.start(lanes)
    t = time.perf_counter()
    for obs, reset in tape:
        agent.act(None, obs, reset)
    return lanes * steps / (time.perf_counter() - t)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("checkpoint", nargs="?", default=None,
                   help="a trained run's checkpoint (with --smoke: default the tests' small copy run)")
    p.add_argument("--smoke", action="store_true", help="one repeat, 64 lanes, complexity 20")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--lanes", type=int, default=4096, help="lanes of the replay (default 4096)")
    p.add_argument("--complexity", type=int, default=2002,
                   help="complexity of the evaluations (default 2002: above 1000 the environment draws instances"
                        " per lane, not a pool of 64 per lane)")
    args = p.parse_args()
    if args.smoke:
        args.repeats, args.lanes, args.complexity = 1, 64, 20
        args.checkpoint = args.checkpoint or str(SMOKE_CHECKPOINT)
    if args.checkpoint is None:
        p.error("give a checkpoint (or --smoke)")
    controller, extra = load_checkpoint(args.checkpoint)
    task = extra["config"]["task"]
    seconds, replay, whole, network, machine = [], [], [], [], None
    for i in range(args.repeats):
        t = time.perf_counter()
        r = extract(controller, task)
        seconds.append(time.perf_counter() - t)
        machine = r["reduced"]
        replay.append(replay_rate(machine, controller, task, args.lanes, 100, 200))
        for agent, out in ((MachineAgent(machine, controller), whole), (GreedyAgent(controller), network)):
            t = time.perf_counter()
            row = evaluate_complexity(agent, task, args.complexity, 100, seed=7 + i)
            out.append(row["steps"] * 100 / (time.perf_counter() - t))
    print(f"{args.checkpoint}: {task}, {controller.config.core.upper()}-{controller.config.units};"
          f" {machine.n_states} states; medians of {args.repeats}")
    print(f"extraction                     {statistics.median(seconds):8.1f} s  ({r['seconds']})")
    print(f"MachineAgent.act, {args.lanes} lanes {statistics.median(replay) / 1e6:8.2f} M lane-steps/s")
    print(f"evaluation, machine, 100 lanes {statistics.median(whole) / 1e6:8.2f} M lane-steps/s"
          f" (complexity {args.complexity}, environment included)")
    print(f"evaluation, network, 100 lanes {statistics.median(network) / 1e6:8.2f} M lane-steps/s")


if __name__ == "__main__":
    main()
