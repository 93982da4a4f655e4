"""The ``evaluate`` command.

    tinyalgo evaluate runs/q-addition-gru-s0/checkpoint.npz                     # lengths 100 and 1000
    tinyalgo evaluate runs/q-addition-gru-s0/checkpoint.npz --lengths 100 1000 10000
    tinyalgo evaluate runs/q-addition-gru-s0/checkpoint.npz --complexities 200 2000

A length is what the paper's tables count (paper section 5): complexity =
length x the task's factor (addition 2, 3-number addition 3, reverse 2,
others 1); each result line gives both.
"""
from __future__ import annotations

import argparse

from tinyalgo.runs.checkpoint import load_checkpoint
from tinyalgo.cli.args import UsageError, add_task_arguments, check_writable_file, int_at_least, output_path
from tinyalgo.cli.sizes import check_memory, controller_bytes, environment_bytes
from tinyalgo.environment import END_REASONS
from tinyalgo.evaluation import EpsilonGreedyAgent, GreedyAgent, evaluate, first_departures
from tinyalgo.runs.fileio import atomic_write_json
from tinyalgo.inspection.render import action_name
from tinyalgo.tasks import TASKS

DEFAULT_LENGTHS = (100, 1000)


def length_text(complexity: int, factor: int) -> str:
    length = complexity / factor
    return f"{length:.0f}" if length == int(length) else f"{length:.1f}"


def check_evaluate_memory(args, complexities, controller) -> None:
    c = max(complexities)
    cfg = controller.config
    check_memory([(environment_bytes(args.instances, c), f"--instances {args.instances} at complexity {c}",
                   f"{args.instances} instances of complexity {c} drawn at once"),
                  (controller_bytes(cfg.units, cfg.layers, cfg.core, args.instances, 1),
                   f"--instances {args.instances}",
                   f"the {cfg.core.upper()}-{cfg.units} controller's state for {args.instances} lanes")])


def cmd_evaluate(args) -> int:

    if args.json:
        check_writable_file(args.json, "--json")
    controller, extra = load_checkpoint(args.checkpoint, task=args.task, base=args.base)
    config = extra.get("config", {})
    task, base = args.task or config.get("task"), args.base or config.get("base", 10)
    if task is None:
        raise UsageError(f"{args.checkpoint} does not say which task it was trained on: give --task")
    factor = TASKS[task].factor
    if args.lengths is not None:
        complexities = [length * factor for length in args.lengths]
    else:
        complexities = args.complexities or [length * factor for length in DEFAULT_LENGTHS]
    minimum = TASKS[task].min_complexity
    if min(complexities) < minimum:
        raise UsageError(f"--complexities: {task} needs complexity at least {minimum}; got {min(complexities)}")
    check_evaluate_memory(args, complexities, controller)
    exploring = None if args.epsilon is None else EpsilonGreedyAgent(controller, args.epsilon, args.seed)
    print(f"{args.checkpoint}: {task} (base {base}), {controller.config.core.upper()}-{controller.config.units};"
          f" length = complexity / {factor}")

    def log_row(row):
        c = row["complexity"]
        print(f"length {length_text(c, factor):>6s} (complexity {c:>6d}): solved {row['solved']:6.1%}"
              f"  chars before first error {row['char_accuracy']:6.1%}  ({row['instances']} instances)")
        low, high = row["drawn"]
        if low != high:                            # the sampler raised some: a length in name only
            print(f"  note: the instances drawn have complexity {low}..{high}: {TASKS[task].complexity_rule}")

    rows = evaluate(GreedyAgent(controller), task, complexities, args.instances, base, args.seed)
    for row in rows:
        row["length"] = row["complexity"] / factor
        log_row(row)
    if exploring is not None:
        print(f"acting as a training lane (epsilon {args.epsilon}): 'solved' = training episodes that reach their end")
        for row in evaluate(exploring, task, complexities, args.instances, base, args.seed):
            log_row(row)
    if args.departures:
        for i, c in enumerate(complexities):       # the same instances as above (same seeds)
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


def epsilon_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value <= 1.0:                    # also refuses nan
        raise argparse.ArgumentTypeError(f"epsilon must be in [0, 1]; got {text}")
    return value


def register(sub) -> None:

    ev = sub.add_parser("evaluate", help="accuracy of a checkpoint at chosen lengths or complexities",
                        description="Greedy accuracy of a trained controller on fresh instances.  A length is what"
                                    " the paper's tables count; complexity = length x the task's factor"
                                    " (addition 2, addition3 3, reverse 2, others 1).")
    ev.add_argument("checkpoint", help="a checkpoint.npz or best.npz written by tinyalgo train or a sweep")
    sizes = ev.add_mutually_exclusive_group()
    sizes.add_argument("--lengths", type=int_at_least(1), nargs="+", default=None, metavar="L",
                       help="lengths to test, in digits as the paper's tables count them (default 100 1000)")
    sizes.add_argument("--complexities", type=int_at_least(1), nargs="+", default=None, metavar="C",
                       help="complexities to test instead of lengths (complexity = length x the task's factor;"
                            " default: the lengths 100 1000)")
    ev.add_argument("--instances", type=int_at_least(1), default=50, metavar="N",
                    help="fresh instances at each length (default 50)")
    ev.add_argument("--seed", type=int_at_least(0), default=0,
                    help="seed of the instances (default 0)")
    add_task_arguments(ev, fill_in=False, purpose="the task to test on: the checkpoint's (needed only for a"
                                                   " checkpoint that does not name its task)",
                       default_text="the checkpoint's")
    ev.add_argument("--json", type=output_path, default=None, metavar="FILE",
                    help="also write the results to this JSON file (default: none)")
    ev.add_argument("--departures", action="store_true",
                    help="for each failed instance, the first step where the controller left the ground-truth"
                         " actions (default off)")
    ev.add_argument("--epsilon", type=epsilon_value, default=None, metavar="EPS",
                    help="also run the instances epsilon-greedily, as Q-learning's training lanes act (0.05):"
                         " how many training episodes reach their end (default: greedy only)")
    ev.set_defaults(func=cmd_evaluate)

