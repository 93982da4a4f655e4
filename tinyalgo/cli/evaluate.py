"""The ``evaluate`` command.

    tinyalgo evaluate runs/q-addition-gru-s0/checkpoint.npz --complexities 100 1000 20000
"""
from __future__ import annotations

from tinyalgo.checkpoint import load_checkpoint
from tinyalgo.cli.args import int_at_least
from tinyalgo.environment import END_REASONS
from tinyalgo.evaluation import EpsilonGreedyAgent, GreedyAgent, evaluate, first_departures
from tinyalgo.fileio import atomic_write_json
from tinyalgo.render import action_name


def cmd_evaluate(args) -> int:

    controller, extra = load_checkpoint(args.checkpoint)
    config = extra.get("config", {})
    task, base = config.get("task"), config.get("base", 10)
    if task is None:
        raise ValueError(f"{args.checkpoint} does not say which task it was trained on")
    exploring = None if args.epsilon is None else EpsilonGreedyAgent(controller, args.epsilon, args.seed)
    print(f"{args.checkpoint}: {task} (base {base}), {controller.config.core.upper()}-{controller.config.units}")
    rows = evaluate(GreedyAgent(controller), task, args.complexities, args.instances, base, args.seed, log=print)
    if exploring is not None:
        print(f"acting as a training lane (epsilon {args.epsilon}): 'solved' = training episodes that reach their end")
        evaluate(exploring, task, args.complexities, args.instances, base, args.seed, log=print)
    if args.departures:
        for i, c in enumerate(args.complexities):       # the same instances as above (same seeds)
            print_departures(first_departures(controller, task, c, args.instances, base, args.seed + 7919 * i),
                             c, controller.config.n_actions // 2)
    if args.json:
        atomic_write_json(args.json, dict(checkpoint=args.checkpoint, task=task, base=base, results=rows))
    return 0


def print_departures(rows, complexity: int, n_moves: int) -> None:
    """One line per failed instance: how it ended and the decision that started it."""

    failed = [r for r in rows if not r["solved"]]
    departed = sum(r["departure"] is not None for r in rows)
    print(f"complexity {complexity}: {len(failed)} of {len(rows)} failed; {departed} left the ground-truth actions")
    for r in failed:
        d = r["departure"]
        where = "never left the ground-truth actions" if d is None else (
            f"left them at step {d['step']} (output {d['output']}): {action_name(d['action'], n_moves)}"
            f" (Q {d['q_action']:.3f}) instead of {action_name(d['truth'], n_moves)} (Q {d['q_truth']:.3f})")
        print(f"  instance {r['lane']:>3d}: {END_REASONS[r['reason']]}; {where}")


def register(sub) -> None:

    ev = sub.add_parser("evaluate", help="accuracy of a checkpoint at chosen complexities")
    ev.add_argument("checkpoint")
    ev.add_argument("--complexities", type=int_at_least(1), nargs="+", default=[100, 1000])
    ev.add_argument("--instances", type=int_at_least(1), default=50)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--json", default=None, help="also write the results to this JSON file")
    ev.add_argument("--departures", action="store_true",
                    help="for each failed instance, the first step where the controller left the ground-truth actions")
    ev.add_argument("--epsilon", type=float, default=None, metavar="EPS",
                    help="also run the instances epsilon-greedily, as Q-learning's training lanes act (0.05):"
                         " how many training episodes reach their end")
    ev.set_defaults(func=cmd_evaluate)
