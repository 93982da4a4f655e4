"""The ``trace`` and ``table2`` commands.

    tinyalgo trace runs/q-addition-gru-s0/checkpoint.npz --complexity 8 --png addition.png
    tinyalgo trace CHECKPOINT --task reverse --epsilon 0.05 --seed 3 --step
    tinyalgo table2 --out figures/table2

``trace`` runs a trained controller on one instance and prints a frame per
step (``tinyalgo.inspection.trace``); ``--png`` draws the head's trajectory and a
timeline of the actions and Q-values (``tinyalgo.inspection.trace_plots``, the paper's
Appendix A).  ``table2`` reproduces the paper's Table 2
(``tinyalgo.experiments.table2``).
"""
from __future__ import annotations

import sys

from tinyalgo.cli.args import (check_writable_file, check_writable_folder, checkpoint_task, int_at_least, int_in_range,
                               task_name)
from tinyalgo.cli.sizes import check_memory, environment_bytes
from tinyalgo.experiments.table2 import run_table2
from tinyalgo.runs.fileio import atomic_write_json
from tinyalgo.inspection.render import print_frames
from tinyalgo.tasks import TASKS, make_task
from tinyalgo.inspection.trace import trace_instance, trace_to_dict


# A trace records and prints every step of one instance: about a minute at complexity 10,000, and a frame
# as wide as the terminal at most.
MAX_COMPLEXITY = 10_000
MAX_WIDTH = 200


def cmd_trace(args) -> int:
    for option, suffix in (("png", ".png"), ("json", None)):
        if getattr(args, option):
            check_writable_file(getattr(args, option), "--" + option, (suffix,) if suffix else None)
    controller, task, base = checkpoint_task(args.checkpoint, args.task)
    minimum = make_task(task, base).min_complexity
    complexity = max(12, minimum) if args.complexity is None else args.complexity
    if complexity < minimum:
        raise ValueError(f"--complexity must be at least {minimum} for task {task!r}; got {complexity}")
    check_memory([(environment_bytes(1, complexity), f"--complexity {complexity}",
                   f"one instance of complexity {complexity}")])
    trace = trace_instance(controller, task, complexity, seed=args.seed, base=base, epsilon=args.epsilon,
                           explore_seed=args.seed if args.explore_seed is None else args.explore_seed,
                           half_width=args.width)
    how = "greedily" if args.epsilon == 0 else f"epsilon-greedily (epsilon {args.epsilon})"
    print(f"{args.checkpoint}: {task} (base {base}), {controller.config.core.upper()}-{controller.config.units},"
          f" acting {how} on one instance of complexity {complexity} (seed {args.seed})")
    print_frames([step.text for step in trace.steps], args.step)
    print(trace.summary())
    if args.png:
        from tinyalgo.inspection import trace_plots      # matplotlib loads only when a picture is asked for
        trace_plots.write_trace_png(trace, args.png, title=f"{args.checkpoint}")
        print(f"wrote {args.png}")
    if args.json:
        atomic_write_json(args.json, dict(checkpoint=args.checkpoint, **trace_to_dict(trace)))
        print(f"wrote {args.json}")
    return 0


def cmd_table2(args) -> int:
    check_writable_folder(args.out, "--out")
    if args.models:
        check_writable_folder(args.models, "--models")
    longest = 2 * max(args.digits, args.max_digits) + 1         # reverse: complexity 2n + 1
    what = f"--digits {args.digits}" if args.digits >= args.max_digits else f"--max-digits {args.max_digits}"
    check_memory([(environment_bytes(50, longest), what, f"50 instances of {(longest - 1) // 2} digits"),
                  (environment_bytes(args.instances, 2 * args.digits + 1), f"--instances {args.instances}",
                   f"{args.instances} instances of {args.digits} digits")])
    command = "tinyalgo " + " ".join(sys.argv[1:])
    print(f"Table 2: FF-200, LSTM-200 and LSTM-400 trained supervised on reverse (at most {args.max_digits} digits),"
          f" probed on a {args.digits}-digit instance -> {args.out}")
    run_table2(args.out, seed=args.seed, budget=args.budget, settle=args.settle, digits=args.digits,
               max_digits=args.max_digits, test_seed=args.test_seed, instances=args.instances, models_dir=args.models)
    print(f"wrote {args.out}/table2.png, table2.json and table2.csv ({command})")
    return 0


def register(sub) -> None:

    tr = sub.add_parser("trace", help="step through a trained controller's run on one instance")
    tr.add_argument("checkpoint")
    tr.add_argument("--task", type=task_name, default=None, metavar="TASK",
                    help=f"the checkpoint's task, one of {', '.join(TASKS)} (default: the one it was trained on)")
    tr.add_argument("--complexity", type=int_in_range(1, MAX_COMPLEXITY, ": every step is recorded and printed"),
                    default=None, help=f"complexity of the instance, at most {MAX_COMPLEXITY:,} (default 12, or the"
                                       f" task's minimum if larger)")
    tr.add_argument("--seed", type=int_at_least(0), default=0,
                    help="seed of the instance (and of the exploration; default 0)")
    tr.add_argument("--epsilon", type=float, default=0.0,
                    help="probability of a random joint action, in [0, 1] (default 0: greedy; Q-learning's lanes:"
                         " 0.05)")
    tr.add_argument("--explore-seed", type=int_at_least(0), default=None,
                    help="seed of the exploration, with --epsilon above 0 (default --seed)")
    tr.add_argument("--width", type=int_in_range(1, MAX_WIDTH, " columns each side of the head"), default=8,
                    help=f"board columns each side of the head, at most {MAX_WIDTH} (default 8)")
    tr.add_argument("--step", action="store_true", help="one frame per key press (default off)")
    tr.add_argument("--png", default=None, metavar="FILE",
                    help="draw the trajectory and the Q-value timeline to FILE (default: no picture)")
    tr.add_argument("--json", default=None, metavar="FILE", help="write the trace's numbers to FILE (default: none)")
    tr.set_defaults(func=cmd_trace)
    t2 = sub.add_parser("table2", help="reproduce the paper's Table 2 (state autocorrelation on reverse)")
    t2.add_argument("--out", default="figures/table2", help="where the PNG, JSON and CSV go (default figures/table2)")
    t2.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the three trainings (default 0)")
    t2.add_argument("--budget", type=int_at_least(1), default=2_000_000,
                    help="characters of curriculum training per model at most (default 2,000,000 characters)")
    t2.add_argument("--settle", type=int_at_least(0), default=2_000_000,
                    help="characters trained on 1..max-digits digits after the curriculum"
                         " (default 2,000,000 characters)")
    t2.add_argument("--digits", type=int_at_least(2), default=20,
                    help="digits of the test instance (default 20 digits, as the paper)")
    t2.add_argument("--max-digits", type=int_at_least(2), default=10,
                    help="longest training instance, digits (default 10 digits, as the paper)")
    t2.add_argument("--test-seed", type=int, default=20,
                    help="seed of the test instance drawn in the figure (default 20)")
    t2.add_argument("--instances", type=int_at_least(1), default=50,
                    help="more test instances over which the autocorrelation's phase means are averaged (default 50)")
    t2.add_argument("--models", default=None, metavar="DIR",
                    help="also save the three checkpoints under DIR (default: not saved)")
    t2.set_defaults(func=cmd_table2)
