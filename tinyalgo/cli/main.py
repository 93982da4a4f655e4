"""The ``tinyalgo`` command.

    tinyalgo train                  # Q-learning on addition (the paper's showcase)
    tinyalgo show --task addition --complexity 12 --seed 0 [--step]
    tinyalgo evaluate CHECKPOINT --lengths 100 1000

Every user error (an unknown task, a base outside 2..10, a complexity below
the task's minimum, a bad checkpoint, an output path that cannot be written,
a size that would not fit in memory, an option the command does not use,
...) is refused before any work starts: one line on stderr and exit status
2, without a traceback.  Output to a closed pipe (``tinyalgo show | head``)
ends quietly.
"""
from __future__ import annotations

import os
import sys

from tinyalgo import __version__
from tinyalgo.cli import assignment, automaton, evaluate, experiment, notebooks, trace, train, verify
from tinyalgo.cli.args import Parser, UsageError, add_task_arguments, aliases_text, int_at_least
from tinyalgo.cli.sizes import check_memory, environment_bytes
from tinyalgo.environment import Environment
from tinyalgo.inspection.render import LEGEND, complexity_note, ground_truth_frames, print_frames
from tinyalgo.tasks import TASKS

BROKEN_PIPE_STATUS = 141           # 128 + SIGPIPE, what a shell reports for a command whose reader went away


def cmd_show(args) -> int:
    task = TASKS[args.task]
    complexity = args.complexity if args.complexity is not None else (
        args.length * task.factor if args.length is not None else 12)
    if complexity < task.min_complexity:
        raise UsageError(f"--complexity: complexity must be an integer of at least {task.min_complexity} for"
                         f" {args.task}; got {complexity}")
    check_memory([(environment_bytes(1, complexity), f"--complexity {complexity}",
                   f"one instance of complexity {complexity}"),
                  (3 * (2 * args.width + 1) * 12, f"--width {args.width}", "the frames' rows")])
    env = Environment(args.task, batch_size=1, base=args.base, complexity=complexity, seed=args.seed,
                      extra_curriculum=False)
    print(LEGEND)
    note = complexity_note(env, complexity)
    if note:
        print(note)
    print_frames(ground_truth_frames(env, 0, half_width=args.width), args.step)
    return 0


def build_parser() -> Parser:
    parser = Parser(prog="tinyalgo", description="Learning Simple Algorithms from Examples (Zaremba et al., ICLR"
                                                 f" 2016) in NumPy.  Tasks: {', '.join(TASKS)}"
                                                 f" (aliases: {aliases_text()}).")
    parser.add_argument("--version", action="version", version=f"tinyalgo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    show = sub.add_parser("show", help="print an instance and step through its ground-truth solution",
                          description="Print one instance of a task and the frames of its ground-truth solution"
                                      " (the board around the head, the targets Y and the outputs written P).")
    add_task_arguments(show)
    size = show.add_mutually_exclusive_group()
    size.add_argument("--complexity", type=int_at_least(-2 ** 63), default=None, metavar="C",
                      help="complexity of the instance (paper section 5; default 12)")
    size.add_argument("--length", type=int_at_least(1), default=None, metavar="L",
                      help="length of the instance in digits as the paper's tables count them: complexity ="
                           " length x the task's factor (default: complexity 12)")
    show.add_argument("--seed", type=int_at_least(0), default=0, help="seed of the instance (default 0)")
    show.add_argument("--width", type=int_at_least(1), default=8, metavar="COLUMNS",
                      help="board columns shown each side of the head (default 8)")
    show.add_argument("--step", action="store_true", help="one frame per key press (default off)")
    show.set_defaults(func=cmd_show)
    for command in (train, evaluate, experiment, trace, automaton, assignment, notebooks, verify):
        command.register(sub)
    return parser


def main(argv=None) -> int:
    try:
        return run(argv)
    except BrokenPipeError:
        # the reader went away (tinyalgo show | head): point stdout at devnull so the
        # interpreter's final flush does not fail again, and end quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return BROKEN_PIPE_STATUS


def run(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:                 # --help, --version, or a one-line argument error (status 2)
        return stop.code if isinstance(stop.code, int) else 2
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except BrokenPipeError:
        raise
    except (ValueError, OSError) as err:
        print(f"tinyalgo: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tinyalgo: interrupted", file=sys.stderr)
        return 130


__all__ = ["main", "build_parser", "UsageError"]

if __name__ == "__main__":
    raise SystemExit(main())
